package resolvers

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"github.com/weibohbase/gateway/graph/model"
	"github.com/weibohbase/gateway/loaders"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/audit"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/org"
)

// parseOptionalID parses an optional id argument as parseID does: nil
// for a null argument.
func parseOptionalID[T any, PT interface {
	*T
	graphql.Unmarshaler
}](field string, s *string) (*T, error) {
	if s == nil {
		return nil, nil
	}
	id, err := parseID[T, PT](field, *s)
	if err != nil {
		return nil, err
	}
	return &id, nil
}

// parseIDs parses the ID list argument named field (parseID for each): a
// malformed id refuses the whole call, naming it.
func parseIDs[T any, PT interface {
	*T
	graphql.Unmarshaler
}](field string, ss []string) ([]T, error) {
	out := make([]T, len(ss))
	for i, s := range ss {
		id, err := parseID[T, PT](field, s)
		if err != nil {
			return nil, err
		}
		out[i] = id
	}
	return out, nil
}

// loadUsers loads users through the dataloader, in order, skipping those
// that no longer exist.
func loadUsers(ctx context.Context, ids []weibo.UserID) ([]*weibo.User, error) {
	us, errs := loaders.For(ctx).Users().LoadMany(ctx, ids)()
	out := make([]*weibo.User, 0, len(us))
	for i, u := range us {
		if len(errs) > i && errs[i] != nil {
			return nil, errs[i]
		}
		if u != nil {
			out = append(out, u)
		}
	}
	return out, nil
}

// userFilter converts Query.users' filter argument (nil: no criterion).
func userFilter(in *model.UserFilter) (domain.UserFilter, error) {
	var f domain.UserFilter
	if in == nil {
		return f, nil
	}
	if in.UsernamePrefix != nil {
		f.UsernamePrefix = *in.UsernamePrefix
	}
	f.Suspended = in.Suspended
	if in.RoleID != nil {
		rid, err := parseID[weibo.RoleID]("filter.roleId", *in.RoleID)
		if err != nil {
			return f, err
		}
		f.Role = &rid
	}
	if in.DepartmentID != nil {
		did, err := parseID[weibo.DeptID]("filter.departmentId", *in.DepartmentID)
		if err != nil {
			return f, err
		}
		f.Department = &did
	}
	f.WithoutDepartment = in.WithoutDepartment != nil && *in.WithoutDepartment
	return f, nil
}

// auditFilter converts Query.auditLog's filter argument (nil: no criterion).
func auditFilter(in *model.AuditFilter) (audit.Filter, error) {
	var f audit.Filter
	if in == nil {
		return f, nil
	}
	if in.ActorID != nil {
		uid, err := parseID[weibo.UserID]("filter.actorId", *in.ActorID)
		if err != nil {
			return f, err
		}
		f.Actor = &uid
	}
	if in.TargetID != nil {
		nid, err := parseID[weibo.NodeID]("filter.targetId", *in.TargetID)
		if err != nil {
			return f, err
		}
		f.Target = &nid
	}
	if in.Action != nil {
		f.Action = *in.Action
	}
	f.Since, f.Until = in.Since, in.Until
	return f, nil
}

// optional is s as a nullable String: nil for "".
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// parseUsersRole parses the userIds and roleId arguments.
func parseUsersRole(userIDs []string, roleID string) (users []weibo.UserID, role weibo.RoleID, err error) {
	if users, err = parseIDs[weibo.UserID]("userIds", userIDs); err != nil {
		return nil, role, err
	}
	role, err = parseID[weibo.RoleID]("roleId", roleID)
	return users, role, err
}

// allUsersTotal sets page's totalCount, for a search with no criterion
// whose query selects it, to the kept number of all users
// (account.Service.UserCount: one Get); a filtered search keeps what
// SearchUsers gave.
func (r *Resolver) allUsersTotal(ctx context.Context, f domain.UserFilter, page *domain.UserSearchConnection) error {
	if f != (domain.UserFilter{}) || !selectsAny(ctx, selections(ctx), func(n string) bool { return n == "totalCount" }) {
		return nil
	}
	n, err := r.Svc.Accounts.UserCount(ctx)
	if err != nil {
		return err
	}
	page.TotalCount = new(int(n))
	return nil
}

// searchAllowed checks the criteria of Query.users beyond its
// MANAGE_USERS: a role's members need MANAGE_ROLES, a department's (or
// those of none) MANAGE_DEPARTMENTS (FORBIDDEN naming it otherwise).
func searchAllowed(ctx context.Context, f domain.UserFilter) error {
	if f.Role != nil {
		if err := requirePermission(ctx, org.PermManageRoles); err != nil {
			return err
		}
	}
	if f.Department != nil || f.WithoutDepartment {
		return requirePermission(ctx, org.PermManageDepartments)
	}
	return nil
}
