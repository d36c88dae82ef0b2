package domain_test

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weibohbase/gateway/fsck"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/notify"
	"github.com/weibohbase/gateway/weibo/org"
	"github.com/weibohbase/gateway/weibo/tables"
)

// world is what a test wrote through the domain and knows to be true.
type world struct {
	users []*weibo.User
	roles []*org.Role
	mu    sync.Mutex
	posts map[weibo.UserID][]weibo.PostID // acknowledged posts per author
}

func (w *world) addPost(p *feed.Post) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.posts[p.ID.Author] = append(w.posts[p.ID.Author], p.ID)
}

// checkWorld checks, after quiescence, everything the counted writes promise: every
// acknowledged post is stored, and counted with any other stored post of
// its author (exact: only acknowledged posts are stored); relations are symmetric and
// the follow counters exact; every home timeline's newest 100 entries are
// exactly a recomputation from the user's own posts and their current
// followees' posts, and the inbox holds nothing else; every role's
// memberCount equals its members listed and the members are exactly the
// users holding it; and fsck finds nothing.
func checkWorld(t *testing.T, svc *domain.Domain, w *world, grace time.Duration, exact bool) {
	t.Helper()
	ctx := t.Context()
	hundred := 100
	acked := w.posts
	stored := map[weibo.UserID][]weibo.PostID{}
	for _, u := range w.users {
		var after *string
		for {
			p, err := svc.Feed.UserPosts(ctx, u.ID, weibo.Page{First: &hundred, After: after})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range p.Edges {
				stored[u.ID] = append(stored[u.ID], e.Post.ID)
			}
			if !p.PageInfo.HasNextPage {
				break
			}
			after = p.PageInfo.EndCursor
		}
		for _, id := range acked[u.ID] {
			if !slices.Contains(stored[u.ID], id) {
				t.Errorf("acknowledged post %s is missing", id)
			}
		}
		if exact && len(stored[u.ID]) != len(acked[u.ID]) {
			t.Errorf("user %d has %d posts stored, %d acknowledged", u.ID, len(stored[u.ID]), len(acked[u.ID]))
		}
	}
	w = &world{users: w.users, roles: w.roles, posts: stored}
	ids := make([]weibo.UserID, len(w.users))
	for i, u := range w.users {
		ids[i] = u.ID
	}
	us, err := svc.Accounts.GetUsers(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	followees := map[weibo.UserID][]weibo.UserID{}
	for i, u := range us {
		uid := ids[i]
		follows := domaintest.AllPages(t, func(after *string) (*weibo.UserConnection, error) {
			return svc.Follows.FollowList(ctx, uid, &hundred, after)
		})
		fans := domaintest.AllPages(t, func(after *string) (*weibo.UserConnection, error) {
			return svc.Follows.FanList(ctx, uid, &hundred, after)
		})
		followees[uid] = follows
		// uid's FOLLOW notifications hold each fan once.
		var notified []weibo.UserID
		for _, n := range domaintest.Notifs(t, svc, uid, 50) {
			if n.Kind != notify.KindFollow {
				continue
			}
			all, err := svc.Notify.NotificationActors(ctx, []weibo.NotificationID{n.ID})
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range all[0] {
				notified = append(notified, a.User)
			}
		}
		slices.Sort(notified)
		if wantFans := slices.Sorted(slices.Values(fans)); !slices.Equal(notified, wantFans) {
			t.Errorf("user %d: FOLLOW notifications of %v, fans %v", uid, notified, wantFans)
		}
		// Symmetry: uid's fans follow uid, and uid is a fan of whom uid follows.
		for _, fan := range fans {
			ok, err := svc.Follows.IsFollowing(ctx, fan, []weibo.UserID{uid})
			if err != nil || !ok[0] {
				t.Errorf("user %d lists fan %d, who does not follow them (%v)", uid, fan, err)
			}
		}
		for _, f := range follows {
			theirFans := domaintest.AllPages(t, func(after *string) (*weibo.UserConnection, error) {
				return svc.Follows.FanList(ctx, f, &hundred, after)
			})
			if !slices.Contains(theirFans, uid) {
				t.Errorf("user %d follows %d, whose fans lack them", uid, f)
			}
		}
		posts := w.posts[uid]
		if u.FollowCount != int64(len(follows)) || u.FanCount != int64(len(fans)) || u.PostCount != int64(len(posts)) {
			t.Errorf("user %d: followCount %d fanCount %d postCount %d; follows %d, fans %d, posts %d",
				uid, u.FollowCount, u.FanCount, u.PostCount, len(follows), len(fans), len(posts))
		}
	}
	// Home timelines against a recomputation.
	for _, uid := range ids {
		var want []weibo.PostID
		for _, a := range append([]weibo.UserID{uid}, followees[uid]...) {
			want = append(want, w.posts[a]...)
		}
		slices.SortFunc(want, func(a, b weibo.PostID) int {
			return cmp.Or(cmp.Compare(b.Millis, a.Millis), cmp.Compare(a.Author, b.Author))
		})
		page, err := svc.Timeline.HomeTimeline(ctx, uid, weibo.Page{First: &hundred})
		if err != nil {
			t.Fatal(err)
		}
		var got []weibo.PostID
		for _, e := range page.Edges {
			got = append(got, e.Post.ID)
		}
		if top := want[:min(len(want), 100)]; !slices.Equal(got, top) {
			t.Errorf("home timeline of %d: %d entries, want %d (following %v)\n got  %v\n want %v", uid, len(got), len(top), followees[uid], got, top)
		}
		var inbox []weibo.PostID
		err = svc.Store().Scan(ctx, &hbase.Scan{Table: tables.Inbox, Prefix: tables.InboxPrefix(uid)}, func(r *hbase.Result) error {
			if _, id, ok := tables.DecodeInboxKey(r.Row); ok {
				inbox = append(inbox, id)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(inbox, want) {
			t.Errorf("inbox of %d holds %d entries, want %d", uid, len(inbox), len(want))
		}
	}
	// Roles: memberCount = members listed = holders.
	for _, r := range w.roles {
		role, err := svc.Org.Roles.Get(ctx, []weibo.RoleID{r.ID})
		if err != nil || role[0] == nil {
			t.Fatalf("role %d: %v", r.ID, err)
		}
		var listed []weibo.UserID
		var after *string
		for {
			p, err := svc.Org.Roles.Members(ctx, r.ID, &hundred, after)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range p.Edges {
				listed = append(listed, e.User)
			}
			if !p.PageInfo.HasNextPage {
				break
			}
			after = p.PageInfo.EndCursor
		}
		held, err := svc.Org.Roles.OfUsers(ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		var holders []weibo.UserID
		for i, as := range held {
			for _, a := range as {
				if a.Role.ID == r.ID {
					holders = append(holders, ids[i])
				}
			}
		}
		if role[0].MemberCount != int64(len(listed)) || !slices.Equal(listed, holders) {
			t.Errorf("role %s: memberCount %d, members listed %v, holders %v", r.Name, role[0].MemberCount, listed, holders)
		}
	}
	rep, err := fsck.Run(ctx, svc, fsck.Options{RepairGrace: grace})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Issues) > 0 {
		t.Errorf("fsck found %d issues: %v; first: %+v", len(rep.Issues), rep.Counts(), rep.Issues[0])
	}
}

// TestStorm runs, on each backend (the embedded store's calls delayed at
// random, see jittery), 2,400 concurrent follows and unfollows
// of 6 shared pairs, 1,200 concurrent assignRole/revokeRole calls on 4
// users and 2 roles, and 300 publishes in between, 32 calls at a time;
// after quiescence everything checkWorld checks must hold. A call may fail
// only with CONCURRENT_UPDATE (assign/revoke whose cell kept changing),
// which is retry-safe.
func TestStorm(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	const (
		relationCalls = 2400
		roleCalls     = 1200
		publishes     = 300
		concurrency   = 32
		grace         = 10 * time.Second
	)
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := domaintest.OwnStore(t, b)
			if b.Name == hbase.BackendEmbedded {
				st = domaintest.Jittery{StoreAdmin: st}
			}
			svc := domaintest.Quiet(st, domain.WithRepairGrace(grace), domain.WithOutboxSweep(time.Second))
			if err := svc.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer svc.Close(context.Background())
			w := &world{posts: map[weibo.UserID][]weibo.PostID{}}
			for i := range 8 {
				w.users = append(w.users, mustUser(t, svc, uniq(fmt.Sprintf("storm%d", i))))
			}
			for i := range 2 {
				r, err := svc.Org.Roles.Create(ctx, uniq(fmt.Sprintf("stormrole%d", i)))
				if err != nil {
					t.Fatal(err)
				}
				w.roles = append(w.roles, r)
			}
			u := w.users
			// Six pairs: two of them mutual, so both sides of one user move at once.
			pairs := [][2]*weibo.User{{u[0], u[1]}, {u[1], u[0]}, {u[2], u[1]}, {u[3], u[4]}, {u[4], u[3]}, {u[5], u[0]}}
			var calls []func() error
			for range relationCalls {
				p := pairs[rand.IntN(len(pairs))]
				if rand.IntN(2) == 0 {
					calls = append(calls, func() error { _, err := svc.Follows.Follow(ctx, p[0].ID, p[1].ID); return err })
				} else {
					calls = append(calls, func() error { _, err := svc.Follows.Unfollow(ctx, p[0].ID, p[1].ID); return err })
				}
			}
			for range roleCalls {
				user, role := u[rand.IntN(4)], w.roles[rand.IntN(len(w.roles))]
				if rand.IntN(2) == 0 {
					prio := 1 + rand.IntN(org.MaxPriority)
					calls = append(calls, func() error { _, err := svc.Org.Roles.Assign(ctx, user.ID, role.ID, prio); return err })
				} else {
					calls = append(calls, func() error { _, err := svc.Org.Roles.Revoke(ctx, user.ID, role.ID); return err })
				}
			}
			for i := range publishes {
				author := u[rand.IntN(6)]
				calls = append(calls, func() error {
					p, err := svc.Feed.Publish(ctx, author.ID, fmt.Sprintf("storm post %d", i))
					if err == nil {
						w.addPost(p)
					}
					return err
				})
			}
			rand.Shuffle(len(calls), func(i, j int) { calls[i], calls[j] = calls[j], calls[i] })
			start := time.Now()
			var (
				mu         sync.Mutex
				concurrent int
				failures   []error
			)
			work := make(chan func() error)
			var wg sync.WaitGroup
			for range concurrency {
				wg.Go(func() {
					for call := range work {
						if err := call(); err != nil {
							mu.Lock()
							if weibo.CodeOf(err) == weibo.CodeBadUserInput && strings.Contains(err.Error(), "keep changing") {
								concurrent++
							} else {
								failures = append(failures, err)
							}
							mu.Unlock()
						}
					}
				})
			}
			for _, c := range calls {
				work <- c
			}
			close(work)
			wg.Wait()
			if len(failures) > 0 {
				t.Fatalf("%d calls failed, first: %v", len(failures), failures[0])
			}
			t.Logf("%s: %d calls (%d follow/unfollow, %d assign/revoke, %d publishes) at concurrency %d in %s; %d CONCURRENT_UPDATE",
				b.Name, len(calls), relationCalls, roleCalls, publishes, concurrency, time.Since(start).Round(time.Millisecond), concurrent)
			quiet := time.Now()
			domaintest.WaitQuiet(t, svc, 2*time.Minute)
			t.Logf("quiet after %s more", time.Since(quiet).Round(time.Millisecond))
			checkWorld(t, svc, w, grace, true)
		})
	}
}

// TestPublishSameMillisecond publishes five posts of one author in one
// millisecond (a fixed clock), each after the fan-out of the one before
// is done: they take five consecutive milliseconds, and none leaves an
// outbox row behind (a post that moves on takes back the outbox row of the
// millisecond it left, and never writes a row for another post), so
// nothing waits for the repairer.
func TestPublishSameMillisecond(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := domaintest.OwnStore(t, b)
			at := time.UnixMilli(1583020800123)
			svc := domaintest.Quiet(st, domain.WithClock(func() time.Time { return at }))
			if err := svc.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer svc.Close(context.Background())
			author, fan := mustUser(t, svc, uniq("author")), mustUser(t, svc, uniq("fan"))
			if _, err := svc.Follows.Follow(ctx, fan.ID, author.ID); err != nil {
				t.Fatal(err)
			}
			w := &world{users: []*weibo.User{author, fan}, posts: map[weibo.UserID][]weibo.PostID{}}
			for i := range 5 {
				p, err := svc.Feed.Publish(ctx, author.ID, fmt.Sprintf("same ms %d", i))
				if err != nil {
					t.Fatal(err)
				}
				if want := at.UnixMilli() + int64(i); p.ID.Millis != want {
					t.Fatalf("post %d at %d, want %d", i, p.ID.Millis, want)
				}
				w.addPost(p)
				if err := svc.FlushFanout(ctx); err != nil {
					t.Fatal(err)
				}
				if n := domaintest.Leftovers(t, st); n != 0 {
					t.Fatalf("after post %d: %d pending or outbox rows left", i, n)
				}
			}
			checkWorld(t, svc, w, counted.DefaultRepairGrace, true)
		})
	}
}
