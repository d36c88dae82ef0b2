package server_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/server"
)

// notifNode is a Notification as the notification tests select it.
type notifNode struct {
	ID         string
	Kind       string
	At         time.Time
	Read       bool
	ActorCount int
	Actors     struct {
		Edges []struct {
			Cursor string
			Node   struct{ ID, Username string }
		}
		PageInfo   struct{ HasNextPage bool }
		TotalCount int
	}
	Post    *struct{ ID, Content string }
	Comment *struct{ ID, Content string }
}

const notifFields = `id kind at read actorCount actors(first: $actors) { edges { cursor node { id username } } pageInfo { hasNextPage } totalCount }
	post { id content } comment { id content }`

// short renders n as "KIND:actor,actor" (newest actor first) with "*" for
// unread, "(count)" when the actors shown are not all of them.
func (n notifNode) short(names map[string]string) string {
	var actors []string
	for _, e := range n.Actors.Edges {
		actors = append(actors, names[e.Node.ID])
	}
	s := fmt.Sprintf("%s:%s", n.Kind, strings.Join(actors, ","))
	if !n.Read {
		s = "*" + s
	}
	if n.ActorCount != len(actors) {
		s += fmt.Sprintf("(%d)", n.ActorCount)
	}
	return s
}

// notifications reads every page (of size) of the viewer's
// notifications, actors(first: actors), and unreadNotificationCount.
func (g *gw) notifications(token string, size, actors int) ([]notifNode, int) {
	g.t.Helper()
	var out []notifNode
	unread := -1
	var after *string
	for {
		var d struct {
			Notifications struct {
				Edges    []struct{ Node notifNode }
				PageInfo struct {
					HasNextPage bool
					EndCursor   *string
				}
			}
			UnreadNotificationCount int
		}
		g.ok(token, `query($first: Int, $after: String, $actors: Int) { unreadNotificationCount
			notifications(first: $first, after: $after) { edges { node { `+notifFields+` } } pageInfo { hasNextPage endCursor } } }`,
			map[string]any{"first": size, "after": after, "actors": actors}, &d)
		for _, e := range d.Notifications.Edges {
			out = append(out, e.Node)
		}
		if unread < 0 {
			unread = d.UnreadNotificationCount
		}
		if !d.Notifications.PageInfo.HasNextPage {
			return out, unread
		}
		after = d.Notifications.PageInfo.EndCursor
	}
}

// expectNotifs checks the viewer's notifications (short forms, newest
// first) and that unreadNotificationCount counts the unread ones.
func (g *gw) expectNotifs(a account, names map[string]string, want ...string) []notifNode {
	g.t.Helper()
	ns, unread := g.notifications(a.token, 2, 10)
	var got []string
	n := 0
	for _, x := range ns {
		got = append(got, x.short(names))
		if !x.Read {
			n++
		}
	}
	if !slices.Equal(got, want) {
		g.t.Fatalf("notifications of %s =\n%q\nwant\n%q", names[a.ID], got, want)
	}
	if unread != n {
		g.t.Fatalf("unreadNotificationCount of %s = %d, %d unread listed", names[a.ID], unread, n)
	}
	return ns
}

// markRead runs markNotificationsRead(upTo) ("" for null) and returns its count.
func (g *gw) markRead(token, upTo string) int {
	g.t.Helper()
	vars := map[string]any{"u": nil}
	if upTo != "" {
		vars["u"] = upTo
	}
	var d struct{ MarkNotificationsRead int }
	g.ok(token, `mutation($u: ID) { markNotificationsRead(upTo: $u) }`, vars, &d)
	return d.MarkNotificationsRead
}

// TestNotificationsFlow drives every kind of notification over HTTP on
// both backends: who gets what, grouping while unread and a new group
// once read, unlike and unfollow taking actors out, own actions,
// actors(first:), read state, markNotificationsRead with and without
// upTo, unreadNotificationCount, node(id:), a deleted post, and errors.
func TestNotificationsFlow(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startGatewayWith(t, b.Open(t), func(c *server.Config) { c.Signups.Rate = -1 })
			a, alice, bob, carol := g.register(uniqueName("na")), g.register(uniqueName("nalice")), g.register(uniqueName("nbob")), g.register(uniqueName("ncarol"))
			names := map[string]string{a.ID: "a", alice.ID: "alice", bob.ID: "bob", carol.ID: "carol"}
			step := func() { time.Sleep(2 * time.Millisecond) } // distinct ms: the order is the test's
			p := g.publish(a.token, "你好 @"+alice.Username+"，see you")
			g.flush()
			for _, u := range []account{alice, bob, a} { // a's own like notifies nobody
				g.like(u.token, p.ID, true)
				step()
			}
			for _, u := range []account{bob, carol} {
				g.follow(u.token, a.ID)
				step()
			}
			c := g.addComment(bob.token, p.ID, "nice @"+carol.Username, "")
			reply := g.addComment(a.token, p.ID, "thanks", c.ID)
			g.repost(alice.token, p.ID, nil)
			g.flush()

			ns := g.expectNotifs(a, names, "*REPOST:alice", "*COMMENT:bob", "*FOLLOW:carol,bob", "*LIKE:bob,alice")
			if ns[1].Comment == nil || ns[1].Comment.ID != c.ID || ns[1].Post == nil || ns[1].Post.ID != p.ID || ns[3].Post.ID != p.ID ||
				ns[0].Post.ID != p.ID || ns[2].Post != nil || ns[2].Comment != nil || ns[3].Comment != nil {
				t.Fatalf("a's notifications' posts and comments: %+v", ns)
			}
			if !ns[0].At.After(ns[1].At) || !ns[3].At.Before(ns[2].At) {
				t.Fatalf("notifications not newest first: %+v", ns)
			}
			bobs := g.expectNotifs(bob, names, "*REPLY:a")
			if bobs[0].Comment == nil || bobs[0].Comment.ID != reply.ID || bobs[0].Comment.Content != "thanks" {
				t.Fatalf("bob's reply notification: %+v", bobs[0])
			}
			if cs := g.expectNotifs(carol, names, "*MENTION:bob"); cs[0].Comment == nil || cs[0].Comment.ID != c.ID {
				t.Fatalf("carol's mention: %+v", cs[0])
			}
			if as := g.expectNotifs(alice, names, "*MENTION:a"); as[0].Post == nil || as[0].Post.ID != p.ID || as[0].Comment != nil {
				t.Fatalf("alice's mention: %+v", as[0])
			}
			// actors(first: 1) of the LIKE: the newest, and the count.
			if one, _ := g.notifications(a.token, 10, 1); one[3].Actors.TotalCount != 2 || !one[3].Actors.PageInfo.HasNextPage ||
				len(one[3].Actors.Edges) != 1 || one[3].Actors.Edges[0].Node.Username != bob.Username {
				t.Fatalf("actors(first: 1) of the LIKE = %+v", one[3].Actors)
			}

			// Unlikes and unfollows take their actors out; the last one the notification.
			g.like(bob.token, p.ID, false)
			g.expectNotifs(a, names, "*REPOST:alice", "*COMMENT:bob", "*FOLLOW:carol,bob", "*LIKE:alice")
			g.like(alice.token, p.ID, false)
			g.unfollow(carol.token, a.ID)
			ns = g.expectNotifs(a, names, "*REPOST:alice", "*COMMENT:bob", "*FOLLOW:bob")

			// node(id:): the viewer's own only.
			var nd struct{ Node *struct{ ID, Kind string } }
			g.ok(a.token, `query($id: ID!) { node(id: $id) { id ... on Notification { kind } } }`, map[string]any{"id": ns[1].ID}, &nd)
			if nd.Node == nil || nd.Node.ID != ns[1].ID || nd.Node.Kind != "COMMENT" {
				t.Fatalf("node(id: the comment notification) = %+v", nd.Node)
			}
			g.ok(bob.token, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": ns[1].ID}, &nd)
			if nd.Node != nil {
				t.Fatalf("node(id: a's notification) as bob = %+v, want null", nd.Node)
			}

			if got := g.markRead(a.token, ns[1].ID); got != 2 {
				t.Fatalf("markNotificationsRead(upTo: the comment) = %d, want 2", got)
			}
			g.expectNotifs(a, names, "*REPOST:alice", "COMMENT:bob", "FOLLOW:bob")
			// Read, the FOLLOW of today gets no one more: a new one starts.
			step()
			g.follow(carol.token, a.ID)
			step()
			g.like(carol.token, p.ID, true)
			step()
			g.like(bob.token, p.ID, true) // joins carol's: unread
			g.expectNotifs(a, names, "*LIKE:bob,carol", "*FOLLOW:carol", "*REPOST:alice", "COMMENT:bob", "FOLLOW:bob")
			if got := g.markRead(a.token, ""); got != 3 {
				t.Fatalf("markNotificationsRead() = %d, want 3", got)
			}
			if got := g.markRead(a.token, ""); got != 0 {
				t.Fatalf("markNotificationsRead() again = %d, want 0", got)
			}
			g.expectNotifs(a, names, "LIKE:bob,carol", "FOLLOW:carol", "REPOST:alice", "COMMENT:bob", "FOLLOW:bob")

			// A deleted post's notifications stay; their post is null.
			var del struct{ DeletePost bool }
			g.ok(a.token, `mutation($id: ID!) { deletePost(id: $id) }`, map[string]any{"id": p.ID}, &del)
			if as := g.expectNotifs(alice, names, "*MENTION:a"); !del.DeletePost || as[0].Post != nil {
				t.Fatalf("alice's mention of a deleted post: %+v (deleted: %v)", as[0], del.DeletePost)
			}

			for _, c := range []struct {
				name, token, code, query, field string
			}{
				{"notifications anonymous", "", "UNAUTHENTICATED", `{ notifications { edges { cursor } } }`, ""},
				{"unread anonymous", "", "UNAUTHENTICATED", `{ unreadNotificationCount }`, ""},
				{"mark anonymous", "", "UNAUTHENTICATED", `mutation { markNotificationsRead }`, ""},
				{"mark malformed", a.token, "BAD_USER_INPUT", `mutation { markNotificationsRead(upTo: "notification:1_x_0_0_0_0_1") }`, "upTo"},
				{"mark another's", bob.token, "NOT_FOUND", `mutation { markNotificationsRead(upTo: "` + ns[0].ID + `") }`, "upTo"},
				{"first too big", a.token, "BAD_USER_INPUT", `{ notifications(first: 101) { edges { cursor } } }`, "first"},
				{"malformed cursor", a.token, "BAD_USER_INPUT", `{ notifications(after: "bm9wZQ") { edges { cursor } } }`, "after"},
				{"actors first 0", a.token, "BAD_USER_INPUT", `{ notifications { edges { node { actors(first: 0) { totalCount } } } } }`, "first"},
			} {
				t.Run(c.name, func(t *testing.T) {
					e := g.in(t).fails(c.token, c.code, c.query, nil)
					if c.field != "" && e.Extensions["field"] != c.field {
						t.Errorf("error %+v does not name %s", e, c.field)
					}
				})
			}
		})
	}
}

// TestMentionsGraphQL checks which `@` are mentions, in posts and
// comments, over HTTP on both backends (table-driven).
func TestMentionsGraphQL(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startGatewayWith(t, b.Open(t), func(c *server.Config) { c.Signups.Rate = -1 })
			m, x, y := g.register(uniqueName("mauthor")), g.register(uniqueName("mx")), g.register(uniqueName("my"))
			missing := uniqueName("nobody")
			for _, c := range []struct {
				name, text string
				want       []string
			}{
				{"plain", "@" + x.Username, []string{x.Username}},
				{"brackets", "(@" + x.Username + ")", []string{x.Username}},
				{"full-width comma after", "@" + x.Username + "，你好", []string{x.Username}},
				{"Chinese around", "你好@" + x.Username + "的朋友", []string{x.Username}},
				{"dot after", "thanks @" + x.Username + ".", []string{x.Username}},
				{"twice, any case", "@" + x.Username + " @" + strings.ToUpper(x.Username), []string{x.Username}},
				{"in order", "@" + y.Username + " and @" + x.Username, []string{y.Username, x.Username}},
				{"e-mail", "mail " + m.Username + "@" + x.Username + ".com", nil},
				{"after a dot", "a.@" + x.Username, nil},
				{"missing user", "@" + missing, nil},
				{"longer run", "@" + x.Username + "_and_more", nil},
				{"too long", "@" + strings.Repeat("a", 33), nil},
				{"double at", "@@" + x.Username, []string{x.Username}},
				{"full-width at", "＠" + x.Username, nil},
				{"adjacent", "@" + x.Username + "@" + y.Username, []string{x.Username}},
				{"self", "@" + m.Username, []string{m.Username}},
				{"bare at", "@ " + x.Username, nil},
			} {
				t.Run(c.name, func(t *testing.T) {
					g := g.in(t)
					var d struct {
						PublishPost struct {
							ID       string
							Mentions []struct{ ID, Username string }
						}
					}
					g.ok(m.token, `mutation($c: String!) { publishPost(content: $c) { id mentions { id username } } }`, map[string]any{"c": c.text}, &d)
					var got []string
					for _, u := range d.PublishPost.Mentions {
						got = append(got, u.Username)
					}
					if !slices.Equal(got, c.want) {
						t.Fatalf("mentions of %q = %v, want %v", c.text, got, c.want)
					}
					// Read back, and the same rules in a comment.
					var p struct {
						Post struct{ Mentions []struct{ Username string } }
					}
					g.ok("", `query($id: ID!) { post(id: $id) { mentions { username } } }`, map[string]any{"id": d.PublishPost.ID}, &p)
					var cm struct {
						AddComment struct{ Mentions []struct{ Username string } }
					}
					g.ok(m.token, `mutation($p: ID!, $c: String!) { addComment(postId: $p, content: $c) { mentions { username } } }`,
						map[string]any{"p": d.PublishPost.ID, "c": c.text}, &cm)
					if len(p.Post.Mentions) != len(c.want) || len(cm.AddComment.Mentions) != len(c.want) {
						t.Fatalf("mentions read back %v, of the comment %v; want %v", p.Post.Mentions, cm.AddComment.Mentions, c.want)
					}
				})
			}
			// Each mention of x notified x once a text (none from m to m).
			g.flush()
			xs, _ := g.notifications(x.token, 100, 1)
			ms, _ := g.notifications(m.token, 100, 1)
			if len(xs) != 2*9 || len(ms) != 0 {
				t.Fatalf("x has %d notifications, want 18 (9 posts, 9 comments); m has %d, want 0", len(xs), len(ms))
			}
		})
	}
}
