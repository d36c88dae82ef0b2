package domain_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weibohbase/gateway/fsck"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/audit"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/moderation/suspend"
	"github.com/weibohbase/gateway/weibo/org"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestSuspendStorm: suspensions and their lifting of one user race each
// other, his posts, his follows and others' follows of him, his likes, on
// both backends (the embedded store's calls jittered). Once they quiesce
// the suspension is what the last write left — every instance's registry,
// loaded afresh, agrees with the store —, his kept counters equal his
// lists, every suspendUser is in the audit log, and fsck finds nothing.
func TestSuspendStorm(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	const (
		calls       = 200
		concurrency = 16
	)
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := domaintest.OwnStore(t, b)
			if b.Name == hbase.BackendEmbedded {
				st = domaintest.Jittery{StoreAdmin: st}
			}
			svc := domaintest.Quiet(st, domain.WithRepairGrace(10*time.Second), domain.WithOutboxSweep(time.Second))
			if err := svc.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer svc.Close(context.Background())
			mod := mustUser(t, svc, uniq("mod")).ID
			bob := mustUser(t, svc, uniq("bob")).ID
			var others []weibo.UserID
			for i := range 4 {
				others = append(others, mustUser(t, svc, uniq(fmt.Sprintf("fan%d", i))).ID)
			}
			first, err := svc.Feed.Publish(ctx, others[0], "a post bob may like")
			if err != nil {
				t.Fatal(err)
			}
			modCtx := audit.WithSource(ctx, mod, "storm")
			var (
				mu       sync.Mutex
				failures = map[string]int{}
				suspends atomic.Int64
			)
			var wg sync.WaitGroup
			sem := make(chan struct{}, concurrency)
			for i := range calls {
				wg.Add(1)
				sem <- struct{}{}
				go func() {
					defer func() { <-sem; wg.Done() }()
					var err error
					other := others[rand.IntN(len(others))]
					switch i % 8 {
					case 0:
						var until *time.Time
						if rand.IntN(2) == 0 {
							until = new(time.Now().Add(time.Hour))
						}
						if _, err = svc.Suspensions.Suspend(modCtx, bob, until, "storm"); err == nil {
							suspends.Add(1)
						}
					case 1:
						err = svc.Suspensions.Unsuspend(modCtx, bob)
					case 2, 3:
						_, err = svc.Feed.Publish(ctx, bob, fmt.Sprintf("bob's post %d", i))
					case 4:
						_, err = svc.Follows.Follow(ctx, bob, other)
					case 5:
						_, err = svc.Follows.Unfollow(ctx, other, bob)
					case 6:
						_, err = svc.Follows.Follow(ctx, other, bob)
					default:
						_, err = svc.Likes.Like(ctx, bob, first.ID)
					}
					if err != nil {
						mu.Lock()
						failures[err.Error()]++
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			if len(failures) > 0 {
				t.Fatalf("failures: %v", failures)
			}
			domaintest.WaitQuiet(t, svc, time.Minute)

			// The registry, this instance's and a fresh one's, holds what the
			// store holds.
			r, err := st.Get(ctx, &hbase.Get{Table: tables.Suspensions, Row: tables.SuspensionKey(bob)})
			if err != nil {
				t.Fatal(err)
			}
			_, stored := tables.DecodeSuspension(r)
			fresh := suspend.NewRegistry(st, nil, nil, 0)
			if err := fresh.Load(ctx); err != nil {
				t.Fatal(err)
			}
			now := time.Now().UnixMilli()
			if got := svc.Suspensions.Suspended(bob, now); got != stored {
				t.Errorf("the registry says suspended %v, the store %v", got, stored)
			}
			if got := fresh.Suspended(bob, now); got != stored {
				t.Errorf("a fresh registry says suspended %v, the store %v", got, stored)
			}
			// Counters equal their lists: a suspension changes none.
			hundred := weibo.MaxPageSize
			us, err := svc.Accounts.GetUsers(ctx, []weibo.UserID{bob})
			if err != nil {
				t.Fatal(err)
			}
			posts, err := svc.Feed.UserPosts(ctx, bob, weibo.Page{First: &hundred})
			if err != nil {
				t.Fatal(err)
			}
			follows, err := svc.Follows.FollowList(ctx, bob, &hundred, nil)
			if err != nil {
				t.Fatal(err)
			}
			fans, err := svc.Follows.FanList(ctx, bob, &hundred, nil)
			if err != nil {
				t.Fatal(err)
			}
			u := us[0]
			if u.PostCount != int64(len(posts.Edges)) || u.PostCount != calls/4 || u.FollowCount != int64(len(follows.Edges)) || u.FanCount != int64(len(fans.Edges)) {
				t.Errorf("bob: postCount %d / %d listed (%d published), followCount %d / %d, fanCount %d / %d",
					u.PostCount, len(posts.Edges), calls/4, u.FollowCount, len(follows.Edges), u.FanCount, len(fans.Edges))
			}
			events, err := svc.Org.Audit.Page(ctx, audit.Filter{Action: suspend.ActionSuspend, Target: new(org.UserNode(bob))}, &hundred, nil)
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(events.Edges)) != suspends.Load() {
				t.Errorf("%d user.suspend events, %d suspendUser calls", len(events.Edges), suspends.Load())
			}
			rep, err := fsck.Run(ctx, svc, fsck.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Issues) != 0 {
				t.Errorf("fsck after the storm: %+v", rep.Issues)
			}
		})
	}
}

// TestSuspendCrashPoints kills a suspension and its lifting at each of
// their steps, on both backends: the write's outcome is all or nothing
// — past the row's write the suspension is in force (the tokens not
// ended at suspend:written are refused from the registry:
// server.TestSuspendedTokenRefusedWithoutEnding); before it, nothing
// changed —, the repairer makes its audit event visible exactly when
// the row was written, and fsck finds nothing.
func TestSuspendCrashPoints(t *testing.T) {
	for _, b := range testenv.Backends() {
		for _, step := range []string{org.StepAuditRecorded, suspend.StepWritten, org.StepAuditVisible} {
			t.Run(b.Name+"/"+step, func(t *testing.T) {
				ctx := t.Context()
				st := domaintest.OwnStore(t, b)
				f := domaintest.NewFaults()
				const grace = 50 * time.Millisecond
				svc := domaintest.Quiet(st, domain.WithStepHook(f.Hook), domain.WithRepairGrace(grace))
				if err := svc.Start(ctx); err != nil {
					t.Fatal(err)
				}
				defer svc.Close(context.Background())
				mod := mustUser(t, svc, uniq("mod")).ID
				bob := mustUser(t, svc, uniq("bob")).ID
				modCtx := audit.WithSource(ctx, mod, "crash")
				count := func(action string) int {
					t.Helper()
					hundred := weibo.MaxPageSize
					page, err := svc.Org.Audit.Page(ctx, audit.Filter{Action: action, Target: new(org.UserNode(bob))}, &hundred, nil)
					if err != nil {
						t.Fatal(err)
					}
					return len(page.Edges)
				}
				settle := func() {
					t.Helper()
					time.Sleep(2 * grace) // past the repair grace: the repairer decides
					if _, err := svc.Writes.Repair(ctx); err != nil {
						t.Fatal(err)
					}
					rep, err := fsck.Run(ctx, svc, fsck.Options{RepairGrace: grace})
					if err != nil {
						t.Fatal(err)
					}
					if len(rep.Issues) != 0 {
						t.Errorf("fsck: %+v", rep.Issues)
					}
				}

				f.Arm(step)
				_, err := svc.Suspensions.Suspend(modCtx, bob, nil, "crash")
				if !errors.Is(err, domaintest.ErrInjected) {
					t.Fatalf("suspend: %v, want the injected failure", err)
				}
				written := step != org.StepAuditRecorded
				if err := svc.Suspensions.Registry().Load(ctx); err != nil {
					t.Fatal(err)
				}
				if got := svc.Suspensions.Suspended(bob, time.Now().UnixMilli()); got != written {
					t.Fatalf("suspended %v after a suspend killed at %s", got, step)
				}
				settle()
				if want := map[bool]int{true: 1, false: 0}[written]; count(suspend.ActionSuspend) != want {
					t.Fatalf("%d user.suspend events after a suspend killed at %s, want %d", count(suspend.ActionSuspend), step, want)
				}
				if !written {
					if _, err := svc.Suspensions.Suspend(modCtx, bob, nil, "again"); err != nil {
						t.Fatal(err)
					}
				}

				f.Arm(step)
				err = svc.Suspensions.Unsuspend(modCtx, bob)
				if !errors.Is(err, domaintest.ErrInjected) {
					t.Fatalf("unsuspend: %v, want the injected failure", err)
				}
				if err := svc.Suspensions.Registry().Load(ctx); err != nil {
					t.Fatal(err)
				}
				if got := svc.Suspensions.Suspended(bob, time.Now().UnixMilli()); got == written {
					t.Fatalf("suspended %v after an unsuspend killed at %s", got, step)
				}
				settle()
				if want := map[bool]int{true: 1, false: 0}[written]; count(suspend.ActionUnsuspend) != want {
					t.Fatalf("%d user.unsuspend events after an unsuspend killed at %s, want %d", count(suspend.ActionUnsuspend), step, want)
				}
			})
		}
	}
}

// TestHybridTimelineHidesSuspended: with fan-out threshold 3, a viewer
// follows a large account (its posts merged at read time) and a small one
// (its posts in the inbox), on both backends. Suspending either takes its
// posts out of the viewer's home timeline — in one page and paged both
// ways by 2 and 3 —, lifting it brings them back exactly.
func TestHybridTimelineHidesSuspended(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := domaintest.OwnStore(t, b)
			svc := domaintest.Quiet(st, domain.WithFanoutThreshold(3))
			if err := svc.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer svc.Close(context.Background())
			h := &hybridWorld{t: t, svc: svc, st: st, follows: map[weibo.UserID]map[weibo.UserID]bool{}, posts: map[weibo.UserID][]weibo.PostID{}}
			user := func(name string) weibo.UserID { return mustUser(t, svc, uniq(name)).ID }
			big, small, v, f1, f2 := user("big"), user("small"), user("v"), user("f1"), user("f2")
			for _, f := range []weibo.UserID{v, f1, f2} {
				h.follow(f, big)
			}
			h.follow(v, small)
			h.flush()
			if l, _ := h.large(big); !l {
				t.Fatal("big is not large")
			}
			for range 3 {
				for _, a := range []weibo.UserID{big, small, v} {
					h.publish(a)
					time.Sleep(time.Millisecond)
				}
			}
			h.flush()
			h.check("before", v)
			for _, who := range []weibo.UserID{big, small} {
				if _, err := svc.Suspensions.Suspend(ctx, who, nil, ""); err != nil {
					t.Fatal(err)
				}
				delete(h.follows[v], who) // the recomputation without who's posts
				h.check(fmt.Sprintf("%v suspended", who), v)
				if err := svc.Suspensions.Unsuspend(ctx, who); err != nil {
					t.Fatal(err)
				}
				h.follows[v][who] = true
				h.check(fmt.Sprintf("%v unsuspended", who), v)
			}
		})
	}
}
