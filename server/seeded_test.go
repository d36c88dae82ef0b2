package server_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/weibohbase/gateway/dataset"
	"github.com/weibohbase/gateway/demo"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/seed"
	"github.com/weibohbase/gateway/server"
)

// seededGateway imports the demo subset of the real data set into st and
// serves it.
func seededGateway(t testing.TB, st hbase.StoreAdmin) (*gw, *dataset.Dataset) {
	t.Helper()
	return seededGatewayWith(t, st, nil)
}

// seededGatewayWith is seededGateway with a change to the server's Config.
func seededGatewayWith(t testing.TB, st hbase.StoreAdmin, configure func(*server.Config)) (*gw, *dataset.Dataset) {
	t.Helper()
	ds, err := demo.Load()
	if err != nil {
		t.Fatalf("demo data: %v", err)
	}
	if _, err := seed.Import(t.Context(), st, ds, seed.Options{BcryptCost: 4}); err != nil {
		t.Fatalf("seed: %v", err)
	}
	return startGatewayWith(t, st, configure), ds
}

// busiest returns the n users with the longest home timelines (own posts
// plus their followees' posts).
func busiest(ds *dataset.Dataset, n int) []uint64 {
	type entry struct {
		id   uint64
		size int
	}
	all := make([]entry, 0, len(ds.Users))
	for _, u := range ds.Users {
		size := ds.PostCount(u.ID)
		for _, f := range ds.Following(u.ID) {
			size += ds.PostCount(f)
		}
		all = append(all, entry{u.ID, size})
	}
	slices.SortStableFunc(all, func(a, b entry) int { return b.size - a.size })
	ids := make([]uint64, n)
	for i := range ids {
		ids[i] = all[i].id
	}
	return ids
}

func postID(p dataset.Post) string { return fmt.Sprintf("%d_%d", p.Author, p.Millis) }

func (g *gw) login(username, password string) string {
	g.t.Helper()
	var d struct{ Login struct{ Token string } }
	g.ok("", `mutation($u: String!, $p: String!) { login(username: $u, password: $p) { token } }`, map[string]any{"u": username, "p": password}, &d)
	return d.Login.Token
}

// TestSeededData checks, on both backends, that the imported real data
// answers as the import mapping says: home timelines (one page of 50 and
// three pages of 20), user posts and the three counters.
func TestSeededData(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g, ds := seededGateway(t, b.Open(t))
			checkSeeded(t, g, ds, append(busiest(ds, 3), ds.Users[len(ds.Users)-1].ID, ds.Posts[0].Author))
		})
	}
}

// checkSeeded compares, for each user of users, what GraphQL answers with
// what the import mapping says: homeTimeline(first: 50), three pages of 20,
// the newest post's content, the three counters and posts(first: 100).
func checkSeeded(t *testing.T, g *gw, ds *dataset.Dataset, users []uint64) {
	t.Helper()
	for _, uid := range users {
		u, _ := ds.User(uid)
		token := g.login(u.Username, seed.DefaultPassword)
		want := ds.HomeTimeline(uid, 60)
		var wantIDs []string
		for _, p := range want {
			wantIDs = append(wantIDs, postID(p))
		}
		ids := func(c postConn) []string {
			var out []string
			for _, e := range c.Edges {
				out = append(out, e.Node.ID)
			}
			return out
		}
		if got := ids(g.timeline(token, 50, nil)); !equalStrings(got, wantIDs[:min(50, len(wantIDs))]) {
			t.Fatalf("%s homeTimeline(first: 50) =\n%v\nwant\n%v", u.Username, got, wantIDs[:min(50, len(wantIDs))])
		}
		var paged []string
		var after *string
		for range 3 {
			page := g.timeline(token, 20, after)
			paged = append(paged, ids(page)...)
			after = page.PageInfo.EndCursor
			if !page.PageInfo.HasNextPage {
				break
			}
		}
		if !equalStrings(paged, wantIDs) {
			t.Fatalf("%s: three pages of 20 =\n%v\nwant\n%v", u.Username, paged, wantIDs)
		}
		if len(want) > 0 && (g.timeline(token, 1, nil).Edges[0].Node.Content != want[0].Text) {
			t.Fatalf("%s: newest post's content differs from the data set", u.Username)
		}

		got := g.user(token, fmt.Sprint(uid))
		if got.Username != u.Username || got.FollowCount != ds.FollowCount(uid) || got.FanCount != ds.FanCount(uid) || got.PostCount != ds.PostCount(uid) {
			t.Fatalf("user %d = %+v, want follows %d fans %d posts %d", uid, got, ds.FollowCount(uid), ds.FanCount(uid), ds.PostCount(uid))
		}
		var d struct{ User struct{ Posts postConn } }
		g.ok(token, `query($id: ID!) { user(id: $id) { posts(first: 100) { edges { node { id content } } pageInfo { hasNextPage } } } }`, map[string]any{"id": fmt.Sprint(uid)}, &d)
		idx := ds.PostsOf(uid)
		var wantPosts []string
		for i := len(idx) - 1; i >= 0 && len(wantPosts) < 100; i-- { // PostsOf is oldest first
			wantPosts = append(wantPosts, postID(ds.Posts[idx[i]]))
		}
		if got := ids(d.User.Posts); !equalStrings(got, wantPosts) {
			t.Fatalf("user %d posts =\n%v\nwant\n%v", uid, got, wantPosts)
		}
	}
}

// TestTimelineStoreCallsConstant proves with gateway_store_calls_total (read
// from /metrics) that a home-timeline page costs the same number of store
// round trips whatever `first` is: the inbox scan and the large-accounts Get
// (hybrid fan-out), then one batched get — plus one ScanMany of the large
// accounts' posts when the viewer follows some ("large": the data set seeded
// with a fan-out threshold that makes the viewer's most followed followees
// large), and one GetMany of the viewer's like rows with likedByViewer.
// The viewer blocks 100 users, mutes 100 and has 20 keyword filters
// (timelineSafetyLoad): the Set is read with the page's batched read, so
// the counts are those of a viewer without them.
func TestTimelineStoreCallsConstant(t *testing.T) {
	for _, b := range testenv.Backends() {
		for _, large := range []bool{false, true} {
			name := b.Name
			if large {
				name += "/large"
			}
			t.Run(name, func(t *testing.T) {
				timelineStoreCalls(t, b.Open(t), large)
			})
		}
	}
}

func timelineStoreCalls(t *testing.T, st hbase.StoreAdmin, large bool) {
	ds, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	uid := busiest(ds, 1)[0]
	opts := seed.Options{BcryptCost: 4}
	extra := 0.0
	if large {
		// The threshold: the fan count of the viewer's most followed followee.
		for _, f := range ds.Following(uid) {
			opts.FanoutThreshold = max(opts.FanoutThreshold, ds.FanCount(f))
		}
		extra = 1
	}
	if _, err := seed.Import(t.Context(), st, ds, opts); err != nil {
		t.Fatalf("seed: %v", err)
	}
	if large {
		// Put it back for the other tests sharing the store.
		defer func() {
			if _, err := seed.Import(context.Background(), st, ds, seed.Options{BcryptCost: 4}); err != nil {
				t.Errorf("re-seed: %v", err)
			}
		}()
	}
	g := startGatewayWith(t, st, nil)
	timelineSafetyViewer(t, g.svc, ds, uid, 100)
	{
		u, _ := ds.User(uid)
		token := g.login(u.Username, seed.DefaultPassword)
		cost := func(query string, first int) float64 {
			var d struct{ HomeTimeline postConn }
			calls := g.okCalls(token, query, map[string]any{"first": first}, &d)
			if len(d.HomeTimeline.Edges) != first {
				t.Fatalf("got %d edges, want %d", len(d.HomeTimeline.Edges), first)
			}
			return calls
		}
		const byName = `query($first: Int) { homeTimeline(first: $first) { edges { node { id content createdAt author { username } } } } }`
		const byCounts = `query($first: Int) { homeTimeline(first: $first) { edges { node { id author { username postCount fanCount followedByViewer } } } } }`
		// byRoles and byDepartment reach User.roles and User.department under
		// every edge: the page's authors' roles and departments are
		// prefetched in one batch each (the users rows' org family, then the
		// role or department rows). Left to the dataloaders they would take
		// more calls the longer the page: gqlgen marshals at most
		// worker_limit (4) edges at once, so their loads straddle batches.
		// byRoles also reads the viewer's standing once (their users row's
		// org family; one GetMany of their roles' rows when they hold any):
		// whether they may see other users' roles (MANAGE_ROLES).
		const byRoles = `query($first: Int) { homeTimeline(first: $first) { edges { cursor node { id author { username roles { role { name } } } } } } }`
		const byDepartment = `query($first: Int) { homeTimeline(first: $first) { edges { node { author { department { name } } } } } }`
		// likeCount is read with the posts (a cell of their content rows);
		// likedByViewer is one more batched read, of the viewer's like rows
		// of the page's posts, prefetched for the page.
		// The authors' profiles are cells of their users rows: the page's
		// authors in one batched read, as for their counters.
		const byProfile = `query($first: Int) { homeTimeline(first: $first) { edges { node { id author { username displayName bio } } } } }`
		const byLikeCount = `query($first: Int) { homeTimeline(first: $first) { edges { node { id likeCount } } } }`
		const byLikes = `query($first: Int) { homeTimeline(first: $first) { edges { node { id content likeCount likedByViewer author { username } } } } }`
		// All of a post's counters are cells of its content row; repostOf
		// costs nothing on a page without reposts (one GetMany with them:
		// repostStoreCalls); mentions are a cell of it too (with more of
		// the users than their names, one GetMany of them:
		// TestNotificationsStoreCallsConstant).
		const byEverything = `query($first: Int) { homeTimeline(first: $first) { edges { node { id content likeCount commentCount repostCount likedByViewer
			repostOf { content author { username } } author { username } mentions { id username } } } } }`
		// A token's first request reads its user's row once (the gateway
		// remembers it): not part of any page's cost.
		cost(byName, 1)
		for _, c := range []struct {
			query string
			want  float64
		}{{byName, 3 + extra}, {byCounts, 5 + extra}, {byProfile, 4 + extra}, {byRoles, 6 + extra}, {byDepartment, 5 + extra}, {byLikeCount, 3 + extra}, {byLikes, 4 + extra},
			{byEverything, 4 + extra}} {
			var costs []float64
			for _, first := range []int{1, 5, 20, 50, 100} {
				costs = append(costs, cost(c.query, first))
			}
			for _, got := range costs {
				if got != c.want {
					t.Fatalf("store calls per page for first = 1, 5, 20, 50, 100: %v; want %v each\nquery: %s", costs, c.want, c.query)
				}
			}
		}
		if large {
			var got []string
			for _, e := range g.timeline(token, 100, nil).Edges {
				got = append(got, e.Node.ID)
			}
			if want := timelineIDs(ds, uid, 100); !equalStrings(got, want) {
				t.Fatalf("merged home timeline =\n%v\nwant\n%v", got, want)
			}
		}
	}
	if !large {
		repostStoreCalls(t, g) // reposts_test.go
	}
}

// timelineIDs returns the ids of the newest n posts of uid's home timeline
// computed from the data set.
func timelineIDs(ds *dataset.Dataset, uid uint64, n int) []string {
	var ps []dataset.Post
	for _, a := range append([]uint64{uid}, ds.Following(uid)...) {
		for _, j := range ds.PostsOf(a) {
			ps = append(ps, ds.Posts[j])
		}
	}
	slices.SortFunc(ps, dataset.NewerFirst)
	out := make([]string, 0, n)
	for _, p := range ps[:min(n, len(ps))] {
		out = append(out, postID(p))
	}
	return out
}
