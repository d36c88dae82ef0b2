package authz_test

import (
	"testing"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/org"
	"github.com/weibohbase/gateway/weibo/org/role"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestRankRule checks the standing read and the rank rule through the
// domain's wiring, on both backends: an administrator at 1000, a second
// one at 1000, a moderator (MANAGE_USERS, MANAGE_ROLES,
// MANAGE_DEPARTMENTS) at 500 and a plain user. The moderator may act on
// the plain user but not on an administrator nor on another moderator of
// equal rank, may assign priorities below 500 only, and may not hand out
// the administrators' role; an administrator may act on the other of
// equal rank and assign up to 1000; a deleted role counts for nothing.
func TestRankRule(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			d := domaintest.Quiet(domaintest.OwnStore(t, b))
			user := func(name string) weibo.UserID { return domaintest.MustUser(t, d, name).ID }
			adm, adm2, mod, mod2, plain := user("adm"), user("adm2"), user("mod"), user("mod2"), user("plain")
			admins, err := d.Org.Roles.Create(ctx, "administrators", org.PermAdministrator)
			if err != nil {
				t.Fatal(err)
			}
			mods, err := d.Org.Roles.Create(ctx, "moderators", org.PermManageUsers, org.PermManageRoles, org.PermManageDepartments)
			if err != nil {
				t.Fatal(err)
			}
			helpers, err := d.Org.Roles.Create(ctx, "helpers")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := d.Org.Roles.Create(ctx, "bad", "NOT_A_PERMISSION"); weibo.CodeOf(err) != weibo.CodeBadUserInput {
				t.Errorf("Create(unknown permission) = %v, want BAD_USER_INPUT", err)
			}
			for _, a := range []struct {
				u    weibo.UserID
				r    weibo.RoleID
				prio int
			}{{adm, admins.ID, 1000}, {adm2, admins.ID, 1000}, {mod, mods.ID, 500}, {mod, helpers.ID, 20}, {mod2, mods.ID, 500}, {plain, helpers.ID, 10}} {
				if _, err := d.Org.Roles.Assign(ctx, a.u, a.r, a.prio); err != nil {
					t.Fatal(err)
				}
			}
			sts, err := d.Org.Authz.Standings(ctx, []weibo.UserID{adm, mod, plain, user("nobody")})
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range []struct {
				rank  int
				perms []org.Permission
			}{{1000, []org.Permission{org.PermAdministrator}}, {500, []org.Permission{org.PermManageUsers, org.PermManageRoles, org.PermManageDepartments}}, {10, nil}, {0, nil}} {
				if sts[i].Rank != want.rank || len(sts[i].Perms.List()) != len(want.perms) {
					t.Errorf("standing %d = %+v (%v), want rank %d, %v", i, sts[i], sts[i].Perms.List(), want.rank, want.perms)
				}
			}
			forbidden(t, "RequirePermission(mod, MANAGE_USERS)", d.Org.Authz.RequirePermission(ctx, mod, org.PermManageUsers), "")
			forbidden(t, "RequirePermission(mod, VIEW_AUDIT_LOG)", d.Org.Authz.RequirePermission(ctx, mod, org.PermViewAuditLog), "needs the permission VIEW_AUDIT_LOG")
			forbidden(t, "RequirePermission(adm, MANAGE_REPORTS)", d.Org.Authz.RequirePermission(ctx, adm, org.PermManageReports), "")
			forbidden(t, "RequirePermission(plain, MANAGE_USERS)", d.Org.Authz.RequirePermission(ctx, plain, org.PermManageUsers), "needs the permission MANAGE_USERS")

			forbidden(t, "ActOn(mod, adm)", d.Org.Authz.ActOn(ctx, mod, adm), "your rank 500 is not above the target's rank 1000")
			forbidden(t, "ActOn(mod, mod2)", d.Org.Authz.ActOn(ctx, mod, mod2), "your rank 500 is not above the target's rank 500")
			forbidden(t, "ActOn(mod, plain)", d.Org.Authz.ActOn(ctx, mod, plain), "")
			forbidden(t, "ActOn(adm, adm2)", d.Org.Authz.ActOn(ctx, adm, adm2), "")
			forbidden(t, "ActOn(plain, mod)", d.Org.Authz.ActOn(ctx, plain, mod), "your rank 10 is not above the target's rank 500")

			prio := func(p int) *int { return &p }
			_, err = d.Org.Authz.Assignments(ctx, mod, []weibo.UserID{plain}, helpers.ID, prio(500))
			forbidden(t, "Assignments(mod, priority 500)", err, "your rank 500 does not allow assigning priority 500")
			_, err = d.Org.Authz.Assignments(ctx, mod, []weibo.UserID{plain}, admins.ID, prio(5))
			forbidden(t, "Assignments(mod, the administrators' role)", err, `needs the permission ADMINISTRATOR, which the role "administrators" grants`)
			refused, err := d.Org.Authz.Assignments(ctx, mod, []weibo.UserID{plain, adm, mod2}, helpers.ID, prio(499))
			if err != nil {
				t.Fatal(err)
			}
			forbidden(t, "Assignments(mod → plain)", refused[0], "")
			forbidden(t, "Assignments(mod → adm)", refused[1], "your rank 500 is not above the target's rank 1000")
			forbidden(t, "Assignments(mod → mod2)", refused[2], "your rank 500 is not above")
			refused, err = d.Org.Authz.Assignments(ctx, adm, []weibo.UserID{adm2}, admins.ID, prio(1000))
			if err != nil || refused[0] != nil {
				t.Errorf("Assignments(adm → adm2, 1000) = %v, %v; want allowed", refused, err)
			}
			forbidden(t, "ManageRole(mod, new ADMINISTRATOR)", d.Org.Authz.ManageRole(ctx, mod, 0, org.PermSet(1)), "needs the permission ADMINISTRATOR")
			forbidden(t, "ManageRole(mod, administrators)", d.Org.Authz.ManageRole(ctx, mod, admins.ID, 0), "ADMINISTRATOR")
			forbidden(t, "ManageRole(mod, helpers)", d.Org.Authz.ManageRole(ctx, mod, helpers.ID, 0), "")

			// Moves: the moderator holds MANAGE_DEPARTMENTS, so the rank rule decides.
			x, err := d.Org.Departments.Create(ctx, "X", weibo.RootDept)
			if err != nil {
				t.Fatal(err)
			}
			ds, err := d.Org.Authz.Moves(ctx, mod, []weibo.UserID{plain, adm}, x.ID)
			if err != nil {
				t.Fatal(err)
			}
			forbidden(t, "Moves(mod, plain)", ds[0].Err, "")
			forbidden(t, "Moves(mod, adm)", ds[1].Err, "your rank 500 is not above the target's rank 1000")
			// A move decided again (the user moved meanwhile) applies the rank rule too.
			forbidden(t, "Guard(mod, adm moved)", d.Org.Authz.Guard(mod, x.ID, ds[1])(ctx, x.ID), "your rank 500 is not above the target's rank 1000")
			forbidden(t, "Guard(mod, plain moved)", d.Org.Authz.Guard(mod, x.ID, ds[0])(ctx, x.ID), "")

			// A deleted role counts for nothing.
			if _, err := d.Org.Roles.Delete(ctx, mods.ID); err != nil {
				t.Fatal(err)
			}
			st, err := d.Org.Authz.Standing(ctx, mod)
			if err != nil || st.Rank != 20 || st.Perms != 0 {
				t.Errorf("standing after delete = %+v, %v; want rank 20, no permissions", st, err)
			}
		})
	}
}

// TestMigratePermissions checks the migration of a role of an older
// version, on both backends: the role named admin without a permissions
// cell gains ADMINISTRATOR, once; a second run writes nothing; a role
// whose permissions were set since (even to none) is left as it is.
func TestMigratePermissions(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := domaintest.OwnStore(t, b)
			d := domaintest.Quiet(st)
			if wrote, err := role.MigratePermissions(ctx, st); err != nil || wrote {
				t.Fatalf("MigratePermissions(no admin role) = %v, %v", wrote, err)
			}
			adm := domaintest.MustUser(t, d, "old_admin").ID
			r, err := d.Org.Roles.Create(ctx, org.AdminRole)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := d.Org.Roles.Assign(ctx, adm, r.ID, org.MaxPriority); err != nil {
				t.Fatal(err)
			}
			// The row as an older version wrote it: no permissions cell.
			if err := st.Delete(ctx, &hbase.Delete{Table: tables.Roles, Row: tables.RoleKey(r.ID), Values: hbase.Values{tables.FamInfo: {tables.ColRolePerms: nil}}}); err != nil {
				t.Fatal(err)
			}
			forbidden(t, "RequirePermission(before)", d.Org.Authz.RequirePermission(ctx, adm, org.PermManageRoles), "needs the permission MANAGE_ROLES")
			if wrote, err := role.MigratePermissions(ctx, st); err != nil || !wrote {
				t.Fatalf("MigratePermissions = %v, %v; want written", wrote, err)
			}
			forbidden(t, "RequirePermission(after)", d.Org.Authz.RequirePermission(ctx, adm, org.PermManageRoles), "")
			if wrote, err := role.MigratePermissions(ctx, st); err != nil || wrote {
				t.Fatalf("MigratePermissions again = %v, %v; want nothing written", wrote, err)
			}
			if _, err := d.Org.Roles.SetPermissions(ctx, r.ID, nil); err != nil {
				t.Fatal(err)
			}
			if wrote, err := role.MigratePermissions(ctx, st); err != nil || wrote {
				t.Fatalf("MigratePermissions after setPermissions([]) = %v, %v; want nothing written", wrote, err)
			}
			forbidden(t, "RequirePermission(emptied)", d.Org.Authz.RequirePermission(ctx, adm, org.PermManageRoles), "needs the permission MANAGE_ROLES")
		})
	}
}
