package server_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/tables"
)

// repostNode is a Post with its repost fields.
type repostNode struct {
	ID          string
	Content     string
	Author      struct{ ID, Username string }
	RepostOfID  *string
	RepostCount int
	RepostOf    *struct {
		ID, Content string
		Author      struct{ Username string }
		RepostCount int
	}
}

const repostFields = `id content author { id username } repostOfId repostCount repostOf { id content author { username } repostCount }`

// repost reposts postID as token's user; comment nil sends no comment.
func (g *gw) repost(token, postID string, comment *string) repostNode {
	g.t.Helper()
	var d struct{ Repost repostNode }
	vars := map[string]any{"id": postID}
	if comment != nil {
		vars["c"] = *comment
	}
	g.ok(token, `mutation($id: ID!, $c: String) { repost(postId: $id, comment: $c) { `+repostFields+` } }`, vars, &d)
	return d.Repost
}

// repostPage is one page of Post.reposts, with the post's own fields.
type repostPage struct {
	RepostCount int
	Reposts     struct {
		TotalCount int
		Edges      []struct{ Node repostNode }
		PageInfo   struct {
			HasNextPage bool
			EndCursor   *string
		}
	}
}

func (g *gw) reposts(token, postID string, first int, after *string) repostPage {
	g.t.Helper()
	var d struct{ Post repostPage }
	g.ok(token, `query($id: ID!, $first: Int, $after: String) { post(id: $id) { repostCount
		reposts(first: $first, after: $after) { totalCount edges { node { `+repostFields+` } } pageInfo { hasNextPage endCursor } } } }`,
		map[string]any{"id": postID, "first": first, "after": after}, &d)
	return d.Post
}

func (g *gw) post1(token, postID string) *repostNode {
	g.t.Helper()
	var d struct{ Post *repostNode }
	g.ok(token, `query($id: ID!) { post(id: $id) { `+repostFields+` } }`, map[string]any{"id": postID}, &d)
	return d.Post
}

// TestReposts drives reposts over HTTP on both backends: with and without
// a comment, a repost of a repost (pointing at the root), the root's
// repostCount and its reposts newest first with paging, reposts in the
// followers' home timelines, bad input (nothing written), and repostOf
// resolving to null once the root's content row is gone.
func TestReposts(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startGateway(t, b.Open(t))
			alice, bob, carol, dave := g.register(uniqueName("alice")), g.register(uniqueName("bob")), g.register(uniqueName("carol")), g.register(uniqueName("dave"))
			g.follow(carol.token, bob.ID)
			g.follow(dave.token, carol.ID)
			root := g.publish(alice.token, "原微博")

			// A repost with a comment, one without.
			hao := "好"
			r1 := g.repost(bob.token, root.ID, &hao)
			if r1.Content != "好" || r1.Author.ID != bob.ID || r1.RepostOfID == nil || *r1.RepostOfID != root.ID ||
				r1.RepostOf == nil || r1.RepostOf.ID != root.ID || r1.RepostOf.Content != "原微博" || r1.RepostOf.Author.Username != alice.Username {
				t.Fatalf("repost with a comment = %+v", r1)
			}
			r2 := g.repost(bob.token, root.ID, nil)
			empty := ""
			r3 := g.repost(carol.token, root.ID, &empty)
			for _, r := range []repostNode{r2, r3} {
				if r.Content != "转发微博" || r.RepostOf == nil || r.RepostOf.ID != root.ID {
					t.Fatalf("repost without a comment = %+v", r)
				}
			}
			// A repost of a repost points at the root; the comment carries the chain.
			chain := "转发理由 //@" + bob.Username + ": 好"
			r4 := g.repost(dave.token, r1.ID, &chain)
			if r4.Content != chain || *r4.RepostOfID != root.ID || r4.RepostOf.ID != root.ID {
				t.Fatalf("repost of a repost = %+v, want its original %s", r4, root.ID)
			}
			g.flush()

			// The counts: the root's is exact, a repost's own is 0.
			if p := g.post1("", root.ID); p.RepostCount != 4 || p.RepostOfID != nil || p.RepostOf != nil {
				t.Fatalf("root = %+v, want repostCount 4", p)
			}
			if p := g.post1("", r1.ID); p.RepostCount != 0 {
				t.Fatalf("a repost's repostCount = %d", p.RepostCount)
			}
			if u := g.user("", bob.ID); u.PostCount != 2 {
				t.Fatalf("bob's postCount = %d, want 2 (reposts are posts)", u.PostCount)
			}

			// The reposts, newest first, in pages of 3.
			want := []string{r4.ID, r3.ID, r2.ID, r1.ID}
			var got []string
			var after *string
			for {
				page := g.reposts("", root.ID, 3, after)
				if page.Reposts.TotalCount != 4 || page.RepostCount != 4 {
					t.Fatalf("totalCount %d, repostCount %d; want 4", page.Reposts.TotalCount, page.RepostCount)
				}
				for _, e := range page.Reposts.Edges {
					got = append(got, e.Node.ID)
					if e.Node.RepostOf == nil || e.Node.RepostOf.ID != root.ID || e.Node.RepostOf.RepostCount != 4 {
						t.Fatalf("edge %+v: repostOf is not the root", e.Node)
					}
				}
				if !page.Reposts.PageInfo.HasNextPage {
					break
				}
				after = page.Reposts.PageInfo.EndCursor
			}
			if !equalStrings(got, want) {
				t.Fatalf("reposts = %v, want %v", got, want)
			}
			if page := g.reposts("", r1.ID, 10, nil); len(page.Reposts.Edges) != 0 || page.Reposts.TotalCount != 0 {
				t.Fatalf("a repost's own reposts = %+v", page)
			}

			// The followers' home timelines: carol follows bob, dave follows carol.
			var tl struct {
				HomeTimeline struct{ Edges []struct{ Node repostNode } }
			}
			g.ok(carol.token, `{ homeTimeline(first: 10) { edges { node { `+repostFields+` } } } }`, nil, &tl)
			var ids []string
			for _, e := range tl.HomeTimeline.Edges {
				ids = append(ids, e.Node.ID)
				if e.Node.RepostOf == nil || e.Node.RepostOf.ID != root.ID || e.Node.RepostOf.Content != "原微博" {
					t.Fatalf("timeline entry %+v lacks its original", e.Node)
				}
			}
			if !equalStrings(ids, []string{r3.ID, r2.ID, r1.ID}) {
				t.Fatalf("carol's timeline = %v, want her repost and bob's two", ids)
			}
			g.ok(dave.token, `{ homeTimeline(first: 10) { edges { node { `+repostFields+` } } } }`, nil, &tl)
			if n := len(tl.HomeTimeline.Edges); n != 2 || tl.HomeTimeline.Edges[0].Node.ID != r4.ID || tl.HomeTimeline.Edges[1].Node.ID != r3.ID {
				t.Fatalf("dave's timeline = %+v", tl.HomeTimeline.Edges)
			}

			// Bad input: a coded error, and nothing written.
			const mut = `mutation($id: ID!, $c: String) { repost(postId: $id, comment: $c) { id } }`
			g.fails(bob.token, weibo.CodeBadUserInput, mut, map[string]any{"id": "not-a-post"})
			g.fails(bob.token, weibo.CodeBadUserInput, mut, map[string]any{"id": alice.ID})
			g.fails(bob.token, weibo.CodeNotFound, mut, map[string]any{"id": alice.ID + "_1"})
			e := g.fails(bob.token, weibo.CodeBadUserInput, mut, map[string]any{"id": root.ID, "c": strings.Repeat("微", 10001)})
			if !strings.HasPrefix(e.Message, "comment must be 1 to 10000 characters") || (e.Extensions["field"] != nil && e.Extensions["field"] != "comment") {
				t.Errorf("oversized comment: %q on %v, want one on the comment", e.Message, e.Extensions["field"])
			}
			g.fails(bob.token, weibo.CodeBadUserInput, mut, map[string]any{"id": root.ID, "c": " \u200b "})
			g.fails("", "UNAUTHENTICATED", mut, map[string]any{"id": root.ID})
			if p := g.post1("", root.ID); p.RepostCount != 4 {
				t.Fatalf("root's repostCount after bad input = %d", p.RepostCount)
			}
			if u := g.user("", bob.ID); u.PostCount != 2 {
				t.Fatalf("bob's postCount after bad input = %d", u.PostCount)
			}

			// The root's content row gone (deleting posts is not this
			// test's: the row is deleted directly): repostOf is null,
			// repostOfId still names it; reposting it is NOT_FOUND, and so
			// is reposting one of its reposts.
			rootID, err := weibo.ParsePostID(root.ID)
			if err != nil {
				t.Fatal(err)
			}
			if err := g.svc.Store().Delete(t.Context(), &hbase.Delete{Table: tables.Content, Row: tables.ContentKey(rootID)}); err != nil {
				t.Fatal(err)
			}
			if p := g.post1("", r1.ID); p.RepostOf != nil || p.RepostOfID == nil || *p.RepostOfID != root.ID {
				t.Fatalf("a repost of a deleted post = %+v, want repostOf null, repostOfId %s", p, root.ID)
			}
			if p := g.post1("", root.ID); p != nil {
				t.Fatalf("the deleted post = %+v", p)
			}
			g.ok(carol.token, `{ homeTimeline(first: 10) { edges { node { `+repostFields+` } } } }`, nil, &tl)
			for _, e := range tl.HomeTimeline.Edges {
				if e.Node.RepostOf != nil || e.Node.RepostOfID == nil {
					t.Fatalf("timeline entry %+v: want repostOf null and its id", e.Node)
				}
			}
			g.fails(bob.token, weibo.CodeNotFound, mut, map[string]any{"id": root.ID})
			g.fails(bob.token, weibo.CodeNotFound, mut, map[string]any{"id": r1.ID})
		})
	}
}

// repostStoreCalls checks that a home-timeline page selecting its
// reposts' repostCount and originals costs the same store calls whatever
// `first` is: the page's three (inbox scan, large-accounts Get, GetMany),
// plus one GetMany of the page's originals — plus one of their authors'
// users rows when more than the username is asked of them. The viewer
// and the authors are fresh users (the seeded ones are left as the data
// set has them): an author of 100 posts and a reposter of 10 of them,
// the newest post of the viewer's timeline a repost.
func repostStoreCalls(t *testing.T, g *gw) {
	ctx := t.Context()
	author, reposter, viewer := g.register(uniqueName("rsa")), g.register(uniqueName("rsr")), g.register(uniqueName("rsv"))
	aid, err := weibo.ParseUserID(author.ID)
	if err != nil {
		t.Fatal(err)
	}
	rid, _ := weibo.ParseUserID(reposter.ID)
	var posts []weibo.PostID
	for i := range 100 {
		p, err := g.svc.Feed.Publish(ctx, aid, "post "+strconv.Itoa(i))
		if err != nil {
			t.Fatal(err)
		}
		posts = append(posts, p.ID)
	}
	// Posts of one author in one millisecond take the next ones: wait
	// until the clock is past the last, so that the reposts are newer.
	time.Sleep(time.Until(time.UnixMilli(posts[len(posts)-1].Millis)) + 2*time.Millisecond)
	for i := range 10 {
		if _, err := g.svc.Reposts.Repost(ctx, rid, posts[i*7], "转发 "+strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	g.follow(viewer.token, author.ID)
	g.follow(viewer.token, reposter.ID)
	g.flush()
	cost := func(query string, first int) float64 {
		var d struct {
			HomeTimeline struct{ Edges []struct{ Node repostNode } }
		}
		calls := g.okCalls(viewer.token, query, map[string]any{"first": first}, &d)
		if len(d.HomeTimeline.Edges) != first {
			t.Fatalf("got %d edges, want %d", len(d.HomeTimeline.Edges), first)
		}
		if n := d.HomeTimeline.Edges[0].Node; n.RepostOf == nil || n.RepostOf.Content == "" || n.RepostOf.Author.Username != author.Username {
			t.Fatalf("the newest entry %+v lacks its original", n)
		}
		return calls
	}
	const byOriginal = `query($first: Int) { homeTimeline(first: $first) { edges { node { id content repostCount repostOf { content author { username } } } } } }`
	const byOriginalAuthor = `query($first: Int) { homeTimeline(first: $first) { edges { node { id repostOf { content repostCount author { username postCount } } } } } }`
	// Everything a client shows of a post: the counters are cells of the
	// content rows, likedByViewer one batched read of the viewer's like
	// rows, the originals one batched read.
	const byEverything = `query($first: Int) { homeTimeline(first: $first) { edges { node { id content likeCount commentCount repostCount likedByViewer
		repostOf { content author { username } } } } } }`
	for _, c := range []struct {
		query string
		want  float64
	}{{byOriginal, 4}, {byOriginalAuthor, 5}, {byEverything, 5}} {
		var costs []float64
		for _, first := range []int{1, 20, 100} {
			costs = append(costs, cost(c.query, first))
		}
		for _, got := range costs {
			if got != c.want {
				t.Fatalf("store calls per page for first = 1, 20, 100: %v; want %v each\nquery: %s", costs, c.want, c.query)
			}
		}
	}

	// Every list of posts prefetches likedByViewer (its posts' and their
	// originals') and repostOf: the fields answer at once, the list's
	// items are marshalled in one goroutine, and a page costs the same
	// whatever its length. Here the reposter's posts (10 reposts) and the
	// viewer's liked posts (the 10 originals).
	for i := range 10 {
		g.like(viewer.token, weibo.PostID{Author: aid, Millis: posts[i*7].Millis}.String(), true)
	}
	const node = `edges { node { id likedByViewer repostOf { id content likedByViewer } } }`
	for _, c := range []struct {
		query string
		want  float64
	}{
		// the user row, the posts, likedByViewer of both kinds, the originals
		{`query($id: ID!, $first: Int) { user(id: $id) { posts(first: $first) { ` + node + ` } } }`, 4},
		// the user row, the like rows, the posts, likedByViewer (of the originals only: none is a repost)
		{`query($id: ID!, $first: Int) { user(id: $id) { likedPosts(first: $first) { ` + node + ` } } }`, 4},
	} {
		var costs []float64
		for _, first := range []int{1, 5, 10} {
			id := reposter.ID
			if strings.Contains(c.query, "likedPosts") {
				id = viewer.ID
			}
			var d map[string]any
			calls := g.okCalls(viewer.token, c.query, map[string]any{"id": id, "first": first}, &d)
			if n := strings.Count(fmt.Sprint(d), "likedByViewer:true"); n < first {
				t.Fatalf("%d posts or originals liked on a page of %d: %v", n, first, d)
			}
			costs = append(costs, calls)
		}
		if !slices.Equal(costs, []float64{c.want, c.want, c.want}) {
			t.Fatalf("store calls per page for first = 1, 5, 10: %v; want %v each\nquery: %s", costs, c.want, c.query)
		}
	}
}

// TestRepostSubscription: a repost arriving over homeTimelineUpdates
// resolves its original like a timeline page does.
func TestRepostSubscription(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startGateway(t, b.Open(t))
			alice, bob := g.register(uniqueName("alice")), g.register(uniqueName("bob"))
			root := g.publish(alice.token, "原微博")
			conn := g.subscribe(bob.token, `subscription { homeTimelineUpdates { id content repostOfId repostOf { id content author { username } } } }`)
			got := make(chan repostNode, 1)
			go func() {
				m := g.read(conn)
				var e struct {
					Data struct{ HomeTimelineUpdates repostNode } `json:"data"`
				}
				if m.Type != "next" || json.Unmarshal(m.Payload, &e) != nil {
					t.Errorf("want next, got %s %s", m.Type, m.Payload)
				}
				got <- e.Data.HomeTimelineUpdates
			}()
			// The subscription is live once one of bob's own reposts comes back.
			for i := 0; ; i++ {
				g.repost(bob.token, root.ID, nil)
				select {
				case n := <-got:
					if n.RepostOfID == nil || *n.RepostOfID != root.ID || n.RepostOf == nil || n.RepostOf.Content != "原微博" || n.RepostOf.Author.Username != alice.Username {
						t.Fatalf("event = %+v, want a repost of %s with its original", n, root.ID)
					}
					return
				case <-time.After(300 * time.Millisecond):
					if i > 30 {
						t.Fatal("no event for the viewer's own reposts")
					}
				}
			}
		})
	}
}
