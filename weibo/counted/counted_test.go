package counted_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo/check"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/tables"
)

// toy is a counted relation of the test's own: authority a cell of the
// owner's roles row (family c, qualifier "a<other>"), no dependent row,
// counter the row's memberCount cell — enough to show that a registered
// relation is settled and recounted by Repair with no code of its own in
// the protocol.
type toy struct {
	w       *counted.Protocol
	st      hbase.Store
	settled atomic.Int32
	extra   atomic.Value // the extra bytes the last Settle got
}

const toyCounter counted.CounterKind = "toyCount"

func (x *toy) register() *counted.Relation {
	rel := &counted.Relation{
		Name:     "toy",
		Marker:   tables.PendingRole,
		Counters: func(owner, _ uint64) []counted.Counter { return []counted.Counter{{Kind: toyCounter, Owner: owner}} },
		Settle: func(_ context.Context, _, _ uint64, extra []byte) error {
			x.settled.Add(1)
			x.extra.Store(string(extra))
			return nil
		},
	}
	x.w.Register(rel)
	x.w.RegisterCounter(&counted.CounterSpec{
		Kind: toyCounter,
		Cell: func(c counted.Counter) (string, []byte, string, string) {
			return tables.Roles, tables.RoleKey(tables.RoleID(c.Owner)), tables.ColMemberCount, tables.ColMemberSeq
		},
		Count: func(ctx context.Context, c counted.Counter) (int64, bool, error) {
			r, err := x.st.Get(ctx, &hbase.Get{Table: tables.Roles, Row: tables.RoleKey(tables.RoleID(c.Owner)), Families: []string{tables.FamCount}})
			n := int64(0)
			for _, c := range r.Family(tables.FamCount) {
				if len(c.Qualifier) > 0 && c.Qualifier[0] == 'a' {
					n++
				}
			}
			return n, r.Exists(), err
		},
	})
	return rel
}

// TestRegisteredRelationRepaired: a write of a registered relation that
// dies after its authority changed (before counting) is settled and
// recounted by Repair once its marker is older than the grace, and the
// marker is deleted; a younger marker is left alone and keeps the
// counter busy.
func TestRegisteredRelationRepaired(t *testing.T) {
	ctx := t.Context()
	st := testenv.Embedded(t)
	if err := tables.Migrate(ctx, st); err != nil {
		t.Fatal(err)
	}
	var offset atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	w := counted.New(st, counted.WithClock(now), counted.WithRepairGrace(time.Minute),
		counted.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	x := &toy{w: w, st: st}
	rel := x.register()

	const owner, other = 7, 9
	row := tables.RoleKey(owner)
	if err := st.Put(ctx, &hbase.Put{Table: tables.Roles, Row: row, Values: hbase.Values{tables.FamCount: {tables.ColMemberCount: tables.EncodeCounter(5)}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.BeginWith(ctx, rel, owner, other, []byte("post 42")); err != nil {
		t.Fatal(err)
	}
	// The authority changes; then the write dies: no Count, no End.
	if err := st.Put(ctx, &hbase.Put{Table: tables.Roles, Row: row, Values: hbase.Values{tables.FamCount: {"a9": {}}}}); err != nil {
		t.Fatal(err)
	}

	// Young: busy, left alone.
	if res, err := w.RecountCounters(ctx, []counted.Counter{{Kind: toyCounter, Owner: owner}}); err != nil || res[0].Done {
		t.Fatalf("recount while the write may run: %+v, %v; want not done", res, err)
	}
	if rep, err := w.Repair(ctx); err != nil || rep.Dead != 0 {
		t.Fatalf("repair of a young marker: %+v, %v", rep, err)
	}

	offset.Store(int64(2 * time.Minute))
	rep, err := w.Repair(ctx)
	if err != nil || rep.Dead != 1 || rep.Repaired != 1 {
		t.Fatalf("repair: %+v, %v; want 1 dead, 1 repaired", rep, err)
	}
	if x.settled.Load() != 1 || x.extra.Load() != "post 42" {
		t.Errorf("settled %d times with %q, want once with the marker's extra", x.settled.Load(), x.extra.Load())
	}
	r, err := st.Get(ctx, &hbase.Get{Table: tables.Roles, Row: row})
	if err != nil {
		t.Fatal(err)
	}
	if got := tables.CounterValue(r, tables.ColMemberCount); got != 1 {
		t.Errorf("counter %d after the repair, want the recount 1", got)
	}
	left, err := hbase.ScanAll(ctx, st, &hbase.Scan{Table: tables.Pending})
	if err != nil || len(left) != 0 {
		t.Errorf("markers left: %d, %v", len(left), err)
	}
}

// TestRegistry: registration is checked, and an unregistered counter is
// an error of RecountCounters, not a silent skip.
func TestRegistry(t *testing.T) {
	st := testenv.Embedded(t)
	w := counted.New(st)
	x := &toy{w: w, st: st}
	x.register()
	start := func(*check.Pass) check.Run { return check.Run{} }
	w.RegisterCheck(check.Check{Name: "b", Start: start})
	w.RegisterCheck(check.Check{Name: "a", Start: start})
	if cs := w.Checks(); len(cs) != 2 || cs[0].Name != "b" || cs[1].Name != "a" {
		t.Errorf("checks %+v, want b then a, in the order registered", cs)
	}
	for name, f := range map[string]func(){
		"check twice":         func() { w.RegisterCheck(check.Check{Name: "a", Start: start}) },
		"check without Start": func() { w.RegisterCheck(check.Check{Name: "c"}) },
		"same marker twice":   func() { x.register() },
		"incomplete":          func() { w.Register(&counted.Relation{Name: "half", Marker: tables.PendingFollow}) },
		"counter twice": func() {
			w.RegisterCounter(&counted.CounterSpec{Kind: toyCounter, Cell: func(counted.Counter) (string, []byte, string, string) { return "", nil, "", "" }, Count: func(context.Context, counted.Counter) (int64, bool, error) { return 0, false, nil }})
		},
		"marker-less w/o InFlight": func() {
			w.Register(&counted.Relation{Name: "x", Counters: func(uint64, uint64) []counted.Counter { return nil }})
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
	if _, err := w.RecountCounters(t.Context(), []counted.Counter{{Kind: "nope", Owner: 1}}); err == nil {
		t.Error("recount of an unregistered counter: no error")
	}
}

// TestSettle: Settle writes until the read agrees, and gives up with
// ErrUnsettled when the authority keeps flipping.
func TestSettle(t *testing.T) {
	ctx := t.Context()
	var writes []bool
	authority := true
	got, err := counted.Settle(ctx, false, func(a, b bool) bool { return a == b },
		func(_ context.Context, s bool) error { writes = append(writes, s); return nil },
		func(context.Context) (bool, error) { return authority, nil })
	if err != nil || !got || len(writes) != 2 || writes[0] || !writes[1] {
		t.Errorf("settle to a changed authority: %v, %v, writes %v", got, err, writes)
	}
	var last bool // every read finds the authority changed since the write
	_, err = counted.Settle(ctx, false, func(a, b bool) bool { return a == b },
		func(_ context.Context, s bool) error { last = s; return nil },
		func(context.Context) (bool, error) { return !last, nil })
	if !errors.Is(err, counted.ErrUnsettled) {
		t.Errorf("flipping authority: %v, want ErrUnsettled", err)
	}
}
