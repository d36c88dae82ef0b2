package resolvers

import (
	"context"

	"github.com/weibohbase/gateway/graph/model"
	"github.com/weibohbase/gateway/loaders"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/org"
)

// parseUserRole parses the userId and roleId arguments.
func parseUserRole(userID, roleID string) (user weibo.UserID, role weibo.RoleID, err error) {
	if user, err = parseID[weibo.UserID]("userId", userID); err != nil {
		return user, role, err
	}
	role, err = parseID[weibo.RoleID]("roleId", roleID)
	return user, role, err
}

// permissionsIn converts a permissions argument to the domain's, and its
// set (BAD_USER_INPUT on field for an unknown one, which the schema's
// enum already refuses).
func permissionsIn(field string, ps []model.Permission) ([]org.Permission, org.PermSet, error) {
	out := make([]org.Permission, len(ps))
	for i, p := range ps {
		out[i] = org.Permission(p)
	}
	set, err := org.PermsOf(field, out)
	return out, set, err
}

// permissionsOut lists set as the schema's enum values.
func permissionsOut(set org.PermSet) []model.Permission {
	ps := set.List()
	out := make([]model.Permission, len(ps))
	for i, p := range ps {
		out[i] = model.Permission(p)
	}
	return out
}

// viewerSees reports whether the request's viewer sees what p guards of
// user uid: their own, or any user's with p.
func viewerSees(ctx context.Context, uid weibo.UserID, p org.Permission) (bool, error) {
	if viewerOf(ctx) == uid {
		return true, nil
	}
	st, err := loaders.For(ctx).ViewerStanding(ctx)
	if err != nil {
		return false, err
	}
	return st.Perms.Has(p), nil
}

// assignRole is Mutation.assignRole (priority non-nil) and revokeRole: the
// change of one user's role rid, when the viewer may make it
// (Authz.Assignments: the role's permissions, the priority and the rank
// rule).
func (r *Resolver) assignRole(ctx context.Context, userID, roleID string, priority *int) (*weibo.User, error) {
	user, role, err := parseUserRole(userID, roleID)
	if err != nil {
		return nil, err
	}
	if priority != nil {
		if err := org.CheckPriority(*priority); err != nil {
			return nil, err
		}
	}
	refused, err := r.Svc.Org.Authz.Assignments(ctx, viewerOf(ctx), []weibo.UserID{user}, role, priority)
	if err != nil {
		return nil, err
	}
	if refused[0] != nil {
		return nil, refused[0]
	}
	defer loaders.For(ctx).ForgetStanding()
	if priority == nil {
		return r.Svc.Org.Roles.Revoke(ctx, user, role)
	}
	return r.Svc.Org.Roles.Assign(ctx, user, role, *priority)
}

// changeRole authorizes a change of role id (Authz.ManageRole with perms,
// the permissions it will grant) and returns the role's id.
func (r *Resolver) changeRole(ctx context.Context, id string, perms org.PermSet) (weibo.RoleID, error) {
	role, err := parseID[weibo.RoleID]("id", id)
	if err != nil {
		return 0, err
	}
	return role, r.Svc.Org.Authz.ManageRole(ctx, viewerOf(ctx), role, perms)
}
