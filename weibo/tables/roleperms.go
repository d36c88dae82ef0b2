package tables

import "encoding/binary"

// ColRolePerms (roles, i, role rows) is the set of permissions the role
// grants its holders: 8 bytes BE, bit n (1<<n) set for the permission
// numbered n (org.Permission's bit: 0 ADMINISTRATOR, 1 MANAGE_USERS,
// 2 MANAGE_ROLES, 3 MANAGE_DEPARTMENTS, 4 MANAGE_REPORTS, 5
// VIEW_AUDIT_LOG). Every role created since permissions exist carries the
// cell (0 for none); a role row without it predates them (the migration,
// role.MigratePermissions, gives the role named admin ADMINISTRATOR).
const ColRolePerms = "pm"

// EncodeRolePerms encodes a permission bit set for ColRolePerms.
func EncodeRolePerms(bits uint64) []byte { return U64(bits) }

// DecodeRolePerms decodes a ColRolePerms value: the bit set, and false
// for a value that is not 8 bytes (absent: a role of an older version).
func DecodeRolePerms(v []byte) (uint64, bool) {
	if len(v) != 8 {
		return 0, false
	}
	return binary.BigEndian.Uint64(v), true
}
