package loaders

import (
	"context"

	"github.com/graph-gophers/dataloader/v7"

	"github.com/weibohbase/gateway/resolvers/mediamodel"
)

// Media loads pictures by GraphQL id ("media:<n>") with get, the media
// store's batched read (nil for an unknown or expired picture); get is
// used when the request first asks for the loader and must be the same
// function for every request.
func (l *Loaders) Media(get func(ctx context.Context, ids []string) ([]*mediamodel.Media, error)) *dataloader.Loader[string, *mediamodel.Media] {
	return made(&l.lmu, &l.ldMedia, func() dataloader.BatchFunc[string, *mediamodel.Media] { return batch(get) })
}
