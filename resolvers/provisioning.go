package resolvers

import (
	"context"

	"github.com/weibohbase/gateway/graph/model"
	"github.com/weibohbase/gateway/loaders"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/org"
)

// userProvisioning is User.provisioning: how a provisioning client
// manages u, from u's row (loaded when u is a post's denormalized
// author); null for a user SCIM never touched, and for a viewer without
// MANAGE_USERS (the user themselves included: what the identity provider
// keeps is the admins').
func userProvisioning(ctx context.Context, u *weibo.User) (*model.Provisioning, error) {
	st, err := loaders.For(ctx).ViewerStanding(ctx)
	if err != nil || !st.Perms.Has(org.PermManageUsers) {
		return nil, err
	}
	u, err = complete(ctx, u)
	if err != nil || u.ProvisionedBy == "" {
		return nil, err
	}
	name := u.LoginName
	if name == "" {
		name = u.Username
	}
	return &model.Provisioning{
		UserName:      name,
		ExternalID:    nullIfEmpty(u.ExternalID),
		ProvisionedBy: u.ProvisionedBy,
		Closed:        u.Closed,
	}, nil
}

// nullIfEmpty is s for a nullable String field: null when "".
func nullIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
