package server_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/weibohbase/gateway/internal/testenv"
)

type userData struct {
	ID               string `json:"id"`
	Username         string `json:"username"`
	FollowCount      int    `json:"followCount"`
	FanCount         int    `json:"fanCount"`
	PostCount        int    `json:"postCount"`
	FollowedByViewer bool   `json:"followedByViewer"`
}

type postNode struct {
	ID        string    `json:"id"`
	Content   string    `json:"content"`
	CreatedAt time.Time `json:"createdAt"`
	Author    userData  `json:"author"`
}

type postConn struct {
	Edges []struct {
		Cursor string   `json:"cursor"`
		Node   postNode `json:"node"`
	} `json:"edges"`
	PageInfo struct {
		HasNextPage bool    `json:"hasNextPage"`
		EndCursor   *string `json:"endCursor"`
	} `json:"pageInfo"`
}

func (c postConn) contents() []string {
	var out []string
	for _, e := range c.Edges {
		out = append(out, e.Node.Content)
	}
	return out
}

const timelineQuery = `query($first: Int, $after: String) { homeTimeline(first: $first, after: $after) {
  edges { cursor node { id content createdAt author { id username } } }
  pageInfo { hasNextPage endCursor } } }`

const userQuery = `query($id: ID!) { user(id: $id) { id username followCount fanCount postCount followedByViewer } }`

// account is a registered test user and its token.
type account struct {
	userData
	token string
}

func (g *gw) register(name string) account {
	g.t.Helper()
	var d struct {
		Register struct {
			Token string   `json:"token"`
			User  userData `json:"user"`
		} `json:"register"`
	}
	g.ok("", `mutation($u: String!, $p: String!) { register(username: $u, password: $p) { token user { id username followCount fanCount postCount } } }`,
		map[string]any{"u": name, "p": "correct horse"}, &d)
	return account{userData: d.Register.User, token: d.Register.Token}
}

func (g *gw) user(token, id string) userData {
	g.t.Helper()
	var d struct{ User userData }
	g.ok(token, userQuery, map[string]any{"id": id}, &d)
	return d.User
}

func (g *gw) timeline(token string, first int, after *string) postConn {
	g.t.Helper()
	var d struct{ HomeTimeline postConn }
	vars := map[string]any{"first": first}
	if after != nil {
		vars["after"] = *after
	}
	g.ok(token, timelineQuery, vars, &d)
	return d.HomeTimeline
}

func (g *gw) publish(token, content string) postNode {
	g.t.Helper()
	var d struct{ PublishPost postNode }
	g.ok(token, `mutation($c: String!) { publishPost(content: $c) { id content createdAt author { id username } } }`, map[string]any{"c": content}, &d)
	// Posts of one millisecond are ordered by author id, not by publish
	// order; keep the test's posts in distinct milliseconds.
	time.Sleep(2 * time.Millisecond)
	return d.PublishPost
}

func (g *gw) follow(token, id string) userData {
	g.t.Helper()
	var d struct{ Follow userData }
	g.ok(token, `mutation($id: ID!) { follow(userId: $id) { id username followCount fanCount postCount followedByViewer } }`, map[string]any{"id": id}, &d)
	return d.Follow
}

func (g *gw) unfollow(token, id string) userData {
	g.t.Helper()
	var d struct{ Unfollow userData }
	g.ok(token, `mutation($id: ID!) { unfollow(userId: $id) { id username followCount fanCount postCount followedByViewer } }`, map[string]any{"id": id}, &d)
	return d.Unfollow
}

// flush waits until the fan-out queued so far is written.
func (g *gw) flush() {
	g.t.Helper()
	if err := g.svc.FlushFanout(g.t.Context()); err != nil {
		g.t.Fatalf("flush fan-out: %v", err)
	}
}

func uniqueName(prefix string) string {
	return fmt.Sprintf("%s_%d_%04d", prefix, time.Now().UnixNano()%1e9, rand.IntN(10000))
}

func equalStrings(a, b []string) bool {
	return strings.Join(a, "\x00") == strings.Join(b, "\x00") && len(a) == len(b)
}

// TestSocialFlow drives register, login, follow, publish, fan-out, home
// timeline paging and unfollow over HTTP, on both backends.
func TestSocialFlow(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startGateway(t, b.Open(t))
			alice, bob, carol := g.register(uniqueName("alice")), g.register(uniqueName("bob")), g.register(uniqueName("carol"))

			// Login: right and wrong password.
			var login struct{ Login struct{ Token string } }
			g.ok("", `mutation($u: String!) { login(username: $u, password: "correct horse") { token } }`, map[string]any{"u": strings.ToUpper(alice.Username)}, &login)
			if login.Login.Token == "" {
				t.Fatal("login gave no token")
			}
			var me struct{ Me *userData }
			g.ok(login.Login.Token, `{ me { id username } }`, nil, &me)
			if me.Me == nil || me.Me.ID != alice.ID {
				t.Fatalf("me = %+v, want %s", me.Me, alice.ID)
			}
			g.ok("", `{ me { id } }`, nil, &me)
			if me.Me != nil {
				t.Fatalf("anonymous me = %+v, want null", me.Me)
			}

			// Bob posts before Alice follows him: the follow backfills.
			var bobPosts []string
			for i := range 3 {
				p := g.publish(bob.token, fmt.Sprintf("bob post %d", i))
				if p.Author.ID != bob.ID || p.Author.Username != bob.Username {
					t.Fatalf("post author = %+v", p.Author)
				}
				bobPosts = append([]string{p.Content}, bobPosts...)
			}
			mine := g.publish(alice.token, "alice says hi")
			if got := g.timeline(alice.token, 10, nil).contents(); !equalStrings(got, []string{mine.Content}) {
				t.Fatalf("alice's own post not in her timeline at once: %q", got)
			}

			f := g.follow(alice.token, bob.ID)
			if f.ID != bob.ID || f.FanCount != 1 || !f.FollowedByViewer {
				t.Fatalf("follow returned %+v", f)
			}
			g.follow(alice.token, bob.ID) // idempotent
			if u := g.user(alice.token, alice.ID); u.FollowCount != 1 {
				t.Fatalf("alice followCount = %d after a repeated follow, want 1", u.FollowCount)
			}
			if u := g.user("", bob.ID); u.FanCount != 1 || u.PostCount != 3 || u.FollowedByViewer {
				t.Fatalf("bob = %+v", u)
			}
			want := append([]string{mine.Content}, bobPosts...)
			if got := g.timeline(alice.token, 10, nil).contents(); !equalStrings(got, want) {
				t.Fatalf("timeline after follow = %q, want %q", got, want)
			}

			// A new post of Bob reaches Alice through the fan-out.
			g.follow(carol.token, bob.ID)
			fresh := g.publish(bob.token, "bob fresh post 🚀 新微博")
			g.flush()
			for _, who := range []account{alice, carol, bob} {
				if got := g.timeline(who.token, 1, nil).contents(); !equalStrings(got, []string{fresh.Content}) {
					t.Fatalf("%s's newest entry = %q, want the fresh post", who.Username, got)
				}
			}

			// Paging while new posts arrive neither repeats nor skips.
			full := g.timeline(alice.token, 100, nil).contents()
			p1 := g.timeline(alice.token, 2, nil)
			g.publish(bob.token, "posted between pages")
			g.flush()
			var paged []string
			paged = append(paged, p1.contents()...)
			for cur := p1; cur.PageInfo.HasNextPage; {
				cur = g.timeline(alice.token, 2, cur.PageInfo.EndCursor)
				paged = append(paged, cur.contents()...)
			}
			if !equalStrings(paged, full) {
				t.Fatalf("paged timeline = %q, want %q", paged, full)
			}

			// follows / fans connections.
			var conn struct {
				User struct {
					Follows struct{ Edges []struct{ Node userData } }
					Fans    struct{ Edges []struct{ Node userData } }
					Posts   postConn
				}
			}
			g.ok(alice.token, `query($id: ID!) { user(id: $id) {
				follows { edges { node { id username } } }
				fans { edges { node { id username followedByViewer } } }
				posts(first: 2) { edges { node { content } } pageInfo { hasNextPage endCursor } } } }`, map[string]any{"id": bob.ID}, &conn)
			if n := len(conn.User.Follows.Edges); n != 0 {
				t.Fatalf("bob follows %d users, want 0", n)
			}
			fans := map[string]bool{}
			for _, e := range conn.User.Fans.Edges {
				fans[e.Node.ID] = true
			}
			if len(fans) != 2 || !fans[alice.ID] || !fans[carol.ID] {
				t.Fatalf("bob's fans = %v", fans)
			}
			if got := conn.User.Posts.contents(); len(got) != 2 || got[0] != "posted between pages" || !conn.User.Posts.PageInfo.HasNextPage {
				t.Fatalf("bob's posts page = %q", got)
			}

			// Unfollow removes Bob's posts from Alice's timeline; idempotent.
			u := g.unfollow(alice.token, bob.ID)
			if u.FanCount != 1 || u.FollowedByViewer {
				t.Fatalf("unfollow returned %+v", u)
			}
			g.unfollow(alice.token, bob.ID)
			if got := g.timeline(alice.token, 100, nil).contents(); !equalStrings(got, []string{mine.Content}) {
				t.Fatalf("timeline after unfollow = %q", got)
			}
			if u := g.user("", alice.ID); u.FollowCount != 0 {
				t.Fatalf("alice followCount after unfollow = %d", u.FollowCount)
			}
		})
	}
}

// TestBadInput checks that bad input gets a coded GraphQL error, never a
// 5xx, and writes nothing.
func TestBadInput(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startGateway(t, b.Open(t))
			dave, erin := g.register(uniqueName("dave")), g.register(uniqueName("erin"))
			long := strings.Repeat("微", 10001)
			cases := []struct {
				name, token, code, query string
				vars                     map[string]any
			}{
				{"taken username", "", "BAD_USER_INPUT", `mutation($u: String!) { register(username: $u, password: "correct horse") { token } }`, map[string]any{"u": strings.ToUpper(dave.Username)}},
				{"bad username", "", "BAD_USER_INPUT", `mutation { register(username: "a b", password: "correct horse") { token } }`, nil},
				{"short password", "", "BAD_USER_INPUT", `mutation { register(username: "someone_new_x", password: "short") { token } }`, nil},
				{"wrong password", "", "UNAUTHENTICATED", `mutation($u: String!) { login(username: $u, password: "wrong horse") { token } }`, map[string]any{"u": dave.Username}},
				{"unknown user login", "", "UNAUTHENTICATED", `mutation { login(username: "nobody_here_zz", password: "whatever1") { token } }`, nil},
				{"no token", "", "UNAUTHENTICATED", `{ homeTimeline { edges { cursor } } }`, nil},
				{"bad token", "not.a.jwt", "UNAUTHENTICATED", `{ homeTimeline { edges { cursor } } }`, nil},
				{"no token publish", "", "UNAUTHENTICATED", `mutation { publishPost(content: "x") { id } }`, nil},
				{"follow self", dave.token, "BAD_USER_INPUT", `mutation($id: ID!) { follow(userId: $id) { id } }`, map[string]any{"id": dave.ID}},
				{"follow unknown", dave.token, "NOT_FOUND", `mutation { follow(userId: "999999999999") { id } }`, nil},
				{"follow malformed", dave.token, "BAD_USER_INPUT", `mutation { follow(userId: "abc") { id } }`, nil},
				{"unfollow unknown", dave.token, "NOT_FOUND", `mutation { unfollow(userId: "999999999999") { id } }`, nil},
				{"empty content", dave.token, "BAD_USER_INPUT", `mutation { publishPost(content: "") { id } }`, nil},
				{"blank content", dave.token, "BAD_USER_INPUT", `mutation { publishPost(content: "  \n ") { id } }`, nil},
				{"too long content", dave.token, "BAD_USER_INPUT", `mutation($c: String!) { publishPost(content: $c) { id } }`, map[string]any{"c": long}},
				{"first too big", dave.token, "BAD_USER_INPUT", `{ homeTimeline(first: 101) { edges { cursor } } }`, nil},
				{"first zero", dave.token, "BAD_USER_INPUT", `{ homeTimeline(first: 0) { edges { cursor } } }`, nil},
				{"first negative", dave.token, "BAD_USER_INPUT", `query($id: ID!) { user(id: $id) { follows(first: -1) { edges { cursor } } } }`, map[string]any{"id": erin.ID}},
				{"malformed cursor", dave.token, "BAD_USER_INPUT", `{ homeTimeline(after: "bm9wZQ") { edges { cursor } } }`, nil},
				{"cursor of another list", dave.token, "BAD_USER_INPUT", `query($id: ID!) { user(id: $id) { posts(after: "VAAAAAAAAAAAAAAAAAAAAAA") { edges { cursor } } } }`, map[string]any{"id": erin.ID}},
				{"malformed user id", "", "BAD_USER_INPUT", `{ user(id: "-1") { id } }`, nil},
				{"malformed post id", "", "BAD_USER_INPUT", `{ post(id: "xyz") { id } }`, nil},
				{"syntax error", "", "GRAPHQL_PARSE_FAILED", `{ user(id: "1") { id }`, nil},
				{"unknown field", "", "GRAPHQL_VALIDATION_FAILED", `{ nope }`, nil},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					g.t = t
					e := g.fails(c.token, c.code, c.query, c.vars)
					if e.Message == "" {
						t.Fatal("error without a message")
					}
				})
			}
			g.t = t
			// Nothing half-written: no posts, no follows, no fans.
			for _, a := range []account{dave, erin} {
				if u := g.user("", a.ID); u.FollowCount != 0 || u.FanCount != 0 || u.PostCount != 0 {
					t.Fatalf("%s changed by failed requests: %+v", a.Username, u)
				}
			}
			if got := g.timeline(dave.token, 10, nil).Edges; len(got) != 0 {
				t.Fatalf("dave's timeline has %d entries after failed requests", len(got))
			}
			// The longest allowed content is accepted.
			if p := g.publish(dave.token, strings.Repeat("微", 10000)); len([]rune(p.Content)) != 10000 {
				t.Fatalf("10,000-character post came back with %d characters", len([]rune(p.Content)))
			}
			// post(id) of a missing post is null, not an error.
			var d struct{ Post *postNode }
			g.ok("", `{ post(id: "1_1") { id } }`, nil, &d)
			if d.Post != nil {
				t.Fatalf("post(1_1) = %+v", d.Post)
			}
		})
	}
}
