package server_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/safety"
)

// safetyUID parses a user's global id.
func safetyUID(t testing.TB, id string) weibo.UserID {
	t.Helper()
	uid, err := weibo.ParseUserID(id)
	if err != nil {
		t.Fatalf("user id %q: %v", id, err)
	}
	return uid
}

// safetyPID parses a post's global id.
func safetyPID(t testing.TB, id string) weibo.PostID {
	t.Helper()
	pid, err := weibo.ParsePostID(id)
	if err != nil {
		t.Fatalf("post id %q: %v", id, err)
	}
	return pid
}

// loadSafety gives viewer blocks of the users blocks, mutes of the users
// mutes (until unmuted, notifications too) and filters keyword filters
// of every context, half HIDE, half WARN, whose phrases match no text of
// the tests (each "zq-filter-<i>"), through the safety service.
func loadSafety(t testing.TB, g *gw, viewer weibo.UserID, blocks, mutes []weibo.UserID, filters int) {
	t.Helper()
	ctx := t.Context()
	for _, u := range blocks {
		if _, err := g.svc.Safety.Block(ctx, viewer, u); err != nil {
			t.Fatalf("block %s: %v", u, err)
		}
	}
	for _, u := range mutes {
		if _, err := g.svc.Safety.Mute(ctx, viewer, u, nil, true); err != nil {
			t.Fatalf("mute %s: %v", u, err)
		}
	}
	for i := range filters {
		action := safety.Hide
		if i%2 == 1 {
			action = safety.Warn
		}
		in := safety.FilterInput{Phrase: fmt.Sprintf("zq-filter-%d", i), Contexts: safety.AllContexts, Action: action}
		if _, err := g.svc.Safety.CreateFilter(ctx, viewer, in); err != nil {
			t.Fatalf("filter %d: %v", i, err)
		}
	}
}

// svcFilter gives viewer one keyword filter of phrase in contexts.
func (g *gw) svcFilter(viewer weibo.UserID, phrase string, action safety.Action, contexts ...safety.Context) {
	g.t.Helper()
	if _, err := g.svc.Safety.CreateFilter(g.t.Context(), viewer, safety.FilterInput{Phrase: phrase, Contexts: contexts, Action: action}); err != nil {
		g.t.Fatalf("filter %q: %v", phrase, err)
	}
}

// svcBlock makes a block b through the safety service.
func (g *gw) svcBlock(a, b account) {
	g.t.Helper()
	if _, err := g.svc.Safety.Block(g.t.Context(), safetyUID(g.t, a.ID), safetyUID(g.t, b.ID)); err != nil {
		g.t.Fatalf("%s blocks %s: %v", a.Username, b.Username, err)
	}
}

// pageAll pages through a connection with first: n and returns the
// values of its edges in order, checking that every page but the last is
// full: page reads the page after after and returns its values, whether
// more follow and its end cursor. what names the list in failures.
func (g *gw) pageAll(what string, n int, page func(after *string) ([]string, bool, *string)) []string {
	g.t.Helper()
	var out []string
	var after *string
	for range 100 {
		vals, more, end := page(after)
		out = append(out, vals...)
		if !more {
			return out
		}
		if len(vals) != n {
			g.t.Fatalf("%s, first %d: a page of %d edges with more to come (after %d)", what, n, len(vals), len(out)-len(vals))
		}
		after = end
	}
	g.t.Fatalf("%s: no end after 100 pages", what)
	return nil
}

// pageInfo is the part of a Relay page info pageAll needs.
type pageInfo struct {
	HasNextPage bool
	EndCursor   *string
}

// seenTopicIDs returns the ids of every post of topic name token sees, paging
// with first: n, newest first, and checks that every page but the last is
// full.
func (g *gw) seenTopicIDs(token, name string, n int) []string {
	g.t.Helper()
	return g.pageAll("topic "+name, n, func(after *string) ([]string, bool, *string) {
		var d struct {
			Topic *struct {
				Posts struct {
					Edges    []struct{ Node struct{ ID string } }
					PageInfo pageInfo
				}
			}
		}
		g.ok(token, `query($name: String!, $first: Int, $after: String) { topic(name: $name) { posts(first: $first, after: $after) {
			edges { node { id } } pageInfo { hasNextPage endCursor } } } }`, map[string]any{"name": name, "first": n, "after": after}, &d)
		if d.Topic == nil {
			g.t.Fatalf("topic %s: null", name)
		}
		var ids []string
		for _, e := range d.Topic.Posts.Edges {
			ids = append(ids, e.Node.ID)
		}
		return ids, d.Topic.Posts.PageInfo.HasNextPage, d.Topic.Posts.PageInfo.EndCursor
	})
}

// TestTopicPageHonoursBlocks checks a topic page over HTTP on both
// backends: the posts of a user blocked either way, and reposts of them,
// are gone for the viewer and the viewer's for them; a TOPIC HIDE filter
// drops its posts (case-folded), a filter of other contexts does not;
// mutes hide nothing there; pages of one and two edges stay full.
func TestTopicPageHonoursBlocks(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startGateway(t, b.Open(t))
			topic := uniqueName("安全话题") // a topic of the test's own: the HBase store is shared
			tag := "#" + topic + "# "
			alice, bob, carol, dave, erin := g.register(uniqueName("alice")), g.register(uniqueName("bob")), g.register(uniqueName("carol")), g.register(uniqueName("dave")), g.register(uniqueName("erin"))
			a1 := g.publish(alice.token, tag+"alice one")
			d1 := g.publish(dave.token, tag+"dave one")
			b1 := g.publish(bob.token, tag+"bob one")
			c1 := g.publish(carol.token, tag+"carol one")
			var rp struct{ Repost postNode }
			g.ok(erin.token, `mutation($id: ID!, $c: String) { repost(postId: $id, comment: $c) { id } }`, map[string]any{"id": b1.ID, "c": tag + "erin reposts bob"}, &rp)
			time.Sleep(2 * time.Millisecond) // as g.publish: posts in distinct milliseconds
			d2 := g.publish(dave.token, tag+"dave HIDEME two")
			b2 := g.publish(bob.token, tag+"bob two")
			d3 := g.publish(dave.token, tag+"dave three comments-only")
			c2 := g.publish(carol.token, tag+"carol two")
			e1 := g.publish(erin.token, tag+"erin one")

			all := []string{e1.ID, c2.ID, d3.ID, b2.ID, d2.ID, rp.Repost.ID, c1.ID, b1.ID, d1.ID, a1.ID}
			if got := g.seenTopicIDs("", topic, 3); !slices.Equal(got, all) {
				t.Fatalf("anonymous: %v, want %v", got, all)
			}

			aid := safetyUID(t, alice.ID)
			g.svcBlock(alice, bob)   // alice blocks bob
			g.svcBlock(carol, alice) // carol blocks alice
			g.svcFilter(aid, "hideme", safety.Hide, safety.ContextTopic)
			g.svcFilter(aid, "COMMENTS-ONLY", safety.Hide, safety.ContextComments, safety.ContextHome)
			if _, err := g.svc.Safety.Mute(t.Context(), aid, safetyUID(t, erin.ID), nil, true); err != nil {
				t.Fatal(err)
			}

			wantAlice := []string{e1.ID, d3.ID, d1.ID, a1.ID}
			for _, n := range []int{1, 2, 10} {
				if got := g.seenTopicIDs(alice.token, topic, n); !slices.Equal(got, wantAlice) {
					t.Fatalf("alice, first %d: %v, want %v (bob's, erin's repost of bob's, carol's and dave's HIDEME gone)", n, got, wantAlice)
				}
			}
			without := func(drop ...string) []string {
				return slices.DeleteFunc(slices.Clone(all), func(id string) bool { return slices.Contains(drop, id) })
			}
			if got, want := g.seenTopicIDs(bob.token, topic, 2), without(a1.ID); !slices.Equal(got, want) {
				t.Fatalf("bob (blocked by alice): %v, want %v", got, want)
			}
			if got, want := g.seenTopicIDs(carol.token, topic, 2), without(a1.ID); !slices.Equal(got, want) {
				t.Fatalf("carol (blocks alice): %v, want %v", got, want)
			}
			if got := g.seenTopicIDs(dave.token, topic, 4); !slices.Equal(got, all) {
				t.Fatalf("dave: %v, want %v", got, all)
			}
			if got := g.seenTopicIDs("", topic, 4); !slices.Equal(got, all) {
				t.Fatalf("anonymous after the blocks: %v, want %v", got, all)
			}
		})
	}
}

// TestTopicPageWarnFilter checks at the service level (Post.filtered is
// the schema's) that a TOPIC WARN filter keeps its posts on the viewer's
// topic page with Filtered naming it, on a copy: another viewer's page of
// the same posts has none.
func TestTopicPageWarnFilter(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startGateway(t, b.Open(t))
			alice, bob := g.register(uniqueName("alice")), g.register(uniqueName("bob"))
			topic := uniqueName("话题")
			w := g.publish(bob.token, "#"+topic+"# 剧透 in Chinese")
			plain := g.publish(bob.token, "#"+topic+"# nothing")
			aid := safetyUID(t, alice.ID)
			g.svcFilter(aid, "剧透", safety.Warn, safety.ContextTopic)
			g.svcFilter(aid, "nothing", safety.Warn, safety.ContextComments)
			page, err := g.svc.Topics.TopicPosts(t.Context(), aid, topic, weibo.Page{})
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Edges) != 2 || page.Edges[0].Post.ID != safetyPID(t, plain.ID) || page.Edges[1].Post.ID != safetyPID(t, w.ID) {
				t.Fatalf("alice's page: %+v", page.Edges)
			}
			if f := page.Edges[1].Post.Filtered; len(f) != 1 || f[0].Phrase != "剧透" || f[0].Action != safety.Warn {
				t.Fatalf("the warned post's filtered: %+v", f)
			}
			if f := page.Edges[0].Post.Filtered; f != nil {
				t.Fatalf("the plain post's filtered: %+v (a COMMENTS filter)", f)
			}
			other, err := g.svc.Topics.TopicPosts(t.Context(), safetyUID(t, bob.ID), topic, weibo.Page{})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range other.Edges {
				if e.Post.Filtered != nil {
					t.Fatalf("bob's page carries alice's filter: %+v", e.Post.Filtered)
				}
			}
		})
	}
}

// seenComments returns the contents of the comments of post token sees,
// paging with first: n, newest first, and checks that every page but the
// last is full.
func (g *gw) seenComments(token, post string, n int) []string {
	g.t.Helper()
	return g.pageAll("comments of "+post, n, func(after *string) ([]string, bool, *string) {
		var d struct {
			Post *struct {
				Comments struct {
					Edges    []struct{ Node struct{ Content string } }
					PageInfo pageInfo
				}
			}
		}
		g.ok(token, `query($id: ID!, $first: Int, $after: String) { post(id: $id) { comments(first: $first, after: $after) {
			edges { node { content } } pageInfo { hasNextPage endCursor } } } }`, map[string]any{"id": post, "first": n, "after": after}, &d)
		if d.Post == nil {
			g.t.Fatalf("post %s: null", post)
		}
		var out []string
		for _, e := range d.Post.Comments.Edges {
			out = append(out, e.Node.Content)
		}
		return out, d.Post.Comments.PageInfo.HasNextPage, d.Post.Comments.PageInfo.EndCursor
	})
}

// TestCommentThreadHonoursBlocks checks a post's comments over HTTP on
// both backends: comments by a user blocked either way are gone for the
// viewer and the viewer's for them; a COMMENTS HIDE filter drops its
// comments (case-folded), a filter of other contexts does not; pages of
// one and two edges stay full; others and anonymous see every comment.
func TestCommentThreadHonoursBlocks(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startGateway(t, b.Open(t))
			alice, bob, carol, dave, erin := g.register(uniqueName("alice")), g.register(uniqueName("bob")), g.register(uniqueName("carol")), g.register(uniqueName("dave")), g.register(uniqueName("erin"))
			p := g.publish(dave.token, "a post to comment on")
			for _, c := range []struct {
				who  account
				text string
			}{{alice, "a c1"}, {bob, "b c1"}, {carol, "c c1"}, {erin, "a Spoiler inside"}, {erin, "fine"}, {bob, "b c2"}, {dave, "d c1"}} {
				g.addComment(c.who.token, p.ID, c.text, "")
			}
			all := []string{"d c1", "b c2", "fine", "a Spoiler inside", "c c1", "b c1", "a c1"}
			aid := safetyUID(t, alice.ID)
			g.svcBlock(alice, bob)
			g.svcBlock(carol, alice)
			g.svcFilter(aid, "SPOILER", safety.Hide, safety.ContextComments)
			g.svcFilter(aid, "fine", safety.Hide, safety.ContextTopic, safety.ContextHome, safety.ContextNotifications)
			g.svcFilter(aid, "d c1", safety.Warn, safety.ContextComments) // no Comment.filtered: kept as it is

			for _, n := range []int{1, 2, 10} {
				if got, want := g.seenComments(alice.token, p.ID, n), []string{"d c1", "fine", "a c1"}; !slices.Equal(got, want) {
					t.Fatalf("alice, first %d: %q, want %q", n, got, want)
				}
			}
			withoutAlice := []string{"d c1", "b c2", "fine", "a Spoiler inside", "c c1", "b c1"}
			for _, v := range []account{bob, carol} {
				if got := g.seenComments(v.token, p.ID, 2); !slices.Equal(got, withoutAlice) {
					t.Fatalf("%s: %q, want %q", v.Username, got, withoutAlice)
				}
			}
			for _, tk := range []string{dave.token, erin.token, ""} {
				if got := g.seenComments(tk, p.ID, 3); !slices.Equal(got, all) {
					t.Fatalf("%q: %q, want %q", tk, got, all)
				}
			}
			// The viewer's safety row is read in the page's first scan: a
			// page costs the viewer what it costs anonymous.
			const page = `query($id: ID!) { post(id: $id) { comments(first: 10) { edges { node { content } } } } }`
			if anon, mine := g.okCalls("", page, map[string]any{"id": p.ID}, nil), g.okCalls(alice.token, page, map[string]any{"id": p.ID}, nil); mine != anon {
				t.Fatalf("store calls of a comments page: alice's %v, anonymous %v", mine, anon)
			}
			// A page backward (last/before) honours the same rules.
			var d struct {
				Post struct {
					Comments struct {
						Edges []struct{ Node struct{ Content string } }
					}
				}
			}
			g.ok(alice.token, `query($id: ID!) { post(id: $id) { comments(last: 2) { edges { node { content } } } } }`, map[string]any{"id": p.ID}, &d)
			var got []string
			for _, e := range d.Post.Comments.Edges {
				got = append(got, e.Node.Content)
			}
			if want := []string{"fine", "a c1"}; !slices.Equal(got, want) {
				t.Fatalf("alice, last 2: %q, want %q", got, want)
			}
		})
	}
}

// TestBlockedAuthorIsNone checks over HTTP on both backends that, across
// a block either way, post(id:) of the other's post answers null as for a
// missing post, and the other's posts are an empty connection with
// totalCount 0; the author, others and anonymous read them as before.
func TestBlockedAuthorIsNone(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startGateway(t, b.Open(t))
			alice, bob, carol, dave := g.register(uniqueName("alice")), g.register(uniqueName("bob")), g.register(uniqueName("carol")), g.register(uniqueName("dave"))
			a1 := g.publish(alice.token, "alice one")
			b1 := g.publish(bob.token, "bob one")
			c1 := g.publish(carol.token, "carol one")
			g.svcBlock(alice, bob)
			g.svcBlock(carol, alice)

			postOf := func(token, id string) *struct{ ID string } {
				t.Helper()
				var d struct{ Post *struct{ ID string } }
				g.ok(token, `query($id: ID!) { post(id: $id) { id } }`, map[string]any{"id": id}, &d)
				return d.Post
			}
			for _, c := range []struct {
				who  string
				tk   string
				post postNode
				seen bool
			}{
				{"bob of alice's (blocked by her)", bob.token, a1, false},
				{"carol of alice's (blocks her)", carol.token, a1, false},
				{"alice of bob's (blocks him)", alice.token, b1, false},
				{"alice of carol's (blocked by her)", alice.token, c1, false},
				{"alice of her own", alice.token, a1, true},
				{"dave of alice's", dave.token, a1, true},
				{"anonymous of alice's", "", a1, true},
				{"bob of carol's", bob.token, c1, true},
			} {
				if got := postOf(c.tk, c.post.ID); (got != nil) != c.seen || (got != nil && got.ID != c.post.ID) {
					t.Fatalf("%s: post = %+v, want seen %v", c.who, got, c.seen)
				}
				// node(id:) answers as post(id:) does.
				var n struct{ Node *struct{ ID string } }
				g.ok(c.tk, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": c.post.ID}, &n)
				if (n.Node != nil) != c.seen {
					t.Fatalf("%s: node = %+v, want seen %v", c.who, n.Node, c.seen)
				}
			}

			type posts struct {
				User struct {
					Posts struct {
						TotalCount int
						Edges      []struct{ Node struct{ ID string } }
						PageInfo   struct{ HasNextPage, HasPreviousPage bool }
					}
				}
			}
			postsOf := func(token, uid string) posts {
				t.Helper()
				var d posts
				g.ok(token, `query($id: ID!) { user(id: $id) { posts(first: 10) { totalCount edges { node { id } } pageInfo { hasNextPage hasPreviousPage } } } }`,
					map[string]any{"id": uid}, &d)
				return d
			}
			for _, c := range []struct {
				who   string
				tk    string
				owner account
				n     int
			}{
				{"bob of alice", bob.token, alice, 0},
				{"carol of alice", carol.token, alice, 0},
				{"alice of bob", alice.token, bob, 0},
				{"alice of carol", alice.token, carol, 0},
				{"alice of herself", alice.token, alice, 1},
				{"dave of alice", dave.token, alice, 1},
				{"anonymous of alice", "", alice, 1},
			} {
				d := postsOf(c.tk, c.owner.ID).User.Posts
				if len(d.Edges) != c.n || d.TotalCount != c.n || d.PageInfo.HasNextPage || d.PageInfo.HasPreviousPage {
					t.Fatalf("%s: %+v, want %d edges and totalCount %d", c.who, d, c.n, c.n)
				}
			}
			// The viewer's safety row is read with the posts' scan: a page
			// costs the viewer what it costs anonymous, blocked or not.
			const page = `query($id: ID!) { user(id: $id) { posts(first: 10) { edges { node { id } } } } }`
			anon := g.okCalls("", page, map[string]any{"id": alice.ID}, nil)
			for _, tk := range []string{bob.token, dave.token} {
				if calls := g.okCalls(tk, page, map[string]any{"id": alice.ID}, nil); calls != anon {
					t.Fatalf("store calls of alice's posts: %v, anonymous %v", calls, anon)
				}
			}
			// Bad paging arguments are still BAD_USER_INPUT across a block.
			g.fails(bob.token, "BAD_USER_INPUT", `query($id: ID!) { user(id: $id) { posts(first: 0) { totalCount } } }`, map[string]any{"id": alice.ID})

			// Unblocked, alice's post is bob's to read again.
			if _, err := g.svc.Safety.Unblock(t.Context(), safetyUID(t, alice.ID), safetyUID(t, bob.ID)); err != nil {
				t.Fatal(err)
			}
			if postOf(bob.token, a1.ID) == nil || len(postsOf(bob.token, alice.ID).User.Posts.Edges) != 1 {
				t.Fatal("after the unblock bob still does not see alice's post")
			}
		})
	}
}

// TestInteractionsAcrossBlockForbidden checks over HTTP on both backends
// that like, repost (of the post or of a repost of it), comment and reply
// across a block, each direction, are FORBIDDEN with one message that
// does not say who blocked whom, and write nothing: no counter moves, no
// post or comment is made. Unlike is not refused; others interact as
// before.
func TestInteractionsAcrossBlockForbidden(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startGateway(t, b.Open(t))
			alice, bob, carol, dave := g.register(uniqueName("alice")), g.register(uniqueName("bob")), g.register(uniqueName("carol")), g.register(uniqueName("dave"))
			a1 := g.publish(alice.token, "alice one")
			b1 := g.publish(bob.token, "bob one")
			d1 := g.publish(dave.token, "dave one")
			var rp struct{ Repost struct{ ID string } }
			g.ok(dave.token, `mutation($id: ID!) { repost(postId: $id) { id } }`, map[string]any{"id": a1.ID}, &rp)
			aliceOnD1 := g.addComment(alice.token, d1.ID, "alice on dave's", "")
			bobOnD1 := g.addComment(bob.token, d1.ID, "bob on dave's", "")
			const like = `mutation($p: ID!) { likePost(postId: $p) { id } }`
			g.ok(bob.token, like, map[string]any{"p": a1.ID}, nil) // a like from before the block
			g.svcBlock(alice, bob)

			type counts struct {
				Post struct{ LikeCount, RepostCount, CommentCount int }
			}
			read := func(id string) counts {
				t.Helper()
				var d counts
				g.ok("", `query($id: ID!) { post(id: $id) { likeCount repostCount commentCount } }`, map[string]any{"id": id}, &d)
				return d
			}
			postCount := func(a account) int {
				t.Helper()
				return g.user("", a.ID).PostCount
			}
			beforeA, beforeB, beforeD := read(a1.ID), read(b1.ID), read(d1.ID)
			aliceN, bobN := postCount(alice), postCount(bob)

			const (
				repost  = `mutation($p: ID!) { repost(postId: $p, comment: "across") { id } }`
				comment = `mutation($p: ID!, $r: ID) { addComment(postId: $p, content: "across", replyToId: $r) { id } }`
			)
			var msgs []string
			for _, c := range []struct {
				what  string
				token string
				query string
				vars  map[string]any
			}{
				{"bob likes alice's post", bob.token, like, map[string]any{"p": a1.ID}},
				{"alice likes bob's post", alice.token, like, map[string]any{"p": b1.ID}},
				{"bob reposts alice's post", bob.token, repost, map[string]any{"p": a1.ID}},
				{"bob reposts dave's repost of alice's post", bob.token, repost, map[string]any{"p": rp.Repost.ID}},
				{"alice reposts bob's post", alice.token, repost, map[string]any{"p": b1.ID}},
				{"bob comments on alice's post", bob.token, comment, map[string]any{"p": a1.ID}},
				{"alice comments on bob's post", alice.token, comment, map[string]any{"p": b1.ID}},
				{"bob replies to alice's comment on dave's post", bob.token, comment, map[string]any{"p": d1.ID, "r": aliceOnD1.ID}},
				{"alice replies to bob's comment on dave's post", alice.token, comment, map[string]any{"p": d1.ID, "r": bobOnD1.ID}},
			} {
				e := g.fails(c.token, "FORBIDDEN", c.query, c.vars)
				msgs = append(msgs, e.Message)
				for _, name := range []string{"alice", "bob", "blocked"} {
					if strings.Contains(e.Message, name) {
						t.Fatalf("%s: message %q names %q", c.what, e.Message, name)
					}
				}
			}
			if len(slices.Compact(slices.Clone(msgs))) != 1 {
				t.Fatalf("the refusals' messages differ: %q", msgs)
			}
			if got := read(a1.ID); got != beforeA {
				t.Fatalf("alice's post after the refusals: %+v, was %+v", got, beforeA)
			}
			if got := read(b1.ID); got != beforeB {
				t.Fatalf("bob's post after the refusals: %+v, was %+v", got, beforeB)
			}
			if got := read(d1.ID); got != beforeD {
				t.Fatalf("dave's post after the refusals: %+v, was %+v", got, beforeD)
			}
			if a, b := postCount(alice), postCount(bob); a != aliceN || b != bobN {
				t.Fatalf("postCounts after the refusals: alice %d bob %d, were %d %d", a, b, aliceN, bobN)
			}
			if got := g.seenComments("", d1.ID, 10); !slices.Equal(got, []string{"bob on dave's", "alice on dave's"}) {
				t.Fatalf("dave's comments after the refusals: %q", got)
			}

			// Unlike is not refused: bob's like from before the block goes.
			g.ok(bob.token, `mutation($p: ID!) { unlikePost(postId: $p) { id } }`, map[string]any{"p": a1.ID}, nil)
			if got := read(a1.ID).Post.LikeCount; got != beforeA.Post.LikeCount-1 {
				t.Fatalf("alice's likeCount after bob's unlike: %d, want %d", got, beforeA.Post.LikeCount-1)
			}
			// Others interact as before: carol likes, comments on and
			// reposts alice's post, and replies to bob's comment.
			g.ok(carol.token, like, map[string]any{"p": a1.ID}, nil)
			g.ok(carol.token, comment, map[string]any{"p": a1.ID}, nil)
			g.ok(carol.token, repost, map[string]any{"p": a1.ID}, nil)
			g.ok(carol.token, comment, map[string]any{"p": d1.ID, "r": bobOnD1.ID}, nil)
			// Unblocked, bob interacts with alice again.
			if _, err := g.svc.Safety.Unblock(t.Context(), safetyUID(t, alice.ID), safetyUID(t, bob.ID)); err != nil {
				t.Fatal(err)
			}
			g.ok(bob.token, like, map[string]any{"p": a1.ID}, nil)
			g.ok(bob.token, comment, map[string]any{"p": d1.ID, "r": aliceOnD1.ID}, nil)
		})
	}
}

// TestTopicPageReadsOn checks over HTTP on both backends that a topic page
// whose newest entries are all out of the viewer's sight reads on until it
// is full, within the documented bound (topicRounds rounds of one
// ScanMany and one GetMany each, after the topic's Get), and that a page
// cut short by the bound ends with a cursor the next page goes on from.
func TestTopicPageReadsOn(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startGateway(t, b.Open(t))
			topic := uniqueName("读下去")
			alice, bob, dave := g.register(uniqueName("alice")), g.register(uniqueName("bob")), g.register(uniqueName("dave"))
			d1 := g.publish(dave.token, "#"+topic+"# dave one")
			d2 := g.publish(dave.token, "#"+topic+"# dave two")
			for i := range 12 {
				g.publish(bob.token, fmt.Sprintf("#%s# bob %d", topic, i))
			}
			g.svcBlock(alice, bob)
			const q = `query($name: String!, $first: Int) { topic(name: $name) { posts(first: $first) { edges { node { id } } pageInfo { hasNextPage } } } }`
			var d struct {
				Topic struct {
					Posts struct {
						Edges    []struct{ Node struct{ ID string } }
						PageInfo struct{ HasNextPage bool }
					}
				}
			}
			calls := g.okCalls(alice.token, q, map[string]any{"name": topic, "first": 2}, &d)
			var got []string
			for _, e := range d.Topic.Posts.Edges {
				got = append(got, e.Node.ID)
			}
			if want := []string{d2.ID, d1.ID}; !slices.Equal(got, want) || d.Topic.Posts.PageInfo.HasNextPage {
				t.Fatalf("alice, first 2 behind 12 of bob's: %v (more %v), want %v", got, d.Topic.Posts.PageInfo.HasNextPage, want)
			}
			// 12 dropped entries, 3 a round (the page and one more): 5
			// rounds, within the bound of 9.
			if calls < 3 || calls > 1+2*9 {
				t.Fatalf("store calls of the page: %v, want 3 to %d", calls, 1+2*9)
			}
			// Behind more than the bound reads (9 rounds of 2 entries for
			// first: 1), the page ends short with a cursor; paging on finds
			// dave's posts.
			for i := range 20 {
				g.publish(bob.token, fmt.Sprintf("#%s# bob more %d", topic, i))
			}
			got, short := g.seenTopicIDsShort(alice.token, topic, 1)
			if !slices.Equal(got, []string{d2.ID, d1.ID}) || short == 0 {
				t.Fatalf("alice, first 1 behind 32 of bob's: %v in %d short pages, want %v behind at least one", got, short, []string{d2.ID, d1.ID})
			}
		})
	}
}

// seenTopicIDsShort is seenTopicIDs where a page may end short (the bound
// of a page's reads) as long as it says more follow; short counts those.
func (g *gw) seenTopicIDsShort(token, name string, n int) (ids []string, short int) {
	g.t.Helper()
	var out []string
	var after *string
	for range 100 {
		var d struct {
			Topic struct {
				Posts struct {
					Edges    []struct{ Node struct{ ID string } }
					PageInfo struct {
						HasNextPage bool
						EndCursor   *string
					}
				}
			}
		}
		g.ok(token, `query($name: String!, $first: Int, $after: String) { topic(name: $name) { posts(first: $first, after: $after) {
			edges { node { id } } pageInfo { hasNextPage endCursor } } } }`, map[string]any{"name": name, "first": n, "after": after}, &d)
		p := d.Topic.Posts
		for _, e := range p.Edges {
			out = append(out, e.Node.ID)
		}
		if !p.PageInfo.HasNextPage {
			return out, short
		}
		if len(p.Edges) < n {
			short++
		}
		after = p.PageInfo.EndCursor
	}
	g.t.Fatalf("topic %s: no end after 100 pages", name)
	return nil, 0
}
