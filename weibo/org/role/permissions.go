package role

import (
	"bytes"
	"context"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/org"
	"github.com/weibohbase/gateway/weibo/tables"
)

// SetPermissions replaces the permissions role rid grants and returns the
// role. Errors: BAD_USER_INPUT for an unknown permission, NOT_FOUND for an
// unknown role.
//
// Writes, audited as the other role changes (org.Recorder.Record, then
// Finish): the pending audit event, then the role row's permissions cell
// with the event's proof (the commit point). The holders' permissions
// change with that one write: every check reads the role rows.
func (s *Service) SetPermissions(ctx context.Context, rid weibo.RoleID, permissions []org.Permission) (_ *org.Role, err error) {
	defer weibo.Wrapf(&err, "set the permissions of role %s", rid)
	perms, err := org.PermsOf("permissions", permissions)
	if err != nil {
		return nil, err
	}
	role, err := s.Existing(ctx, rid)
	if err != nil {
		return nil, err
	}
	rec, err := s.audit.Record(ctx, org.ActionRolePermissions, org.RoleNode(rid),
		map[string]any{"permissions": role.Perms.List()}, map[string]any{"permissions": perms.List()}, org.RoleProof(rid, false))
	if err != nil {
		return nil, err
	}
	defer s.audit.Finish(ctx, rec, &err)
	if err := s.st.Put(ctx, &hbase.Put{Table: tables.Roles, Row: tables.RoleKey(rid), Values: rec.Proven(hbase.Values{
		tables.FamInfo: {tables.ColRolePerms: tables.EncodeRolePerms(uint64(perms))}})}); err != nil {
		return nil, err
	}
	rec.Commit()
	role.Perms, role.PermsStored = perms, true
	return role, nil
}

// MigratePermissions gives the role named org.AdminRole, when its row
// predates permissions (no tables.ColRolePerms cell), the permission
// ADMINISTRATOR: existing data keeps its administrators. It is idempotent
// and cheap — one Get of the name index and one of the role row, and one
// CheckAndPut(absent) of the cell when it is missing, so a role whose
// permissions were set since (even to none) is never touched. It reports
// whether it wrote. It runs with the gateway's table migration (`gateway
// migrate`, `serve` and the other commands that open the store); errors
// are the store's.
func MigratePermissions(ctx context.Context, st hbase.Store) (_ bool, err error) {
	defer weibo.Wrap(&err, "migrate role permissions")
	r, err := st.Get(ctx, &hbase.Get{Table: tables.RoleNames, Row: tables.RoleNameKey(org.AdminRole)})
	if err != nil {
		return false, err
	}
	rid := tables.RoleNameRole(r)
	if rid == 0 {
		return false, nil
	}
	row, err := st.Get(ctx, &hbase.Get{Table: tables.Roles, Row: tables.RoleKey(rid), Families: []string{tables.FamInfo}})
	if err != nil {
		return false, err
	}
	role := org.RoleFromRow(rid, row)
	if role == nil || role.PermsStored || !bytes.Equal(tables.RoleNameKey(role.Name), tables.RoleNameKey(org.AdminRole)) {
		return false, nil
	}
	bits, _ := org.PermsOf("", []org.Permission{org.PermAdministrator})
	return st.CheckAndPut(ctx, &hbase.Put{Table: tables.Roles, Row: tables.RoleKey(rid), Values: hbase.Values{
		tables.FamInfo: {tables.ColRolePerms: tables.EncodeRolePerms(uint64(bits))}}}, tables.FamInfo, tables.ColRolePerms, nil)
}
