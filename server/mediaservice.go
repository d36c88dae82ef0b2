package server

import (
	"context"

	"github.com/weibohbase/gateway/resolvers/mediamodel"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/media"
	"github.com/weibohbase/gateway/weibo/media/process"
)

// NewMedia returns the pictures the server serves (Config.Media) over the
// media store svc, the posts f and the processing limits l: an upload is
// processed (process.Process) then stored (media.Service.Upload).
func NewMedia(svc *media.Service, f *feed.Service, l process.Limits) Media {
	return &mediaService{svc: svc, feed: f, limits: l}
}

type mediaService struct {
	svc    *media.Service
	feed   *feed.Service
	limits process.Limits
}

func view(m *media.Media) *mediamodel.Media {
	if m == nil {
		return nil
	}
	l := m.Variants[process.Large]
	return &mediamodel.Media{ID: m.ID.String(), Owner: m.Owner, Alt: m.Alt, Width: l.Width, Height: l.Height,
		Blurhash: m.Blurhash, MIMEType: l.MIME, Bytes: l.Bytes}
}

func (s *mediaService) Upload(ctx context.Context, owner weibo.UserID, data []byte, alt *string) (*mediamodel.Media, error) {
	r, err := process.Process(ctx, data, s.limits)
	if err != nil {
		return nil, err
	}
	m, err := s.svc.Upload(ctx, owner, r, alt)
	return view(m), err
}

func (s *mediaService) UpdateAlt(ctx context.Context, viewer weibo.UserID, id string, alt *string) (*mediamodel.Media, error) {
	mid, err := weibo.ParseMediaID(id)
	if err != nil {
		return nil, weibo.BadInput("id", "not a media id")
	}
	m, err := s.svc.UpdateAlt(ctx, viewer, mid, alt)
	return view(m), err
}

func (s *mediaService) Get(ctx context.Context, ids []string) ([]*mediamodel.Media, error) {
	mids := make([]weibo.MediaID, 0, len(ids))
	at := make([]int, 0, len(ids))
	for i, id := range ids {
		if mid, err := weibo.ParseMediaID(id); err == nil {
			mids, at = append(mids, mid), append(at, i)
		}
	}
	out := make([]*mediamodel.Media, len(ids))
	if len(mids) == 0 {
		return out, nil
	}
	ms, err := s.svc.Get(ctx, mids)
	if err != nil {
		return nil, err
	}
	for j, m := range ms {
		out[at[j]] = view(m)
	}
	return out, nil
}

func (s *mediaService) OfPost(p *feed.Post) []string {
	if len(p.Media) == 0 {
		return nil
	}
	out := make([]string, len(p.Media))
	for i, id := range p.Media {
		out[i] = id.String()
	}
	return out
}

func (s *mediaService) Publish(ctx context.Context, author weibo.UserID, content string, ids []string) (*feed.Post, error) {
	mids := make([]weibo.MediaID, len(ids))
	for i, id := range ids {
		mid, err := weibo.ParseMediaID(id)
		if err != nil {
			return nil, weibo.BadInput("mediaIds", "not a media id: %s", weibo.Excerpt(id))
		}
		mids[i] = mid
	}
	return s.feed.Publish(ctx, author, content, mids...)
}

func (s *mediaService) MediaVariant(ctx context.Context, id, variant string) (*MediaBlob, error) {
	mid, err := weibo.ParseMediaID(id)
	if err != nil {
		return nil, weibo.NotFound("no such media")
	}
	b, err := s.svc.Variant(ctx, mid, process.Variant(variant))
	if err != nil {
		return nil, err
	}
	return &MediaBlob{Data: b.Data, MIME: b.MIME, Hash: b.Hash}, nil
}
