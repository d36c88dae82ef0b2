package domain_test

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/tables"
)

// hybridWorld is a small social graph on a service with fan-out threshold
// 3, with the raw follows and posts kept aside to recompute timelines.
type hybridWorld struct {
	t       *testing.T
	svc     *domain.Domain
	st      hbase.Store
	follows map[weibo.UserID]map[weibo.UserID]bool
	posts   map[weibo.UserID][]weibo.PostID
}

func (h *hybridWorld) follow(a, b weibo.UserID) {
	h.t.Helper()
	if _, err := h.svc.Follows.Follow(h.t.Context(), a, b); err != nil {
		h.t.Fatalf("follow %v -> %v: %v", a, b, err)
	}
	if h.follows[a] == nil {
		h.follows[a] = map[weibo.UserID]bool{}
	}
	h.follows[a][b] = true
}

func (h *hybridWorld) unfollow(a, b weibo.UserID) {
	h.t.Helper()
	if _, err := h.svc.Follows.Unfollow(h.t.Context(), a, b); err != nil {
		h.t.Fatalf("unfollow %v -> %v: %v", a, b, err)
	}
	delete(h.follows[a], b)
}

func (h *hybridWorld) publish(a weibo.UserID) weibo.PostID {
	h.t.Helper()
	p, err := h.svc.Feed.Publish(h.t.Context(), a, fmt.Sprintf("post of %v", a))
	if err != nil {
		h.t.Fatalf("publish %v: %v", a, err)
	}
	h.posts[a] = append(h.posts[a], p.ID)
	return p.ID
}

func (h *hybridWorld) flush() {
	h.t.Helper()
	if err := h.svc.FlushFanout(h.t.Context()); err != nil {
		h.t.Fatal(err)
	}
}

// want recomputes uid's home timeline from the raw follows and posts:
// newest first, ties by author id.
func (h *hybridWorld) want(uid weibo.UserID) []string {
	var ids []weibo.PostID
	ids = append(ids, h.posts[uid]...)
	for b := range h.follows[uid] {
		ids = append(ids, h.posts[b]...)
	}
	slices.SortFunc(ids, func(a, b weibo.PostID) int {
		return cmp.Or(cmp.Compare(b.Millis, a.Millis), cmp.Compare(a.Author, b.Author))
	})
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
	}
	return out
}

func (h *hybridWorld) page(uid weibo.UserID, p weibo.Page) bothPage {
	h.t.Helper()
	return readBoth(h.t, postList{name: "home timeline", read: func(ctx context.Context, p weibo.Page) (*feed.PostConnection, error) {
		return h.svc.Timeline.HomeTimeline(ctx, uid, p)
	}}, p)
}

// check compares uid's timeline with the recomputation: in one page, and
// paged forward and backward by 2 and 3.
func (h *hybridWorld) check(what string, uid weibo.UserID) {
	h.t.Helper()
	want := h.want(uid)
	if all := h.page(uid, weibo.Page{First: new(weibo.MaxPageSize)}); !slices.Equal(all.ids, want) {
		h.t.Fatalf("%s: timeline of %v =\n%v\nwant\n%v", what, uid, all.ids, want)
	}
	for _, k := range []int{2, 3} {
		var fwd []string
		for p, i := (bothPage{}), 0; i == 0 || p.info.HasNextPage; i++ {
			p = h.page(uid, weibo.Page{First: new(k), After: p.end})
			fwd = append(fwd, p.ids...)
		}
		var back []string
		for p, i := (bothPage{}), 0; i == 0 || p.info.HasPreviousPage; i++ {
			p = h.page(uid, weibo.Page{Last: new(k), Before: p.start})
			back = append(slices.Clone(p.ids), back...)
		}
		if !slices.Equal(fwd, want) || !slices.Equal(back, want) {
			h.t.Fatalf("%s: timeline of %v by %d\nforward  %v\nbackward %v\nwant     %v", what, uid, k, fwd, back, want)
		}
	}
}

// inboxEntries counts the posts of author in owner's inbox.
func (h *hybridWorld) inboxEntries(owner, author weibo.UserID) int {
	h.t.Helper()
	n := 0
	err := h.st.Scan(h.t.Context(), &hbase.Scan{Table: tables.Inbox, Prefix: tables.InboxPrefix(owner)}, func(r *hbase.Result) error {
		if _, id, ok := tables.DecodeInboxKey(r.Row); ok && id.Author == author {
			n++
		}
		return nil
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return n
}

func (h *hybridWorld) large(uid weibo.UserID) (large, draining bool) {
	h.t.Helper()
	ls, err := h.svc.Fanout.LargeAccounts(h.t.Context())
	if err != nil {
		h.t.Fatal(err)
	}
	d, ok := ls[uid]
	return ok, d
}

// TestHybridFanout: with threshold 3, home timelines of users who follow
// 0, 1 and several large accounts equal a recomputation from the raw
// follows and posts, on both backends — in one page and paged both ways,
// while posts arrive, and across an account crossing the threshold up and
// down (nothing lost, nothing duplicated); a large account's posts reach no
// fan's inbox; a page costs the same store calls whatever its size.
func TestHybridFanout(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := hbase.Instrument(b.Open(t))
			if err := tables.Migrate(ctx, st); err != nil {
				t.Fatal(err)
			}
			var tick atomic.Int64
			base := time.Now().UnixMilli()
			svc := domaintest.Quiet(st, domain.WithFanoutThreshold(3),
				domain.WithClock(func() time.Time { return time.UnixMilli(base + tick.Add(1)) }))
			if err := svc.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer svc.Close(context.Background())
			h := &hybridWorld{t: t, svc: svc, st: st, follows: map[weibo.UserID]map[weibo.UserID]bool{}, posts: map[weibo.UserID][]weibo.PostID{}}
			user := func(name string) weibo.UserID { return mustUser(t, svc, uniq(name)).ID }
			big1, big2, big3, small := user("big1"), user("big2"), user("big3"), user("small")
			v0, v1, v2, extra := user("v0"), user("v1"), user("v2"), user("extra")
			t.Cleanup(func() {
				// The shared HBase keeps row LargeKey: leave no account of this test in it.
				del := hbase.Values{tables.FamInfo: {}}
				for _, u := range []weibo.UserID{big1, big2, big3, small} {
					del[tables.FamInfo][tables.LargeQualifier(u)] = nil
				}
				_ = st.Delete(context.Background(), &hbase.Delete{Table: tables.Users, Row: tables.LargeKey, Values: del})
			})
			// Posts before anyone is large: pushed.
			for range 2 {
				for _, a := range []weibo.UserID{big1, big2, big3, small, v0, v1, v2} {
					h.publish(a)
				}
			}
			h.flush()
			// v0 follows no large account, v1 one, v2 three; extra fills
			// the fan counts to the threshold.
			h.follow(v0, small)
			h.follow(v1, big1)
			h.follow(v1, small)
			for _, f := range []weibo.UserID{v2, extra} {
				for _, a := range []weibo.UserID{big1, big2, big3} {
					h.follow(f, a)
				}
			}
			h.follow(v0, big2) // big2's third fan
			h.follow(small, big3)
			h.flush()
			for _, c := range []struct {
				uid   weibo.UserID
				large bool
			}{{big1, true}, {big2, true}, {big3, true}, {small, false}} {
				if l, _ := h.large(c.uid); l != c.large {
					t.Fatalf("%v large = %v, want %v", c.uid, l, c.large)
				}
			}
			h.unfollow(v0, big2) // big2 drops to 2 fans: drained
			h.flush()
			if l, _ := h.large(big2); l {
				t.Fatal("big2 still large after dropping below the threshold")
			}
			h.follow(v0, big2) // and large again
			h.flush()
			for _, v := range []weibo.UserID{v0, v1, v2} {
				h.check("before new posts", v)
			}

			// New posts of large accounts reach no fan's inbox, and show.
			before := map[weibo.UserID]int{}
			for _, v := range []weibo.UserID{v1, v2} {
				before[v] = h.inboxEntries(v, big1)
			}
			for range 3 {
				for _, a := range []weibo.UserID{big1, big2, big3, small, v1} {
					h.publish(a)
				}
			}
			h.flush()
			for _, v := range []weibo.UserID{v1, v2} {
				if n := h.inboxEntries(v, big1); n != before[v] {
					t.Errorf("%v's inbox holds %d posts of the large big1, %d before its new posts", v, n, before[v])
				}
			}
			if n := h.inboxEntries(big1, big1); n != len(h.posts[big1]) {
				t.Errorf("big1's own inbox holds %d of its %d posts", n, len(h.posts[big1]))
			}
			for _, v := range []weibo.UserID{v0, v1, v2} {
				h.check("after new posts", v)
			}

			// Paging while posts arrive: pages go on after the cursor with
			// no repeat and no gap; the posts that arrived are exactly what
			// lies before the first page.
			want := h.want(v2)
			first := h.page(v2, weibo.Page{First: new(2)})
			got := slices.Clone(first.ids)
			for p := first; p.info.HasNextPage; {
				h.publish(big2)
				h.publish(small)
				p = h.page(v2, weibo.Page{First: new(2), After: p.end})
				got = append(got, p.ids...)
			}
			h.flush()
			if !slices.Equal(got, want) {
				t.Fatalf("paging while posts arrive:\n%v\nwant\n%v", got, want)
			}
			now := h.want(v2)
			fresh := now[:len(now)-len(want)]
			if p := h.page(v2, weibo.Page{Last: new(weibo.MaxPageSize), Before: first.start}); !slices.Equal(p.ids, fresh) {
				t.Fatalf("newer than the first page: %v, want %v", p.ids, fresh)
			}

			// Store calls per page: constant whatever the page size, with
			// large accounts followed (inbox scan + large-accounts Get,
			// GetMany, ScanMany) or not.
			var calls atomic.Int64
			counted := hbase.WithCallCounter(ctx, func(context.Context, string, string) { calls.Add(1) })
			for _, c := range []struct {
				uid  weibo.UserID
				want int64
			}{{v0, 4}, {v2, 4}, {small, 4}, {extra, 4}} {
				for _, n := range []int{1, 2, 5, 20} {
					calls.Store(0)
					if _, err := svc.Timeline.HomeTimeline(counted, c.uid, weibo.Page{First: new(n)}); err != nil {
						t.Fatal(err)
					}
					if got := calls.Load(); got != c.want {
						t.Errorf("%v first %d: %d store calls, want %d", c.uid, n, got, c.want)
					}
				}
			}
			noLarge := user("nolarge")
			h.publish(noLarge)
			h.flush()
			calls.Store(0)
			if _, err := svc.Timeline.HomeTimeline(counted, noLarge, weibo.Page{First: new(5)}); err != nil {
				t.Fatal(err)
			}
			if got := calls.Load(); got != 3 {
				t.Errorf("a viewer following no large account: %d store calls, want 3", got)
			}

			// Down: big1 drops below the threshold; its posts reach the
			// inboxes (drain), and then it stays pushed.
			h.unfollow(extra, big1)
			h.flush()
			if l, _ := h.large(big1); l {
				t.Fatal("big1 still large")
			}
			for _, v := range []weibo.UserID{v1, v2} {
				if n := h.inboxEntries(v, big1); n != len(h.posts[big1]) {
					t.Errorf("after the drain %v's inbox holds %d of big1's %d posts", v, n, len(h.posts[big1]))
				}
			}
			h.publish(big1)
			h.flush()
			for _, v := range []weibo.UserID{v0, v1, v2, extra} {
				h.check("after big1 dropped", v)
			}
			// Up again: nothing duplicated.
			h.follow(extra, big1)
			h.publish(big1)
			h.flush()
			if l, _ := h.large(big1); !l {
				t.Fatal("big1 not large again")
			}
			for _, v := range []weibo.UserID{v0, v1, v2, extra} {
				h.check("after big1 is large again", v)
			}
			// Unfollowing a large account removes its posts from the timeline.
			h.unfollow(v2, big3)
			h.flush()
			h.check("after unfollowing big3", v2)
		})
	}
}

// TestHybridWatch: the subscription delivers a large account's post to a
// follower, though it reaches no inbox.
func TestHybridWatch(t *testing.T) {
	ctx := t.Context()
	st := testenv.Embedded(t)
	if err := tables.Migrate(ctx, st); err != nil {
		t.Fatal(err)
	}
	svc := domaintest.Quiet(st, domain.WithFanoutThreshold(1))
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer svc.Close(context.Background())
	star, fan := mustUser(t, svc, uniq("star")).ID, mustUser(t, svc, uniq("fan")).ID
	if _, err := svc.Follows.Follow(ctx, fan, star); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch, err := svc.Timeline.WatchTimeline(wctx, fan, time.Hour, nil) // no tick: only the wake-up can deliver
	if err != nil {
		t.Fatal(err)
	}
	p, err := svc.Feed.Publish(ctx, star, "to a million fans")
	if err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-ch:
		if got.ID != p.ID {
			t.Fatalf("watch delivered %v, want %v", got.ID, p.ID)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the large account's post was not delivered to its follower's watch")
	}
}

// TestHybridDrainResumed: a drain that died (its account left Draining for
// longer than the repair grace) is resumed by the next start's sweep: the
// account's posts reach its fans' inboxes and the account leaves the row.
func TestHybridDrainResumed(t *testing.T) {
	ctx := t.Context()
	st := testenv.Embedded(t)
	if err := tables.Migrate(ctx, st); err != nil {
		t.Fatal(err)
	}
	svc := domaintest.Quiet(st, domain.WithFanoutThreshold(2))
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	star, f1, f2 := mustUser(t, svc, uniq("star")).ID, mustUser(t, svc, uniq("f1")).ID, mustUser(t, svc, uniq("f2")).ID
	for _, f := range []weibo.UserID{f1, f2} {
		if _, err := svc.Follows.Follow(ctx, f, star); err != nil {
			t.Fatal(err)
		}
	}
	var posts []weibo.PostID
	for i := range 3 {
		p, err := svc.Feed.Publish(ctx, star, fmt.Sprintf("post %d", i))
		if err != nil {
			t.Fatal(err)
		}
		posts = append(posts, p.ID)
	}
	if err := svc.Close(ctx); err != nil {
		t.Fatal(err)
	}
	h := &hybridWorld{t: t, svc: svc, st: st}
	if n := h.inboxEntries(f1, star); n != 0 {
		t.Fatalf("f1's inbox holds %d posts of the large star", n)
	}
	// The process that moved star to Draining died before draining.
	old := time.Now().Add(-2 * counted.DefaultRepairGrace).UnixMilli()
	if err := st.Put(ctx, &hbase.Put{Table: tables.Users, Row: tables.LargeKey, Values: hbase.Values{tables.FamInfo: {
		tables.LargeQualifier(star): tables.EncodeLarge(tables.LargeDraining, old)}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Follows.Unfollow(ctx, f2, star); err != nil { // 1 fan left: below the threshold
		t.Fatal(err)
	}
	svc2 := domaintest.Quiet(st, domain.WithFanoutThreshold(2))
	if err := svc2.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer svc2.Close(context.Background())
	if err := svc2.FlushFanout(ctx); err != nil {
		t.Fatal(err)
	}
	h.svc = svc2
	if l, _ := h.large(star); l {
		t.Fatal("star still listed after the resumed drain")
	}
	if n := h.inboxEntries(f1, star); n != len(posts) {
		t.Fatalf("after the resumed drain f1's inbox holds %d of star's %d posts", n, len(posts))
	}
	if n := h.inboxEntries(f2, star); n != 0 {
		t.Fatalf("f2 unfollowed, yet its inbox holds %d of star's posts", n)
	}
}
