package server_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/server"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/feed"
)

// TestNotificationsStoreCallsConstant proves with the store calls of each
// request (hbase.Instrument's count, in the request's context) that a page of notifications costs the same number of store round trips
// for first = 1, 20 and 100 — the index scan, one GetMany of the group
// rows, then one batched read each of the actors' users rows, the posts
// and the comments —, that actors(first:) beyond the newest actors a
// group row keeps costs one GetMany more for the whole page, and that a
// home timeline selecting its posts' mentions costs nothing more (the
// mentions are stored with the posts) and one GetMany more with more of
// the users than their username. The viewers carry 100 blocks, 100 mutes
// and 20 keyword filters of every context (carrySafety): their safety
// rows, and the texts the filters match, are read in the group rows'
// GetMany, so the counts stay.
func TestNotificationsStoreCallsConstant(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			g := startGatewayWith(t, b.Open(t), func(c *server.Config) { c.Signups.Rate = -1 })
			r, r2, m := g.register(uniqueName("costr")), g.register(uniqueName("costr2")), g.register(uniqueName("costm"))
			rid, _ := weibo.ParseUserID(r.ID)
			r2id, _ := weibo.ParseUserID(r2.ID)
			mid, _ := weibo.ParseUserID(m.ID)
			var likers []*weibo.User
			for i := range 12 {
				u, err := g.svc.Accounts.Register(ctx, uniqueName(fmt.Sprintf("costl%d", i)), "correct horse")
				if err != nil {
					t.Fatal(err)
				}
				likers = append(likers, u)
			}
			var posts, posts2 []weibo.PostID
			for i := range 5 {
				p, err := g.svc.Feed.Publish(ctx, rid, fmt.Sprint("post ", i))
				if err != nil {
					t.Fatal(err)
				}
				p2, err := g.svc.Feed.Publish(ctx, r2id, fmt.Sprint("post ", i))
				if err != nil {
					t.Fatal(err)
				}
				posts, posts2 = append(posts, p.ID), append(posts2, p2.ID)
			}
			// r2: five LIKE notifications of 12 users each (more than a group
			// row keeps); r: those, a FOLLOW of 12, then 120 COMMENTs.
			for _, u := range likers {
				for i := range posts {
					if _, err := g.svc.Likes.Like(ctx, u.ID, posts[i]); err != nil {
						t.Fatal(err)
					}
					if _, err := g.svc.Likes.Like(ctx, u.ID, posts2[i]); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := g.svc.Follows.Follow(ctx, u.ID, rid); err != nil {
					t.Fatal(err)
				}
			}
			for i := range 120 {
				if _, err := g.svc.Comments.AddComment(ctx, likers[i%12].ID, posts[i%5], fmt.Sprint("comment ", i), nil); err != nil {
					t.Fatal(err)
				}
			}
			// m's 100 posts, each mentioning two of the likers; r follows m.
			for i := range 100 {
				text := fmt.Sprintf("hi @%s and @%s", likers[i%12].Username, likers[(i+5)%12].Username)
				if _, err := g.svc.Feed.Publish(ctx, mid, text); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(2 * time.Millisecond)
			g.follow(r.token, m.ID)
			g.flush()
			carrySafety(t, g, rid, r2id)

			cost := func(token, query, field string, first, want int) float64 {
				var d map[string]struct{ Edges []any }
				calls := g.okCalls(token, query, map[string]any{"first": first}, &d)
				if n := len(d[field].Edges); n != want {
					t.Fatalf("got %d edges, want %d\nquery: %s", n, want, query)
				}
				return calls
			}
			// A token's first request reads its user's row once.
			cost(r.token, `{ me { id } }`, "", 0, 0)
			cost(r2.token, `{ me { id } }`, "", 0, 0)
			const page = `query($first: Int) { notifications(first: $first) { edges { node { id kind at read actorCount
				actors(first: 3) { totalCount edges { node { username } } } post { id content author { username } } comment { id content } } } } }`
			const allActors = `query($first: Int) { notifications(first: $first) { edges { node { id
				actors(first: 12) { totalCount edges { node { username fanCount } } } } } } }`
			const mentions = `query($first: Int) { homeTimeline(first: $first) { edges { node { id content mentions { id username } } } } }`
			const mentionCounts = `query($first: Int) { homeTimeline(first: $first) { edges { node { id mentions { username fanCount } } } } }`
			for _, c := range []struct {
				name, token, query, field string
				firsts                    []int
				edges                     []int
				want                      float64
			}{
				// The newest 120 are COMMENTs: scan, groups, users, posts, comments.
				{"page", r.token, page, "notifications", []int{1, 20, 100}, []int{1, 20, 100}, 5},
				// r2 has five LIKEs: scan, groups, every actor, users.
				{"all actors", r2.token, allActors, "notifications", []int{1, 5, 20}, []int{1, 5, 5}, 4},
				// Inbox scan, large-accounts Get, GetMany; then the users rows.
				{"mentions", r.token, mentions, "homeTimeline", []int{1, 20, 100}, []int{1, 20, 100}, 3},
				{"mention counts", r.token, mentionCounts, "homeTimeline", []int{1, 20, 100}, []int{1, 20, 100}, 4},
			} {
				var costs []float64
				for i, first := range c.firsts {
					costs = append(costs, cost(c.token, c.query, c.field, first, c.edges[i]))
				}
				for _, got := range costs {
					if got != c.want {
						t.Fatalf("%s: store calls for first = %v: %v; want %v each", c.name, c.firsts, costs, c.want)
					}
				}
			}
			// What the pages showed is right: r's newest is a COMMENT of one user.
			ns, unread := g.notifications(r.token, 100, 3)
			if len(ns) != 126 || unread != 126 || ns[0].Kind != "COMMENT" || ns[125].Kind != "LIKE" || ns[125].ActorCount != 12 || len(ns[125].Actors.Edges) != 3 {
				t.Fatalf("r has %d notifications (%d unread), newest %+v, oldest %+v", len(ns), unread, ns[0], ns[len(ns)-1])
			}
		})
	}
}

// TestNotificationsCosted checks that the query cost limiter counts the
// new connections by their `first` — notifications, each notification's
// actors — and the mention lists by their bound, and refuses a page whose
// bound is too big before any store call; and that
// unreadNotificationCount costs at most the one read of the viewer's
// users row, shared with `me`.
func TestNotificationsCosted(t *testing.T) {
	g := startGatewayWith(t, testenv.Embedded(t), func(c *server.Config) { c.Signups.Rate = -1 })
	a := g.register(uniqueName("costed"))
	var out struct {
		Data struct {
			Notifications struct{ Edges []any }
		}
		Extensions struct {
			Cost server.CostReport `json:"cost"`
		} `json:"extensions"`
	}
	raw := g.raw(http.MethodPost, a.token, `{"query": "{ notifications(first: 2) { edges { node { actors(first: 3) { edges { node { username } } } post { id mentions { username } } } } } }"}`)
	if err := jsonUnmarshal(raw.body, &out); err != nil {
		t.Fatal(err)
	}
	// The connection, and 2 edges (their notification), each with the actors connection
	// and 3 actors, the post and its 20 mentions at most.
	if want := int64(1 + 2*(1+1+3+1+feed.MaxMentions)); out.Extensions.Cost.Nodes != want {
		t.Errorf("extensions.cost %+v, want %d nodes", out.Extensions.Cost, want)
	}
	e, calls := g.failsCalls(a.token, server.CodeQueryTooComplex, `{ notifications(first: 100) { edges { node { actors(first: 100) { edges { node {
		follows(first: 100) { edges { node { username } } } } } } } } } }`, nil)
	if e.Extensions["measure"] != "nodes" || calls != 0 {
		t.Errorf("refusal %+v after %v store calls", e, calls)
	}
	cost := func(query string) float64 { return g.okCalls(a.token, query, nil, nil) }
	cost(`{ me { id } }`)
	if got := cost(`{ me { username } unreadNotificationCount }`); got > 1 {
		t.Errorf("me and unreadNotificationCount: %v store calls, want at most 1", got)
	}
	if got := cost(`{ unreadNotificationCount }`); got > 1 {
		t.Errorf("unreadNotificationCount: %v store calls, want at most 1", got)
	}
}
