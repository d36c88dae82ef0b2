package loaders

import (
	"context"
	"sync"

	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/feed"
)

// Known holds values of one loader that the request knows without waiting
// for a batch: those a page's prefetch or a mutation primed. The
// resolvers of the ready fields (internal/generate's readyFields) answer
// from it at once instead of running in a goroutine each to wait on the
// loader.
type Known[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]V
}

// Get returns the value known for key, and whether there is one.
func (k *Known[K, V]) Get(key K) (V, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	v, ok := k.m[key]
	return v, ok
}

// set records v for key.
func (k *Known[K, V]) set(key K, v V) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m == nil {
		k.m = map[K]V{}
	}
	k.m[key] = v
}

// PrimePost makes post p (nil: missing) the answer of Posts for id in
// this request, known at once (KnownPosts). A post the loader already
// holds for id stays its answer there: both were read in this request.
func (l *Loaders) PrimePost(ctx context.Context, id weibo.PostID, p *feed.Post) {
	l.Posts().Prime(ctx, id, p)
	l.KnownPosts.set(id, p)
}

// PrimeLiked makes liked the answer of LikedByViewer for post id in this
// request (replacing what it held: a like or an unlike of the request
// changes it), known at once (KnownLiked).
func (l *Loaders) PrimeLiked(ctx context.Context, id weibo.PostID, liked bool) {
	l.LikedByViewer().Clear(ctx, id).Prime(ctx, id, liked)
	l.KnownLiked.set(id, liked)
}
