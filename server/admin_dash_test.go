package server_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/weibohbase/gateway/internal/testenv"
)

// userSearch is one page of Query.users.
type userSearch struct {
	Edges []struct {
		Cursor string
		Node   struct{ ID, Username string }
	}
	PageInfo struct {
		HasNextPage bool
		EndCursor   *string
	}
	TotalCount *int
}

func (u userSearch) names() []string {
	var out []string
	for _, e := range u.Edges {
		out = append(out, e.Node.Username)
	}
	return out
}

// users runs Query.users with filter and paging.
func (g *gw) users(token string, filter map[string]any, first int, after *string) userSearch {
	g.t.Helper()
	var d struct{ Users userSearch }
	g.ok(token, `query($f: UserFilter, $first: Int, $after: String) { users(filter: $f, first: $first, after: $after) {
		edges { cursor node { id username } } pageInfo { hasNextPage endCursor } totalCount } }`,
		map[string]any{"f": filter, "first": first, "after": after}, &d)
	return d.Users
}

// allUsers pages through Query.users with filter, pages of size first.
func (g *gw) allUsers(token string, filter map[string]any, first int) []string {
	g.t.Helper()
	var out []string
	var after *string
	for range 100 {
		p := g.users(token, filter, first, after)
		out = append(out, p.names()...)
		if !p.PageInfo.HasNextPage {
			return out
		}
		after = p.PageInfo.EndCursor
	}
	g.t.Fatal("users: more than 100 pages")
	return nil
}

// bulkResult is a BulkResult.
type bulkResult struct {
	Succeeded []struct{ ID string }
	Failed    []struct{ UserID, Code, Message string }
}

func (b bulkResult) ok() []string {
	var out []string
	for _, s := range b.Succeeded {
		out = append(out, s.ID)
	}
	return out
}

const bulkFields = `succeeded { id } failed { userId code message }`

// deptCount returns a department's memberCount and its members' totalCount
// and ids.
func (g *gw) deptCount(token, id string) (memberCount, total int, members []string) {
	g.t.Helper()
	var d struct {
		Department struct {
			MemberCount int
			Members     struct {
				TotalCount int
				Edges      []struct{ Node struct{ ID string } }
			}
		}
	}
	g.ok(token, `query($id: ID!) { department(id: $id) { memberCount members(first: 100) { totalCount edges { node { id } } } } }`,
		map[string]any{"id": id}, &d)
	for _, e := range d.Department.Members.Edges {
		members = append(members, e.Node.ID)
	}
	return d.Department.MemberCount, d.Department.Members.TotalCount, members
}

// TestAdminDashboards drives the admin dashboards' API over HTTP on both
// backends: subDepartments and member counts, user search with every
// filter, the bulk changes with their per-user failures, and department
// managers, whose powers stop at their subtree.
func TestAdminDashboards(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g, _ := startAdminGateway(t, b.Open(t))
			tag := strings.ToLower(uniqueName("dash"))
			boss, mgr := g.register(tag+"boss"), g.register(tag+"mgr")
			g.makeAdmin(boss)
			tk := boss.token
			var us []account
			for i := range 5 {
				us = append(us, g.register(fmt.Sprintf("%su%d", tag, i)))
			}
			ids := func(as ...account) []string {
				var out []string
				for _, a := range as {
					out = append(out, a.ID)
				}
				return out
			}
			root := g.createDept(tk, "R"+tag, nil)
			a := g.createDept(tk, "A", &root.ID)
			a1 := g.createDept(tk, "A1", &a.ID)
			bDept := g.createDept(tk, "B", &root.ID)
			role := g.createRole(tk, "dash"+tag)

			// subDepartments is children's new name.
			var sub struct {
				Department struct {
					SubDepartments struct {
						Edges []struct{ Node struct{ Name string } }
					}
				}
			}
			g.ok(us[0].token, `query($id: ID!) { department(id: $id) { subDepartments { edges { node { name } } } } }`, map[string]any{"id": root.ID}, &sub)
			if e := sub.Department.SubDepartments.Edges; len(e) != 2 || e[0].Node.Name != "A" || e[1].Node.Name != "B" {
				t.Fatalf("subDepartments = %+v", e)
			}

			// Bulk moves, counted like single ones.
			var mv struct{ SetUsersDepartment bulkResult }
			g.ok(tk, `mutation($u: [ID!]!, $d: ID) { setUsersDepartment(userIds: $u, departmentId: $d) { `+bulkFields+` } }`,
				map[string]any{"u": append(ids(us[0], us[1], us[2], us[0]), "999999999999"), "d": a.ID}, &mv)
			if got := mv.SetUsersDepartment; !slices.Equal(got.ok(), ids(us[0], us[1], us[2])) ||
				len(got.Failed) != 1 || got.Failed[0].UserID != "999999999999" || got.Failed[0].Code != "NOT_FOUND" {
				t.Fatalf("setUsersDepartment = %+v", got)
			}
			if mc, total, members := g.deptCount(tk, a.ID); mc != 3 || total != 3 || len(members) != 3 {
				t.Fatalf("A: memberCount %d, totalCount %d, members %v", mc, total, members)
			}
			g.ok(tk, `mutation($u: [ID!]!, $d: ID) { setUsersDepartment(userIds: $u, departmentId: $d) { `+bulkFields+` } }`,
				map[string]any{"u": ids(us[2]), "d": bDept.ID}, &mv)
			if mc, _, _ := g.deptCount(tk, a.ID); mc != 2 {
				t.Fatalf("A after a member left: memberCount %d", mc)
			}
			if mc, _, _ := g.deptCount(tk, bDept.ID); mc != 1 {
				t.Fatalf("B after a member joined: memberCount %d", mc)
			}

			// Bulk roles.
			var as struct{ AssignRoleToUsers bulkResult }
			g.ok(tk, `mutation($u: [ID!]!, $r: ID!) { assignRoleToUsers(userIds: $u, roleId: $r, priority: 7) { `+bulkFields+` } }`,
				map[string]any{"u": ids(us[1], us[3]), "r": role.ID}, &as)
			if !slices.Equal(as.AssignRoleToUsers.ok(), ids(us[1], us[3])) || len(as.AssignRoleToUsers.Failed) != 0 {
				t.Fatalf("assignRoleToUsers = %+v", as)
			}
			if r := g.role(tk, role.ID, 10, nil); r.MemberCount != 2 {
				t.Fatalf("role after the bulk assign: %+v", r)
			}
			var rv struct{ RevokeRoleFromUsers bulkResult }
			g.ok(tk, `mutation($u: [ID!]!, $r: ID!) { revokeRoleFromUsers(userIds: $u, roleId: $r) { `+bulkFields+` } }`,
				map[string]any{"u": ids(us[3]), "r": role.ID}, &rv)
			if r := g.role(tk, role.ID, 10, nil); r.MemberCount != 1 {
				t.Fatalf("role after the bulk revoke: %+v", r)
			}
			many := make([]string, 101)
			for i := range many {
				many[i] = fmt.Sprint(i + 1)
			}
			for _, c := range []struct {
				code, q string
				vars    map[string]any
			}{
				{"BAD_USER_INPUT", `mutation($u: [ID!]!, $r: ID!) { assignRoleToUsers(userIds: $u, roleId: $r, priority: 1) { failed { code } } }`, map[string]any{"u": many, "r": role.ID}},
				{"BAD_USER_INPUT", `mutation($u: [ID!]!, $r: ID!) { assignRoleToUsers(userIds: $u, roleId: $r, priority: 1) { failed { code } } }`, map[string]any{"u": []string{}, "r": role.ID}},
				{"BAD_USER_INPUT", `mutation($u: [ID!]!, $r: ID!) { assignRoleToUsers(userIds: $u, roleId: $r, priority: 0) { failed { code } } }`, map[string]any{"u": ids(us[0]), "r": role.ID}},
				{"BAD_USER_INPUT", `mutation($u: [ID!]!, $r: ID!) { revokeRoleFromUsers(userIds: $u, roleId: $r) { failed { code } } }`, map[string]any{"u": []string{"x!"}, "r": role.ID}},
				{"NOT_FOUND", `mutation($u: [ID!]!) { assignRoleToUsers(userIds: $u, roleId: "999999999", priority: 1) { failed { code } } }`, map[string]any{"u": ids(us[0])}},
				{"NOT_FOUND", `mutation($u: [ID!]!) { setUsersDepartment(userIds: $u, departmentId: "999999999") { failed { code } } }`, map[string]any{"u": ids(us[0])}},
			} {
				g.fails(tk, c.code, c.q, c.vars)
			}
			g.fails(us[0].token, "FORBIDDEN", `mutation($u: [ID!]!, $r: ID!) { assignRoleToUsers(userIds: $u, roleId: $r, priority: 1) { failed { code } } }`, map[string]any{"u": ids(us[0]), "r": role.ID})
			if r := g.role(tk, role.ID, 10, nil); r.MemberCount != 1 {
				t.Fatalf("refused bulk calls changed the role: %+v", r)
			}

			// User search.
			upper := strings.ToUpper(tag)
			all := []string{tag + "boss", tag + "mgr", tag + "u0", tag + "u1", tag + "u2", tag + "u3", tag + "u4"}
			g.fails(us[0].token, "FORBIDDEN", `{ users(first: 1) { edges { cursor } } }`, nil)
			if got := g.allUsers(tk, map[string]any{"usernamePrefix": upper}, 3); !slices.Equal(got, all) {
				t.Fatalf("users(prefix) = %v, want %v", got, all)
			}
			if p := g.users(tk, map[string]any{"usernamePrefix": tag}, 2, nil); p.TotalCount != nil || len(p.Edges) != 2 || !p.PageInfo.HasNextPage {
				t.Fatalf("users(prefix) page 1 = %+v", p)
			}
			p := g.users(tk, map[string]any{"departmentId": a.ID}, 10, nil)
			if p.TotalCount == nil || *p.TotalCount != 2 || !slices.Equal(p.names(), []string{tag + "u0", tag + "u1"}) {
				t.Fatalf("users(department A) = %+v", p)
			}
			if p := g.users(tk, map[string]any{"roleId": role.ID}, 10, nil); p.TotalCount == nil || *p.TotalCount != 1 || !slices.Equal(p.names(), []string{tag + "u1"}) {
				t.Fatalf("users(role) = %+v", p)
			}
			if p := g.users(tk, map[string]any{"roleId": role.ID, "departmentId": a.ID, "usernamePrefix": tag + "U"}, 10, nil); p.TotalCount != nil || !slices.Equal(p.names(), []string{tag + "u1"}) {
				t.Fatalf("users(role, department, prefix) = %+v", p)
			}
			if got := g.allUsers(tk, map[string]any{"usernamePrefix": tag + "u", "withoutDepartment": true}, 10); !slices.Equal(got, []string{tag + "u3", tag + "u4"}) {
				t.Fatalf("users(prefix, withoutDepartment) = %v", got)
			}
			g.fails(tk, "NOT_FOUND", `{ users(filter: {roleId: "999999999"}) { totalCount } }`, nil)
			g.fails(tk, "NOT_FOUND", `{ users(filter: {departmentId: "999999999"}) { totalCount } }`, nil)
			g.fails(tk, "BAD_USER_INPUT", `query($d: ID) { users(filter: {departmentId: $d, withoutDepartment: true}) { totalCount } }`, map[string]any{"d": a.ID})
			g.fails(tk, "BAD_USER_INPUT", `{ users(filter: {usernamePrefix: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}) { totalCount } }`, nil)
			g.fails("", "UNAUTHENTICATED", `{ users { totalCount } }`, nil)

			// Managers: a subtree and nothing else.
			var am struct {
				AddDepartmentManager struct{ Managers []struct{ ID string } }
			}
			g.ok(tk, `mutation($d: ID!, $u: ID!) { addDepartmentManager(departmentId: $d, userId: $u) { managers { id } } }`,
				map[string]any{"d": a.ID, "u": mgr.ID}, &am)
			if m := am.AddDepartmentManager.Managers; len(m) != 1 || m[0].ID != mgr.ID {
				t.Fatalf("managers = %+v", m)
			}
			var md struct {
				User struct{ ManagedDepartments []struct{ ID string } }
			}
			g.ok(mgr.token, `query($u: ID!) { user(id: $u) { managedDepartments { id } } }`, map[string]any{"u": mgr.ID}, &md)
			if m := md.User.ManagedDepartments; len(m) != 1 || m[0].ID != a.ID {
				t.Fatalf("managedDepartments = %+v", m)
			}
			mt := mgr.token
			g.fails(mt, "FORBIDDEN", `mutation($d: ID!, $u: ID!) { addDepartmentManager(departmentId: $d, userId: $u) { id } }`, map[string]any{"d": a.ID, "u": us[0].ID})
			a2 := g.createDept(mt, "A2", &a1.ID) // inside: a grandchild
			g.ok(mt, `mutation($d: ID!) { renameDepartment(id: $d, name: "A1'") { id } }`, map[string]any{"d": a1.ID}, nil)
			g.ok(mt, `mutation($d: ID!, $p: ID) { moveDepartment(id: $d, parentId: $p) { id } }`, map[string]any{"d": a2.ID, "p": a.ID}, nil)
			for _, q := range []struct {
				q    string
				vars map[string]any
			}{
				{`mutation { createDepartment(name: "top") { id } }`, nil},
				{`mutation($d: ID!) { createDepartment(name: "x", parentId: $d) { id } }`, map[string]any{"d": bDept.ID}},
				{`mutation($d: ID!) { renameDepartment(id: $d, name: "x") { id } }`, map[string]any{"d": root.ID}},
				{`mutation($d: ID!, $p: ID) { moveDepartment(id: $d, parentId: $p) { id } }`, map[string]any{"d": a2.ID, "p": bDept.ID}},
				{`mutation($d: ID!) { moveDepartment(id: $d) { id } }`, map[string]any{"d": a2.ID}},
				{`mutation($d: ID!) { deleteDepartment(id: $d) }`, map[string]any{"d": bDept.ID}},
				{`mutation($u: ID!, $d: ID) { setUserDepartment(userId: $u, departmentId: $d) { id } }`, map[string]any{"u": us[2].ID, "d": a1.ID}},
			} {
				g.fails(mt, "FORBIDDEN", q.q, q.vars)
			}
			// Moves of users: both ends must be managed.
			g.ok(mt, `mutation($u: [ID!]!, $d: ID) { setUsersDepartment(userIds: $u, departmentId: $d) { `+bulkFields+` } }`,
				map[string]any{"u": ids(us[0], us[2], us[4]), "d": a1.ID}, &mv)
			got := mv.SetUsersDepartment
			if !slices.Equal(got.ok(), ids(us[0])) || len(got.Failed) != 2 || got.Failed[0].Code != "FORBIDDEN" || got.Failed[1].Code != "FORBIDDEN" {
				t.Fatalf("manager's setUsersDepartment = %+v", got)
			}
			if mc, _, _ := g.deptCount(tk, a1.ID); mc != 1 {
				t.Fatalf("A1's memberCount = %d", mc)
			}
			var del struct{ DeleteDepartment bool }
			g.ok(mt, `mutation($d: ID!) { deleteDepartment(id: $d) }`, map[string]any{"d": a2.ID}, &del)
			g.ok(tk, `mutation($d: ID!, $u: ID!) { removeDepartmentManager(departmentId: $d, userId: $u) { id } }`, map[string]any{"d": a.ID, "u": mgr.ID}, nil)
			g.fails(mt, "FORBIDDEN", `mutation($d: ID!) { renameDepartment(id: $d, name: "again") { id } }`, map[string]any{"d": a1.ID})
			g.fails(tk, "NOT_FOUND", `mutation($u: ID!) { addDepartmentManager(departmentId: "999999999", userId: $u) { id } }`, map[string]any{"u": mgr.ID})
			g.fails(tk, "NOT_FOUND", `mutation($d: ID!) { addDepartmentManager(departmentId: $d, userId: "999999999999") { id } }`, map[string]any{"d": a.ID})
		})
	}
}

// TestAdminStoreCallsConstant: a page of user search by username prefix
// and a department's page of members with its counts cost the same number
// of store round trips for any page size (gateway_store_calls_total).
func TestAdminStoreCallsConstant(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g, _ := startAdminGateway(t, b.Open(t))
			tag := strings.ToLower(uniqueName("calls"))
			boss := g.register(tag + "boss")
			g.makeAdmin(boss)
			tk := boss.token
			var ids []string
			for i := range 60 { // through the domain: sign-ups over HTTP are rate limited
				u, err := g.svc.Accounts.Register(t.Context(), fmt.Sprintf("%su%02d", tag, i), "password1")
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, u.ID.String())
			}
			d := g.createDept(tk, "D"+tag, nil)
			g.ok(tk, `mutation($u: [ID!]!, $d: ID) { setUsersDepartment(userIds: $u, departmentId: $d) { failed { code } } }`,
				map[string]any{"u": ids, "d": d.ID}, nil)
			// A manager of the department, who sees its people without a
			// permission: one check per department, not per user.
			mgr := g.register(tag + "mgr")
			g.ok(tk, `mutation($d: ID!, $u: ID!) { addDepartmentManager(departmentId: $d, userId: $u) { id } }`, map[string]any{"d": d.ID, "u": mgr.ID}, nil)
			for _, c := range []struct{ token, query string }{
				{tk, `query($p: String, $first: Int) { users(filter: {usernamePrefix: $p}, first: $first) { totalCount edges { cursor node { id username postCount } } pageInfo { hasNextPage } } }`},
				{tk, `query($d: ID!, $first: Int) { department(id: $d) { name memberCount members(first: $first) { totalCount edges { node { id username } } } } }`},
				// What each permission reveals, decided once per request.
				{tk, `query($p: String, $first: Int) { users(filter: {usernamePrefix: $p}, first: $first) { edges { node { id roles { priority } rank department { id } managedDepartments { id } } } } }`},
				{mgr.token, `query($d: ID!, $first: Int) { department(id: $d) { members(first: $first) { edges { node { id roles { priority } rank department { id } managedDepartments { id } } } } } }`},
			} {
				var costs []float64
				for _, first := range []int{1, 5, 50} {
					costs = append(costs, g.okCalls(c.token, c.query, map[string]any{"p": tag + "u", "d": d.ID, "first": first}, nil))
				}
				if costs[0] != costs[1] || costs[1] != costs[2] {
					t.Errorf("store calls for first = 1, 5, 50: %v\nquery: %s", costs, c.query)
				}
			}
		})
	}
}

// auditEvent is an AuditEvent.
type auditEvent struct {
	ID        string
	At        string
	Actor     *struct{ ID string }
	Action    string
	TargetID  string
	Before    *string
	After     *string
	RequestID *string
}

// audit returns the audit log's events for filter, newest first (pages of 50).
func (g *gw) audit(token string, filter map[string]any) []auditEvent {
	g.t.Helper()
	var out []auditEvent
	var after *string
	for range 100 {
		var d struct {
			AuditLog struct {
				Edges    []struct{ Node auditEvent }
				PageInfo struct {
					HasNextPage bool
					EndCursor   *string
				}
			}
		}
		g.ok(token, `query($f: AuditFilter, $after: String) { auditLog(filter: $f, first: 50, after: $after) {
			edges { node { id at actor { id } action targetId before after requestId } } pageInfo { hasNextPage endCursor } } }`,
			map[string]any{"f": filter, "after": after}, &d)
		for _, e := range d.AuditLog.Edges {
			out = append(out, e.Node)
		}
		if !d.AuditLog.PageInfo.HasNextPage {
			return out
		}
		after = d.AuditLog.PageInfo.EndCursor
	}
	g.t.Fatal("auditLog: more than 100 pages")
	return nil
}

func actions(es []auditEvent) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Action)
	}
	return out
}

// TestAuditLog: every admin change records one event (actor, action,
// target, before and after, request id), listed newest first and by each
// filter; a refused change records nothing; admins only. The log shows
// what happened: a change that dies after its pending event is written
// and before it commits is never listed, one that dies after its commit
// point is listed once the repairer found the commit.
func TestAuditLog(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g, faults := startAdminGateway(t, b.Open(t))
			tag := strings.ToLower(uniqueName("audit"))
			boss, u := g.register(tag+"boss"), g.register(tag+"u")
			g.makeAdmin(boss)
			tk := boss.token
			role := g.createRole(tk, "r"+tag)
			g.assign(tk, u.ID, role.ID, 3)
			d1 := g.createDept(tk, "A"+tag, nil)
			d2 := g.createDept(tk, "B"+tag, &d1.ID)
			g.ok(tk, `mutation($u: ID!, $d: ID) { setUserDepartment(userId: $u, departmentId: $d) { id } }`, map[string]any{"u": u.ID, "d": d2.ID}, nil)
			g.fails(tk, "BAD_USER_INPUT", `mutation($d: ID!, $p: ID) { moveDepartment(id: $d, parentId: $p) { id } }`, map[string]any{"d": d1.ID, "p": d2.ID})
			g.ok(tk, `mutation($d: ID!) { moveDepartment(id: $d) { id } }`, map[string]any{"d": d2.ID}, nil)

			mine := g.audit(tk, map[string]any{"actorId": boss.ID})
			want := []string{"department.move", "department.setMember", "department.create", "department.create", "role.assign", "role.create"}
			if got := actions(mine); !slices.Equal(got, want) {
				t.Fatalf("boss's events = %v, want %v (newest first; the refused move records nothing)", got, want)
			}
			assign := mine[4]
			if assign.TargetID != u.ID || assign.Actor == nil || assign.Actor.ID != boss.ID || assign.RequestID == nil || *assign.RequestID == "" ||
				assign.Before != nil || assign.After == nil || !strings.Contains(*assign.After, `"priority":3`) {
				t.Fatalf("role.assign event = %+v", assign)
			}
			move := mine[0]
			if move.TargetID != d2.ID || move.Before == nil || !strings.Contains(*move.Before, d1.ID) || move.After == nil || *move.After != `{"parent":null}` {
				t.Fatalf("department.move event = %+v (before %v, after %v)", move, deref(move.Before), deref(move.After))
			}
			if got := actions(g.audit(tk, map[string]any{"targetId": u.ID})); !slices.Equal(got, []string{"department.setMember", "role.assign"}) {
				t.Fatalf("events about u = %v", got)
			}
			if got := g.audit(tk, map[string]any{"action": "department.create", "actorId": boss.ID}); len(got) != 2 {
				t.Fatalf("department.create events = %v", actions(got))
			}
			if got := g.audit(tk, map[string]any{"actorId": boss.ID, "since": move.At}); len(got) == 0 || got[0].ID != move.ID {
				t.Fatalf("events since the move = %v", actions(got))
			}
			if got := g.audit(tk, map[string]any{"actorId": boss.ID, "until": mine[len(mine)-1].At}); len(got) != 0 {
				t.Fatalf("events before the first = %v", actions(got))
			}
			g.fails(u.token, "FORBIDDEN", `{ auditLog { edges { cursor } } }`, nil)
			g.fails(tk, "BAD_USER_INPUT", `{ auditLog(filter: {action: "no spaces"}) { edges { cursor } } }`, nil)

			// Killed after its pending event, before the change: the change
			// is not made, and its event is never listed.
			faults.Arm("audit:recorded")
			g.fails(tk, "INTERNAL_SERVER_ERROR", `mutation($d: ID!) { renameDepartment(id: $d, name: "never") { id } }`, map[string]any{"d": d1.ID})
			if got := g.dept(tk, d1.ID).Name; got != "A"+tag {
				t.Fatalf("the name after the killed rename: %q", got)
			}
			renames := map[string]any{"targetId": d1.ID, "action": "department.rename"}
			if got := actions(g.audit(tk, renames)); len(got) != 0 {
				t.Fatalf("the killed rename's event listed: %v", got)
			}
			// Killed after its commit point: the change stays; its event is
			// listed once the repairer found the commit.
			faults.Arm("role:counted")
			g.fails(tk, "INTERNAL_SERVER_ERROR", `mutation($u: ID!, $r: ID!) { revokeRole(userId: $u, roleId: $r) { id } }`, map[string]any{"u": u.ID, "r": role.ID})
			if got := g.userRoles(tk, u.ID); len(got) != 0 {
				t.Fatalf("roles after the killed revoke: %v", got)
			}
			revokes := map[string]any{"targetId": u.ID, "action": "role.revoke"}
			if got := actions(g.audit(tk, revokes)); len(got) != 0 {
				t.Fatalf("the killed revoke's event listed before its repair: %v", got)
			}
			// The repairer's part, without its grace: every pending event
			// recorded so far (another test's change in flight settles its
			// own event whatever this decides).
			if _, _, err := g.svc.Org.Audit.Log().ResolvePending(t.Context(), g.svc.Writes.NowMillis()+1); err != nil {
				t.Fatal(err)
			}
			if got := actions(g.audit(tk, revokes)); len(got) != 1 {
				t.Fatalf("the killed revoke's event after the repair: %v", got)
			}
			if got := actions(g.audit(tk, renames)); len(got) != 0 {
				t.Fatalf("the killed rename's event after the repair: %v", got)
			}
		})
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
