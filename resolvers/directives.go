package resolvers

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/weibohbase/gateway/auth"
	"github.com/weibohbase/gateway/graph/model"
	"github.com/weibohbase/gateway/loaders"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/audit"
	"github.com/weibohbase/gateway/weibo/org"
)

// Authenticated implements the schema's @authenticated directive: the
// field runs only for a logged-in viewer whose token is valid and whose
// user exists (UNAUTHENTICATED otherwise). The server wires it as
// graph.DirectiveRoot.Authenticated; resolvers of such fields read the
// viewer with viewerOf.
func Authenticated(ctx context.Context, _ any, next graphql.Resolver) (any, error) {
	viewer, err := auth.Viewer(ctx)
	if err != nil {
		return nil, err
	}
	return next(withSource(ctx, viewer))
}

// withSource names the viewer and the request as the source of the
// changes the field makes, for the audit log (audit.Source).
func withSource(ctx context.Context, viewer weibo.UserID) context.Context {
	return audit.WithSource(ctx, viewer, middleware.GetReqID(ctx))
}

// viewerOf returns the viewer of a field marked @authenticated or
// @hasRole, which the directive has checked.
func viewerOf(ctx context.Context) weibo.UserID {
	id, _ := auth.OptionalViewer(ctx)
	return id
}

// HasRole implements the schema's @hasRole(role:) directive: the field runs
// only for a logged-in viewer (UNAUTHENTICATED otherwise) who holds the
// role named role (FORBIDDEN otherwise), checked against the role tables on
// every call through authz (domain.Org.Authz). The server wires it as
// graph.DirectiveRoot.HasRole.
func HasRole(authz Authz) func(ctx context.Context, obj any, next graphql.Resolver, role string) (any, error) {
	return func(ctx context.Context, _ any, next graphql.Resolver, role string) (any, error) {
		viewer, err := auth.Viewer(ctx)
		if err != nil {
			return nil, err
		}
		if err := authz.RequireRole(ctx, viewer, role); err != nil {
			return nil, err
		}
		return next(withSource(ctx, viewer))
	}
}

// HasPermission implements the schema's @hasPermission(permission:)
// directive: the field runs only for a logged-in viewer (UNAUTHENTICATED
// otherwise) holding the permission through one of their roles —
// ADMINISTRATOR grants every one — (FORBIDDEN "needs the permission P"
// otherwise). The viewer's standing is read once per request
// (loaders.Loaders.ViewerStanding: their family o and their roles' rows)
// and read again after a change of roles in the request. The server
// wires it as graph.DirectiveRoot.HasPermission.
func HasPermission(ctx context.Context, _ any, next graphql.Resolver, permission model.Permission) (any, error) {
	viewer, err := auth.Viewer(ctx)
	if err != nil {
		return nil, err
	}
	if err := requirePermission(ctx, org.Permission(permission)); err != nil {
		return nil, err
	}
	return next(withSource(ctx, viewer))
}

// requirePermission returns nil when the request's viewer holds p (the
// request's kept standing) and FORBIDDEN naming p otherwise.
func requirePermission(ctx context.Context, p org.Permission) error {
	st, err := loaders.For(ctx).ViewerStanding(ctx)
	if err != nil {
		return err
	}
	return st.Require(p)
}
