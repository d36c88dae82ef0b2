package server_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/server"
)

// nodeData decodes any Node with the fields the tests select.
type nodeData struct {
	Typename    string `json:"__typename"`
	ID          string `json:"id"`
	Username    string `json:"username"`
	Content     string `json:"content"`
	Name        string `json:"name"`
	MemberCount int    `json:"memberCount"`
}

const nodeFields = `__typename id
	... on User { username }
	... on Post { content }
	... on Role { name memberCount }
	... on Department { name }`

func (g *gw) node(token, id string) *nodeData {
	g.t.Helper()
	var d struct{ Node *nodeData }
	g.ok(token, `query($id: ID!) { node(id: $id) { `+nodeFields+` } }`, map[string]any{"id": id}, &d)
	return d.Node
}

// TestNodeInterface fetches a user, a post, a role and a department through
// node(id:) and nodes(ids:) over HTTP, on both backends: each comes back as
// its own type with its fields, an unknown id of any type is null, a
// malformed one BAD_USER_INPUT, a role or department needs a token (in
// nodes: an error at its index, the others still there), nodes keeps the
// order given and takes at most 100 ids, and the nodes of one request cost
// one batched read per type.
func TestNodeInterface(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startGateway(t, b.Open(t))
			boss, ming := g.register(uniqueName("boss")), g.register(uniqueName("ming"))
			g.makeAdmin(boss)
			tk := boss.token
			role := g.createRole(tk, uniqueName("editor"))
			dept := g.createDept(tk, uniqueName("sales"), nil)
			g.assign(tk, ming.ID, role.ID, 5)
			post := g.publish(ming.token, "hello, node")

			want := map[string]nodeData{
				ming.ID: {Typename: "User", ID: ming.ID, Username: ming.Username},
				post.ID: {Typename: "Post", ID: post.ID, Content: post.Content},
				role.ID: {Typename: "Role", ID: role.ID, Name: role.Name, MemberCount: 1},
				dept.ID: {Typename: "Department", ID: dept.ID, Name: dept.Name},
			}
			for id, w := range want {
				if got := g.node(tk, id); got == nil || *got != w {
					t.Errorf("node(%q) = %+v, want %+v", id, got, w)
				}
			}
			// The ids of the four types never look alike.
			if !strings.HasPrefix(role.ID, "role:") || !strings.HasPrefix(dept.ID, "department:") ||
				strings.Trim(ming.ID, "0123456789") != "" || !strings.HasPrefix(post.ID, ming.ID+"_") {
				t.Errorf("ids: user %q post %q role %q department %q", ming.ID, post.ID, role.ID, dept.ID)
			}
			// The number of a role or department as a bare id is a user's id.
			for _, id := range []string{strings.TrimPrefix(role.ID, "role:"), strings.TrimPrefix(dept.ID, "department:")} {
				if got := g.node(tk, id); got != nil && got.Typename != "User" {
					t.Errorf("node(%q) = %+v, want a user or null", id, got)
				}
			}
			// Unknown ids of every type: null.
			for _, id := range []string{"999999999999", "999999999999_1", "role:999999999999", "department:999999999999"} {
				if got := g.node(tk, id); got != nil {
					t.Errorf("node(%q) = %+v, want null", id, got)
				}
			}
			// Malformed ids.
			for _, id := range []string{"", "abc", "0", "-1", "role:", "role:x", "department:0", "team:1", "Role:1", "1_x", "role:1:2"} {
				e := g.fails(tk, "BAD_USER_INPUT", `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": id})
				if e.Extensions["field"] != "id" || !strings.Contains(e.Message, "malformed node id") {
					t.Errorf("node(%q): %+v", id, e)
				}
			}
			// Anonymous: users and posts yes, roles and departments no.
			if got := g.node("", ming.ID); got == nil || got.Username != ming.Username {
				t.Errorf("anonymous node(user) = %+v", got)
			}
			g.fails("", "UNAUTHENTICATED", `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": role.ID})
			g.fails("", "UNAUTHENTICATED", `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": dept.ID})

			// nodes: in order, nulls for the unknown, repeats allowed.
			ids := []string{dept.ID, ming.ID, "role:999999999999", post.ID, role.ID, boss.ID, ming.ID}
			var d struct{ Nodes []*nodeData }
			if calls := g.okCalls(tk, `query($ids: [ID!]!) { nodes(ids: $ids) { `+nodeFields+` } }`, map[string]any{"ids": ids}, &d); calls != 4 {
				t.Errorf("nodes of 4 types cost %v store calls, want 4 (one batched read per type)", calls)
			}
			if len(d.Nodes) != len(ids) {
				t.Fatalf("nodes: %d entries for %d ids", len(d.Nodes), len(ids))
			}
			for i, id := range ids {
				w, known := want[id]
				if id == boss.ID {
					w, known = nodeData{Typename: "User", ID: boss.ID, Username: boss.Username}, true
				}
				if got := d.Nodes[i]; (got == nil) == known || (known && *got != w) {
					t.Errorf("nodes[%d] (%s) = %+v, want %+v", i, id, got, w)
				}
			}
			// Anonymous: the role and the department are null with an error each.
			r := g.post("", `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, map[string]any{"ids": []string{ming.ID, role.ID, post.ID, dept.ID}})
			var anon struct{ Nodes []*nodeData }
			if err := json.Unmarshal(r.Data, &anon); err != nil {
				t.Fatalf("anonymous nodes: %v: %s", err, r.Data)
			}
			if len(anon.Nodes) != 4 || anon.Nodes[0] == nil || anon.Nodes[1] != nil || anon.Nodes[2] == nil || anon.Nodes[3] != nil {
				t.Errorf("anonymous nodes = %s", r.Data)
			}
			var paths []string
			for _, e := range r.Errors {
				if e.Extensions["code"] != "UNAUTHENTICATED" {
					t.Errorf("anonymous nodes: error %+v", e)
				}
				paths = append(paths, fmt.Sprint(e.Path))
			}
			slices.Sort(paths)
			if !slices.Equal(paths, []string{"[nodes 1]", "[nodes 3]"}) {
				t.Errorf("anonymous nodes: errors at %v, want [nodes 1] and [nodes 3]", paths)
			}
			// Bounds and malformed entries.
			many := make([]string, 101)
			for i := range many {
				many[i] = ming.ID
			}
			e := g.fails(tk, "BAD_USER_INPUT", `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, map[string]any{"ids": many})
			if e.Extensions["field"] != "ids" {
				t.Errorf("101 ids: %+v", e)
			}
			g.ok(tk, `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, map[string]any{"ids": many[:100]}, &d)
			if len(d.Nodes) != 100 {
				t.Errorf("100 ids: %d nodes", len(d.Nodes))
			}
			e = g.fails(tk, "BAD_USER_INPUT", `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, map[string]any{"ids": []string{ming.ID, "nope"}})
			if e.Extensions["field"] != "ids" || !strings.Contains(e.Message, `"nope"`) {
				t.Errorf("malformed entry: %+v", e)
			}
			g.ok(tk, `{ nodes(ids: []) { id } }`, nil, &d)
			if len(d.Nodes) != 0 {
				t.Errorf("no ids: %d nodes", len(d.Nodes))
			}
		})
	}
}

// TestTotalCount checks totalCount on follows, fans, posts and role
// members over HTTP, on both backends: the kept counters, whoever the user
// is reached through (a user read in full, or a post's author), equal to
// the number of edges when the whole list is paged.
func TestTotalCount(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startGateway(t, b.Open(t))
			boss := g.register(uniqueName("boss"))
			g.makeAdmin(boss)
			users := []account{g.register(uniqueName("u")), g.register(uniqueName("u")), g.register(uniqueName("u"))}
			role := g.createRole(boss.token, uniqueName("staff"))
			for _, u := range users {
				if u != users[0] {
					g.follow(u.token, users[0].ID)
				}
				g.assign(boss.token, u.ID, role.ID, 5)
			}
			g.follow(users[0].token, users[1].ID)
			var last postNode
			for i := range 3 {
				last = g.publish(users[0].token, fmt.Sprintf("post %d", i))
			}
			type counted struct {
				TotalCount int
				Edges      []struct{ Cursor string }
			}
			var d struct {
				User struct {
					FollowCount, FanCount, PostCount int
					Follows, Fans, Posts             counted
				}
				Post struct {
					Author struct {
						Posts counted
						Fans  counted
					}
				}
				Role struct {
					MemberCount int
					Members     counted
				}
			}
			g.ok(boss.token, `query($u: ID!, $p: ID!, $r: ID!) {
				user(id: $u) { followCount fanCount postCount
					follows(first: 1) { totalCount edges { cursor } }
					fans(first: 100) { totalCount edges { cursor } }
					posts(last: 2) { totalCount edges { cursor } } }
				post(id: $p) { author { posts(first: 1) { totalCount } fans(first: 1) { totalCount } } }
				role(id: $r) { memberCount members(first: 1) { totalCount edges { cursor } } } }`,
				map[string]any{"u": users[0].ID, "p": last.ID, "r": role.ID}, &d)
			u := d.User
			for _, c := range []struct {
				what      string
				got, want int
			}{
				{"follows.totalCount", u.Follows.TotalCount, 1}, {"followCount", u.FollowCount, 1},
				{"fans.totalCount", u.Fans.TotalCount, 2}, {"fans edges", len(u.Fans.Edges), 2}, {"fanCount", u.FanCount, 2},
				{"posts.totalCount", u.Posts.TotalCount, 3}, {"posts edges", len(u.Posts.Edges), 2}, {"postCount", u.PostCount, 3},
				{"author posts.totalCount", d.Post.Author.Posts.TotalCount, 3},
				{"author fans.totalCount", d.Post.Author.Fans.TotalCount, 2},
				{"members.totalCount", d.Role.Members.TotalCount, 3}, {"members edges", len(d.Role.Members.Edges), 1},
				{"memberCount", d.Role.MemberCount, 3},
			} {
				if c.got != c.want {
					t.Errorf("%s = %d, want %d", c.what, c.got, c.want)
				}
			}
			// The counters follow changes.
			g.unfollow(users[2].token, users[0].ID)
			g.ok(boss.token, `query($u: ID!) { user(id: $u) { fans { totalCount edges { cursor } } } }`, map[string]any{"u": users[0].ID}, &d)
			if d.User.Fans.TotalCount != 1 || len(d.User.Fans.Edges) != 1 {
				t.Errorf("after an unfollow: fans %+v", d.User.Fans)
			}
		})
	}
}

// bothConn decodes a connection paged both ways.
type bothConn struct {
	Edges []struct {
		Cursor string
		Node   struct{ ID, Content string }
	}
	PageInfo struct {
		HasNextPage, HasPreviousPage bool
		StartCursor, EndCursor       *string
	}
}

func (c bothConn) ids() []string {
	var out []string
	for _, e := range c.Edges {
		out = append(out, e.Node.ID)
	}
	return out
}

const bothFields = `edges { cursor node { id content } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor }`

// TestPagingBothWaysHTTP pages the home timeline and a user's posts both
// ways over HTTP while posts arrive, on both backends: "newer than my
// first item" (last/before the first page's start cursor) returns exactly
// the posts published since, paging backward from the end while posts are
// published neither repeats nor skips, and first with last is refused.
func TestPagingBothWaysHTTP(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startGateway(t, b.Open(t))
			alice, bob := g.register(uniqueName("alice")), g.register(uniqueName("bob"))
			g.follow(alice.token, bob.ID)
			for i := range 3 {
				g.publish(bob.token, fmt.Sprintf("bob %d", i))
				g.publish(alice.token, fmt.Sprintf("alice %d", i))
			}
			g.flush()
			lists := []struct {
				name, query string
				field       func(d map[string]bothConn) bothConn
			}{
				{"home timeline", `query($first: Int, $after: String, $last: Int, $before: String) {
					homeTimeline(first: $first, after: $after, last: $last, before: $before) { ` + bothFields + ` } }`,
					func(d map[string]bothConn) bothConn { return d["homeTimeline"] }},
				{"user posts", `query($first: Int, $after: String, $last: Int, $before: String) { user(id: "` + bob.ID + `") {
					posts(first: $first, after: $after, last: $last, before: $before) { ` + bothFields + ` } } }`,
					func(d map[string]bothConn) bothConn { return d["posts"] }},
			}
			for _, l := range lists {
				t.Run(strings.ReplaceAll(l.name, " ", "_"), func(t *testing.T) {
					g.t = t
					read := func(vars map[string]any) bothConn {
						t.Helper()
						var raw map[string]json.RawMessage
						g.ok(alice.token, l.query, vars, &raw)
						if u, ok := raw["user"]; ok {
							if err := json.Unmarshal(u, &raw); err != nil {
								t.Fatal(err)
							}
						}
						d := map[string]bothConn{}
						for k, v := range raw {
							var c bothConn
							if err := json.Unmarshal(v, &c); err != nil {
								t.Fatal(err)
							}
							d[k] = c
						}
						return l.field(d)
					}
					// The first page a client shows; then posts arrive.
					first := read(map[string]any{"first": 2})
					if first.PageInfo.HasPreviousPage || !first.PageInfo.HasNextPage {
						t.Fatalf("first page: %+v", first.PageInfo)
					}
					old := read(map[string]any{"first": 100}).ids()
					var fresh []string
					for i := range 3 {
						fresh = append([]string{g.publish(bob.token, fmt.Sprintf("bob new %d", i)).ID}, fresh...)
					}
					g.flush()
					newer := read(map[string]any{"last": 100, "before": *first.PageInfo.StartCursor})
					if !slices.Equal(newer.ids(), fresh) || newer.PageInfo.HasPreviousPage || !newer.PageInfo.HasNextPage {
						t.Errorf("newer than the first item: %v %+v, want exactly %v", newer.ids(), newer.PageInfo, fresh)
					}
					// Backward from the end by 2 while more posts arrive at the front.
					var back []string
					var before any
					for i := 0; ; i++ {
						vars := map[string]any{"last": 2}
						if before != nil {
							vars["before"] = before
						}
						p := read(vars)
						back = append(p.ids(), back...)
						if i < 2 {
							fresh = append([]string{g.publish(bob.token, fmt.Sprintf("bob newer %d", i)).ID}, fresh...)
							g.flush()
						}
						if !p.PageInfo.HasPreviousPage {
							break
						}
						before = *p.PageInfo.StartCursor
					}
					all := read(map[string]any{"first": 100}).ids()
					if !slices.Equal(all, append(slices.Clone(fresh), old...)) {
						t.Fatalf("whole list %v, want %v then %v", all, fresh, old)
					}
					if !slices.Equal(back, all) {
						t.Errorf("paged backward while posting: %v, want %v", back, all)
					}
					e := g.fails(alice.token, "BAD_USER_INPUT", l.query, map[string]any{"first": 1, "last": 1})
					if e.Extensions["field"] != "last" {
						t.Errorf("first and last: %+v", e)
					}
					e = g.fails(alice.token, "BAD_USER_INPUT", l.query, map[string]any{"last": 1, "before": "nope!"})
					if e.Extensions["field"] != "before" {
						t.Errorf("malformed before: %+v", e)
					}
				})
			}
		})
	}
}

// TestQueryCostCountsLast checks that the query-cost limit counts a page
// asked for with `last` as one asked for with `first`, and nodes(ids:) as
// up to 100 entries: nested backward pages too big for the node limit are
// refused before they run.
func TestQueryCostCountsLast(t *testing.T) {
	g := startGateway(t, testenv.Embedded(t))
	alice := g.register(uniqueName("alice"))
	nested := func(arg string) string {
		return `{ homeTimeline(` + arg + `: 100) { edges { node { author { posts(` + arg + `: 100) { edges { node {
			author { posts(` + arg + `: 100) { edges { cursor } } } } } } } } } } }`
	}
	for _, arg := range []string{"first", "last"} {
		e := g.fails(alice.token, server.CodeQueryTooComplex, nested(arg), nil)
		if !strings.Contains(e.Message, "nodes") {
			t.Errorf("%s: %+v", arg, e)
		}
	}
	// Small backward pages pass.
	g.ok(alice.token, `{ homeTimeline(last: 5) { edges { node { author { posts(last: 5) { totalCount } } } } } }`, nil, nil)
	// 100 ids, each with about 1,000 nodes under it: more than the limit
	// (20 entries, a default list's size, would be under it).
	ids := make([]string, 100)
	for i := range ids {
		ids[i] = alice.ID
	}
	e := g.fails(alice.token, server.CodeQueryTooComplex, `query($ids: [ID!]!) { nodes(ids: $ids) { ... on User {
		posts(last: 10) { edges { node { author { follows(first: 100) { edges { cursor } } } } } } } } }`, map[string]any{"ids": ids})
	if !strings.Contains(e.Message, "nodes") {
		t.Errorf("nodes: %+v", e)
	}
}
