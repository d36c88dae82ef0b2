package resolvers

import (
	"context"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/weibohbase/gateway/auth"
	"github.com/weibohbase/gateway/loaders"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/feed"
)

// orEmpty returns *s, or "" for nil (an optional String argument).
func orEmpty(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// prefetchPosts prefetches what the edges of a page of posts (a home
// timeline, a user's posts, the posts a user likes) need beyond their
// content rows, in parallel: their authors (prefetchAuthors), their
// reposts' originals (prefetchOriginals), likedByViewer (prefetchLiked)
// and the users they mention (prefetchMentioned), their pictures
// (prefetchMedia) — each one batched read,
// when the query selects it.
func (r *Resolver) prefetchPosts(ctx context.Context, page *feed.PostConnection) error {
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return r.prefetchAuthors(gctx, page) })
	g.Go(func() error { return r.prefetchOriginals(gctx, page) })
	g.Go(func() error { return r.prefetchLiked(gctx, page) })
	g.Go(func() error { return r.prefetchMentioned(gctx, page) })
	g.Go(func() error { return r.prefetchMedia(gctx, page) })
	return g.Wait()
}

// prefetchMentioned prefetches the users the page's posts mention when
// the query selects more of them than id and username (which the posts
// hold): one GetMany of their users rows (prefetchUsers).
func (r *Resolver) prefetchMentioned(ctx context.Context, page *feed.PostConnection) error {
	var ids []weibo.UserID
	for _, e := range page.Edges {
		for _, m := range e.Post.MentionRefs {
			ids = append(ids, m.User)
		}
	}
	return prefetchUsers(ctx, r.Svc, ids, true, "edges", "node", "mentions")
}

// prefetchOriginals reads, when the query selects repostOf on the page's
// edges, the originals of the page's reposts with one GetMany and primes
// the request's post loader with them, where Post.repostOf finds them: a
// page's originals cost that one more call whatever its size (a page
// without reposts, none). Every original is read, also one that is on
// the page itself, so that the cost does not depend on the page's size.
// The originals' authors are then prefetched like the page's own
// (prefetchUsers), when the query selects more of them than id and
// username.
func (r *Resolver) prefetchOriginals(ctx context.Context, page *feed.PostConnection) error {
	sets := selections(ctx, "edges", "node")
	if !selectsAny(ctx, sets, func(n string) bool { return n == "repostOf" }) {
		return nil
	}
	var ids []weibo.PostID
	for _, e := range page.Edges {
		if id := e.Post.RepostOfID; id != nil && !slices.Contains(ids, *id) {
			ids = append(ids, *id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	ps, err := r.Svc.Feed.GetPosts(ctx, ids)
	if err != nil {
		return err
	}
	l := loaders.For(ctx)
	var authors []weibo.UserID
	for i, p := range ps {
		l.PrimePost(ctx, ids[i], p)
		if p != nil {
			authors = append(authors, p.ID.Author)
		}
	}
	return prefetchUsers(ctx, r.Svc, authors, true, "edges", "node", "repostOf", "author")
}

// LikedByViewerReady answers Post.likedByViewer at once when the request
// knows it: without a viewer (false), or primed by a page's prefetch or a
// like of the request (graph.PostLikedByViewerReady).
func (r *postResolver) LikedByViewerReady(ctx context.Context, obj *feed.Post) (bool, bool) {
	if _, ok := auth.OptionalViewer(ctx); !ok {
		return false, true
	}
	return loaders.For(ctx).KnownLiked.Get(obj.ID)
}

// RepostOfReady answers Post.repostOf at once when the request knows it:
// nil for a post that is no repost, or the original a page's prefetch
// read (graph.PostRepostOfReady).
func (r *postResolver) RepostOfReady(ctx context.Context, obj *feed.Post) (*feed.Post, bool) {
	if obj.RepostOfID == nil {
		return nil, true
	}
	return loaders.For(ctx).KnownPosts.Get(*obj.RepostOfID)
}
