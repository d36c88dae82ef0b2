package server_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/weibohbase/gateway/fsck"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/seed"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/org"
)

// startAdminGateway is startGateway with a fault hook in the service.
func startAdminGateway(t *testing.T, st hbase.StoreAdmin) (*gw, *domaintest.Faults) {
	t.Helper()
	f := domaintest.NewFaults()
	return startGateway(t, st, domain.WithStepHook(f.Hook)), f
}

// makeAdmin grants the admin role the way `gateway admin grant` does.
func (g *gw) makeAdmin(a account) {
	g.t.Helper()
	if _, _, err := g.svc.GrantRoleByName(g.t.Context(), a.Username, org.AdminRole, org.MaxPriority); err != nil {
		g.t.Fatalf("grant admin: %v", err)
	}
}

type roleData struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	MemberCount int    `json:"memberCount"`
	Members     struct {
		Edges []struct {
			Priority int
			Node     struct{ ID string }
		}
		PageInfo struct {
			HasNextPage bool
			EndCursor   *string
		}
	} `json:"members"`
}

type deptData struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Parent    *struct{ ID, Name string }
	Ancestors []struct{ Name string }
	Children  struct {
		Edges []struct{ Node struct{ ID, Name string } }
	}
	Members struct {
		Edges []struct{ Node struct{ ID string } }
	}
}

func (d deptData) childNames() []string {
	var out []string
	for _, e := range d.Children.Edges {
		out = append(out, e.Node.Name)
	}
	return out
}

const roleFields = `id name memberCount members(first: $first, after: $after) { edges { priority node { id } } pageInfo { hasNextPage endCursor } }`
const deptFields = `id name parent { id name } ancestors { name } children { edges { node { id name } } } members { edges { node { id } } }`

func (g *gw) createRole(token, name string) roleData {
	g.t.Helper()
	var d struct{ CreateRole roleData }
	g.ok(token, `mutation($n: String!, $first: Int, $after: String) { createRole(name: $n) { `+roleFields+` } }`, map[string]any{"n": name}, &d)
	return d.CreateRole
}

func (g *gw) role(token, id string, first int, after *string) roleData {
	g.t.Helper()
	var d struct{ Role roleData }
	vars := map[string]any{"id": id, "first": first}
	if after != nil {
		vars["after"] = *after
	}
	g.ok(token, `query($id: ID!, $first: Int, $after: String) { role(id: $id) { `+roleFields+` } }`, vars, &d)
	return d.Role
}

// userRoles returns "name:priority" of a user's roles, in the order given.
func (g *gw) userRoles(token, id string) []string {
	g.t.Helper()
	var d struct {
		User struct {
			Roles []struct {
				Role     struct{ Name string }
				Priority int
			}
		}
	}
	g.ok(token, `query($id: ID!) { user(id: $id) { roles { role { name } priority } } }`, map[string]any{"id": id}, &d)
	var out []string
	for _, r := range d.User.Roles {
		out = append(out, fmt.Sprintf("%s:%d", r.Role.Name, r.Priority))
	}
	return out
}

func (g *gw) assign(token, user, role string, prio int) {
	g.t.Helper()
	g.ok(token, `mutation($u: ID!, $r: ID!, $p: Int!) { assignRole(userId: $u, roleId: $r, priority: $p) { id } }`, map[string]any{"u": user, "r": role, "p": prio}, nil)
}

func (g *gw) createDept(token, name string, parent *string) deptData {
	g.t.Helper()
	var d struct{ CreateDepartment deptData }
	vars := map[string]any{"n": name}
	if parent != nil {
		vars["p"] = *parent
	}
	g.ok(token, `mutation($n: String!, $p: ID) { createDepartment(name: $n, parentId: $p) { `+deptFields+` } }`, vars, &d)
	return d.CreateDepartment
}

func (g *gw) dept(token, id string) deptData {
	g.t.Helper()
	var d struct{ Department deptData }
	g.ok(token, `query($id: ID!) { department(id: $id) { `+deptFields+` } }`, map[string]any{"id": id}, &d)
	return d.Department
}

// topDepartments returns the names of every top-level department, read in
// pages of 100 (a long-lived shared HBase holds other runs' departments).
func (g *gw) topDepartments(token string) []string {
	g.t.Helper()
	var out []string
	var after *string
	for range 1000 {
		var d struct {
			TopDepartments struct {
				Edges    []struct{ Node struct{ Name string } }
				PageInfo struct {
					HasNextPage bool
					EndCursor   *string
				}
			}
		}
		g.ok(token, `query($after: String) { topDepartments(first: 100, after: $after) { edges { node { name } } pageInfo { hasNextPage endCursor } } }`,
			map[string]any{"after": after}, &d)
		for _, e := range d.TopDepartments.Edges {
			out = append(out, e.Node.Name)
		}
		if !d.TopDepartments.PageInfo.HasNextPage {
			return out
		}
		after = d.TopDepartments.PageInfo.EndCursor
	}
	g.t.Fatal("topDepartments: more than 1000 pages")
	return nil
}

// TestAdminAuthorization checks that every admin mutation needs a token
// (UNAUTHENTICATED) and the admin role (FORBIDDEN), that reads need only a
// token, and that granting and revoking admin takes effect at once.
func TestAdminAuthorization(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g, _ := startAdminGateway(t, b.Open(t))
			boss, bob := g.register(uniqueName("boss")), g.register(uniqueName("bob"))
			mutations := map[string]string{
				"createRole":        `mutation { createRole(name: "x") { id } }`,
				"renameRole":        `mutation { renameRole(id: "1", name: "x") { id } }`,
				"deleteRole":        `mutation { deleteRole(id: "1") }`,
				"assignRole":        `mutation { assignRole(userId: "1", roleId: "1", priority: 1) { id } }`,
				"revokeRole":        `mutation { revokeRole(userId: "1", roleId: "1") { id } }`,
				"createDepartment":  `mutation { createDepartment(name: "x") { id } }`,
				"renameDepartment":  `mutation { renameDepartment(id: "1", name: "x") { id } }`,
				"moveDepartment":    `mutation { moveDepartment(id: "1", parentId: "2") { id } }`,
				"deleteDepartment":  `mutation { deleteDepartment(id: "1", cascade: true) }`,
				"setUserDepartment": `mutation { setUserDepartment(userId: "1", departmentId: "1") { id } }`,
			}
			for name, q := range mutations {
				t.Run(name, func(t *testing.T) {
					g.t = t
					g.fails("", "UNAUTHENTICATED", q, nil)
					g.fails("not.a.jwt", "UNAUTHENTICATED", q, nil)
					g.fails(bob.token, "FORBIDDEN", q, nil)
					g.fails(boss.token, "FORBIDDEN", q, nil) // not an admin yet
				})
			}
			g.t = t
			// Reads: any logged-in user, nobody anonymous.
			for _, q := range []string{`{ roles { edges { cursor } } }`, `{ topDepartments { edges { cursor } } }`, `{ role(id: "1") { id } }`,
				`{ department(id: "1") { id } }`, `{ roleByName(name: "admin") { id } }`} {
				g.fails("", "UNAUTHENTICATED", q, nil)
				g.ok(bob.token, q, nil, nil)
			}
			g.makeAdmin(boss)
			r := g.createRole(boss.token, uniqueName("auditor"))
			if r.ID == "" || r.MemberCount != 0 {
				t.Fatalf("createRole = %+v", r)
			}
			g.fails(bob.token, "FORBIDDEN", `mutation($r: ID!) { deleteRole(id: $r) }`, map[string]any{"r": r.ID})
			// The directive's verdict is the role table's: revoking admin locks out at once.
			if got := g.userRoles(boss.token, boss.ID); len(got) == 0 || got[0] != org.AdminRole+":1000" {
				t.Fatalf("boss's roles = %v", got)
			}
			if got := g.userRoles(bob.token, boss.ID); len(got) != 0 {
				t.Fatalf("boss's roles as bob sees them = %v, want none (bob lacks MANAGE_ROLES)", got)
			}
			if err := g.svc.RevokeRoleByName(t.Context(), boss.Username, org.AdminRole); err != nil {
				t.Fatal(err)
			}
			g.fails(boss.token, "FORBIDDEN", `mutation { createRole(name: "again") { id } }`, nil)
		})
	}
}

// TestAdminRolesAndDepartments drives every admin mutation over HTTP on
// both backends: roles with priorities (order, re-assign, revoke, rename,
// delete), the department tree (children, ancestors, move with cycle
// refusal, membership, non-empty and cascade delete) and bad input.
func TestAdminRolesAndDepartments(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g, _ := startAdminGateway(t, b.Open(t))
			boss, ming, hong := g.register(uniqueName("boss")), g.register(uniqueName("ming")), g.register(uniqueName("hong"))
			g.makeAdmin(boss)
			tk := boss.token
			tag := uniqueName("")
			sport, labor, study := g.createRole(tk, "体育委员"+tag), g.createRole(tk, "劳动委员"+tag), g.createRole(tk, "学习委员"+tag)

			// Bad input: coded errors, nothing written.
			bad := []struct{ code, q string }{
				{"BAD_USER_INPUT", `mutation { createRole(name: "  ") { id } }`},
				{"BAD_USER_INPUT", `mutation($n: String!) { createRole(name: $n) { id } }`},
				{"BAD_USER_INPUT", `mutation($r: ID!) { renameRole(id: $r, name: "") { id } }`},
				{"BAD_USER_INPUT", `mutation($u: ID!, $r: ID!) { assignRole(userId: $u, roleId: $r, priority: 0) { id } }`},
				{"BAD_USER_INPUT", `mutation($u: ID!, $r: ID!) { assignRole(userId: $u, roleId: $r, priority: 1001) { id } }`},
				{"BAD_USER_INPUT", `mutation($u: ID!) { assignRole(userId: $u, roleId: "abc", priority: 5) { id } }`},
				{"NOT_FOUND", `mutation($u: ID!) { assignRole(userId: $u, roleId: "999999999", priority: 5) { id } }`},
				{"NOT_FOUND", `mutation($r: ID!) { assignRole(userId: "999999999999", roleId: $r, priority: 5) { id } }`},
				{"NOT_FOUND", `mutation($u: ID!) { revokeRole(userId: $u, roleId: "999999999") { id } }`},
				{"NOT_FOUND", `mutation { renameRole(id: "999999999", name: "x") { id } }`},
				{"NOT_FOUND", `mutation { deleteRole(id: "999999999") }`},
				{"BAD_USER_INPUT", `mutation { createDepartment(name: "") { id } }`},
				{"NOT_FOUND", `mutation { createDepartment(name: "x", parentId: "999999999") { id } }`},
				{"BAD_USER_INPUT", `mutation { createDepartment(name: "x", parentId: "-3") { id } }`},
				{"NOT_FOUND", `mutation { renameDepartment(id: "999999999", name: "x") { id } }`},
				{"NOT_FOUND", `mutation { moveDepartment(id: "999999999") { id } }`},
				{"NOT_FOUND", `mutation { deleteDepartment(id: "999999999") }`},
				{"NOT_FOUND", `mutation($u: ID!) { setUserDepartment(userId: $u, departmentId: "999999999") { id } }`},
				{"BAD_USER_INPUT", `{ roles(first: 0) { edges { cursor } } }`},
				{"BAD_USER_INPUT", `{ roles(after: "bm9wZQ") { edges { cursor } } }`},
			}
			for _, c := range bad {
				g.fails(tk, c.code, c.q, map[string]any{"u": ming.ID, "r": sport.ID, "n": sport.Name})
			}
			var nope struct{ Role, Department *struct{ ID string } }
			g.ok(tk, `{ role(id: "999999999") { id } department(id: "999999999") { id } }`, nil, &nope)
			if nope.Role != nil || nope.Department != nil {
				t.Fatalf("unknown ids gave %+v", nope)
			}
			if got := g.userRoles(tk, ming.ID); len(got) != 0 {
				t.Fatalf("bad input wrote roles: %v", got)
			}

			// The seed's priorities: 小明 劳动委员 > 体育委员, 小红 学习委员 > 劳动委员 > 体育委员.
			g.assign(tk, ming.ID, sport.ID, 9)
			g.assign(tk, ming.ID, labor.ID, 10)
			g.assign(tk, hong.ID, sport.ID, 8)
			g.assign(tk, hong.ID, labor.ID, 9)
			g.assign(tk, hong.ID, study.ID, 10)
			if got, want := g.userRoles(tk, hong.ID), []string{study.Name + ":10", labor.Name + ":9", sport.Name + ":8"}; !slices.Equal(got, want) {
				t.Fatalf("小红's roles = %v, want %v", got, want)
			}
			if got := g.userRoles(ming.token, hong.ID); len(got) != 0 {
				t.Fatalf("小红's roles as 小明 sees them = %v, want none", got)
			}
			if got, want := g.userRoles(ming.token, ming.ID), []string{labor.Name + ":10", sport.Name + ":9"}; !slices.Equal(got, want) {
				t.Fatalf("小明's roles = %v, want %v", got, want)
			}
			g.assign(tk, ming.ID, sport.ID, 11) // re-assign: new priority
			if got := g.userRoles(tk, ming.ID); got[0] != sport.Name+":11" {
				t.Fatalf("re-assign did not update the priority: %v", got)
			}
			r := g.role(tk, sport.ID, 1, nil)
			if r.MemberCount != 2 || len(r.Members.Edges) != 1 || !r.Members.PageInfo.HasNextPage {
				t.Fatalf("体育委员 page 1 = %+v", r)
			}
			r2 := g.role(tk, sport.ID, 1, r.Members.PageInfo.EndCursor)
			got := map[string]int{r.Members.Edges[0].Node.ID: r.Members.Edges[0].Priority, r2.Members.Edges[0].Node.ID: r2.Members.Edges[0].Priority}
			if got[ming.ID] != 11 || got[hong.ID] != 8 || r2.Members.PageInfo.HasNextPage {
				t.Fatalf("体育委员 members = %v", got)
			}
			var rv struct{ RevokeRole struct{ ID string } }
			g.ok(tk, `mutation($u: ID!, $r: ID!) { revokeRole(userId: $u, roleId: $r) { id } }`, map[string]any{"u": hong.ID, "r": labor.ID}, &rv)
			if rv.RevokeRole.ID != hong.ID {
				t.Fatalf("revokeRole returned %+v", rv)
			}
			if got := g.userRoles(tk, hong.ID); !slices.Equal(got, []string{study.Name + ":10", sport.Name + ":8"}) {
				t.Fatalf("after revoke: %v", got)
			}
			g.fails(tk, "BAD_USER_INPUT", `mutation($r: ID!, $n: String!) { renameRole(id: $r, name: $n) { id } }`, map[string]any{"r": sport.ID, "n": strings.ToUpper(study.Name)})
			var rn struct{ RenameRole roleData }
			g.ok(tk, `mutation($r: ID!, $n: String!) { renameRole(id: $r, name: $n) { id name } }`, map[string]any{"r": sport.ID, "n": "体育部长" + tag}, &rn)
			if rn.RenameRole.Name != "体育部长"+tag {
				t.Fatalf("rename = %+v", rn)
			}
			var del struct{ DeleteRole bool }
			g.ok(tk, `mutation($r: ID!) { deleteRole(id: $r) }`, map[string]any{"r": sport.ID}, &del)
			if !del.DeleteRole {
				t.Fatal("deleteRole returned false")
			}
			if got := g.userRoles(tk, ming.ID); !slices.Equal(got, []string{labor.Name + ":10"}) {
				t.Fatalf("小明's roles after deleteRole = %v", got)
			}
			var byName struct{ RoleByName *roleData }
			g.ok(tk, `query($n: String!) { roleByName(name: $n) { id name } }`, map[string]any{"n": strings.ToUpper(labor.Name)}, &byName)
			if byName.RoleByName == nil || byName.RoleByName.ID != labor.ID {
				t.Fatalf("roleByName = %+v", byName.RoleByName)
			}

			// Departments.
			ceo := g.createDept(tk, "CEO"+tag, nil)
			dev := g.createDept(tk, "开发部"+tag, &ceo.ID)
			test := g.createDept(tk, "测试部"+tag, &ceo.ID)
			dev1, dev2, big := g.createDept(tk, "开发1", &dev.ID), g.createDept(tk, "开发2", &dev.ID), g.createDept(tk, "大数据部", &dev.ID)
			if big.Parent == nil || big.Parent.ID != dev.ID || len(big.Ancestors) != 2 || big.Ancestors[0].Name != "CEO"+tag {
				t.Fatalf("大数据部 = %+v", big)
			}
			if got := g.dept(tk, dev.ID).childNames(); !slices.Equal(got, []string{"开发1", "开发2", "大数据部"}) {
				t.Fatalf("children of 开发部 = %v", got)
			}
			// The tree is any signed-in user's; its members are not.
			var tree struct {
				Department struct{ SubDepartments struct{ Edges []any } }
			}
			g.ok(ming.token, `query($id: ID!) { department(id: $id) { subDepartments { edges { cursor } } } }`, map[string]any{"id": dev.ID}, &tree)
			if len(tree.Department.SubDepartments.Edges) != 3 {
				t.Fatalf("开发部's sub-departments as 小明 sees them = %+v", tree)
			}
			g.fails(ming.token, "FORBIDDEN", `query($id: ID!) { department(id: $id) { members { edges { cursor } } } }`, map[string]any{"id": dev.ID})
			if top := g.topDepartments(ming.token); !slices.Contains(top, "CEO"+tag) || slices.Contains(top, "开发部"+tag) {
				t.Fatalf("topDepartments = %v", top)
			}
			var mv struct{ MoveDepartment deptData }
			for _, under := range []string{dev.ID, dev1.ID} {
				e := g.fails(tk, "BAD_USER_INPUT", `mutation($d: ID!, $p: ID) { moveDepartment(id: $d, parentId: $p) { id } }`, map[string]any{"d": dev.ID, "p": under})
				if e.Extensions["reason"] != weibo.ReasonDepartmentCycle {
					t.Fatalf("cycle error = %+v", e)
				}
			}
			g.ok(tk, `mutation($d: ID!, $p: ID) { moveDepartment(id: $d, parentId: $p) { `+deptFields+` } }`, map[string]any{"d": big.ID, "p": test.ID}, &mv)
			if mv.MoveDepartment.Parent == nil || mv.MoveDepartment.Parent.ID != test.ID {
				t.Fatalf("moved = %+v", mv.MoveDepartment)
			}
			g.ok(tk, `mutation($d: ID!) { moveDepartment(id: $d) { `+deptFields+` } }`, map[string]any{"d": test.ID}, &mv)
			if mv.MoveDepartment.Parent != nil || len(mv.MoveDepartment.Ancestors) != 0 || !slices.Contains(g.topDepartments(tk), "测试部"+tag) {
				t.Fatalf("moved to top = %+v", mv.MoveDepartment)
			}
			var rd struct{ RenameDepartment deptData }
			g.ok(tk, `mutation($d: ID!) { renameDepartment(id: $d, name: "质量部") { `+deptFields+` } }`, map[string]any{"d": test.ID}, &rd)
			if rd.RenameDepartment.Name != "质量部" || !slices.Equal(rd.RenameDepartment.childNames(), []string{"大数据部"}) {
				t.Fatalf("renamed = %+v", rd.RenameDepartment)
			}

			// Membership.
			var su struct {
				SetUserDepartment struct {
					ID         string
					Department *struct{ ID, Name string }
				}
			}
			setDept := func(u account, d *string) {
				t.Helper()
				vars := map[string]any{"u": u.ID}
				if d != nil {
					vars["d"] = *d
				}
				g.ok(tk, `mutation($u: ID!, $d: ID) { setUserDepartment(userId: $u, departmentId: $d) { id department { id name } } }`, vars, &su)
			}
			setDept(ming, &dev1.ID)
			if su.SetUserDepartment.Department == nil || su.SetUserDepartment.Department.ID != dev1.ID {
				t.Fatalf("setUserDepartment = %+v", su)
			}
			setDept(hong, &dev1.ID)
			setDept(hong, &dev2.ID)
			if m := g.dept(tk, dev1.ID).Members.Edges; len(m) != 1 || m[0].Node.ID != ming.ID {
				t.Fatalf("开发1 members = %+v", m)
			}
			setDept(hong, nil)
			if su.SetUserDepartment.Department != nil {
				t.Fatalf("department after unset = %+v", su.SetUserDepartment.Department)
			}

			// Delete: non-empty refused, empty fine, cascade takes the subtree.
			for _, d := range []string{dev.ID, dev1.ID} {
				e := g.fails(tk, "BAD_USER_INPUT", `mutation($d: ID!) { deleteDepartment(id: $d) }`, map[string]any{"d": d})
				if e.Extensions["reason"] != weibo.ReasonDepartmentNotEmpty {
					t.Fatalf("non-empty delete error = %+v", e)
				}
			}
			var dd struct{ DeleteDepartment bool }
			g.ok(tk, `mutation($d: ID!) { deleteDepartment(id: $d) }`, map[string]any{"d": dev2.ID}, &dd)
			g.ok(tk, `mutation($d: ID!) { deleteDepartment(id: $d, cascade: true) }`, map[string]any{"d": dev.ID}, &dd)
			if !dd.DeleteDepartment {
				t.Fatal("cascade delete returned false")
			}
			var after struct {
				A, B, C *struct{ ID string }
				User    struct{ Department *struct{ ID string } }
			}
			g.ok(tk, `query($a: ID!, $b: ID!, $c: ID!, $u: ID!) { a: department(id: $a) { id } b: department(id: $b) { id } c: department(id: $c) { id }
				user(id: $u) { department { id } } }`, map[string]any{"a": dev.ID, "b": dev1.ID, "c": test.ID, "u": ming.ID}, &after)
			if after.A != nil || after.B != nil || after.C == nil || after.User.Department != nil {
				t.Fatalf("after cascade: %+v", after)
			}
			if got := g.dept(tk, ceo.ID).childNames(); len(got) != 0 {
				t.Fatalf("CEO children after cascade = %v", got)
			}
		})
	}
}

// TestAdminHalfWrittenPair injects a failure between the two writes of
// assignRole and setUserDepartment, checks over GraphQL that reads show
// neither half, and that fsck repairs the pairs, on both backends.
func TestAdminHalfWrittenPair(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g, faults := startAdminGateway(t, b.Open(t))
			boss, ming := g.register(uniqueName("boss")), g.register(uniqueName("ming"))
			g.makeAdmin(boss)
			tk := boss.token
			r := g.createRole(tk, uniqueName("crash"))
			d := g.createDept(tk, uniqueName("crash"), nil)

			faults.Arm(org.StepRoleAssign)
			g.fails(tk, "INTERNAL_SERVER_ERROR", `mutation($u: ID!, $r: ID!) { assignRole(userId: $u, roleId: $r, priority: 5) { id } }`, map[string]any{"u": ming.ID, "r": r.ID})
			faults.Arm(org.StepDepartmentSetMember)
			g.fails(tk, "INTERNAL_SERVER_ERROR", `mutation($u: ID!, $d: ID!) { setUserDepartment(userId: $u, departmentId: $d) { id } }`, map[string]any{"u": ming.ID, "d": d.ID})

			check := func(when string) {
				t.Helper()
				if got := g.userRoles(tk, ming.ID); len(got) != 0 {
					t.Fatalf("%s: user's roles = %v", when, got)
				}
				if rr := g.role(tk, r.ID, 10, nil); rr.MemberCount != 0 || len(rr.Members.Edges) != 0 {
					t.Fatalf("%s: role = %+v", when, rr)
				}
				if m := g.dept(tk, d.ID).Members.Edges; len(m) != 0 {
					t.Fatalf("%s: department members = %+v", when, m)
				}
			}
			check("half-written")
			rep, err := fsck.Run(t.Context(), g.svc, fsck.Options{Repair: true, Areas: fsck.AreaOrg})
			if err != nil {
				t.Fatal(err)
			}
			// fsck names roles and departments by their number, the GraphQL
			// ids after their type prefix.
			rNum, dNum := strings.TrimPrefix(r.ID, "role:"), strings.TrimPrefix(d.ID, "department:")
			mine := func(is fsck.Issue) bool {
				return strings.Contains(is.Detail, fmt.Sprintf("user %s in role %s", ming.ID, rNum)) ||
					strings.Contains(is.Detail, fmt.Sprintf("user %s in department %s", ming.ID, dNum))
			}
			repaired := map[string]bool{}
			for _, is := range rep.Issues {
				if mine(is) {
					if !is.Repaired {
						t.Fatalf("fsck left %+v", is)
					}
					repaired[is.Kind] = true
				}
			}
			// On the shared real HBase another test process's fsck may have
			// repaired the pairs first; the check-only run below still
			// proves they are whole.
			if b.Name == hbase.BackendEmbedded && (!repaired[fsck.RoleMemberStale] || !repaired[fsck.DeptMemberStale]) {
				t.Fatalf("fsck repaired %v of %+v", repaired, rep.Issues)
			}
			if rep, err = fsck.Run(t.Context(), g.svc, fsck.Options{Areas: fsck.AreaOrg}); err != nil {
				t.Fatal(err)
			}
			for _, is := range rep.Issues {
				if mine(is) {
					t.Fatalf("after repair: %+v", is)
				}
			}
			check("repaired")
			// The same calls now go through.
			g.assign(tk, ming.ID, r.ID, 5)
			if got := g.userRoles(tk, ming.ID); !slices.Equal(got, []string{r.Name + ":5"}) {
				t.Fatalf("after repair and assign: %v", got)
			}
		})
	}
}

// TestAdminSeedDemo checks the seed's own examples over GraphQL, logged in
// as the demo admin: topDepartments is [CEO], the children of 开发部 are
// 开发1, 开发2, 大数据部, and 小红's roles come back 学习委员, 劳动委员,
// 体育委员. Embedded only: the shared real HBase holds other tests'
// departments (package seed's TestSeedOrgDemo checks the demo there).
func TestAdminSeedDemo(t *testing.T) {
	g, _ := startAdminGateway(t, testenv.Embedded(t))
	if err := seed.OrgDemo(t.Context(), g.svc); err != nil {
		t.Fatal(err)
	}
	var lg struct{ Login struct{ Token string } }
	g.ok("", `mutation($u: String!, $p: String!) { login(username: $u, password: $p) { token } }`,
		map[string]any{"u": seed.DemoAdminUsername, "p": seed.DefaultPassword}, &lg)
	tk := lg.Login.Token
	if top := g.topDepartments(tk); !slices.Equal(top, []string{"CEO"}) {
		t.Fatalf("topDepartments = %v", top)
	}
	var d struct {
		TopDepartments struct {
			Edges []struct {
				Node struct {
					Children struct {
						Edges []struct{ Node deptData }
					}
				}
			}
		}
		Hong *struct {
			ID         string
			Department struct{ Name string }
		}
	}
	g.ok(tk, `query($h: String!) { topDepartments { edges { node { children { edges { node { `+deptFields+` } } } } } }
		hong: userByUsername(username: $h) { id department { name } } }`, map[string]any{"h": seed.DemoXiaohong}, &d)
	var kids []string
	for _, e := range d.TopDepartments.Edges[0].Node.Children.Edges {
		kids = append(kids, e.Node.Name)
	}
	if !slices.Equal(kids, []string{"开发部", "测试部", "财务部"}) {
		t.Fatalf("children of CEO = %v", kids)
	}
	if got := d.TopDepartments.Edges[0].Node.Children.Edges[0].Node.childNames(); !slices.Equal(got, []string{"开发1", "开发2", "大数据部"}) {
		t.Fatalf("children of 开发部 = %v", got)
	}
	if got := g.userRoles(tk, d.Hong.ID); !slices.Equal(got, []string{"学习委员:10", "劳动委员:9", "体育委员:8"}) {
		t.Fatalf("小红's roles = %v", got)
	}
	if d.Hong.Department.Name != "测试1" {
		t.Fatalf("小红's department = %+v", d.Hong.Department)
	}
	g.createRole(tk, "班长") // the demo admin is an admin
}
