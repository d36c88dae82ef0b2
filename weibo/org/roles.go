package org

import (
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/tables"
)

// The role model (package role keeps roles; docs/schema.md documents every
// byte).

// Priority bounds of a role assignment (inclusive). Larger means higher:
// a user's roles are listed from MaxPriority down.
const (
	MinPriority = 1
	MaxPriority = 1000
)

// MaxRoleNameLength is the longest role name, in characters.
const MaxRoleNameLength = 64

// AdminRole is the name of the role `gateway admin grant` gives, carrying
// PermAdministrator (and the role @hasRole(role: "admin") names).
const AdminRole = "admin"

// MemberCount is a role's memberCount: its member rows whose user holds
// the role (users o:<rid>). It is kept with Increment on the role row and
// registered with the protocol by package role.
const MemberCount counted.CounterKind = "memberCount"

// Role is one role row of weibo:roles.
type Role struct {
	// ID is the role's id.
	ID weibo.RoleID
	// Name is the role's name as given.
	Name string
	// MemberCount is the number of users holding the role (an Increment counter).
	MemberCount int64
	// CreatedAt is the role's creation time.
	CreatedAt time.Time
	// Perms is the set of permissions the role grants its holders.
	Perms PermSet
	// PermsStored says the role row carries its permissions cell; a role
	// of a version before permissions has none (and grants none until
	// migrated: role.MigratePermissions).
	PermsStored bool
	// ExternalID is the provisioning client's id of the role (SCIM
	// externalId, case exact), "" when none.
	ExternalID string
	// ProvisionedBy is the name of the provisioning client that created
	// the role or first changed it through SCIM, "" when none did.
	ProvisionedBy string
}

// NodeID returns r's global id.
func (r *Role) NodeID() weibo.NodeID { return RoleNode(r.ID) }

// RoleAssignment is one of a user's roles with its priority.
type RoleAssignment struct {
	// Role is the role.
	Role *Role
	// Priority is the assignment's priority, MinPriority..MaxPriority.
	Priority int
}

// RoleEdge is one edge of a RoleConnection.
type RoleEdge struct {
	// Role is the edge's role.
	Role *Role
	// Cursor is the edge's opaque cursor.
	Cursor string
}

// RoleConnection is one page of the roles, ordered by name (ignoring case).
type RoleConnection struct {
	// Edges are the page's roles.
	Edges []RoleEdge
	// PageInfo is the Relay page info.
	PageInfo weibo.PageInfo
}

// RoleMemberEdge is one member of a role.
type RoleMemberEdge struct {
	// User is the member (only the id; load the rest in a batch).
	User weibo.UserID
	// Priority is the assignment's priority.
	Priority int
	// Cursor is the edge's opaque cursor.
	Cursor string
}

// RoleMemberConnection is one page of a role's members, ordered by user id.
type RoleMemberConnection struct {
	// Edges are the page's members.
	Edges []RoleMemberEdge
	// PageInfo is the Relay page info.
	PageInfo weibo.PageInfo
	// TotalCount is the number of members from the role's kept counter
	// (memberCount). The GraphQL layer fills it in from the Role; the domain
	// leaves it 0.
	TotalCount int
}

// CheckPriority returns nil for a priority in [MinPriority, MaxPriority]
// and a BAD_USER_INPUT error on field "priority" otherwise.
func CheckPriority(p int) error {
	if p < MinPriority || p > MaxPriority {
		return weibo.BadInput("priority", "priority must be between %d and %d, got %d", MinPriority, MaxPriority, p)
	}
	return nil
}

// RoleFromRow decodes role rid from its weibo:roles row r (families i and
// c); nil when the row has no name (the role does not exist).
func RoleFromRow(rid weibo.RoleID, r *hbase.Result) *Role {
	name := r.Value(tables.FamInfo, tables.ColRoleName)
	if name == nil {
		return nil
	}
	perms, stored := tables.DecodeRolePerms(r.Value(tables.FamInfo, tables.ColRolePerms))
	return &Role{
		ID:          rid,
		Name:        string(name),
		MemberCount: tables.CounterValue(r, tables.ColMemberCount),
		CreatedAt:   time.UnixMilli(tables.CreatedAt(r)),
		Perms:       PermSet(perms),
		PermsStored: stored,

		ExternalID:    string(r.Value(tables.FamInfo, tables.ColExternalID)),
		ProvisionedBy: string(r.Value(tables.FamInfo, tables.ColProvisionedBy)),
	}
}
