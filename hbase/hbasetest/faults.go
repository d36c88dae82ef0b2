package hbasetest

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/weibohbase/gateway/hbase"
)

// Faults is a store whose backend can be made to go away: while it is down
// every data call (Ping included) waits Hang, as a call waits for its call
// timeout when HBase does not answer, and then fails with an error wrapping
// hbase.ErrUnavailable of kind timeout. It is for tests of what sits above
// a store — the circuit breaker, the fan-out's pause, the GraphQL error
// mapping — on top of a real backend (tests of the backends themselves use
// real outages). It implements hbase.Prober: a probe fails while down and
// is counted in Probes.
type Faults struct {
	hbase.StoreAdmin
	// Hang is how long a call waits before it fails while down (or until
	// its context ends).
	Hang time.Duration
	// Probes counts the calls of Probe.
	Probes atomic.Int64

	down atomic.Bool
}

// WithFaults wraps st; it starts up, with Hang 50 ms.
func WithFaults(st hbase.StoreAdmin) *Faults {
	return &Faults{StoreAdmin: st, Hang: 50 * time.Millisecond}
}

// SetDown makes the backend go away (true) or come back (false).
func (f *Faults) SetDown(down bool) { f.down.Store(down) }

// Unwrap returns the wrapped store.
func (f *Faults) Unwrap() hbase.StoreAdmin { return f.StoreAdmin }

// faultError is the error of a call while down.
type faultError struct{ op string }

func (e *faultError) Error() string {
	return fmt.Sprintf("%v: %s: no answer within the call timeout (hbasetest.Faults is down)", hbase.ErrUnavailable, e.op)
}

func (e *faultError) Unwrap() error     { return hbase.ErrUnavailable }
func (e *faultError) ErrorKind() string { return hbase.KindTimeout }

// fail returns nil when up; when down it waits Hang (or until ctx ends) and
// returns the outage's error.
func (f *Faults) fail(ctx context.Context, op string) error {
	if !f.down.Load() {
		return nil
	}
	t := time.NewTimer(f.Hang)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
	}
	return &faultError{op: op}
}

// Probe fails like a call while down and succeeds otherwise.
func (f *Faults) Probe(ctx context.Context) error {
	f.Probes.Add(1)
	return f.fail(ctx, "probe")
}

// Ping fails while down, else pings the store.
func (f *Faults) Ping(ctx context.Context) error {
	if err := f.fail(ctx, "ping"); err != nil {
		return err
	}
	return f.StoreAdmin.Ping(ctx)
}

// Get fails while down, else reads.
func (f *Faults) Get(ctx context.Context, g *hbase.Get) (*hbase.Result, error) {
	if err := f.fail(ctx, "get"); err != nil {
		return nil, err
	}
	return f.StoreAdmin.Get(ctx, g)
}

// GetMany fails while down, else reads.
func (f *Faults) GetMany(ctx context.Context, gets []*hbase.Get) ([]*hbase.Result, error) {
	if err := f.fail(ctx, "get_many"); err != nil {
		return nil, err
	}
	return f.StoreAdmin.GetMany(ctx, gets)
}

// Put fails while down, else writes.
func (f *Faults) Put(ctx context.Context, p *hbase.Put) error {
	if err := f.fail(ctx, "put"); err != nil {
		return err
	}
	return f.StoreAdmin.Put(ctx, p)
}

// PutMany fails while down, else writes.
func (f *Faults) PutMany(ctx context.Context, puts []*hbase.Put) error {
	if err := f.fail(ctx, "put_many"); err != nil {
		return err
	}
	return f.StoreAdmin.PutMany(ctx, puts)
}

// Delete fails while down, else deletes.
func (f *Faults) Delete(ctx context.Context, d *hbase.Delete) error {
	if err := f.fail(ctx, "delete"); err != nil {
		return err
	}
	return f.StoreAdmin.Delete(ctx, d)
}

// DeleteMany fails while down, else deletes.
func (f *Faults) DeleteMany(ctx context.Context, dels []*hbase.Delete) error {
	if err := f.fail(ctx, "delete_many"); err != nil {
		return err
	}
	return f.StoreAdmin.DeleteMany(ctx, dels)
}

// Scan fails while down, else scans.
func (f *Faults) Scan(ctx context.Context, s *hbase.Scan, fn func(*hbase.Result) error) error {
	if err := f.fail(ctx, "scan"); err != nil {
		return err
	}
	return f.StoreAdmin.Scan(ctx, s, fn)
}

// CheckAndPut fails while down, else writes.
func (f *Faults) CheckAndPut(ctx context.Context, p *hbase.Put, fam, q string, exp []byte) (bool, error) {
	if err := f.fail(ctx, "check_and_put"); err != nil {
		return false, err
	}
	return f.StoreAdmin.CheckAndPut(ctx, p, fam, q, exp)
}

// MutateRow fails while down, else mutates.
func (f *Faults) MutateRow(ctx context.Context, m *hbase.RowMutation) error {
	if err := f.fail(ctx, "mutate_row"); err != nil {
		return err
	}
	return f.StoreAdmin.MutateRow(ctx, m)
}

// CheckAndDelete fails while down, else deletes.
func (f *Faults) CheckAndDelete(ctx context.Context, d *hbase.Delete, fam, q string, exp []byte) (bool, error) {
	if err := f.fail(ctx, "check_and_delete"); err != nil {
		return false, err
	}
	return f.StoreAdmin.CheckAndDelete(ctx, d, fam, q, exp)
}

// Increment fails while down, else counts.
func (f *Faults) Increment(ctx context.Context, inc *hbase.Increment) (int64, error) {
	if err := f.fail(ctx, "increment"); err != nil {
		return 0, err
	}
	return f.StoreAdmin.Increment(ctx, inc)
}
