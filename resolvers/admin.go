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

// authorizeMembership reports whether the viewer may put user into
// department dept (weibo.RootDept: out of any): nil, or the FORBIDDEN or
// NOT_FOUND error Org.Authz.Memberships gives.
func (r *Resolver) authorizeMembership(ctx context.Context, user weibo.UserID, dept weibo.DeptID) error {
	denied, err := r.Svc.Org.Authz.Memberships(ctx, viewerOf(ctx), []weibo.UserID{user}, dept)
	if err != nil {
		return err
	}
	return denied[0]
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

// parseUserRole parses the userId and roleId arguments.
func parseUserRole(userID, roleID string) (user weibo.UserID, role weibo.RoleID, err error) {
	if user, err = parseID[weibo.UserID]("userId", userID); err != nil {
		return user, role, err
	}
	role, err = parseID[weibo.RoleID]("roleId", roleID)
	return user, role, err
}

// parseUsersRole parses the userIds and roleId arguments.
func parseUsersRole(userIDs []string, roleID string) (users []weibo.UserID, role weibo.RoleID, err error) {
	if users, err = parseIDs[weibo.UserID]("userIds", userIDs); err != nil {
		return nil, role, err
	}
	role, err = parseID[weibo.RoleID]("roleId", roleID)
	return users, role, err
}

// parseDeptUser parses the departmentId and userId arguments.
func parseDeptUser(deptID, userID string) (dept weibo.DeptID, user weibo.UserID, err error) {
	if dept, err = parseID[weibo.DeptID]("departmentId", deptID); err != nil {
		return dept, user, err
	}
	user, err = parseID[weibo.UserID]("userId", userID)
	return dept, user, err
}

// setUserDepartment is Mutation.setUserDepartment: user into departmentID
// (nil: out of any), when the viewer may.
func (r *Resolver) setUserDepartment(ctx context.Context, userID string, departmentID *string) (*weibo.User, error) {
	user, err := parseID[weibo.UserID]("userId", userID)
	if err != nil {
		return nil, err
	}
	dept, err := parseParentID("departmentId", departmentID)
	if err != nil {
		return nil, err
	}
	if err := r.authorizeMembership(ctx, user, dept); err != nil {
		return nil, err
	}
	return r.Svc.Org.Members.Set(ctx, user, dept)
}

// moveDepartment is Mutation.moveDepartment: department id under parentID
// (nil: the top level), when the viewer administers both.
func (r *Resolver) moveDepartment(ctx context.Context, id string, parentID *string) (*org.Department, error) {
	dept, err := parseID[weibo.DeptID]("id", id)
	if err != nil {
		return nil, err
	}
	parent, err := parseParentID("parentId", parentID)
	if err != nil {
		return nil, err
	}
	if err := r.Svc.Org.Authz.Departments(ctx, viewerOf(ctx), dept, parent); err != nil {
		return nil, err
	}
	return r.Svc.Org.Departments.Move(ctx, dept, parent)
}
