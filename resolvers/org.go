package resolvers

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"github.com/weibohbase/gateway/auth"
	"github.com/weibohbase/gateway/loaders"
	"github.com/weibohbase/gateway/weibo"
)

// HasRole implements the schema's @hasRole(role:) directive: the field runs
// only for a logged-in viewer (UNAUTHENTICATED otherwise) who holds the
// role named role (FORBIDDEN otherwise), checked against the role tables on
// every call.
func HasRole(svc *weibo.Service) func(ctx context.Context, obj any, next graphql.Resolver, role string) (any, error) {
	return func(ctx context.Context, _ any, next graphql.Resolver, role string) (any, error) {
		v, err := auth.Viewer(ctx)
		if err != nil {
			return nil, err
		}
		if err := svc.RequireRole(ctx, v, role); err != nil {
			return nil, err
		}
		return next(ctx)
	}
}

// loggedIn runs fn only for an authenticated viewer (UNAUTHENTICATED
// otherwise): role and department reads are open to any logged-in user.
func loggedIn[T any](ctx context.Context, fn func() (T, error)) (T, error) {
	if _, err := auth.Viewer(ctx); err != nil {
		var zero T
		return zero, err
	}
	return fn()
}

// withID parses s with parse (BAD_USER_INPUT on field when malformed) and
// calls fn with the id.
func withID[I, T any](parse func(field, s string) (I, error), field, s string, fn func(I) (T, error)) (T, error) {
	id, err := parse(field, s)
	if err != nil {
		var zero T
		return zero, err
	}
	return fn(id)
}

// withOptID is withID for an optional id; nil gives zero (weibo.RootDept for departments).
func withOptID[I, T any](parse func(field, s string) (I, error), field string, s *string, fn func(I) (T, error)) (T, error) {
	if s == nil {
		var zero I
		return fn(zero)
	}
	return withID(parse, field, *s, fn)
}

func parseRoleID(field, s string) (weibo.RoleID, error) {
	id, err := weibo.ParseRoleID(s)
	if err != nil {
		return 0, &weibo.Error{Code: weibo.CodeBadUserInput, Field: field, Message: "malformed role id " + quote(s)}
	}
	return id, nil
}

func parseDeptID(field, s string) (weibo.DeptID, error) {
	id, err := weibo.ParseDeptID(s)
	if err != nil {
		return 0, &weibo.Error{Code: weibo.CodeBadUserInput, Field: field, Message: "malformed department id " + quote(s)}
	}
	return id, nil
}

// withUserRole parses a user id and a role id.
func withUserRole[T any](userID, roleID string, fn func(weibo.UserID, weibo.RoleID) (T, error)) (T, error) {
	return withID(parseUserID, "userId", userID, func(uid weibo.UserID) (T, error) {
		return withID(parseRoleID, "roleId", roleID, func(rid weibo.RoleID) (T, error) { return fn(uid, rid) })
	})
}

// loadDepartment loads a department through the dataloader; RootDept and a
// missing department give nil.
func loadDepartment(ctx context.Context, id weibo.DeptID) (*weibo.Department, error) {
	if id == weibo.RootDept {
		return nil, nil
	}
	return loaders.For(ctx).Departments.Load(ctx, id)()
}
