package domain_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weibohbase/gateway/bus"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/tables"
)

// switchBus is an in-process bus whose connection the test takes away
// and brings back: while away, Connected is false (events still pass, as
// they would not over NATS; the watcher must not count on them).
type switchBus struct {
	*bus.Local
	down atomic.Bool
	mu   sync.Mutex
	gap  chan struct{}
}

func newSwitchBus() *switchBus { return &switchBus{Local: bus.NewLocal(), gap: make(chan struct{})} }

func (b *switchBus) Connected() bool { return !b.down.Load() && b.Local.Connected() }

func (b *switchBus) Interrupted() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.gap
}

// away marks the bus disconnected and closes its Interrupted channel.
func (b *switchBus) away() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.down.Store(true)
	close(b.gap)
	b.gap = make(chan struct{})
}

func (b *switchBus) back() { b.down.Store(false) }

// TestWatchTimelineIdleReadsNothing: homeTimelineUpdates' watcher, with a
// 20 ms polling interval, reads the store not once in a second of idleness
// while its bus is connected; while the bus is away it polls (and a post
// written by an instance that does not share the bus arrives); once the
// bus is back it stops reading again. Given no bus, it polls.
func TestWatchTimelineIdleReadsNothing(t *testing.T) {
	const interval = 20 * time.Millisecond
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := hbase.Instrument(b.Open(t))
			if err := tables.Migrate(ctx, st); err != nil {
				t.Fatal(err)
			}
			sb := newSwitchBus()
			svc := domaintest.Quiet(st, domain.WithBus(sb))
			deaf := domaintest.Quiet(st) // its own bus: nothing it writes reaches svc's
			for _, s := range []*domain.Domain{svc, deaf} {
				if err := s.Start(ctx); err != nil {
					t.Fatal(err)
				}
				defer s.Close(ctx)
			}
			tag := fmt.Sprintf("%d_%d", time.Now().UnixNano()%1e9, rand.IntN(1000))
			viewer, err := svc.Accounts.Register(ctx, "idle_"+tag, "correct horse")
			if err != nil {
				t.Fatal(err)
			}
			var reads atomic.Int64
			counted := hbase.WithCallCounter(ctx, func(context.Context, string, string) { reads.Add(1) })
			// readsIn counts the watcher's store calls over d.
			readsIn := func(d time.Duration) int64 {
				n := reads.Load()
				time.Sleep(d)
				return reads.Load() - n
			}
			// settle waits until the reads a wake-up started are done (a
			// publish wakes the watcher twice: in process and over the bus).
			settle := func() {
				t.Helper()
				for range 50 {
					if readsIn(200*time.Millisecond) == 0 {
						return
					}
				}
				t.Fatal("the watcher never stopped reading")
			}
			next := func(posts <-chan *feed.Post, want weibo.PostID, why string) {
				t.Helper()
				select {
				case p := <-posts:
					if p.ID != want {
						t.Fatalf("%s: got %s, want %s", why, p.ID, want)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("%s: no post", why)
				}
			}

			posts, err := svc.Timeline.WatchTimeline(counted, viewer.ID, interval, nil)
			if err != nil {
				t.Fatal(err)
			}
			p, err := svc.Feed.Publish(ctx, viewer.ID, "woken by the bus")
			if err != nil {
				t.Fatal(err)
			}
			next(posts, p.ID, "bus up")
			settle()
			if n := readsIn(time.Second); n != 0 {
				t.Errorf("bus up: an idle watcher made %d store calls in 1 s (polling every %v)", n, interval)
			}

			sb.away()
			if n := readsIn(300 * time.Millisecond); n < 3 {
				t.Errorf("bus away: the watcher made %d store calls in 300 ms, want a poll every %v", n, interval)
			}
			p, err = deaf.Feed.Publish(ctx, viewer.ID, "seen by polling")
			if err != nil {
				t.Fatal(err)
			}
			next(posts, p.ID, "bus away")

			sb.back()
			settle() // the next poll finds the bus back
			if n := readsIn(time.Second); n != 0 {
				t.Errorf("bus back: an idle watcher made %d store calls in 1 s", n)
			}

			// Given no bus, the watcher cannot hear other instances: it polls.
			if _, err := deaf.Timeline.WatchTimeline(counted, viewer.ID, interval, nil); err != nil {
				t.Fatal(err)
			}
			if n := readsIn(300 * time.Millisecond); n < 3 {
				t.Errorf("no bus: the watcher made %d store calls in 300 ms, want a poll every %v", n, interval)
			}
		})
	}
}
