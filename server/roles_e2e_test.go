package server_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/weibohbase/gateway/internal/testenv"
)

// rolePerms creates a role granting perms as token's user and returns its
// id and the permissions createRole answered.
func (g *gw) rolePerms(token, name string, perms []string) (string, []string) {
	g.t.Helper()
	var d struct {
		CreateRole struct {
			ID          string
			Permissions []string
		}
	}
	g.ok(token, `mutation($n: String!, $p: [Permission!]) { createRole(name: $n, permissions: $p) { id permissions } }`,
		map[string]any{"n": name, "p": perms}, &d)
	return d.CreateRole.ID, d.CreateRole.Permissions
}

// forbids runs query as token's user, which must fail FORBIDDEN with a
// message holding want.
func (g *gw) forbids(token, want, query string, vars map[string]any) {
	g.t.Helper()
	if e := g.fails(token, "FORBIDDEN", query, vars); !strings.Contains(e.Message, want) {
		g.t.Errorf("message = %q, want it to say %q\nquery: %s", e.Message, want, query)
	}
}

const (
	assignQ = `mutation($u: ID!, $r: ID!, $p: Int!) { assignRole(userId: $u, roleId: $r, priority: $p) { id } }`
	revokeQ = `mutation($u: ID!, $r: ID!) { revokeRole(userId: $u, roleId: $r) { id } }`
	moveQ   = `mutation($u: ID!, $d: ID) { setUserDepartment(userId: $u, departmentId: $d) { id } }`
)

// TestRankRule drives the priority rule over HTTP on both backends, from
// both sides: a moderator (MANAGE_USERS, MANAGE_ROLES,
// MANAGE_DEPARTMENTS at priority 500) acts on a plain user but is refused
// on an administrator (1000) and on a moderator of equal rank, refused a
// priority at or above their rank, refused the administrators' role and
// handing out permissions they lack — each FORBIDDEN saying which rank or
// permission is missing, nothing written —; bulk changes refuse user by
// user; an ADMINISTRATOR acts on an administrator of equal rank and
// assigns up to their own rank; setRolePermissions is audited.
func TestRankRule(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g, _ := startAdminGateway(t, b.Open(t))
			ada, ann := g.register(uniqueName("ada")), g.register(uniqueName("ann"))
			g.makeAdmin(ada)
			g.makeAdmin(ann)
			mod, mod2, plain := g.register(uniqueName("mod")), g.register(uniqueName("mod2")), g.register(uniqueName("plain"))
			tk := ada.token
			mods, perms := g.rolePerms(tk, uniqueName("moderators"), []string{"MANAGE_DEPARTMENTS", "MANAGE_USERS", "MANAGE_ROLES"})
			if !slices.Equal(perms, []string{"MANAGE_USERS", "MANAGE_ROLES", "MANAGE_DEPARTMENTS"}) {
				t.Fatalf("createRole permissions = %v, want the enum's order", perms)
			}
			helpers, perms := g.rolePerms(tk, uniqueName("helpers"), nil)
			if len(perms) != 0 {
				t.Fatalf("createRole without permissions = %v", perms)
			}
			var adminRole struct{ RoleByName struct{ ID string } }
			g.ok(tk, `{ roleByName(name: "admin") { id } }`, nil, &adminRole)
			for _, a := range []struct {
				u, r string
				p    int
			}{{mod.ID, mods, 500}, {mod2.ID, mods, 500}, {plain.ID, helpers, 10}} {
				g.ok(tk, assignQ, map[string]any{"u": a.u, "r": a.r, "p": a.p}, nil)
			}
			rank := func(token, id string) int {
				t.Helper()
				var d struct{ User struct{ Rank int } }
				g.ok(token, `query($id: ID!) { user(id: $id) { rank } }`, map[string]any{"id": id}, &d)
				return d.User.Rank
			}
			if r := rank(mod.token, mod.ID); r != 500 {
				t.Fatalf("the moderator's own rank = %d, want 500", r)
			}
			if r := rank(tk, ada.ID); r != 1000 {
				t.Fatalf("the administrator's rank = %d, want 1000", r)
			}

			// The moderator on a plain user: allowed below their rank.
			g.ok(mod.token, assignQ, map[string]any{"u": plain.ID, "r": helpers, "p": 499}, nil)
			g.forbids(mod.token, "your rank 500 does not allow assigning priority 500", assignQ, map[string]any{"u": plain.ID, "r": helpers, "p": 500})
			// On an administrator, and on their equal: refused.
			g.forbids(mod.token, "your rank 500 is not above the target's rank 1000", assignQ, map[string]any{"u": ada.ID, "r": helpers, "p": 5})
			g.forbids(mod.token, "your rank 500 is not above the target's rank 500", assignQ, map[string]any{"u": mod2.ID, "r": helpers, "p": 5})
			g.forbids(mod.token, "your rank 500 is not above the target's rank 1000", revokeQ, map[string]any{"u": ada.ID, "r": helpers})
			// Permissions they lack: neither handed out nor taken away.
			g.forbids(mod.token, `needs the permission ADMINISTRATOR, which the role "admin" grants`, assignQ,
				map[string]any{"u": plain.ID, "r": adminRole.RoleByName.ID, "p": 5})
			g.forbids(mod.token, "needs the permission ADMINISTRATOR to grant it",
				`mutation($r: ID!) { setRolePermissions(id: $r, permissions: [ADMINISTRATOR]) { id } }`, map[string]any{"r": mods})
			g.forbids(mod.token, "needs the permission VIEW_AUDIT_LOG to grant it",
				`mutation($n: String!) { createRole(name: $n, permissions: [VIEW_AUDIT_LOG]) { id } }`, map[string]any{"n": uniqueName("spy")})
			g.forbids(mod.token, `needs the permission ADMINISTRATOR, which the role "admin" grants`,
				`mutation($r: ID!) { deleteRole(id: $r) }`, map[string]any{"r": adminRole.RoleByName.ID})
			g.forbids(mod.token, "needs the permission VIEW_AUDIT_LOG", `{ auditLog(first: 1) { edges { cursor } } }`, nil)
			if r := rank(tk, ada.ID); r != 1000 {
				t.Fatalf("a refused change wrote: the administrator's rank = %d", r)
			}
			if r := rank(tk, plain.ID); r != 499 {
				t.Fatalf("the plain user's rank = %d, want 499", r)
			}

			// Bulk: refused user by user.
			var bulk struct{ AssignRoleToUsers bulkResult }
			g.ok(mod.token, `mutation($u: [ID!]!, $r: ID!) { assignRoleToUsers(userIds: $u, roleId: $r, priority: 100) { succeeded { id } failed { userId code message } } }`,
				map[string]any{"u": []string{plain.ID, ada.ID}, "r": helpers}, &bulk)
			if r := bulk.AssignRoleToUsers; len(r.Succeeded) != 1 || r.Succeeded[0].ID != plain.ID || len(r.Failed) != 1 ||
				r.Failed[0].UserID != ada.ID || r.Failed[0].Code != "FORBIDDEN" || !strings.Contains(r.Failed[0].Message, "your rank 500 is not above the target's rank 1000") {
				t.Fatalf("assignRoleToUsers = %+v", r)
			}
			var unbulk struct{ RevokeRoleFromUsers bulkResult }
			g.ok(mod.token, `mutation($u: [ID!]!, $r: ID!) { revokeRoleFromUsers(userIds: $u, roleId: $r) { succeeded { id } failed { userId code message } } }`,
				map[string]any{"u": []string{mod2.ID}, "r": mods}, &unbulk)
			if r := unbulk.RevokeRoleFromUsers; len(r.Succeeded) != 0 || len(r.Failed) != 1 || r.Failed[0].Code != "FORBIDDEN" {
				t.Fatalf("revokeRoleFromUsers(equal rank) = %+v", r)
			}

			// Departments: MANAGE_DEPARTMENTS with the rank rule.
			x := g.createDept(tk, uniqueName("X"), nil)
			g.ok(mod.token, moveQ, map[string]any{"u": plain.ID, "d": x.ID}, nil)
			g.forbids(mod.token, "your rank 500 is not above the target's rank 1000", moveQ, map[string]any{"u": ada.ID, "d": x.ID})
			var moved struct{ SetUsersDepartment bulkResult }
			g.ok(mod.token, `mutation($u: [ID!]!) { setUsersDepartment(userIds: $u, departmentId: null) { succeeded { id } failed { userId code message } } }`,
				map[string]any{"u": []string{plain.ID, ann.ID}}, &moved)
			if r := moved.SetUsersDepartment; len(r.Succeeded) != 1 || r.Succeeded[0].ID != plain.ID || len(r.Failed) != 1 || r.Failed[0].UserID != ann.ID ||
				!strings.Contains(r.Failed[0].Message, "your rank 500 is not above the target's rank 1000") {
				t.Fatalf("setUsersDepartment = %+v", r)
			}

			// Administrators of equal rank manage each other, up to their rank.
			g.ok(tk, assignQ, map[string]any{"u": ann.ID, "r": helpers, "p": 1000}, nil)
			g.ok(ann.token, revokeQ, map[string]any{"u": ann.ID, "r": helpers}, nil)
			g.ok(ann.token, moveQ, map[string]any{"u": ada.ID, "d": x.ID}, nil)

			// setRolePermissions: answered, read back, audited.
			var set struct {
				SetRolePermissions struct{ Permissions []string }
			}
			g.ok(tk, `mutation($r: ID!) { setRolePermissions(id: $r, permissions: [VIEW_AUDIT_LOG, MANAGE_REPORTS]) { permissions } }`, map[string]any{"r": helpers}, &set)
			if got := set.SetRolePermissions.Permissions; !slices.Equal(got, []string{"MANAGE_REPORTS", "VIEW_AUDIT_LOG"}) {
				t.Fatalf("setRolePermissions = %v", got)
			}
			var log struct {
				AuditLog struct {
					Edges []struct {
						Node struct {
							Action, TargetID, Before, After string
							Actor                           struct{ ID string }
						}
					}
				}
			}
			g.ok(tk, `query($t: ID!) { auditLog(first: 5, filter: {targetId: $t, action: "role.setPermissions"}) { edges { node { action targetId before after actor { id } } } } }`,
				map[string]any{"t": helpers}, &log)
			if e := log.AuditLog.Edges; len(e) != 1 || e[0].Node.Actor.ID != ada.ID || e[0].Node.Before != `{"permissions":[]}` ||
				e[0].Node.After != `{"permissions":["MANAGE_REPORTS","VIEW_AUDIT_LOG"]}` {
				t.Fatalf("audit log of setRolePermissions = %+v", e)
			}
			// The plain user now holds VIEW_AUDIT_LOG through helpers.
			g.ok(plain.token, `{ auditLog(first: 1) { edges { cursor } } }`, nil, nil)
		})
	}
}

// TestWhoSeesTheOrganisation checks, over HTTP on both backends, who sees
// role membership, departments and user search: a plain user cannot list
// the admin role's members nor search users by role, and sees another
// user's roles, rank, department and managed departments as empty, but
// sees their own; a holder of MANAGE_ROLES and MANAGE_USERS lists a role's
// members and searches by role, not by department without
// MANAGE_DEPARTMENTS; a department's manager sees its members.
func TestWhoSeesTheOrganisation(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g, _ := startAdminGateway(t, b.Open(t))
			ada, plain, mod, boss := g.register(uniqueName("ada")), g.register(uniqueName("plain")), g.register(uniqueName("mod")), g.register(uniqueName("boss"))
			g.makeAdmin(ada)
			tk := ada.token
			mods, _ := g.rolePerms(tk, uniqueName("moderators"), []string{"MANAGE_USERS", "MANAGE_ROLES"})
			g.ok(tk, assignQ, map[string]any{"u": mod.ID, "r": mods, "p": 300}, nil)
			// The plain user's role granted MANAGE_USERS once, and nothing now.
			plainRole, _ := g.rolePerms(tk, uniqueName("members"), []string{"MANAGE_USERS"})
			g.ok(tk, assignQ, map[string]any{"u": plain.ID, "r": plainRole, "p": 5}, nil)
			g.ok(tk, `mutation($r: ID!) { setRolePermissions(id: $r, permissions: []) { id } }`, map[string]any{"r": plainRole}, nil)
			d := g.createDept(tk, uniqueName("D"), nil)
			for _, u := range []string{ada.ID, plain.ID} {
				g.ok(tk, moveQ, map[string]any{"u": u, "d": d.ID}, nil)
			}
			g.ok(tk, `mutation($d: ID!, $u: ID!) { addDepartmentManager(departmentId: $d, userId: $u) { id } }`, map[string]any{"d": d.ID, "u": boss.ID}, nil)
			var adminRole struct{ RoleByName struct{ ID string } }
			g.ok(tk, `{ roleByName(name: "admin") { id } }`, nil, &adminRole)

			// A plain user (holding a role that now grants nothing).
			g.forbids(plain.token, "needs the permission MANAGE_ROLES", `{ roleByName(name: "admin") { members { edges { priority } } } }`, nil)
			g.forbids(plain.token, "needs the permission MANAGE_USERS", `query($r: ID!) { users(filter: {roleId: $r}) { edges { cursor } } }`,
				map[string]any{"r": adminRole.RoleByName.ID})
			g.forbids(plain.token, "MANAGE_DEPARTMENTS", `query($d: ID!) { department(id: $d) { members { edges { cursor } } } }`, map[string]any{"d": d.ID})
			const profile = `query($id: ID!) { user(id: $id) { roles { role { name } priority } rank department { id } managedDepartments { id } } }`
			type profileData struct {
				User struct {
					Roles []struct {
						Role     struct{ Name string }
						Priority int
					}
					Rank               int
					Department         *struct{ ID string }
					ManagedDepartments []struct{ ID string }
				}
			}
			var p profileData
			g.ok(plain.token, profile, map[string]any{"id": ada.ID}, &p)
			if len(p.User.Roles) != 0 || p.User.Rank != 0 || p.User.Department != nil || len(p.User.ManagedDepartments) != 0 {
				t.Fatalf("the administrator's profile as a plain user sees it = %+v, want neither roles nor department", p.User)
			}
			var bossAsPlain profileData
			g.ok(plain.token, profile, map[string]any{"id": boss.ID}, &bossAsPlain)
			if len(bossAsPlain.User.ManagedDepartments) != 0 {
				t.Fatalf("the manager's departments as a plain user sees them = %+v", bossAsPlain.User.ManagedDepartments)
			}
			var own profileData
			g.ok(plain.token, profile, map[string]any{"id": plain.ID}, &own)
			if len(own.User.Roles) != 1 || own.User.Roles[0].Priority != 5 || own.User.Rank != 5 || own.User.Department == nil || own.User.Department.ID != d.ID {
				t.Fatalf("the plain user's own profile = %+v, want their role and department", own.User)
			}
			var adaSelf profileData
			g.ok(tk, profile, map[string]any{"id": ada.ID}, &adaSelf)
			if len(adaSelf.User.Roles) == 0 || adaSelf.User.Rank != 1000 || adaSelf.User.Department == nil {
				t.Fatalf("the administrator's own profile = %+v", adaSelf.User)
			}

			// MANAGE_ROLES and MANAGE_USERS: role members and search by role.
			var members struct {
				Role struct {
					Members struct {
						Edges []struct{ Node struct{ ID string } }
					}
				}
			}
			g.ok(mod.token, `query($r: ID!) { role(id: $r) { members { edges { node { id } } } } }`, map[string]any{"r": mods}, &members)
			if e := members.Role.Members.Edges; len(e) != 1 || e[0].Node.ID != mod.ID {
				t.Fatalf("the moderators' members as a moderator sees them = %+v", e)
			}
			var found struct {
				Users struct {
					Edges []struct{ Node struct{ ID string } }
				}
			}
			g.ok(mod.token, `query($r: ID!) { users(filter: {roleId: $r}) { edges { node { id } } } }`, map[string]any{"r": mods}, &found)
			if len(found.Users.Edges) != 1 || found.Users.Edges[0].Node.ID != mod.ID {
				t.Fatalf("users(roleId) as a moderator = %+v", found.Users.Edges)
			}
			var modSees profileData
			g.ok(mod.token, profile, map[string]any{"id": ada.ID}, &modSees)
			if modSees.User.Rank != 1000 || modSees.User.Department != nil {
				t.Fatalf("the administrator's profile as the moderator sees it = %+v, want roles, no department", modSees.User)
			}
			g.forbids(mod.token, "needs the permission MANAGE_DEPARTMENTS", `query($d: ID!) { users(filter: {departmentId: $d}) { edges { cursor } } }`, map[string]any{"d": d.ID})

			// A department's manager sees its members and who is in it.
			var dm struct {
				Department struct {
					Members struct {
						Edges []struct{ Node struct{ ID string } }
					}
					Managers []struct{ ID string }
				}
			}
			g.ok(boss.token, `query($d: ID!) { department(id: $d) { members { edges { node { id } } } managers { id } } }`, map[string]any{"d": d.ID}, &dm)
			if len(dm.Department.Members.Edges) != 2 || len(dm.Department.Managers) != 1 {
				t.Fatalf("the department as its manager sees it = %+v", dm.Department)
			}
			var bossSees profileData
			g.ok(boss.token, profile, map[string]any{"id": plain.ID}, &bossSees)
			if bossSees.User.Department == nil || len(bossSees.User.Roles) != 0 {
				t.Fatalf("the plain user's profile as the manager sees it = %+v, want the department only", bossSees.User)
			}
		})
	}
}
