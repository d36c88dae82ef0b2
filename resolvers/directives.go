package resolvers

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"github.com/weibohbase/gateway/auth"
	"github.com/weibohbase/gateway/weibo"
)

// HasRole implements the schema's @hasRole(role:) directive: the field runs
// only for a logged-in viewer (UNAUTHENTICATED otherwise) who holds the
// role named role (FORBIDDEN otherwise), checked against the role tables on
// every call. The server wires it as graph.DirectiveRoot.HasRole.
func HasRole(svc *weibo.Service) func(ctx context.Context, obj any, next graphql.Resolver, role string) (any, error) {
	return func(ctx context.Context, _ any, next graphql.Resolver, role string) (any, error) {
		viewer, err := auth.Viewer(ctx)
		if err != nil {
			return nil, err
		}
		if err := svc.RequireRole(ctx, viewer, role); err != nil {
			return nil, err
		}
		return next(ctx)
	}
}
