// Package countedtest is the conformance suite of counted relations
// (package counted), in the manner of hbase/hbasetest: a relation's own
// test describes it once — its marker kind, how to build the code that
// writes it over a store, a pair to write, the write and its reverse, the
// store's checker — and runs it with one call,
//
//	func TestLikeConformance(t *testing.T) {
//		for _, b := range testenv.Backends() {
//			t.Run(b.Name, func(t *testing.T) {
//				countedtest.Run(t, ownStore(t, b), countedtest.Module[*domain.Domain]{...})
//			})
//		}
//	}
//
// and every crash of the write becomes a subtest. For the write (Pair.Do)
// and its reverse (Pair.Undo) in turn — the write alone when it has none
// (Module.NoReverse) —, the suite
//
//   - runs it whole once, recording the steps it reaches (the trace), and
//     requires the store to be exact afterwards;
//   - for every declared step (Module.Steps, by default the steps the
//     relation's registration declares: counted.Protocol.Steps) the call
//     reaches, kills it there the first time it reaches it — the step
//     hook (counted.WithStepHook) returns ErrCrash, which the call must
//     return —, requires a marker left (and what Pair.Killed checks of
//     the store as the kill left it), restarts (a fresh handle over the
//     same store) once the repair grace has passed on a test clock, runs
//     the repairer (Quiesce, then counted.Protocol.Repair until no marker
//     is left) and requires the store to be exact;
//   - makes it outlive its budget (the clock jumps past half the grace at
//     its sequenced step) and requires the same after the repair.
//
// The store is exact when no marker is left — weibo:pending is empty, and
// so are the module's other tables of markers (Module.MarkerTables: the
// weibo:outbox of a publish) —, every counter the pair's writes change
// holds its recount (counted.Protocol.RecountCounters finds the kept value
// equal to the count), the pair is present exactly when the call got past
// its decided step (Module.Decided, Module.UndoDecided) and the store's
// checker (Module.Fsck: `gateway fsck` over the whole store) reports
// nothing. A call killed at a step must have left a marker: a
// weibo:pending row of the relation's kind or of one of the module's
// MarkerKinds (the call may be another relation's write: a delete as a
// post's reverse), or a row of one of the MarkerTables. Every declared
// step must be reached by the write or its reverse: a step that is never
// reached is reported, so the declaration cannot go stale.
//
// A relation whose markers live outside weibo:pending (a publish: its
// marker is the post's weibo:outbox row, repaired by the fan-out's sweep)
// is registered with no marker kind; its module names it by name
// (Module.Relation), declares its steps (Module.Steps), gives its counters
// through Pair.Counters, lists the tables of its markers and repairs them
// in Quiesce.
//
// The suite imports neither business area nor fsck: the module passes
// their functions in.
package countedtest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/tables"
)

// ErrCrash is what the suite's step hook returns at the step a call is
// killed at: the call stops there, as if its process had been killed, and
// must return an error wrapping it.
var ErrCrash = errors.New("countedtest: killed here")

// Grace is the repair grace of every handle the suite builds.
const Grace = 10 * time.Second

// restarts bounds, unless the module says otherwise (Module.Restarts),
// the restarts (each with a repair pass) a crashed write may need until no
// marker is left.
const restarts = 4

// Config is what a handle the suite builds runs with: the module's Open
// passes it to the protocol (Options) or to its own wiring.
type Config struct {
	// Now is the suite's test clock, shared by every handle of a run.
	Now func() time.Time
	// Grace is the repair grace (Grace).
	Grace time.Duration
	// Hook is the step hook (counted.WithStepHook); nil for none.
	Hook func(ctx context.Context, step string) error
}

// Options returns c as the protocol's options: its clock, repair grace
// and step hook.
func (c Config) Options() []counted.Option {
	return []counted.Option{counted.WithClock(c.Now), counted.WithRepairGrace(c.Grace), counted.WithStepHook(c.Hook)}
}

// Module describes one counted relation to the suite. H is the handle its
// writes run on (the wired domain, say).
type Module[H any] struct {
	// Marker is the relation's marker kind; the relation must be
	// registered with it on the protocol of every handle. 0 for a
	// relation whose markers live outside weibo:pending: Relation names
	// it then.
	Marker tables.PendingKind
	// Relation is the name of the relation (counted.Relation.Name) when
	// Marker is 0: it names the steps of its protocol phases
	// (counted.StepsOf). Its counters are the pair's Counters only.
	Relation string
	// MarkerKinds are more kinds of weibo:pending rows that a killed call
	// may leave instead of a marker of Marker's kind: those of the
	// writes of other relations the write or its reverse makes first (a
	// delete of the post, as its reverse).
	MarkerKinds []tables.PendingKind
	// MarkerTables are the tables besides weibo:pending whose every row
	// is the marker of a write in flight (tables.Outbox: a publish's);
	// a killed call may leave its marker there, and no row of them may be
	// left once the restarts have repaired everything.
	MarkerTables []string
	// Steps are the steps to kill the write and its reverse at; nil
	// means the steps the relation declares (counted.Protocol.Steps),
	// and is an error when Marker is 0. Each must be reached by the write
	// or its reverse.
	Steps []string
	// Decided is the step after the authority's conditional write: a
	// call killed there or later has decided the pair, one killed before
	// has not. "" means counted.StepsOf(name).Decided.
	Decided string
	// UndoDecided is Decided of the reverse (Pair.Undo) when its
	// authority's write is followed by another step than the write's;
	// "" means Decided.
	UndoDecided string
	// NoReverse says the write has no reverse (a markNotificationsRead):
	// only its own cases run, and Pair.Undo may be nil.
	NoReverse bool
	// Restarts is how many restarts (each with a repair pass) a killed
	// write may need until no marker is left; 0 means 4. 1 requires the
	// first repair pass to repair everything.
	Restarts int
	// Open builds a fresh handle over st with cfg: what a process that
	// starts over the store builds. Required.
	Open func(st hbase.Store, cfg Config) H
	// Protocol returns the protocol h writes on. Required.
	Protocol func(h H) *counted.Protocol
	// Quiesce, when set, runs h's background work to its end (fan-outs,
	// its own repair pass) and stops it; the suite calls it after each
	// setup and at each restart, before its own repair pass.
	Quiesce func(ctx context.Context, h H) error
	// Setup makes what one case writes on — fresh rows of its own (users,
	// a post), as the store holds every earlier case's — through h, and
	// returns the pair. Required.
	Setup func(t *testing.T, h H) *Pair[H]
	// Fsck checks the whole store through h and returns one line per
	// issue found; nil skips the check.
	Fsck func(ctx context.Context, h H) ([]string, error)
}

// Pair is one pair of a relation, as a case writes it.
type Pair[H any] struct {
	// Owner and Other name the pair as its markers do; with Extra (the
	// marker's extra bytes, nil for none) they give the counters its
	// writes change (counted.Relation.CountersOf).
	Owner, Other uint64
	Extra        []byte
	// Counters are more counters the write changes besides its
	// relation's own (the unread count of the notification it sends).
	Counters []counted.Counter
	// Do makes the pair (a like) through h; Undo unmakes it (an unlike).
	// Each returns the call's error. Required (Undo not with the
	// module's NoReverse).
	Do, Undo func(ctx context.Context, h H) error
	// Present reports whether the pair's authority holds it; nil skips
	// the check.
	Present func(ctx context.Context, h H) (bool, error)
	// Killed, when set, checks the store right after the write (undo:
	// its reverse) was killed at step, before any restart, through a
	// fresh handle h: what a kill there must leave (a post in its
	// author's inbox and in no fan's, say). An error it returns fails
	// the case.
	Killed func(ctx context.Context, h H, undo bool, step string) error
}

// Run runs the suite for m on st, a migrated store (tables.Migrate) that
// nothing else writes meanwhile: each case is a subtest of t.
func Run[H any](t *testing.T, st hbase.Store, m Module[H]) {
	if m.Open == nil || m.Protocol == nil || m.Setup == nil {
		t.Fatal("countedtest: the module needs Open, Protocol and Setup")
	}
	s := &suite[H]{st: st, m: m}
	p := m.Protocol(s.open(nil))
	name := m.Relation
	if m.Marker != 0 {
		rel := p.Relations()[m.Marker]
		if rel == nil {
			t.Fatalf("no relation registered with marker kind %d", m.Marker)
		}
		s.rel, name = rel, rel.Name
	}
	steps := m.Steps
	switch {
	case name == "":
		t.Fatal("countedtest: the module needs a Marker or a Relation")
	case steps == nil && m.Marker == 0:
		t.Fatal("countedtest: a relation without a marker kind needs its Steps")
	case steps == nil:
		steps = p.Steps(m.Marker)
	}
	if s.decided[0] = m.Decided; s.decided[0] == "" {
		s.decided[0] = counted.StepsOf(name).Decided
	}
	if s.decided[1] = m.UndoDecided; s.decided[1] == "" {
		s.decided[1] = s.decided[0]
	}
	reached := map[string]bool{}
	for _, undo := range []bool{false, true} {
		if undo && m.NoReverse {
			break
		}
		dir := "do"
		if undo {
			dir = "undo"
		}
		var trace []string
		t.Run(dir, func(t *testing.T) {
			trace = s.traced(t, undo)
		})
		if trace == nil {
			return // the call fails whole: no step to kill it at
		}
		decided := slices.Index(trace, s.decidedOf(undo))
		for at, step := range trace {
			if !slices.Contains(steps, step) || slices.Index(trace, step) != at {
				continue // not declared, or reached before: killed there then
			}
			reached[step] = true
			t.Run(dir+"@"+step, func(t *testing.T) {
				s.crashed(t, undo, step, at >= decided)
			})
		}
		if seq := counted.StepsOf(name).Sequenced; slices.Contains(trace, seq) {
			t.Run(dir+"-slow", func(t *testing.T) {
				s.slow(t, undo, seq)
			})
		}
	}
	for _, step := range steps {
		if !reached[step] {
			t.Errorf("step %s is declared but neither the write nor its reverse reached it", step)
		}
	}
}

// suite is one run of the suite.
type suite[H any] struct {
	st      hbase.Store
	m       Module[H]
	rel     *counted.Relation // nil for a relation without a marker kind
	decided [2]string         // of the write, of its reverse
	offset  atomic.Int64      // the test clock's lead on the wall clock
}

// decidedOf returns the decided step of the write, or of its reverse.
func (s *suite[H]) decidedOf(undo bool) string {
	if undo {
		return s.decided[1]
	}
	return s.decided[0]
}

func (s *suite[H]) now() time.Time { return time.Now().Add(time.Duration(s.offset.Load())) }

func (s *suite[H]) advance(d time.Duration) { s.offset.Add(int64(d)) }

// open builds a handle with the suite's clock and grace and hook.
func (s *suite[H]) open(hook func(ctx context.Context, step string) error) H {
	return s.m.Open(s.st, Config{Now: s.now, Grace: Grace, Hook: hook})
}

func (s *suite[H]) quiesce(t *testing.T, h H) {
	t.Helper()
	if s.m.Quiesce == nil {
		return
	}
	if err := s.m.Quiesce(t.Context(), h); err != nil {
		t.Fatalf("quiesce: %v", err)
	}
}

// prepare makes a case's pair, and makes it already when the case is of
// the reverse.
func (s *suite[H]) prepare(t *testing.T, undo bool) *Pair[H] {
	t.Helper()
	h := s.open(nil)
	pr := s.m.Setup(t, h)
	if pr == nil || pr.Do == nil || (pr.Undo == nil && !s.m.NoReverse) {
		t.Fatal("Setup returned no pair, or one without Do and Undo")
	}
	if undo {
		if err := pr.Do(t.Context(), h); err != nil {
			t.Fatalf("the write before its reverse: %v", err)
		}
	}
	s.quiesce(t, h)
	return pr
}

// call runs the write (or its reverse) of pr on a handle with hook.
func (s *suite[H]) call(ctx context.Context, pr *Pair[H], undo bool, hook func(context.Context, string) error) error {
	h := s.open(hook)
	if undo {
		return pr.Undo(ctx, h)
	}
	return pr.Do(ctx, h)
}

// traced runs the call whole, recording its steps, and checks the store;
// it returns the steps in the order reached.
func (s *suite[H]) traced(t *testing.T, undo bool) []string {
	pr := s.prepare(t, undo)
	var mu sync.Mutex
	var trace []string
	err := s.call(t.Context(), pr, undo, func(_ context.Context, step string) error {
		mu.Lock()
		defer mu.Unlock()
		trace = append(trace, step)
		return nil
	})
	if err != nil {
		t.Fatalf("the call: %v", err)
	}
	if d := s.decidedOf(undo); !slices.Contains(trace, d) {
		t.Fatalf("the call never reached its decided step %s; it ran %q", d, trace)
	}
	t.Logf("steps: %q", trace)
	s.check(t, pr, !undo)
	return trace
}

// crashed kills the call at the first time it reaches step and checks the
// store after the restart: the pair is as the call left it when decided,
// as it was otherwise.
func (s *suite[H]) crashed(t *testing.T, undo bool, step string, decided bool) {
	ctx := t.Context()
	pr := s.prepare(t, undo)
	var hit atomic.Bool
	err := s.call(ctx, pr, undo, func(_ context.Context, at string) error {
		if at == step && hit.CompareAndSwap(false, true) {
			return ErrCrash
		}
		return nil
	})
	if !hit.Load() {
		t.Fatalf("step %s never reached", step)
	}
	if !errors.Is(err, ErrCrash) {
		t.Fatalf("the call killed at %s returned %v, want the crash", step, err)
	}
	if n := s.markers(t, false); n == 0 {
		t.Errorf("the call killed at %s left no marker", step)
	}
	if pr.Killed != nil {
		if err := pr.Killed(ctx, s.open(nil), undo, step); err != nil {
			t.Errorf("right after the kill at %s: %v", step, err)
		}
	}
	s.advance(Grace + time.Second)
	s.check(t, pr, undo != decided)
}

// slow makes the call outlive its budget: the clock jumps past half the
// grace at step. The call succeeds and leaves its counting to the
// repairer.
func (s *suite[H]) slow(t *testing.T, undo bool, step string) {
	pr := s.prepare(t, undo)
	err := s.call(t.Context(), pr, undo, func(_ context.Context, at string) error {
		if at == step {
			s.advance(Grace/2 + time.Second)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("the call past its budget: %v", err)
	}
	s.advance(Grace + time.Second)
	s.check(t, pr, !undo)
}

// check restarts until no marker is left (each restart: a fresh handle,
// Quiesce, a repair pass), then requires the store exact: every counter of
// pr at its recount, the pair present as want says, and a clean fsck.
func (s *suite[H]) check(t *testing.T, pr *Pair[H], want bool) {
	t.Helper()
	ctx := t.Context()
	var h H
	for round := 1; ; round++ {
		h = s.open(nil)
		s.quiesce(t, h)
		if _, err := s.m.Protocol(h).Repair(ctx); err != nil {
			t.Fatalf("repair: %v", err)
		}
		n := s.markers(t, true)
		if n == 0 {
			break
		}
		if limit := cmp.Or(s.m.Restarts, restarts); round >= limit {
			t.Fatalf("%d markers left after %d restarts", n, round)
		}
	}
	var cs []counted.Counter
	if s.rel != nil {
		cs = s.rel.CountersOf(pr.Owner, pr.Other, pr.Extra)
	}
	cs = append(cs, pr.Counters...)
	res, err := s.m.Protocol(h).RecountCounters(ctx, cs)
	if err != nil {
		t.Fatalf("recount: %v", err)
	}
	for i, r := range res {
		switch {
		case !r.Done:
			t.Errorf("%s: not recounted, a write still in flight", cs[i])
		case r.Before != r.After:
			t.Errorf("%s: kept %d, counts %d", cs[i], r.Before, r.After)
		}
	}
	if pr.Present != nil {
		got, err := pr.Present(ctx, h)
		if err != nil {
			t.Fatalf("present: %v", err)
		}
		if got != want {
			t.Errorf("pair present: %v, want %v", got, want)
		}
	}
	if s.m.Fsck != nil {
		issues, err := s.m.Fsck(ctx, h)
		if err != nil {
			t.Fatalf("fsck: %v", err)
		}
		for _, i := range issues {
			t.Errorf("fsck: %s", i)
		}
	}
}

// markers counts the markers in the store: the rows of weibo:pending —
// of every kind when all is set, else of the module's Marker kind and its
// MarkerKinds — and the rows of the module's MarkerTables.
func (s *suite[H]) markers(t *testing.T, all bool) int {
	t.Helper()
	n := 0
	err := s.st.Scan(t.Context(), &hbase.Scan{Table: tables.Pending}, func(r *hbase.Result) error {
		if kind, _, _, _, ok := tables.DecodePendingKey(r.Row); all || (ok && kind != 0 && (kind == s.m.Marker || slices.Contains(s.m.MarkerKinds, kind))) {
			n++
		}
		return nil
	})
	for _, table := range s.m.MarkerTables {
		if err == nil {
			err = s.st.Scan(t.Context(), &hbase.Scan{Table: table}, func(*hbase.Result) error {
				n++
				return nil
			})
		}
	}
	if err != nil {
		t.Fatal(fmt.Errorf("scan markers: %w", err))
	}
	return n
}
