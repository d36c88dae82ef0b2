package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/audit"
	"github.com/weibohbase/gateway/weibo/tables"
)

// provisioning is a User.provisioning.
type provisioning struct {
	UserName      string
	ExternalID    *string
	ProvisionedBy string
	Closed        bool
}

// provenance is the externalId and provisionedBy of a Department or Role.
type provenance struct {
	ExternalID    *string
	ProvisionedBy *string
}

// scimCells writes what a provisioning client leaves on the family i of
// the row of node id (a user, department or role): the cells of
// weibo/tables/scim.go, set through the store as the SCIM writer sets them.
func scimCells(t *testing.T, st hbase.Store, id string, cells map[string][]byte) {
	t.Helper()
	n, err := weibo.ParseNodeID(id)
	if err != nil {
		t.Fatal(err)
	}
	p := &hbase.Put{Values: hbase.Values{tables.FamInfo: cells}}
	switch n.Kind {
	case weibo.NodeUser:
		p.Table, p.Row = tables.Users, tables.UserKey(n.User)
	case weibo.NodeDepartment:
		p.Table, p.Row = tables.Departments, tables.DeptKey(n.Dept)
	case weibo.NodeRole:
		p.Table, p.Row = tables.Roles, tables.RoleKey(n.Role)
	default:
		t.Fatalf("scimCells of %s", id)
	}
	if err := st.Put(t.Context(), p); err != nil {
		t.Fatal(err)
	}
}

// TestAuditEventClient: an event a provisioning client recorded names it
// in AuditEvent.client with a null actor; one a user recorded has its
// actor and a null client.
func TestAuditEventClient(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startGateway(t, b.Open(t))
			tag := strings.ToLower(uniqueName("aclient"))
			boss, u := g.register(tag+"boss"), g.register(tag+"u")
			g.makeAdmin(boss)
			role := g.createRole(boss.token, "r"+tag)
			g.assign(boss.token, u.ID, role.ID, 3)
			uid, err := weibo.ParseUserID(u.ID)
			if err != nil {
				t.Fatal(err)
			}
			ev := &audit.Event{Action: "user.provision", Target: weibo.NodeID{Kind: weibo.NodeUser, User: uid}, After: `{"userName":"u@example.com"}`}
			if err := g.svc.Org.Audit.Log().Record(audit.WithClient(t.Context(), "entra"), ev); err != nil {
				t.Fatal(err)
			}
			var d struct {
				AuditLog struct {
					Edges []struct {
						Node struct {
							Action string
							Actor  *struct{ ID string }
							Client *string
						}
					}
				}
			}
			g.ok(boss.token, `query($t: ID!) { auditLog(filter: {targetId: $t}, first: 10) { edges { node { action actor { id } client } } } }`,
				map[string]any{"t": u.ID}, &d)
			var got []string
			for _, e := range d.AuditLog.Edges {
				actor := "-"
				if e.Node.Actor != nil {
					actor = e.Node.Actor.ID
				}
				got = append(got, e.Node.Action+" "+actor+" "+deref(e.Node.Client))
			}
			want := []string{"user.provision - entra", "role.assign " + boss.ID + " <nil>"}
			if strings.Join(got, "; ") != strings.Join(want, "; ") {
				t.Errorf("events about u = %q, want %q", got, want)
			}
		})
	}
}

// TestProvisioningFields: User.provisioning shows a provisioned user's
// login name, externalId, client and closing to holders of MANAGE_USERS
// only (null to the user themselves, to other users, to anonymous
// viewers, and for a user SCIM never touched), also for a post's author;
// Department and Role show their externalId and client to every reader
// of them, null when SCIM never touched them.
func TestProvisioningFields(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := b.Open(t)
			g := startGateway(t, st)
			tag := strings.ToLower(uniqueName("prov"))
			boss, alice, bob, plain, mod := g.register(tag+"boss"), g.register(tag+"alice"), g.register(tag+"bob"), g.register(tag+"plain"), g.register(tag+"mod")
			g.makeAdmin(boss)
			// A holder of MANAGE_USERS alone (not an administrator).
			var r struct{ CreateRole struct{ ID string } }
			g.ok(boss.token, `mutation($n: String!) { createRole(name: $n, permissions: [MANAGE_USERS]) { id } }`, map[string]any{"n": "m" + tag}, &r)
			g.assign(boss.token, mod.ID, r.CreateRole.ID, 5)

			// alice: provisioned with a login name of her own, an
			// externalId, and closed; bob: provisioned under his username,
			// no externalId; plain: never touched.
			login := "Alice.Smith+" + tag + "@example.com"
			scimCells(t, st, alice.ID, map[string][]byte{
				tables.ColLoginName:     []byte(login),
				tables.ColExternalID:    []byte("9f3c-ALICE"),
				tables.ColProvisionedBy: []byte("entra"),
				tables.ColScimVersion:   tables.U64(3),
				tables.ColClosedAt:      tables.EncodeMillis(g.svc.Writes.NowMillis()),
			})
			scimCells(t, st, bob.ID, map[string][]byte{
				tables.ColProvisionedBy: []byte("okta"),
				tables.ColScimVersion:   tables.U64(1),
			})
			post := g.publish(alice.token, "hello from "+tag)

			const q = `query($a: ID!, $b: ID!, $p: ID!, $post: ID!) {
				a: user(id: $a) { provisioning { userName externalId provisionedBy closed } }
				b: user(id: $b) { provisioning { userName externalId provisionedBy closed } }
				p: user(id: $p) { provisioning { userName } }
				post(id: $post) { author { provisioning { userName provisionedBy } } } }`
			type users struct {
				A, B, P struct{ Provisioning *provisioning }
				Post    struct {
					Author struct{ Provisioning *provisioning }
				}
			}
			vars := map[string]any{"a": alice.ID, "b": bob.ID, "p": plain.ID, "post": post.ID}
			for _, who := range []account{boss, mod} {
				var d users
				g.ok(who.token, q, vars, &d)
				a, bb := d.A.Provisioning, d.B.Provisioning
				if a == nil || a.UserName != login || a.ExternalID == nil || *a.ExternalID != "9f3c-ALICE" || a.ProvisionedBy != "entra" || !a.Closed {
					t.Errorf("%s reads alice's provisioning %+v", who.Username, a)
				}
				if bb == nil || bb.UserName != bob.Username || bb.ExternalID != nil || bb.ProvisionedBy != "okta" || bb.Closed {
					t.Errorf("%s reads bob's provisioning %+v", who.Username, bb)
				}
				if d.P.Provisioning != nil {
					t.Errorf("%s reads a provisioning of a user SCIM never touched: %+v", who.Username, d.P.Provisioning)
				}
				if pa := d.Post.Author.Provisioning; pa == nil || pa.UserName != login || pa.ProvisionedBy != "entra" {
					t.Errorf("%s reads the post author's provisioning %+v", who.Username, pa)
				}
			}
			for _, token := range []string{alice.token, plain.token, ""} {
				var d users
				g.ok(token, q, vars, &d)
				if d.A.Provisioning != nil || d.B.Provisioning != nil || d.Post.Author.Provisioning != nil {
					t.Errorf("a viewer without MANAGE_USERS reads provisioning: %+v", d)
				}
			}

			// Departments and roles: created through GraphQL, then one of
			// each touched by a client.
			dx, dy := g.createDept(boss.token, "X"+tag, nil), g.createDept(boss.token, "Y"+tag, nil)
			rx, ry := g.createRole(boss.token, "rx"+tag), g.createRole(boss.token, "ry"+tag)
			scimCells(t, st, dx.ID, map[string][]byte{tables.ColExternalID: []byte("grp-Sales"), tables.ColProvisionedBy: []byte("entra")})
			scimCells(t, st, rx.ID, map[string][]byte{tables.ColExternalID: []byte("grp-Editors"), tables.ColProvisionedBy: []byte("okta")})
			const gq = `query($dx: ID!, $dy: ID!, $rx: ID!, $ry: ID!) {
				dx: department(id: $dx) { externalId provisionedBy } dy: department(id: $dy) { externalId provisionedBy }
				rx: role(id: $rx) { externalId provisionedBy } ry: role(id: $ry) { externalId provisionedBy } }`
			for _, token := range []string{boss.token, plain.token} {
				var d struct{ DX, DY, RX, RY provenance }
				g.ok(token, gq, map[string]any{"dx": dx.ID, "dy": dy.ID, "rx": rx.ID, "ry": ry.ID}, &d)
				if got := deref(d.DX.ExternalID) + " " + deref(d.DX.ProvisionedBy); got != "grp-Sales entra" {
					t.Errorf("provisioned department: %s", got)
				}
				if got := deref(d.RX.ExternalID) + " " + deref(d.RX.ProvisionedBy); got != "grp-Editors okta" {
					t.Errorf("provisioned role: %s", got)
				}
				if d.DY.ExternalID != nil || d.DY.ProvisionedBy != nil || d.RY.ExternalID != nil || d.RY.ProvisionedBy != nil {
					t.Errorf("a department or role SCIM never touched: %+v %+v", d.DY, d.RY)
				}
			}
		})
	}
}

// TestProvisioningStoreCallsConstant: a page of users with their
// provisioning, as the console's users list asks, costs the same store
// calls for 1, 5 and 40 users (the standing read once, the users in one
// batch): no call per user.
func TestProvisioningStoreCallsConstant(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := b.Open(t)
			g := startGateway(t, st)
			tag := strings.ToLower(uniqueName("provcalls"))
			boss := g.register(tag + "boss")
			g.makeAdmin(boss)
			for i := range 40 { // through the domain: sign-ups over HTTP are rate limited
				u, err := g.svc.Accounts.Register(t.Context(), fmt.Sprintf("%su%02d", tag, i), "password1")
				if err != nil {
					t.Fatal(err)
				}
				scimCells(t, st, u.ID.String(), map[string][]byte{
					tables.ColLoginName:     []byte(fmt.Sprintf("user.%02d@%s.example", i, tag)),
					tables.ColExternalID:    []byte(fmt.Sprintf("ext-%02d", i)),
					tables.ColProvisionedBy: []byte("entra"),
				})
			}
			const q = `query($p: String, $first: Int) { users(filter: {usernamePrefix: $p}, first: $first) {
				edges { node { id username provisioning { userName externalId provisionedBy closed } } } } }`
			var costs []float64
			for _, first := range []int{1, 5, 40} {
				var d struct {
					Users struct {
						Edges []struct {
							Node struct {
								Username     string
								Provisioning *provisioning
							}
						}
					}
				}
				costs = append(costs, g.okCalls(boss.token, q, map[string]any{"p": tag + "u", "first": first}, &d))
				if len(d.Users.Edges) != first {
					t.Fatalf("first %d: %d users", first, len(d.Users.Edges))
				}
				for _, e := range d.Users.Edges {
					if p := e.Node.Provisioning; p == nil || p.ProvisionedBy != "entra" || !strings.HasSuffix(p.UserName, "@"+tag+".example") {
						t.Fatalf("%s's provisioning: %+v", e.Node.Username, p)
					}
				}
			}
			if costs[0] != costs[1] || costs[1] != costs[2] {
				t.Errorf("store calls for first = 1, 5, 40: %v", costs)
			}
		})
	}
}
