package org_test

import (
	"encoding/hex"
	"slices"
	"testing"

	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/org"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestPermissionBits checks the permissions cell of docs/schema.md
// ("weibo:roles", i:pm), written out again here on purpose: bit n for the
// n-th permission, 8 bytes big-endian; a value of another length is no
// cell; unknown bits are kept and ignored; ADMINISTRATOR implies all.
func TestPermissionBits(t *testing.T) {
	docs := map[org.Permission]uint64{
		org.PermAdministrator: 0x01, org.PermManageUsers: 0x02, org.PermManageRoles: 0x04,
		org.PermManageDepartments: 0x08, org.PermManageReports: 0x10, org.PermViewAuditLog: 0x20,
		org.PermRunAnyOperation: 0x40,
	}
	for p, bit := range docs {
		set, err := org.PermsOf("permissions", []org.Permission{p})
		if err != nil || uint64(set) != bit {
			t.Errorf("PermsOf(%s) = %#x, %v; docs/schema.md says %#x", p, uint64(set), err, bit)
		}
	}
	set, _ := org.PermsOf("permissions", []org.Permission{org.PermViewAuditLog, org.PermManageUsers, org.PermManageUsers})
	if got := hex.EncodeToString(tables.EncodeRolePerms(uint64(set))); got != "0000000000000022" {
		t.Errorf("cell of MANAGE_USERS, VIEW_AUDIT_LOG = %s, docs/schema.md says 0000000000000022", got)
	}
	if got := set.List(); !slices.Equal(got, []org.Permission{org.PermManageUsers, org.PermViewAuditLog}) {
		t.Errorf("List = %v, want the enum's order", got)
	}
	if _, ok := tables.DecodeRolePerms([]byte{0x22}); ok {
		t.Error("a 1-byte value decoded as a permissions cell")
	}
	if v, ok := tables.DecodeRolePerms(tables.EncodeRolePerms(0x8000_0000_0000_0022)); !ok || !slices.Equal(org.PermSet(v).List(), []org.Permission{org.PermManageUsers, org.PermViewAuditLog}) {
		t.Errorf("unknown bits: %#x, %v", v, ok)
	}
	if _, err := org.PermsOf("permissions", []org.Permission{"ROOT"}); weibo.CodeOf(err) != weibo.CodeBadUserInput {
		t.Errorf("PermsOf(ROOT) = %v, want BAD_USER_INPUT", err)
	}
	admin, _ := org.PermsOf("", []org.Permission{org.PermAdministrator})
	for p := range docs {
		if !admin.Has(p) {
			t.Errorf("ADMINISTRATOR does not imply %s", p)
		}
	}
	if !admin.Covers(set) || set.Covers(admin) || set.Has(org.PermManageRoles) {
		t.Error("Covers/Has wrong")
	}
}
