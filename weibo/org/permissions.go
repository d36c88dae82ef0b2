package org

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/weibohbase/gateway/weibo"
)

// Permission is what a role lets its holders do, named as the schema's
// Permission enum ("MANAGE_ROLES"). PermAdministrator implies every other.
type Permission string

// The permissions, in the order of their bits in a role row
// (tables.ColRolePerms: bit n is Permissions[n]).
const (
	// PermAdministrator implies every other permission, and lets its holder
	// act on users of equal rank and assign priorities up to their own.
	PermAdministrator Permission = "ADMINISTRATOR"
	// PermManageUsers is the user search and the changes of users
	// (suspension, bulk changes).
	PermManageUsers Permission = "MANAGE_USERS"
	// PermManageRoles is the roles, their permissions, their members and
	// the assignments.
	PermManageRoles Permission = "MANAGE_ROLES"
	// PermManageDepartments is the department tree, its managers and its
	// members.
	PermManageDepartments Permission = "MANAGE_DEPARTMENTS"
	// PermManageReports is the moderation queue.
	PermManageReports Permission = "MANAGE_REPORTS"
	// PermViewAuditLog is the audit log.
	PermViewAuditLog Permission = "VIEW_AUDIT_LOG"
	// PermRunAnyOperation is sending any operation as full text when the
	// gateway serves only registered documents (--documents=allowlist):
	// GraphiQL, the admin console and operators' scripts.
	PermRunAnyOperation Permission = "RUN_ANY_OPERATION"
)

// Permissions lists every permission; a permission's index is its bit in
// a PermSet and in the stored cell, so the order never changes and new
// permissions are appended.
var Permissions = []Permission{PermAdministrator, PermManageUsers, PermManageRoles, PermManageDepartments, PermManageReports, PermViewAuditLog, PermRunAnyOperation}

// bit returns p's bit, 0 for an unknown permission.
func (p Permission) bit() PermSet {
	for i, q := range Permissions {
		if q == p {
			return 1 << i
		}
	}
	return 0
}

// Valid reports whether p is one of Permissions.
func (p Permission) Valid() bool { return p.bit() != 0 }

// PermSet is a set of permissions, bit n for Permissions[n] (the stored
// form of tables.ColRolePerms). Bits of no known permission are kept as
// read and ignored.
type PermSet uint64

// PermsOf returns the set of ps; BAD_USER_INPUT on field for an unknown
// permission.
func PermsOf(field string, ps []Permission) (PermSet, error) {
	var s PermSet
	for _, p := range ps {
		b := p.bit()
		if b == 0 {
			return 0, weibo.BadInput(field, "unknown permission %q", string(p))
		}
		s |= b
	}
	return s, nil
}

// List returns the permissions of s in the order of Permissions (its
// own, not those ADMINISTRATOR implies).
func (s PermSet) List() []Permission {
	out := []Permission{}
	for i, p := range Permissions {
		if s&(1<<i) != 0 {
			out = append(out, p)
		}
	}
	return out
}

// Has reports whether s grants p: p itself or ADMINISTRATOR.
func (s PermSet) Has(p Permission) bool {
	return s&(PermAdministrator.bit()|p.bit()) != 0
}

// Covers reports whether s grants every permission of t.
func (s PermSet) Covers(t PermSet) bool {
	return s.Has(PermAdministrator) || t&^s == 0
}

// missing returns the first permission of t that s does not grant.
func (s PermSet) missing(t PermSet) Permission {
	for _, p := range t.List() {
		if !s.Has(p) {
			return p
		}
	}
	return ""
}

// Standing is what a user's roles give them: the union of their roles'
// permissions, and their rank — the highest priority among their role
// assignments, 0 with none.
type Standing struct {
	// Perms is the union of the permissions of the user's roles.
	Perms PermSet
	// Rank is the highest priority among the user's assignments, 0..MaxPriority.
	Rank int
	// Manager says the user manages some department (whose subtree they
	// see and change whatever their permissions).
	Manager bool
}

// Add counts one assignment of a role granting perms with priority into s.
func (s *Standing) Add(perms PermSet, priority int) {
	s.Perms |= perms
	s.Rank = max(s.Rank, priority)
}

// Require returns nil when s grants p and ErrNeedsPermission(p) otherwise.
func (s Standing) Require(p Permission) error {
	if !s.Perms.Has(p) {
		return ErrNeedsPermission(p)
	}
	return nil
}

// ActOn returns nil when a viewer of standing s may act on a user of
// standing target (change their roles or department, suspend them): s's
// rank above the target's, or equal to it with ADMINISTRATOR; FORBIDDEN
// naming both ranks otherwise.
func (s Standing) ActOn(target Standing) error {
	if s.Rank > target.Rank || (s.Rank == target.Rank && s.Perms.Has(PermAdministrator)) {
		return nil
	}
	return weibo.Forbidden(fmt.Sprintf("your rank %d is not above the target's rank %d", s.Rank, target.Rank))
}

// Assign returns nil when a viewer of standing s may assign a role with
// priority: below s's rank, or up to it with ADMINISTRATOR; FORBIDDEN
// naming the rank otherwise.
func (s Standing) Assign(priority int) error {
	if priority < s.Rank || (priority == s.Rank && s.Perms.Has(PermAdministrator)) {
		return nil
	}
	return weibo.Forbidden(fmt.Sprintf("your rank %d does not allow assigning priority %d: it must be below your rank", s.Rank, priority))
}

// ManageRole returns nil when a viewer of standing s may change, assign or
// revoke a role granting perms (role: its name, "" for permissions about
// to be granted): s grants every permission of perms (so no one hands
// out, or takes away, a permission they do not hold); FORBIDDEN naming
// the first missing permission otherwise.
func (s Standing) ManageRole(role string, perms PermSet) error {
	if s.Perms.Covers(perms) {
		return nil
	}
	if role == "" {
		return weibo.Forbidden("needs the permission " + string(s.Perms.missing(perms)) + " to grant it")
	}
	return weibo.Forbidden("needs the permission " + string(s.Perms.missing(perms)) + ", which the role " + strconv.Quote(role) + " grants")
}

// ErrNeedsPermission is the FORBIDDEN error of a viewer without p.
func ErrNeedsPermission(p Permission) error {
	return weibo.Forbidden("needs the permission " + string(p))
}

// String returns s's permissions joined by "," (for logs and the audit log).
func (s PermSet) String() string {
	ps := s.List()
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = string(p)
	}
	return strings.Join(parts, ",")
}
