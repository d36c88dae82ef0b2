package resolvers_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/client"
	"github.com/99designs/gqlgen/graphql"

	"github.com/weibohbase/gateway/auth"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/loaders"
	"github.com/weibohbase/gateway/resolvers"
	"github.com/weibohbase/gateway/server"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/org"
	"github.com/weibohbase/gateway/weibo/tables"
)

// These tests run GraphQL through gqlgen's in-process client over the
// GraphQL handler the server mounts at /graphql (server.GraphQL, with its
// error presenter), behind the same auth and dataloader middleware, on an
// in-memory embedded store. They cover what HTTP adds nothing to: argument
// parsing, the viewer checks, the @hasRole directive and the id formats.
// The HTTP end-to-end tests are in package server.

// now is the fixed clock of the service under test, so post ids are known.
var now = time.UnixMilli(1583020800123)

// gateway is the GraphQL handler over a fresh embedded store.
type gateway struct {
	t      *testing.T
	svc    *domain.Domain
	tokens *auth.Issuer
	c      *client.Client
}

func newGateway(t *testing.T) *gateway {
	t.Helper()
	st := testenv.Embedded(t)
	if err := tables.Migrate(t.Context(), st); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	log := slog.New(slog.DiscardHandler)
	svc := domain.New(st, domain.WithLogger(log), domain.WithBcryptCost(4), domain.WithOutboxSweep(0),
		domain.WithClock(func() time.Time { return now }))
	if err := svc.Start(t.Context()); err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { _ = svc.Close(context.Background()) })
	tokens := auth.NewIssuer([]byte("test-secret-test-secret-test-secret"), time.Hour)
	// server.GraphQL fills in the default limits; no per-client budget here.
	h := server.GraphQL(server.Config{Svc: svc, Tokens: tokens, Logger: log, RateLimit: -1})
	h = tokens.Middleware(loaders.Middleware(svc)(h))
	return &gateway{t: t, svc: svc, tokens: tokens, c: client.New(h)}
}

// account is a registered user and its token.
type account struct {
	id    weibo.UserID
	name  string
	token string
}

// register registers a user through the domain and issues its token.
func (g *gateway) register(name string) account {
	g.t.Helper()
	u, err := g.svc.Accounts.Register(g.t.Context(), name, "correct horse")
	if err != nil {
		g.t.Fatalf("register %s: %v", name, err)
	}
	tok, err := g.tokens.Issue(u.ID, u.CreatedAt, u.TokenGeneration)
	if err != nil {
		g.t.Fatalf("issue: %v", err)
	}
	return account{id: u.ID, name: name, token: tok}
}

// admin registers a user who holds the admin role.
func (g *gateway) admin(name string) account {
	g.t.Helper()
	a := g.register(name)
	if _, _, err := g.svc.GrantRoleByName(g.t.Context(), name, org.AdminRole, org.MaxPriority); err != nil {
		g.t.Fatalf("grant admin: %v", err)
	}
	return a
}

// gqlError is one entry of a response's errors.
type gqlError struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}

// post runs query with the bearer token (none when "") and the variables
// given as name, value pairs; it returns the data as JSON and the errors.
func (g *gateway) post(token, query string, vars ...any) (json.RawMessage, []gqlError) {
	g.t.Helper()
	var opts []client.Option
	if token != "" {
		opts = append(opts, client.AddHeader("Authorization", "Bearer "+token))
	}
	for i := 0; i+1 < len(vars); i += 2 {
		opts = append(opts, client.Var(vars[i].(string), vars[i+1]))
	}
	resp, err := g.c.RawPost(query, opts...)
	if err != nil {
		g.t.Fatalf("post: %v\nquery: %s", err, query)
	}
	data, err := json.Marshal(resp.Data)
	if err != nil {
		g.t.Fatalf("encode data: %v", err)
	}
	var errs []gqlError
	if len(resp.Errors) > 0 {
		if err := json.Unmarshal(resp.Errors, &errs); err != nil {
			g.t.Fatalf("decode errors: %v: %s", err, resp.Errors)
		}
	}
	return data, errs
}

// ok runs a query that must succeed and decodes its data into v.
func (g *gateway) ok(token, query string, v any, vars ...any) {
	g.t.Helper()
	data, errs := g.post(token, query, vars...)
	if len(errs) > 0 {
		g.t.Fatalf("unexpected errors: %+v\nquery: %s", errs, query)
	}
	if err := json.Unmarshal(data, v); err != nil {
		g.t.Fatalf("decode data: %v: %s", err, data)
	}
}

// fails runs a query that must fail with extensions.code == code and
// returns the first error.
func (g *gateway) fails(token, code, query string, vars ...any) gqlError {
	g.t.Helper()
	data, errs := g.post(token, query, vars...)
	if len(errs) == 0 {
		g.t.Fatalf("want error %s, got data %s\nquery: %s", code, data, query)
	}
	if got := errs[0].Extensions["code"]; got != code {
		g.t.Fatalf("want code %s, got %v (%q)\nquery: %s", code, got, errs[0].Message, query)
	}
	return errs[0]
}

// TestMalformedIDArguments checks every ID argument: a malformed id is
// BAD_USER_INPUT naming the argument, with a message naming the kind of id,
// and nothing is written.
func TestMalformedIDArguments(t *testing.T) {
	g := newGateway(t)
	adm := g.admin("ada")
	bob := g.register("bob")
	role, err := g.svc.Org.Roles.Create(t.Context(), "editor")
	if err != nil {
		t.Fatal(err)
	}
	dept, err := g.svc.Org.Departments.Create(t.Context(), "sales", weibo.RootDept)
	if err != nil {
		t.Fatal(err)
	}
	uid, rid, did := bob.id.String(), role.ID.String(), dept.ID.String()
	long := strings.Repeat("9", 100)
	cases := []struct {
		name, token, query, field, message string
	}{
		{"user", "", `{ user(id: "-1") { id } }`, "id", `malformed user id "-1"`},
		{"user zero", "", `{ user(id: "0") { id } }`, "id", `malformed user id "0"`},
		{"user leading zero", "", `{ user(id: "012") { id } }`, "id", `malformed user id "012"`},
		{"user too long", "", `{ user(id: "` + long + `") { id } }`, "id", `malformed user id "` + long[:64] + `…"`},
		{"post", "", `{ post(id: "xyz") { id } }`, "id", `malformed post id "xyz"`},
		{"post no millis", "", `{ post(id: "12_") { id } }`, "id", `malformed post id "12_"`},
		{"post bad author", "", `{ post(id: "x_12") { id } }`, "id", `malformed post id "x_12"`},
		{"follow", bob.token, `mutation { follow(userId: "abc") { id } }`, "userId", `malformed user id "abc"`},
		{"unfollow", bob.token, `mutation { unfollow(userId: "") { id } }`, "userId", `malformed user id ""`},
		{"role", bob.token, `{ role(id: "r1") { id } }`, "id", `malformed role id "r1"`},
		{"department", bob.token, `{ department(id: "d1") { id } }`, "id", `malformed department id "d1"`},
		{"renameRole", adm.token, `mutation { renameRole(id: "x", name: "n") { id } }`, "id", `malformed role id "x"`},
		{"deleteRole", adm.token, `mutation { deleteRole(id: "x") }`, "id", `malformed role id "x"`},
		{"assignRole user", adm.token, `mutation { assignRole(userId: "x", roleId: "` + rid + `", priority: 5) { id } }`, "userId", `malformed user id "x"`},
		{"assignRole role", adm.token, `mutation { assignRole(userId: "` + uid + `", roleId: "x", priority: 5) { id } }`, "roleId", `malformed role id "x"`},
		{"revokeRole user", adm.token, `mutation { revokeRole(userId: "x", roleId: "` + rid + `") { id } }`, "userId", `malformed user id "x"`},
		{"revokeRole role", adm.token, `mutation { revokeRole(userId: "` + uid + `", roleId: "x") { id } }`, "roleId", `malformed role id "x"`},
		{"createDepartment", adm.token, `mutation { createDepartment(name: "n", parentId: "x") { id } }`, "parentId", `malformed department id "x"`},
		{"renameDepartment", adm.token, `mutation { renameDepartment(id: "x", name: "n") { id } }`, "id", `malformed department id "x"`},
		{"moveDepartment id", adm.token, `mutation { moveDepartment(id: "x", parentId: null) { id } }`, "id", `malformed department id "x"`},
		{"moveDepartment parent", adm.token, `mutation { moveDepartment(id: "` + did + `", parentId: "x") { id } }`, "parentId", `malformed department id "x"`},
		{"deleteDepartment", adm.token, `mutation { deleteDepartment(id: "x") }`, "id", `malformed department id "x"`},
		{"setUserDepartment user", adm.token, `mutation { setUserDepartment(userId: "x", departmentId: "` + did + `") { id } }`, "userId", `malformed user id "x"`},
		{"setUserDepartment department", adm.token, `mutation { setUserDepartment(userId: "` + uid + `", departmentId: "x") { id } }`, "departmentId", `malformed department id "x"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g.t = t
			e := g.fails(c.token, weibo.CodeBadUserInput, c.query)
			if got := e.Extensions["field"]; got != c.field {
				t.Errorf("extensions.field = %v, want %q", got, c.field)
			}
			if e.Message != c.message {
				t.Errorf("message = %q, want %q", e.Message, c.message)
			}
		})
	}
	g.t = t
	// Nothing was written: bob follows no one, holds no role, is in no
	// department; the role and the department are as created.
	var got struct {
		User struct {
			FollowCount int
			Roles       []struct{ Role struct{ Name string } }
			Department  *struct{ ID string }
		}
		Role       struct{ Name string }
		Department struct {
			Name   string
			Parent *struct{ ID string }
		}
	}
	g.ok(adm.token, `query($u: ID!, $r: ID!, $d: ID!) {
		user(id: $u) { followCount roles { role { name } } department { id } }
		role(id: $r) { name }
		department(id: $d) { name parent { id } } }`, &got, "u", uid, "r", rid, "d", did)
	if got.User.FollowCount != 0 || len(got.User.Roles) != 0 || got.User.Department != nil ||
		got.Role.Name != "editor" || got.Department.Name != "sales" || got.Department.Parent != nil {
		t.Errorf("state changed by failed mutations: %+v", got)
	}
}

// TestUnauthenticated checks that every field that needs a viewer fails
// UNAUTHENTICATED without a token and with an invalid one, and that `me`
// is null for an anonymous request.
func TestUnauthenticated(t *testing.T) {
	g := newGateway(t)
	bob := g.register("bob")
	uid := bob.id.String()
	queries := []struct{ name, query string }{
		{"homeTimeline", `{ homeTimeline { edges { cursor } } }`},
		{"publishPost", `mutation { publishPost(content: "hello") { id } }`},
		{"follow", `mutation { follow(userId: "` + uid + `") { id } }`},
		{"unfollow", `mutation { unfollow(userId: "` + uid + `") { id } }`},
		{"roles", `{ roles { edges { cursor } } }`},
		{"role", `{ role(id: "1") { id } }`},
		{"role malformed", `{ role(id: "x") { id } }`},
		{"roleByName", `{ roleByName(name: "admin") { id } }`},
		{"topDepartments", `{ topDepartments { edges { cursor } } }`},
		{"department", `{ department(id: "1") { id } }`},
		{"department malformed", `{ department(id: "x") { id } }`},
		{"user roles", `{ user(id: "` + uid + `") { roles { priority } } }`},
		{"user department", `{ user(id: "` + uid + `") { department { id } } }`},
	}
	for _, token := range []struct{ name, token string }{{"no token", ""}, {"invalid token", "not.a.jwt"}} {
		for _, q := range queries {
			t.Run(token.name+"/"+q.name, func(t *testing.T) {
				g.t = t
				g.fails(token.token, weibo.CodeUnauthenticated, q.query)
			})
		}
	}
	g.t = t
	var me struct{ Me *struct{ ID string } }
	g.ok("", `{ me { id } }`, &me)
	if me.Me != nil {
		t.Errorf("anonymous me = %+v, want null", me.Me)
	}
	g.fails("not.a.jwt", weibo.CodeUnauthenticated, `{ me { id } }`)
	g.ok(bob.token, `{ me { id } }`, &me)
	if me.Me == nil || me.Me.ID != uid {
		t.Errorf("me = %+v, want id %s", me.Me, uid)
	}
	// Nothing was written by the refused mutations.
	var u struct {
		User struct{ PostCount, FanCount int }
	}
	g.ok("", `query($id: ID!) { user(id: $id) { postCount fanCount } }`, &u, "id", uid)
	if u.User.PostCount != 0 || u.User.FanCount != 0 {
		t.Errorf("refused mutations wrote: %+v", u.User)
	}
}

// TestHasRoleDirective checks @hasPermission on every admin mutation
// (the fields @hasRole guarded before): without a viewer UNAUTHENTICATED,
// for a viewer without the permission (one who holds a role granting
// none included) FORBIDDEN naming the permission, with nothing written,
// and for an administrator the mutation runs.
func TestHasRoleDirective(t *testing.T) {
	g := newGateway(t)
	adm := g.admin("ada")
	bob := g.register("bob")
	if _, _, err := g.svc.GrantRoleByName(t.Context(), "bob", "editor", 10); err != nil {
		t.Fatal(err)
	}
	carl := g.register("carl")
	role, err := g.svc.Org.Roles.Create(t.Context(), "viewer")
	if err != nil {
		t.Fatal(err)
	}
	dept, err := g.svc.Org.Departments.Create(t.Context(), "sales", weibo.RootDept)
	if err != nil {
		t.Fatal(err)
	}
	other, err := g.svc.Org.Departments.Create(t.Context(), "support", weibo.RootDept)
	if err != nil {
		t.Fatal(err)
	}
	cid, rid, did, oid := carl.id.String(), role.ID.String(), dept.ID.String(), other.ID.String()
	const needRoles, needDepts = "needs the permission MANAGE_ROLES", "needs the permission MANAGE_DEPARTMENTS"
	// In order: each runs for the admin after the refusals.
	mutations := []struct{ name, query, want string }{
		{"createRole", `mutation { createRole(name: "auditor", permissions: [VIEW_AUDIT_LOG]) { name } }`, needRoles},
		{"renameRole", `mutation { renameRole(id: "` + rid + `", name: "reader") { name } }`, needRoles},
		{"setRolePermissions", `mutation { setRolePermissions(id: "` + rid + `", permissions: [MANAGE_REPORTS]) { name } }`, needRoles},
		{"assignRole", `mutation { assignRole(userId: "` + cid + `", roleId: "` + rid + `", priority: 7) { id } }`, needRoles},
		{"revokeRole", `mutation { revokeRole(userId: "` + cid + `", roleId: "` + rid + `") { id } }`, needRoles},
		{"assignRoleToUsers", `mutation { assignRoleToUsers(userIds: ["` + cid + `"], roleId: "` + rid + `", priority: 8) { failed { code } } }`, needRoles},
		{"revokeRoleFromUsers", `mutation { revokeRoleFromUsers(userIds: ["` + cid + `"], roleId: "` + rid + `") { failed { code } } }`, needRoles},
		{"deleteRole", `mutation { deleteRole(id: "` + rid + `") }`, needRoles},
		{"createDepartment", `mutation { createDepartment(name: "east", parentId: "` + did + `") { name } }`, needDepts},
		{"renameDepartment", `mutation { renameDepartment(id: "` + did + `", name: "sales-emea") { name } }`, needDepts},
		{"moveDepartment", `mutation { moveDepartment(id: "` + did + `", parentId: "` + oid + `") { name } }`, needDepts},
		{"setUserDepartment", `mutation { setUserDepartment(userId: "` + cid + `", departmentId: "` + did + `") { id } }`, needDepts},
		{"addDepartmentManager", `mutation { addDepartmentManager(departmentId: "` + oid + `", userId: "` + cid + `") { name } }`, needDepts},
		{"removeDepartmentManager", `mutation { removeDepartmentManager(departmentId: "` + oid + `", userId: "` + cid + `") { name } }`, needDepts},
		{"deleteDepartment", `mutation { deleteDepartment(id: "` + oid + `", cascade: true) }`, needDepts},
	}
	const state = `query($c: ID!) {
		roles { edges { node { name memberCount permissions } } }
		topDepartments { edges { node { name managers { id } children { edges { node { name } } } } } }
		user(id: $c) { roles { role { name } } department { name } managedDepartments { name } } }`
	var before json.RawMessage
	g.ok(adm.token, state, &before, "c", cid)
	for _, m := range mutations {
		t.Run(m.name, func(t *testing.T) {
			g.t = t
			g.fails("", weibo.CodeUnauthenticated, m.query)
			g.fails("not.a.jwt", weibo.CodeUnauthenticated, m.query)
			e := g.fails(bob.token, weibo.CodeForbidden, m.query)
			if e.Message != m.want {
				t.Errorf("message = %q, want %q", e.Message, m.want)
			}
			var after json.RawMessage
			g.ok(adm.token, state, &after, "c", cid)
			if string(after) != string(before) {
				t.Fatalf("a refused %s wrote:\nbefore %s\nafter  %s", m.name, before, after)
			}
			var data map[string]any
			g.ok(adm.token, m.query, &data)
			g.ok(adm.token, state, &before, "c", cid)
		})
	}
	g.t = t
	var end struct {
		Roles struct {
			Edges []struct{ Node struct{ Name string } }
		}
		TopDepartments struct {
			Edges []struct{ Node struct{ Name string } }
		}
		User struct{ Department *struct{ Name string } }
	}
	g.ok(adm.token, state, &end, "c", cid)
	var roles, depts []string
	for _, e := range end.Roles.Edges {
		roles = append(roles, e.Node.Name)
	}
	for _, e := range end.TopDepartments.Edges {
		depts = append(depts, e.Node.Name)
	}
	if got, want := strings.Join(roles, ","), "admin,auditor,editor"; got != want {
		t.Errorf("roles after the admin's mutations = %s, want %s", got, want)
	}
	if len(depts) != 0 || end.User.Department != nil {
		t.Errorf("departments after the cascade delete = %v, carl's = %+v; want none", depts, end.User.Department)
	}
	// The admin queries: FORBIDDEN naming the permission, answered for an
	// administrator.
	for _, q := range []struct{ name, query, want string }{
		{"auditLog", `{ auditLog(first: 1) { edges { node { action } } } }`, "needs the permission VIEW_AUDIT_LOG"},
		{"users", `{ users(first: 1) { edges { node { id } } } }`, "needs the permission MANAGE_USERS"},
		{"role members", `{ roleByName(name: "admin") { members { edges { priority } } } }`, needRoles},
	} {
		t.Run(q.name, func(t *testing.T) {
			g.t = t
			g.fails("", weibo.CodeUnauthenticated, q.query)
			if e := g.fails(bob.token, weibo.CodeForbidden, q.query); e.Message != q.want {
				t.Errorf("message = %q, want %q", e.Message, q.want)
			}
			var data map[string]any
			g.ok(adm.token, q.query, &data)
		})
	}
}

// TestHasRoleCallsNext checks the directive function itself: next runs
// only for a viewer who holds the role.
func TestHasRoleCallsNext(t *testing.T) {
	g := newGateway(t)
	adm := g.admin("ada")
	bob := g.register("bob")
	hasRole := resolvers.HasRole(g.svc.Org.Authz)
	cases := []struct {
		name string
		ctx  context.Context
		code string
	}{
		{"no viewer", t.Context(), weibo.CodeUnauthenticated},
		{"without the role", auth.WithViewer(t.Context(), bob.id), weibo.CodeForbidden},
		{"admin", auth.WithViewer(t.Context(), adm.id), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			called := false
			next := graphql.Resolver(func(context.Context) (any, error) { called = true; return "done", nil })
			res, err := hasRole(c.ctx, nil, next, org.AdminRole)
			if got := weibo.CodeOf(err); got != c.code || (c.code == "") != (err == nil) {
				t.Fatalf("err = %v (code %q), want code %q", err, got, c.code)
			}
			if called != (c.code == "") {
				t.Errorf("next called = %v", called)
			}
			if c.code == "" && res != "done" {
				t.Errorf("result = %v, want next's", res)
			}
		})
	}
}

// TestIDFormats checks the id of every object type wherever it appears:
// users as decimal strings, roles as "role:<n>", departments as
// "department:<n>", posts as "<author>_<ms>"; and that each id read back as
// an argument finds the same object.
func TestIDFormats(t *testing.T) {
	g := newGateway(t)
	adm := g.admin("ada")
	var reg struct {
		Register struct {
			Token string
			User  struct{ ID, Username string }
		}
	}
	g.ok("", `mutation { register(username: "bob", password: "correct horse") { token user { id username } } }`, &reg)
	bobUser, err := g.svc.Accounts.UserByUsername(t.Context(), "bob")
	if err != nil || bobUser == nil {
		t.Fatalf("bob: %v, %v", bobUser, err)
	}
	bob := account{id: bobUser.ID, name: "bob", token: reg.Register.Token}
	uid := bob.id.String()
	if reg.Register.User.ID != uid {
		t.Fatalf("register: id %q, want %q", reg.Register.User.ID, uid)
	}
	var pub struct {
		PublishPost struct {
			ID     string
			Author struct{ ID string }
		}
	}
	g.ok(bob.token, `mutation { publishPost(content: "hello") { id author { id } } }`, &pub)
	postID := uid + "_1583020800123"
	if pub.PublishPost.ID != postID || pub.PublishPost.Author.ID != uid {
		t.Fatalf("publishPost: %+v, want id %s by %s", pub.PublishPost, postID, uid)
	}
	var follow struct{ Follow struct{ ID string } }
	g.ok(adm.token, `mutation($u: ID!) { follow(userId: $u) { id } }`, &follow, "u", uid)
	if follow.Follow.ID != uid {
		t.Errorf("follow: id %q, want %q", follow.Follow.ID, uid)
	}
	var role struct{ CreateRole struct{ ID string } }
	g.ok(adm.token, `mutation { createRole(name: "editor") { id } }`, &role)
	var parent, child struct{ CreateDepartment struct{ ID string } }
	g.ok(adm.token, `mutation { createDepartment(name: "sales") { id } }`, &parent)
	g.ok(adm.token, `mutation($p: ID) { createDepartment(name: "east", parentId: $p) { id } }`, &child, "p", parent.CreateDepartment.ID)
	g.ok(adm.token, `mutation($u: ID!, $r: ID!) { assignRole(userId: $u, roleId: $r, priority: 3) { id } }`, &struct{}{}, "u", uid, "r", role.CreateRole.ID)
	g.ok(adm.token, `mutation($u: ID!, $d: ID) { setUserDepartment(userId: $u, departmentId: $d) { id } }`, &struct{}{}, "u", uid, "d", child.CreateDepartment.ID)

	r, err := g.svc.Org.Roles.ByName(t.Context(), "editor")
	if err != nil || r == nil {
		t.Fatalf("role editor: %v, %v", r, err)
	}
	depts, err := g.svc.Org.Departments.Top(t.Context(), nil, nil)
	if err != nil || len(depts.Edges) != 1 {
		t.Fatalf("top departments: %+v, %v", depts, err)
	}
	for _, c := range []struct{ what, prefix, got, want string }{
		{"role", "role:", role.CreateRole.ID, r.ID.String()},
		{"department", "department:", parent.CreateDepartment.ID, depts.Edges[0].Department.ID.String()},
	} {
		digits, ok := strings.CutPrefix(c.got, c.prefix)
		if c.got != c.want || !ok || digits == "" || strings.TrimLeft(digits, "0123456789") != "" {
			t.Errorf("%s id %q, want %q: %s and the decimal", c.what, c.got, c.want, c.prefix)
		}
	}

	// Every id, read back through its argument and nested in other objects.
	if err := g.svc.FlushFanout(t.Context()); err != nil {
		t.Fatal(err)
	}
	var got struct {
		User struct {
			ID    string
			Posts struct {
				Edges []struct {
					Node struct {
						ID     string
						Author idOnly
					}
				}
			}
			Fans       connection
			Roles      []struct{ Role idOnly }
			Department struct {
				ID        string
				Parent    idOnly
				Ancestors []idOnly
				Members   connection
			}
		}
		Post idOnly
		Role struct {
			ID      string
			Members connection
		}
		Department struct {
			ID       string
			Children connection
		}
		Me           idOnly
		HomeTimeline connection
	}
	g.ok(adm.token, `query($u: ID!, $p: ID!, $r: ID!, $d: ID!) {
		user(id: $u) {
			id
			posts { edges { node { id author { id } } } }
			fans { edges { node { id } } }
			roles { role { id } }
			department { id parent { id } ancestors { id } members { edges { node { id } } } }
		}
		post(id: $p) { id }
		role(id: $r) { id members { edges { node { id } } } }
		department(id: $d) { id children { edges { node { id } } } }
		me { id }
		homeTimeline { edges { node { id } } }
	}`, &got, "u", uid, "p", postID, "r", role.CreateRole.ID, "d", parent.CreateDepartment.ID)

	u := got.User
	admID := adm.id.String()
	parentID, childID := parent.CreateDepartment.ID, child.CreateDepartment.ID
	var postIDs, authorIDs, roleIDs, ancestorIDs []string
	for _, e := range u.Posts.Edges {
		postIDs, authorIDs = append(postIDs, e.Node.ID), append(authorIDs, e.Node.Author.ID)
	}
	for _, a := range u.Roles {
		roleIDs = append(roleIDs, a.Role.ID)
	}
	for _, a := range u.Department.Ancestors {
		ancestorIDs = append(ancestorIDs, a.ID)
	}
	checks := []struct{ where, got, want string }{
		{"user.id", u.ID, uid},
		{"user.posts.node.id", strings.Join(postIDs, ","), postID},
		{"user.posts.node.author.id", strings.Join(authorIDs, ","), uid},
		{"user.fans.node.id", got.User.Fans.ids(), admID},
		{"user.roles.role.id", strings.Join(roleIDs, ","), role.CreateRole.ID},
		{"user.department.id", u.Department.ID, childID},
		{"user.department.parent.id", u.Department.Parent.ID, parentID},
		{"user.department.ancestors.id", strings.Join(ancestorIDs, ","), parentID},
		{"user.department.members.node.id", u.Department.Members.ids(), uid},
		{"post.id", got.Post.ID, postID},
		{"role.id", got.Role.ID, role.CreateRole.ID},
		{"role.members.node.id", got.Role.Members.ids(), uid},
		{"department.id", got.Department.ID, parentID},
		{"department.children.node.id", got.Department.Children.ids(), childID},
		{"me.id", got.Me.ID, admID},
		{"homeTimeline.node.id", got.HomeTimeline.ids(), postID},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.where, c.got, c.want)
		}
	}
}

// idOnly decodes an object of which only the id is selected.
type idOnly struct{ ID string }

// connection decodes a connection of which only the nodes' ids are selected.
type connection struct{ Edges []struct{ Node idOnly } }

// ids returns the nodes' ids, comma-separated.
func (c connection) ids() string {
	var ids []string
	for _, e := range c.Edges {
		ids = append(ids, e.Node.ID)
	}
	return strings.Join(ids, ",")
}
