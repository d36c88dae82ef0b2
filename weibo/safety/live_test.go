package safety_test

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weibohbase/gateway/bus"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/safety"
	"github.com/weibohbase/gateway/weibo/tables"
)

// countGets counts the Gets of a store.
type countGets struct {
	hbase.Store
	n atomic.Int64
}

func (s *countGets) Get(ctx context.Context, g *hbase.Get) (*hbase.Result, error) {
	s.n.Add(1)
	return s.Store.Get(ctx, g)
}

// TestLiveSet: a Live Set reads the owner's row when it starts and again
// only after a change the bus carries (a block, a mute); a timed mute
// ends at its time without a read; while the bus is away every Current
// reads.
func TestLiveSet(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := b.OpenOwn(t, tables.Namespace, "safetylive")
			if err := tables.Migrate(ctx, st); err != nil {
				t.Fatal(err)
			}
			lb := bus.NewLocal()
			d := domain.New(st, domain.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
				domain.WithBcryptCost(4), domain.WithOutboxSweep(0), domain.WithBus(lb))
			owner, err := d.Accounts.Register(ctx, "owner", "correct horse")
			if err != nil {
				t.Fatal(err)
			}
			other, err := d.Accounts.Register(ctx, "other", "correct horse")
			if err != nil {
				t.Fatal(err)
			}
			var clock atomic.Int64
			clock.Store(time.Now().UnixMilli())
			cs := &countGets{Store: st}
			l, err := safety.WatchSet(ctx, cs, lb, owner.ID, clock.Load)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Stop()
			current := func(reads int64) *safety.Set {
				t.Helper()
				set, err := l.Current(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if n := cs.n.Load(); n != reads {
					t.Fatalf("%d reads of the row so far, want %d", n, reads)
				}
				return set
			}
			if set := current(1); set.Blocks(other.ID) || set.Mutes(other.ID) {
				t.Fatal("a new user's Set hides someone")
			}
			if _, err := d.Safety.Block(ctx, owner.ID, other.ID); err != nil {
				t.Fatal(err)
			}
			if set := current(2); !set.Blocks(other.ID) {
				t.Fatal("the block is not in the Set after its change")
			}
			current(2)
			if _, err := d.Safety.Unblock(ctx, owner.ID, other.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := d.Safety.Mute(ctx, owner.ID, other.ID, new(60), true); err != nil {
				t.Fatal(err)
			}
			if set := current(3); set.Blocks(other.ID) || !set.MutesNotifications(other.ID) {
				t.Fatal("the unblock and the mute are not in the Set")
			}
			clock.Add(61_000)
			if set := current(3); set.Mutes(other.ID) {
				t.Fatal("the timed mute has not ended at its time")
			}
			// The bus away: every Current reads.
			_ = lb.Close()
			current(4)
			current(5)
		})
	}
}
