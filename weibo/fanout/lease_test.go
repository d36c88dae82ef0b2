package fanout_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/hbase/hbasetest"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/fanout"
	"github.com/weibohbase/gateway/weibo/tables"
)

// fanoutsDone is the number of fan-outs finished so far in this process
// (observations of gateway_fanout_lag_seconds).
func fanoutsDone(t *testing.T) uint64 {
	t.Helper()
	var m dto.Metric
	if err := fanout.FanoutLag.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram().GetSampleCount()
}

// outboxed publishes n posts by a new author with fans through a service
// that never starts (its fan-outs stay in the outbox, as a crashed
// gateway's) and returns the fans and the posts.
func outboxed(t *testing.T, st hbase.Store, fans, n int) ([]*weibo.User, []weibo.PostID) {
	t.Helper()
	ctx := t.Context()
	crashed := domaintest.Quiet(st)
	author, us := authorWithFans(t, crashed, "l", fans)
	var posts []weibo.PostID
	for i := range n {
		p, err := crashed.Feed.Publish(ctx, author.ID, fmt.Sprintf("post %d", i))
		if err != nil {
			t.Fatal(err)
		}
		posts = append(posts, p.ID)
	}
	return us, posts
}

// authorWithFans registers through svc an author and fans users who
// follow them, named with prefix and a tag of their own.
func authorWithFans(t *testing.T, svc *domain.Domain, prefix string, fans int) (*weibo.User, []*weibo.User) {
	t.Helper()
	ctx := t.Context()
	tag := fmt.Sprintf("%d_%d", time.Now().UnixNano()%1e9, rand.IntN(1000))
	author, err := svc.Accounts.Register(ctx, prefix+"author_"+tag, "correct horse")
	if err != nil {
		t.Fatal(err)
	}
	var us []*weibo.User
	for i := range fans {
		f, err := svc.Accounts.Register(ctx, fmt.Sprintf("%sfan%d_%s", prefix, i, tag), "correct horse")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Follows.Follow(ctx, f.ID, author.ID); err != nil {
			t.Fatal(err)
		}
		us = append(us, f)
	}
	return author, us
}

func outboxRow(t *testing.T, st hbase.Store, id weibo.PostID) *hbase.Result {
	t.Helper()
	r, err := st.Get(t.Context(), &hbase.Get{Table: tables.Outbox, Row: tables.OutboxKey(id)})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func setLease(t *testing.T, st hbase.Store, id weibo.PostID, owner string, expires time.Time) {
	t.Helper()
	if err := st.Put(t.Context(), &hbase.Put{Table: tables.Outbox, Row: tables.OutboxKey(id), Values: hbase.Values{
		tables.FamOutbox: {tables.ColOutboxLease: tables.EncodeLease(owner, expires.UnixMilli())}}}); err != nil {
		t.Fatal(err)
	}
}

// TestFanoutLease checks that a post whose lease another live instance
// holds is left alone, and taken over once that lease has expired.
func TestFanoutLease(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := b.Open(t)
			if err := tables.Migrate(ctx, st); err != nil {
				t.Fatal(err)
			}
			fans, posts := outboxed(t, st, 2, 1)
			post := posts[0]
			setLease(t, st, post, "ghost", time.Now().Add(time.Hour))

			held := testutil.ToFloat64(fanout.FanoutLeases.WithLabelValues("held"))
			svc := domaintest.Quiet(st, domain.WithInstanceName("me"))
			if err := svc.Start(ctx); err != nil {
				t.Fatal(err)
			}
			if err := svc.FlushFanout(ctx); err != nil {
				t.Fatal(err)
			}
			_ = svc.Close(ctx)
			if n := domaintest.InboxHas(t, svc, fans[0].ID, post); n != 0 {
				t.Fatal("a post leased to another live instance was fanned out")
			}
			if !outboxRow(t, st, post).Exists() {
				t.Fatal("the outbox row of a post leased elsewhere is gone")
			}
			if got := testutil.ToFloat64(fanout.FanoutLeases.WithLabelValues("held")); got != held {
				// The sweep skips it without even trying for the lease.
				t.Logf("held leases counted: %v → %v", held, got)
			}

			setLease(t, st, post, "ghost", time.Now().Add(-time.Second)) // the ghost died
			next := domaintest.Quiet(st, domain.WithInstanceName("me"))
			if err := next.Start(ctx); err != nil {
				t.Fatal(err)
			}
			if err := next.FlushFanout(ctx); err != nil {
				t.Fatal(err)
			}
			_ = next.Close(ctx)
			for _, f := range fans {
				if n := domaintest.InboxHas(t, next, f.ID, post); n != 1 {
					t.Errorf("after the lease expired: fan %s has the post %d times, want 1", f.Username, n)
				}
			}
			if outboxRow(t, st, post).Exists() {
				t.Error("outbox row left after taking the post over")
			}
		})
	}
}

// TestFanoutTwoInstances starts two instances at once on an outbox full of
// a crashed gateway's posts: both sweeps find every post, and every post is
// fanned out exactly once.
func TestFanoutTwoInstances(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := b.Open(t)
			if err := tables.Migrate(ctx, st); err != nil {
				t.Fatal(err)
			}
			fans, posts := outboxed(t, st, 3, 40)
			before := fanoutsDone(t)
			var wg sync.WaitGroup
			for _, name := range []string{"a", "b"} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					svc := domaintest.Quiet(st, domain.WithInstanceName(name), domain.WithFanoutWorkers(4))
					if err := svc.Start(ctx); err != nil {
						t.Error(err)
						return
					}
					if err := svc.FlushFanout(ctx); err != nil {
						t.Error(err)
					}
					_ = svc.Close(ctx)
				}()
			}
			wg.Wait()
			if done := fanoutsDone(t) - before; done != uint64(len(posts)) {
				t.Errorf("%d fan-outs done for %d posts, want exactly one each", done, len(posts))
			}
			for _, id := range posts {
				for _, f := range fans {
					if n := domaintest.InboxHas(t, domaintest.Quiet(st), f.ID, id); n != 1 {
						t.Fatalf("fan %s has post %v %d times, want 1", f.Username, id, n)
					}
				}
				if outboxRow(t, st, id).Exists() {
					t.Fatalf("outbox row of %v left", id)
				}
			}
		})
	}
}

// TestFanoutPausesWhileStoreAway takes the store away under a running
// instance with a circuit breaker: its outbox sweep waits instead of
// failing, and when the store is back it sweeps at once and fans out what
// a crashed gateway left meanwhile.
func TestFanoutPausesWhileStoreAway(t *testing.T) {
	ctx := t.Context()
	raw := testenv.Embedded(t)
	if err := tables.Migrate(ctx, raw); err != nil {
		t.Fatal(err)
	}
	faults := hbasetest.WithFaults(raw)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	br := hbase.WithBreaker(faults, hbase.BreakerLogger(quiet), hbase.BreakerOpenFor(100*time.Millisecond),
		hbase.BreakerHealthInterval(20*time.Millisecond))
	t.Cleanup(func() { _ = br.Close() })
	svc := domain.New(br, domain.WithLogger(quiet), domain.WithBcryptCost(4), domain.WithOutboxSweep(200*time.Millisecond))
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close(context.Background()) })

	faults.SetDown(true)
	for br.Ready() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	// A crashed gateway's posts land in the outbox (written past the outage).
	fans, posts := outboxed(t, raw, 2, 3)
	refused := func() float64 {
		return testutil.ToFloat64(hbase.StoreErrors.WithLabelValues(hbase.BackendEmbedded, "scan", hbase.KindBreakerOpen))
	}
	r0 := refused()
	time.Sleep(time.Second) // five sweep intervals
	if n := refused() - r0; n > 0 {
		t.Errorf("the paused sweep still sent %v scans into the open breaker", n)
	}

	faults.SetDown(false)
	back := time.Now()
	reader := domaintest.Quiet(raw)
	for _, id := range posts {
		for _, f := range fans {
			for domaintest.InboxHas(t, reader, f.ID, id) != 1 {
				if time.Since(back) > 5*time.Second {
					t.Fatalf("post %v not in fan %s's inbox 5 s after the store came back", id, f.Username)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
	}
	t.Logf("fanned out %v after the store came back", time.Since(back).Round(time.Millisecond))
}
