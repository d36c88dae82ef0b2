package domain

import (
	"context"
	"strings"

	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/org"
)

// The command line's role grants (`gateway admin grant|revoke`), which
// name a user by username (the feed's accounts) and a role by name (the
// organisation's).

// GrantRoleByName gives the user named username the role named roleName
// (created when missing) with priority, for the command line (`gateway
// admin grant`). The role named org.AdminRole is made to carry
// ADMINISTRATOR (created with it, or given it when it lacks it: an
// audited role.setPermissions), so the grant always makes an
// administrator. Errors: NOT_FOUND for an unknown username, and those of
// role.Service.Ensure, SetPermissions and Assign.
func (d *Domain) GrantRoleByName(ctx context.Context, username, roleName string, priority int) (*weibo.User, *org.Role, error) {
	u, err := d.Accounts.UserByUsername(ctx, username)
	if err != nil {
		return nil, nil, err
	}
	if u == nil {
		return nil, nil, weibo.NotFound("no user named %q", username)
	}
	var perms []org.Permission
	if strings.EqualFold(strings.TrimSpace(roleName), org.AdminRole) {
		perms = []org.Permission{org.PermAdministrator}
	}
	role, err := d.Org.Roles.Ensure(ctx, roleName, perms...)
	if err != nil {
		return nil, nil, err
	}
	if len(perms) > 0 && !role.Perms.Has(org.PermAdministrator) {
		if role, err = d.Org.Roles.SetPermissions(ctx, role.ID, append(role.Perms.List(), perms...)); err != nil {
			return nil, nil, err
		}
	}
	if _, err := d.Org.Roles.Assign(ctx, u.ID, role.ID, priority); err != nil {
		return nil, nil, err
	}
	return u, role, nil
}

// RevokeRoleByName takes the role named roleName from the user named
// username (`gateway admin revoke`). Errors: NOT_FOUND for an unknown user
// or role.
func (d *Domain) RevokeRoleByName(ctx context.Context, username, roleName string) error {
	u, err := d.Accounts.UserByUsername(ctx, username)
	if err != nil {
		return err
	}
	if u == nil {
		return weibo.NotFound("no user named %q", username)
	}
	role, err := d.Org.Roles.ByName(ctx, roleName)
	if err != nil {
		return err
	}
	if role == nil {
		return weibo.NotFound("no role named %q", roleName)
	}
	_, err = d.Org.Roles.Revoke(ctx, u.ID, role.ID)
	return err
}
