package fanout_test

import (
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
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/fanout"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestFanoutReplayAddsNothing fans a post out, then makes its fan-out
// run again, as a sweep that finds its outbox row again does (the row
// written back with a request time): a gateway started on the store
// delivers the post to every fan exactly once, clears the outbox row, and
// the fans' home timelines hold the post once. (A publish killed before
// its fan-out ran, which the next gateway's sweep delivers, is
// TestPublishConformance's, in weibo/feed.)
func TestFanoutReplayAddsNothing(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := b.Open(t)
			if err := tables.Migrate(ctx, st); err != nil {
				t.Fatal(err)
			}
			first := domaintest.Quiet(st)
			author, fans := authorWithFans(t, first, "", 3)
			post, err := first.Feed.Publish(ctx, author.ID, "fanned out twice")
			if err != nil {
				t.Fatal(err)
			}
			for round, replay := range []bool{false, true} {
				next := first
				if replay {
					next = domaintest.Quiet(st)
					if err := st.Put(ctx, &hbase.Put{Table: tables.Outbox, Row: tables.OutboxKey(post.ID),
						Values: hbase.Values{tables.FamOutbox: {tables.ColOutboxAt: tables.U64(1)}}}); err != nil {
						t.Fatal(err)
					}
				}
				if err := next.Start(ctx); err != nil {
					t.Fatal(err)
				}
				if err := next.FlushFanout(ctx); err != nil {
					t.Fatal(err)
				}
				if err := next.Close(ctx); err != nil {
					t.Fatal(err)
				}
				for _, f := range fans {
					if n := domaintest.InboxHas(t, next, f.ID, post.ID); n != 1 {
						t.Fatalf("round %d: fan %s has the post %d times, want 1", round, f.Username, n)
					}
				}
				if r, err := st.Get(ctx, &hbase.Get{Table: tables.Outbox, Row: tables.OutboxKey(post.ID)}); err != nil || r.Exists() {
					t.Fatalf("round %d: outbox row left after the fan-out (%v)", round, err)
				}
			}
			page, err := domaintest.Quiet(st).Timeline.HomeTimeline(ctx, fans[1].ID, weibo.Page{})
			if err != nil || len(page.Edges) != 1 || page.Edges[0].Post.ID != post.ID {
				t.Fatalf("fan's home timeline = %+v, %v", page, err)
			}
		})
	}
}

// TestFanoutSettlesRacingUnfollow makes a fan's unfollow (and, in one
// case, a new follow) run completely between a fan-out's read of the fans
// list and its inbox write, the race settleFanout exists for: the hook at
// StepFanoutWritten (after the first batch's inbox rows) runs the unfollow,
// which removes the post, and then writes the fan's inbox row again, as the
// fan-out's write would land were it slower than the whole unfollow. Once
// the fan-out is done, the inbox must agree with the attends row at once,
// without the repairer (its grace is an hour): the row is gone after the
// unfollow, there after the follow again. The fans are batched three at a
// time, so the racing fan sits at the start, in the middle or at the end of
// its batch.
func TestFanoutSettlesRacingUnfollow(t *testing.T) {
	cases := []struct {
		name     string
		racer    int  // index of the racing fan, in id order
		refollow bool // the fan follows again after the unfollow
		want     int  // rows of the post in the racer's inbox afterwards
	}{
		{"unfollowed, middle of the batch", 1, false, 0},
		{"unfollowed, end of the batch", 2, false, 0},
		{"unfollowed and followed again, start of the batch", 0, true, 1},
	}
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := domaintest.OwnStore(t, b)
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					ctx := t.Context()
					var svc *domain.Domain
					var racer weibo.UserID
					var author *weibo.User
					var fired atomic.Bool
					hook := func(_ context.Context, step string) error {
						if step != fanout.StepWritten || !fired.CompareAndSwap(false, true) {
							return nil
						}
						if _, err := svc.Follows.Unfollow(ctx, racer, author.ID); err != nil {
							return err
						}
						if c.refollow {
							if _, err := svc.Follows.Follow(ctx, racer, author.ID); err != nil {
								return err
							}
						}
						var posts []*hbase.Put
						err := st.Scan(ctx, &hbase.Scan{Table: tables.Outbox, Prefix: tables.ContentPrefix(author.ID)}, func(r *hbase.Result) error {
							if id, ok := tables.DecodeOutboxKey(r.Row); ok {
								posts = append(posts, &hbase.Put{Table: tables.Inbox, Row: tables.InboxKey(racer, id),
									Values: hbase.Values{tables.FamInbox: {tables.ColInboxAt: {}}}})
							}
							return nil
						})
						if err == nil {
							err = st.PutMany(ctx, posts)
						}
						return err
					}
					svc = domaintest.Quiet(st, domain.WithStepHook(hook), domain.WithRepairGrace(time.Hour),
						domain.WithFanoutBatch(3), domain.WithFanoutWorkers(1))
					if err := svc.Start(ctx); err != nil {
						t.Fatal(err)
					}
					defer svc.Close(context.Background())
					author = domaintest.MustUser(t, svc, domaintest.Uniq("raceauthor"))
					var fans []weibo.UserID
					for i := range 5 {
						fan := domaintest.MustUser(t, svc, domaintest.Uniq(fmt.Sprintf("racefan%d", i)))
						if _, err := svc.Follows.Follow(ctx, fan.ID, author.ID); err != nil {
							t.Fatal(err)
						}
						fans = append(fans, fan.ID)
					}
					slices.Sort(fans)
					racer = fans[c.racer]
					post, err := svc.Feed.Publish(ctx, author.ID, "raced")
					if err != nil {
						t.Fatal(err)
					}
					if err := svc.FlushFanout(ctx); err != nil {
						t.Fatal(err)
					}
					if !fired.Load() {
						t.Fatal("the hook never ran")
					}
					for _, fan := range fans {
						want := 1
						if fan == racer {
							want = c.want
						}
						if n := domaintest.InboxHas(t, svc, fan, post.ID); n != want {
							t.Errorf("fan %v (racer %v) has the post %d times, want %d", fan, racer, n, want)
						}
					}
				})
			}
		})
	}
}
