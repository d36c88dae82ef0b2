package resolvers

import (
	"context"
	"slices"

	"github.com/99designs/gqlgen/graphql"
	"github.com/graph-gophers/dataloader/v7"
	"github.com/vektah/gqlparser/v2/ast"
	"golang.org/x/sync/errgroup"

	"github.com/weibohbase/gateway/auth"
	"github.com/weibohbase/gateway/internal/gqlfield"
	"github.com/weibohbase/gateway/loaders"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/timeline"
)

// Prefetching makes a connection's batches deterministic. A dataloader
// batches the keys that arrive within loaders.Wait, so on a loaded machine
// the per-edge resolvers of a 100-edge page could straddle two batches. A
// connection resolver knows every key of its page at once: when the query
// selects fields that need them, it reads them with one batched call and
// primes the request's loaders, where the per-edge resolvers find them.

// selections returns the selection sets reached from the current field by
// following path (field names; every alias of a name is followed).
func selections(ctx context.Context, path ...string) []ast.SelectionSet {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || fc.Field.Field == nil {
		return nil
	}
	oc := graphql.GetOperationContext(ctx)
	sets := []ast.SelectionSet{fc.Field.Selections}
	for _, name := range path {
		var next []ast.SelectionSet
		for _, set := range sets {
			for _, f := range gqlfield.CollectFields(oc, set, nil) {
				if f.Name == name {
					next = append(next, f.Selections)
				}
			}
		}
		sets = next
	}
	return sets
}

// selectsAny reports whether the sets select a field for which pred holds.
func selectsAny(ctx context.Context, sets []ast.SelectionSet, pred func(name string) bool) bool {
	oc := graphql.GetOperationContext(ctx)
	for _, set := range sets {
		for _, f := range gqlfield.CollectFields(oc, set, nil) {
			if pred(f.Name) {
				return true
			}
		}
	}
	return false
}

// prefetchUsers reads, for the user ids reached at path, the users rows
// when a field beyond id and username is selected there (always when
// complete is false: the edges carry ids only), followedByViewer when it
// is selected, and with a token roles and department when they are
// selected; the batched reads run in parallel and prime the loaders.
func prefetchUsers(ctx context.Context, svc Services, ids []weibo.UserID, complete bool, path ...string) error {
	if len(ids) == 0 {
		return nil
	}
	sets := selections(ctx, path...)
	selected := func(name string) bool {
		return selectsAny(ctx, sets, func(n string) bool { return n == name })
	}
	l := loaders.For(ctx)
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	g, gctx := errgroup.WithContext(ctx)
	if !complete || selectsAny(ctx, sets, func(n string) bool { return n != "id" && n != "username" && n != "__typename" }) {
		prime(ctx, g, gctx, ids, svc.Accounts.GetUsers, l.Users())
	}
	if viewer, ok := auth.OptionalViewer(ctx); ok {
		if selected("followedByViewer") {
			prime(ctx, g, gctx, ids, func(ctx context.Context, ids []weibo.UserID) ([]bool, error) {
				return svc.Follows.IsFollowing(ctx, viewer, ids)
			}, l.FollowedByViewer())
		}
		// User.roles, rank, department and managedDepartments answer only
		// with a token (and to those who may see them: read anyway, so the
		// page costs the same whoever asks).
		if selected("roles") || selected("rank") {
			prime(ctx, g, gctx, ids, svc.Org.Roles.OfUsers, l.UserRoles())
		}
		if selected("department") {
			prime(ctx, g, gctx, ids, svc.Org.Departments.OfUsers, l.UserDepartments())
		}
		if selected("managedDepartments") {
			prime(ctx, g, gctx, ids, svc.Org.Departments.Managed, l.ManagedDepartments())
		}
	}
	return g.Wait()
}

// prime runs read(gctx, ids) in g and primes the request's loader (of ctx)
// with its results, one per id in order.
func prime[K comparable, V any](ctx context.Context, g *errgroup.Group, gctx context.Context, ids []K,
	read func(context.Context, []K) ([]V, error), loader *dataloader.Loader[K, V]) {
	g.Go(func() error {
		vs, err := read(gctx, ids)
		if err != nil {
			return err
		}
		for i, v := range vs {
			loader.Prime(ctx, ids[i], v)
		}
		return nil
	})
}

// prefetchAuthors prefetches the authors of a post page's edges (see
// prefetchUsers): the rows of the authors when the query selects more of
// them than id and username.
func (r *Resolver) prefetchAuthors(ctx context.Context, page *feed.PostConnection) error {
	ids := make([]weibo.UserID, len(page.Edges))
	for i, e := range page.Edges {
		ids[i] = e.Post.ID.Author
	}
	return prefetchUsers(ctx, r.Svc, ids, true, "edges", "node", "author")
}

// prefetchLiked primes likedByViewer for a page of posts when the query
// selects it there, and for their reposts' originals when it selects it
// under repostOf, and a viewer is logged in: one GetMany of the viewer's
// like rows of those posts.
func (r *Resolver) prefetchLiked(ctx context.Context, page *feed.PostConnection) error {
	viewer, ok := auth.OptionalViewer(ctx)
	if !ok || len(page.Edges) == 0 {
		return nil
	}
	liked := func(n string) bool { return n == "likedByViewer" }
	var ids []weibo.PostID
	if selectsAny(ctx, selections(ctx, "edges", "node"), liked) {
		for _, e := range page.Edges {
			ids = append(ids, e.Post.ID)
		}
	}
	if selectsAny(ctx, selections(ctx, "edges", "node", "repostOf"), liked) {
		for _, e := range page.Edges {
			if id := e.Post.RepostOfID; id != nil && !slices.Contains(ids, *id) {
				ids = append(ids, *id)
			}
		}
	}
	if len(ids) == 0 {
		return nil
	}
	likes, err := r.Svc.Likes.IsLiked(ctx, viewer, ids)
	if err != nil {
		return err
	}
	l := loaders.For(ctx)
	for i, id := range ids {
		l.PrimeLiked(ctx, id, likes[i])
	}
	return nil
}

// primeLiked sets, after a like or an unlike by the viewer, whether the
// viewer likes post for the rest of the request (its likedByViewer
// answers without a read, and right even when read earlier in it).
func primeLiked(ctx context.Context, post weibo.PostID, liked bool) {
	loaders.For(ctx).PrimeLiked(ctx, post, liked)
}

// prefetchNodes prefetches the nodes of a user page's edges (see
// prefetchUsers): the edges carry user ids only.
func (r *Resolver) prefetchNodes(ctx context.Context, page *weibo.UserConnection) error {
	return r.prefetchUserEdges(ctx, page.Edges)
}

// prefetchUserEdges prefetches the nodes of a page's user edges.
func (r *Resolver) prefetchUserEdges(ctx context.Context, edges []weibo.UserEdge) error {
	ids := make([]weibo.UserID, len(edges))
	for i, e := range edges {
		ids[i] = e.User
	}
	return prefetchUsers(ctx, r.Svc, ids, false, "edges", "node")
}

// countFree are the Post fields that a post from the post cache answers as
// its content row would: all but the counters and the lists whose
// totalCount is one (a field added to Post needs the row until listed).
// filtered is set by the page's read on its copy of the post, wherever the
// post came from.
var countFree = map[string]bool{"__typename": true, "id": true, "content": true, "createdAt": true,
	"author": true, "likedByViewer": true, "repostOf": true, "repostOfId": true, "filtered": true}

// timelineOptions are the options of a home-timeline read for the query's
// selection: timeline.WithoutCounts when the page's posts select only
// countFree fields, so that they may come from the post cache.
func timelineOptions(ctx context.Context) []timeline.ReadOption {
	if selectsAny(ctx, selections(ctx, "edges", "node"), func(n string) bool { return !countFree[n] }) {
		return nil
	}
	return []timeline.ReadOption{timeline.WithoutCounts()}
}
