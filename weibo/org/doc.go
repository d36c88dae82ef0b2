// Package org holds what the organisation's parts share: the organisation
// of seed 001 is roles with priorities (users ↔ roles, many to many), the
// department tree with its managers and members, and authorization from
// the role table and the tree. Each capability is a subpackage with its
// own Service:
//
//   - role: roles, their names, assignments (a counted relation) and reads;
//   - department: the tree (create, rename, move, delete, paths), its
//     managers and the reads of members;
//   - membership: a user's department (a counted relation);
//   - authz: HasRole, RequireRole (the schema's @hasRole) and the admin or
//     manager check of tree and membership changes;
//   - bulk: the bulk changes of roles and memberships.
//
// Package org itself keeps the model types the GraphQL layer binds (Role,
// Department, their connections, BulkResult), the limits, the errors, the
// name rules, the row decoders, the step names of the two-row changes
// (pairs.go), and the audit recorder every change writes through
// (audit.go). The seams between the parts are small interfaces each part
// declares for what it reads of another (Users here, for the accounts of
// the feed).
//
// Errors meant for API callers are *weibo.Error values; every other error
// is an internal store failure, wrapped with the operation it served.
package org

import (
	"context"

	"github.com/weibohbase/gateway/weibo"
)

// Users is what the organisation reads of the accounts, which another
// business area keeps (package account's Service implements it).
type Users interface {
	// GetUsers reads users by id in one batch: one entry per id, nil where
	// the user does not exist.
	GetUsers(ctx context.Context, ids []weibo.UserID) ([]*weibo.User, error)
}

// ExistingUser reads user uid through users; NOT_FOUND when there is none.
func ExistingUser(ctx context.Context, users Users, uid weibo.UserID) (*weibo.User, error) {
	us, err := users.GetUsers(ctx, []weibo.UserID{uid})
	if err != nil {
		return nil, err
	}
	if us[0] == nil {
		return nil, weibo.NotFound("user %s not found", uid)
	}
	return us[0], nil
}
