package domaintest

import (
	"context"
	"io"
	"log/slog"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/tables"
)

// OwnStore returns a migrated store holding nothing but this test's rows:
// a fresh in-memory embedded store, or on the real HBase a namespace of
// its own (dropped at the end), so that fsck over the whole store checks
// only what this test wrote.
func OwnStore(t *testing.T, b testenv.Backend) hbase.StoreAdmin {
	t.Helper()
	st := b.OpenOwn(t, tables.Namespace, "it")
	if err := tables.Migrate(t.Context(), st); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return st
}

// Quiet returns a domain over st (migrated already) with a cheap bcrypt
// cost, no outbox sweep and a discarded log, then opts.
func Quiet(st hbase.Store, opts ...domain.Option) *domain.Domain {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	return domain.New(st, append([]domain.Option{domain.WithLogger(log), domain.WithBcryptCost(4), domain.WithOutboxSweep(0)}, opts...)...)
}

// Jittery delays every data call of its store by a random 0-2 ms (half of
// them not at all), so that on the embedded store, whose calls take
// microseconds, concurrent calls interleave at every step as they do over
// the network to HBase: without it a storm on the embedded store would
// hardly ever run two writes of one pair at once.
type Jittery struct{ hbase.StoreAdmin }

func (j Jittery) pause() {
	if rand.IntN(2) == 0 {
		time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond)
	}
}

// Get is the store's Get after a pause.
func (j Jittery) Get(ctx context.Context, g *hbase.Get) (*hbase.Result, error) {
	j.pause()
	return j.StoreAdmin.Get(ctx, g)
}

// GetMany is the store's GetMany after a pause.
func (j Jittery) GetMany(ctx context.Context, gs []*hbase.Get) ([]*hbase.Result, error) {
	j.pause()
	return j.StoreAdmin.GetMany(ctx, gs)
}

// Put is the store's Put after a pause.
func (j Jittery) Put(ctx context.Context, p *hbase.Put) error {
	j.pause()
	return j.StoreAdmin.Put(ctx, p)
}

// PutMany is the store's PutMany after a pause.
func (j Jittery) PutMany(ctx context.Context, ps []*hbase.Put) error {
	j.pause()
	return j.StoreAdmin.PutMany(ctx, ps)
}

// Delete is the store's Delete after a pause.
func (j Jittery) Delete(ctx context.Context, d *hbase.Delete) error {
	j.pause()
	return j.StoreAdmin.Delete(ctx, d)
}

// DeleteMany is the store's DeleteMany after a pause.
func (j Jittery) DeleteMany(ctx context.Context, ds []*hbase.Delete) error {
	j.pause()
	return j.StoreAdmin.DeleteMany(ctx, ds)
}

// Scan is the store's Scan after a pause.
func (j Jittery) Scan(ctx context.Context, sc *hbase.Scan, fn func(*hbase.Result) error) error {
	j.pause()
	return j.StoreAdmin.Scan(ctx, sc, fn)
}

// CheckAndPut is the store's CheckAndPut after a pause.
func (j Jittery) CheckAndPut(ctx context.Context, p *hbase.Put, fam, qual string, expected []byte) (bool, error) {
	j.pause()
	return j.StoreAdmin.CheckAndPut(ctx, p, fam, qual, expected)
}

// CheckAndDelete is the store's CheckAndDelete after a pause.
func (j Jittery) CheckAndDelete(ctx context.Context, d *hbase.Delete, fam, qual string, expected []byte) (bool, error) {
	j.pause()
	return j.StoreAdmin.CheckAndDelete(ctx, d, fam, qual, expected)
}

// Increment is the store's Increment after a pause.
func (j Jittery) Increment(ctx context.Context, inc *hbase.Increment) (int64, error) {
	j.pause()
	return j.StoreAdmin.Increment(ctx, inc)
}
