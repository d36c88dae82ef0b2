package resolvers

import (
	"context"
	"slices"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"golang.org/x/sync/errgroup"

	"github.com/weibohbase/gateway/auth"
	"github.com/weibohbase/gateway/loaders"
	"github.com/weibohbase/gateway/weibo"
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
			for _, f := range graphql.CollectFields(oc, set, nil) {
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
		for _, f := range graphql.CollectFields(oc, set, nil) {
			if pred(f.Name) {
				return true
			}
		}
	}
	return false
}

// prefetchUsers reads, for the user ids reached at path, the users rows
// when a field beyond id and username is selected there (always when
// complete is false: the edges carry ids only), and followedByViewer when it
// is selected; the two batched reads run in parallel and prime the loaders.
func prefetchUsers(ctx context.Context, svc *weibo.Service, ids []weibo.UserID, complete bool, path ...string) error {
	if len(ids) == 0 {
		return nil
	}
	sets := selections(ctx, path...)
	l := loaders.For(ctx)
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	g, gctx := errgroup.WithContext(ctx)
	if !complete || selectsAny(ctx, sets, func(n string) bool { return n != "id" && n != "username" && n != "__typename" }) {
		g.Go(func() error {
			us, err := svc.GetUsers(gctx, ids)
			for i, u := range us {
				l.Users.Prime(ctx, ids[i], u)
			}
			return err
		})
	}
	if viewer, ok := auth.OptionalViewer(ctx); ok && selectsAny(ctx, sets, func(n string) bool { return n == "followedByViewer" }) {
		g.Go(func() error {
			fs, err := svc.Follows(gctx, viewer, ids)
			for i, f := range fs {
				l.FollowedByViewer.Prime(ctx, ids[i], f)
			}
			return err
		})
	}
	return g.Wait()
}

// prefetchAuthors prefetches the authors of a post page's edges (see
// prefetchUsers): the rows of the authors when the query selects more of
// them than id and username.
func (r *Resolver) prefetchAuthors(ctx context.Context, page *weibo.PostConnection) error {
	ids := make([]weibo.UserID, len(page.Edges))
	for i, e := range page.Edges {
		ids[i] = e.Post.ID.Author
	}
	return prefetchUsers(ctx, r.Svc, ids, true, "edges", "node", "author")
}

// prefetchNodes prefetches the nodes of a user page's edges (see
// prefetchUsers): the edges carry user ids only.
func (r *Resolver) prefetchNodes(ctx context.Context, page *weibo.UserConnection) error {
	ids := make([]weibo.UserID, len(page.Edges))
	for i, e := range page.Edges {
		ids[i] = e.User
	}
	return prefetchUsers(ctx, r.Svc, ids, false, "edges", "node")
}
