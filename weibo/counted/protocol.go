package counted

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo/check"
	"github.com/weibohbase/gateway/weibo/tables"
)

// DefaultRepairGrace is the default of WithRepairGrace.
const DefaultRepairGrace = 60 * time.Second

// DefaultBatch is the default of WithBatch.
const DefaultBatch = 500

// Protocol runs counted writes on one store: their markers, budgets,
// counters and settles, the registered relations and counters, and the
// repairer. It is safe for concurrent use; register every relation and
// counter before the first write.
type Protocol struct {
	st    hbase.Store
	log   *slog.Logger
	now   func() time.Time
	grace time.Duration
	batch int
	hook  func(ctx context.Context, step string) error

	mu        sync.RWMutex
	relations map[tables.PendingKind]*Relation
	inFlight  []*Relation // relations whose markers live elsewhere (InFlight set)
	counters  map[CounterKind]*CounterSpec
	checks    []check.Check // the modules' fsck checks, in the order registered
	repairs   []RepairFunc  // more repairs of each pass, in the order registered
}

type options struct {
	logger *slog.Logger
	now    func() time.Time
	grace  time.Duration
	batch  int
	hook   func(ctx context.Context, step string) error
}

// Option configures a Protocol.
type Option func(*options)

// WithLogger sets the structured logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithClock replaces time.Now (tests). Every business area on the protocol
// reads the time through Now, so budgets and markers share one clock.
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// WithRepairGrace sets how old (by the writing process's clock) the marker
// of a counted write must be before the repairer treats the write as dead
// and repairs what it left (default DefaultRepairGrace). A write that is
// still running after half of it no longer changes its counters itself and
// leaves the recount to the repairer, so the grace must be well above the
// store's worst latency; clocks of the gateways sharing a store must agree
// to well within it.
func WithRepairGrace(d time.Duration) Option { return func(o *options) { o.grace = d } }

// WithBatch sets how many rows one batched read or write of a recount or a
// bulk change holds (default DefaultBatch).
func WithBatch(n int) Option { return func(o *options) { o.batch = n } }

// WithStepHook installs a fault-injection hook for tests: fn is called at
// every named step of a counted write (Step, StepsOf, Relation.Steps) and
// between the two writes of every two-row change of the business areas,
// with the step's name; an
// error it returns aborts the write at that point, as a crash would. It
// exists to test that reads tolerate half-written pairs and that the
// repairer and fsck repair them; production code never sets it.
func WithStepHook(fn func(ctx context.Context, step string) error) Option {
	return func(o *options) { o.hook = fn }
}

// New returns a Protocol over st.
func New(st hbase.Store, opts ...Option) *Protocol {
	o := options{logger: slog.Default(), now: time.Now, grace: DefaultRepairGrace, batch: DefaultBatch}
	for _, f := range opts {
		f(&o)
	}
	return &Protocol{st: st, log: o.logger, now: o.now, grace: o.grace, batch: max(1, o.batch), hook: o.hook,
		relations: map[tables.PendingKind]*Relation{}, counters: map[CounterKind]*CounterSpec{}}
}

// Store returns the table API the protocol writes to.
func (p *Protocol) Store() hbase.Store { return p.st }

// Logger returns the protocol's logger, which the business areas share.
func (p *Protocol) Logger() *slog.Logger { return p.log }

// Now returns the current time of the protocol's clock.
func (p *Protocol) Now() time.Time { return p.now() }

// NowMillis returns Now in ms since the epoch.
func (p *Protocol) NowMillis() int64 { return p.now().UnixMilli() }

// RepairGrace returns the repair grace (WithRepairGrace).
func (p *Protocol) RepairGrace() time.Duration { return p.grace }

// GraceMillis returns the repair grace in ms.
func (p *Protocol) GraceMillis() int64 { return p.grace.Milliseconds() }

// Batch returns the batch size (WithBatch).
func (p *Protocol) Batch() int { return p.batch }

// Step runs the WithStepHook hook, if any, at the named step.
func (p *Protocol) Step(ctx context.Context, step string) error {
	if p.hook != nil {
		return p.hook(ctx, step)
	}
	return nil
}

// Op is the marker of one counted write in flight: its weibo:pending row,
// or for a write whose marker lives elsewhere (a publish's outbox row) only
// its start time.
type Op struct {
	rel          *Relation
	owner, other uint64
	extra        []byte
	key          []byte // the pending row; nil when the marker lives elsewhere
	// Start is when the write started, ms by the writing process's clock.
	Start int64
	kept  bool
}

// Kept reports whether the marker stays for the repairer (Keep).
func (op *Op) Kept() bool { return op.kept }

// Begin makes steps 1 and 2 of a write of rel on (owner, other): the
// weibo:pending row (with a random nonce, so that concurrent writes of one
// pair keep their own rows), the step "<rel.Name>:marked" (PhaseMarked),
// the operation sequences of every counter rel.Counters names, and the
// step "<rel.Name>:sequenced" (PhaseSequenced). Errors are the store's
// or the hook's.
func (p *Protocol) Begin(ctx context.Context, rel *Relation, owner, other uint64) (*Op, error) {
	return p.BeginWith(ctx, rel, owner, other, nil)
}

// BeginWith is Begin for a pair that owner and other do not name whole:
// the marker carries extra (tables.ColPendingExtra), which the repairer
// passes to rel.Settle.
func (p *Protocol) BeginWith(ctx context.Context, rel *Relation, owner, other uint64, extra []byte) (*Op, error) {
	op := &Op{rel: rel, owner: owner, other: other, extra: extra, Start: p.NowMillis(),
		key: tables.PendingKey(rel.Marker, owner, other, rand.Uint64())}
	err := p.st.Put(ctx, &hbase.Put{Table: tables.Pending, Row: op.key, Values: hbase.Values{tables.FamPending: op.cells(nil)}})
	if err == nil {
		err = p.Step(ctx, Step(rel.Name, PhaseMarked))
	}
	if err != nil {
		return nil, err
	}
	cs := rel.counters(owner, other, extra)
	incs := make([]*hbase.Increment, len(cs))
	for i, c := range cs {
		incs[i] = p.SeqIncrement(c)
	}
	if _, err := p.Increments(ctx, incs...); err != nil {
		return nil, err
	}
	return op, p.Step(ctx, Step(rel.Name, PhaseSequenced))
}

// StartOp returns the Op of a write whose marker the caller keeps itself
// (a publish's outbox row): only its start time, for InBudget.
func (p *Protocol) StartOp() *Op { return &Op{Start: p.NowMillis()} }

// InBudget reports whether op may still Increment its counters itself: it
// started less than half the repair grace ago, so the repairer, which
// waits the whole grace, does not take it for dead.
func (p *Protocol) InBudget(op *Op) bool {
	return p.NowMillis()-op.Start < p.GraceMillis()/2
}

// Count makes step 4 of op's write: it adds d to every counter of op's
// relation and returns their new values in order, then runs the step
// "<name>:counted" (PhaseCounted) — or, when op has outlived its budget,
// leaves the counting to the repairer (Keep) and returns nil.
func (p *Protocol) Count(ctx context.Context, op *Op, d int64) ([]int64, error) {
	if !p.InBudget(op) {
		return nil, p.Keep(ctx, op, nil)
	}
	cs := op.rel.counters(op.owner, op.other, op.extra)
	incs := make([]*hbase.Increment, len(cs))
	for i, c := range cs {
		incs[i] = p.Increment(c, d)
	}
	vs, err := p.Increments(ctx, incs...)
	if err != nil {
		return nil, err
	}
	return vs, p.Step(ctx, Step(op.rel.Name, PhaseCounted))
}

// Keep leaves op's marker for the repairer: it writes the row again (the
// repairer may have taken a write this slow for dead and deleted it) with
// the original start time and any extra cells of family p, and End then
// keeps it.
func (p *Protocol) Keep(ctx context.Context, op *Op, extra map[string][]byte) error {
	op.kept = true
	return p.st.Put(ctx, &hbase.Put{Table: tables.Pending, Row: op.key, Values: hbase.Values{tables.FamPending: op.cells(extra)}})
}

// Extend replaces the extra bytes op's marker carries (BeginWith) with
// extra: what the write learned since it began and the repairer needs to
// settle it (a row it is about to leave behind, say). It writes the
// marker's extra cell only; op stays as it was otherwise. Errors are the
// store's.
func (p *Protocol) Extend(ctx context.Context, op *Op, extra []byte) error {
	op.extra = extra
	return p.st.Put(ctx, &hbase.Put{Table: tables.Pending, Row: op.key, Values: hbase.Values{tables.FamPending: {tables.ColPendingExtra: extra}}})
}

// cells returns the cells of op's marker, with more.
func (op *Op) cells(more map[string][]byte) map[string][]byte {
	vals := map[string][]byte{tables.ColPendingAt: tables.EncodeMillis(op.Start)}
	if op.extra != nil {
		vals[tables.ColPendingExtra] = op.extra
	}
	for q, v := range more {
		vals[q] = v
	}
	return vals
}

// End makes step 6: unless op's marker is kept, it runs the step
// "<name>:settled" (PhaseSettled), then deletes the marker.
func (p *Protocol) End(ctx context.Context, op *Op) error {
	if op.kept {
		return nil
	}
	if op.rel != nil {
		if err := p.Step(ctx, Step(op.rel.Name, PhaseSettled)); err != nil {
			return err
		}
	}
	return p.st.Delete(ctx, &hbase.Delete{Table: tables.Pending, Row: op.key})
}

// Increments runs incs concurrently and returns their new values in order.
func (p *Protocol) Increments(ctx context.Context, incs ...*hbase.Increment) ([]int64, error) {
	out := make([]int64, len(incs))
	if len(incs) == 1 {
		v, err := p.st.Increment(ctx, incs[0])
		out[0] = v
		return out, err
	}
	g, gctx := errgroup.WithContext(ctx)
	for i, inc := range incs {
		g.Go(func() (err error) {
			out[i], err = p.st.Increment(gctx, inc)
			return err
		})
	}
	return out, g.Wait()
}
