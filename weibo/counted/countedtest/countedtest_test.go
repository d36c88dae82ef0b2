package countedtest_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/counted/countedtest"
	"github.com/weibohbase/gateway/weibo/tables"
)

// breakEnv names the defect the toy relations run with, in the child
// process of TestSuiteFailsOnBrokenRelation: "" none; of the pin,
// "settle" (the repairer's settle writes nothing), "count" (a write
// counts twice), "step" (a write swallows the hook's error at its decided
// step); of the stamp, "unmarked" (a write leaves no marker), "sweep"
// (its repair leaves the markers), "late" (its repair needs two passes,
// where the module allows one).
const breakEnv = "COUNTEDTEST_TOY_BREAK"

// pin is the toy counted relation of these tests: a pin of user other on
// board owner. Authority the cell "a<other>" of the board's row
// (weibo:roles, family c), dependent the cell "d<other>" of the same row,
// counter the row's memberCount: the pins.
type pin struct {
	p    *counted.Protocol
	st   hbase.Store
	rel  *counted.Relation
	flaw string
}

const pinCount counted.CounterKind = "pinCount"

var boards atomic.Uint64

func newPin(st hbase.Store, cfg countedtest.Config) *pin {
	quiet := counted.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	x := &pin{p: counted.New(st, append(cfg.Options(), quiet)...), st: st, flaw: os.Getenv(breakEnv)}
	x.rel = &counted.Relation{
		Name:     "pin",
		Marker:   tables.PendingRole,
		Phases:   []counted.Phase{counted.PhaseDecided, "dependent"},
		Counters: func(owner, _ uint64) []counted.Counter { return []counted.Counter{{Kind: pinCount, Owner: owner}} },
		Settle: func(ctx context.Context, owner, other uint64, _ []byte) error {
			if x.flaw == "settle" {
				return nil
			}
			return x.settle(ctx, owner, other, nil)
		},
	}
	x.p.Register(x.rel)
	x.p.RegisterCounter(&counted.CounterSpec{
		Kind: pinCount,
		Cell: func(c counted.Counter) (string, []byte, string, string) {
			return tables.Roles, tables.RoleKey(tables.RoleID(c.Owner)), tables.ColMemberCount, tables.ColMemberSeq
		},
		Count: func(ctx context.Context, c counted.Counter) (int64, bool, error) {
			r, err := st.Get(ctx, &hbase.Get{Table: tables.Roles, Row: tables.RoleKey(tables.RoleID(c.Owner))})
			var n int64
			for _, c := range r.Family(tables.FamCount) {
				if strings.HasPrefix(string(c.Qualifier), "a") {
					n++
				}
			}
			return n, r.Exists(), err
		},
	})
	return x
}

func board(owner uint64) []byte { return tables.RoleKey(tables.RoleID(owner)) }

// write pins (on) or unpins other on owner, as a counted write.
func (x *pin) write(ctx context.Context, owner, other uint64, on bool) error {
	op, err := x.p.Begin(ctx, x.rel, owner, other)
	if err != nil {
		return err
	}
	q := fmt.Sprint("a", other)
	var applied bool
	if on {
		applied, err = x.st.CheckAndPut(ctx, &hbase.Put{Table: tables.Roles, Row: board(owner), Values: hbase.Values{tables.FamCount: {q: {1}}}},
			tables.FamCount, q, nil)
	} else {
		applied, err = x.st.CheckAndDelete(ctx, &hbase.Delete{Table: tables.Roles, Row: board(owner), Values: hbase.Values{tables.FamCount: {q: nil}}},
			tables.FamCount, q, []byte{1})
	}
	if err == nil {
		err = x.p.Step(ctx, counted.StepsOf("pin").Decided)
		if x.flaw == "step" {
			err = nil
		}
	}
	if err != nil {
		return err
	}
	if applied {
		d := int64(1)
		if !on {
			d = -1
		}
		if x.flaw == "count" {
			d *= 2
		}
		if _, err := x.p.Count(ctx, op, d); err != nil {
			return err
		}
	}
	if err := x.settle(ctx, owner, other, &on); err != nil {
		return err
	}
	return x.p.End(ctx, op)
}

// settle makes the dependent cell agree with the authority, from state
// (nil: read it).
func (x *pin) settle(ctx context.Context, owner, other uint64, state *bool) error {
	a, d := fmt.Sprint("a", other), fmt.Sprint("d", other)
	read := func(ctx context.Context) (bool, error) {
		r, err := x.st.Get(ctx, &hbase.Get{Table: tables.Roles, Row: board(owner)})
		return r.Value(tables.FamCount, a) != nil, err
	}
	var on bool
	if state != nil {
		on = *state
	} else {
		var err error
		if on, err = read(ctx); err != nil {
			return err
		}
	}
	_, err := counted.Settle(ctx, on, func(a, b bool) bool { return a == b }, func(ctx context.Context, on bool) error {
		var err error
		if on {
			err = x.st.Put(ctx, &hbase.Put{Table: tables.Roles, Row: board(owner), Values: hbase.Values{tables.FamCount: {d: {1}}}})
		} else {
			err = x.st.Delete(ctx, &hbase.Delete{Table: tables.Roles, Row: board(owner), Values: hbase.Values{tables.FamCount: {d: nil}}})
		}
		if err == nil {
			err = x.p.Step(ctx, counted.Step("pin", "dependent"))
		}
		return err
	}, read)
	return err
}

// fsck reports every authority cell without its dependent and the reverse.
func (x *pin) fsck(ctx context.Context) ([]string, error) {
	var issues []string
	err := x.st.Scan(ctx, &hbase.Scan{Table: tables.Roles, Families: []string{tables.FamCount}}, func(r *hbase.Result) error {
		for _, c := range r.Family(tables.FamCount) {
			q := string(c.Qualifier)
			switch {
			case strings.HasPrefix(q, "a") && r.Value(tables.FamCount, "d"+q[1:]) == nil:
				issues = append(issues, fmt.Sprintf("row %x: pin %s without its dependent", r.Row, q[1:]))
			case strings.HasPrefix(q, "d") && r.Value(tables.FamCount, "a"+q[1:]) == nil:
				issues = append(issues, fmt.Sprintf("row %x: dependent %s without its pin", r.Row, q[1:]))
			}
		}
		return nil
	})
	return issues, err
}

func pinModule() countedtest.Module[*pin] {
	return countedtest.Module[*pin]{
		Marker:   tables.PendingRole,
		Open:     newPin,
		Protocol: func(x *pin) *counted.Protocol { return x.p },
		Setup: func(t *testing.T, x *pin) *countedtest.Pair[*pin] {
			owner, other := boards.Add(1), uint64(7)
			if err := x.st.Put(t.Context(), &hbase.Put{Table: tables.Roles, Row: board(owner),
				Values: hbase.Values{tables.FamCount: {tables.ColMemberCount: tables.EncodeCounter(0)}}}); err != nil {
				t.Fatal(err)
			}
			return &countedtest.Pair[*pin]{
				Owner: owner, Other: other,
				Do:   func(ctx context.Context, x *pin) error { return x.write(ctx, owner, other, true) },
				Undo: func(ctx context.Context, x *pin) error { return x.write(ctx, owner, other, false) },
				Present: func(ctx context.Context, x *pin) (bool, error) {
					r, err := x.st.Get(ctx, &hbase.Get{Table: tables.Roles, Row: board(owner)})
					return r.Value(tables.FamCount, fmt.Sprint("a", other)) != nil, err
				},
			}
		},
		Fsck: func(ctx context.Context, x *pin) ([]string, error) { return x.fsck(ctx) },
	}
}

// TestPinConformance runs the suite over the toy relation, with the steps
// its registration declares, on the embedded store.
func TestPinConformance(t *testing.T) {
	st := testenv.Embedded(t)
	if err := tables.Migrate(t.Context(), st); err != nil {
		t.Fatal(err)
	}
	countedtest.Run(t, st, pinModule())
}

// stamp is the toy counted relation whose markers live outside
// weibo:pending, as a publish's do: a stamp of user other on board owner.
// Authority the cell "t<other>" of the board's row (weibo:roles, family
// c), counter the row's memberCount: the stamps. A write's marker is a row
// of weibo:outbox ("stamp/<owner>/<other>", its time in o:t) that the
// write deletes when done, or leaves when it outlived its budget; the
// toy's own sweep (the module's Quiesce) recounts the board of every
// marker older than the grace and deletes it.
type stamp struct {
	p    *counted.Protocol
	st   hbase.Store
	flaw string
}

const stampCount counted.CounterKind = "stampCount"

func newStamp(st hbase.Store, cfg countedtest.Config) *stamp {
	quiet := counted.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	x := &stamp{p: counted.New(st, append(cfg.Options(), quiet)...), st: st, flaw: os.Getenv(breakEnv)}
	x.p.Register(&counted.Relation{
		Name:     "stamp",
		Phases:   []counted.Phase{counted.PhaseMarked, counted.PhaseSequenced, counted.PhaseDecided, counted.PhaseCounted},
		Counters: func(owner, _ uint64) []counted.Counter { return []counted.Counter{{Kind: stampCount, Owner: owner}} },
		InFlight: func(ctx context.Context, young int64) ([]counted.Counter, error) {
			var out []counted.Counter
			err := x.markers(ctx, func(owner uint64, at int64) error {
				if at >= young {
					out = append(out, counted.Counter{Kind: stampCount, Owner: owner})
				}
				return nil
			})
			return out, err
		},
	})
	x.p.RegisterCounter(&counted.CounterSpec{
		Kind: stampCount,
		Cell: func(c counted.Counter) (string, []byte, string, string) {
			return tables.Roles, board(c.Owner), tables.ColMemberCount, tables.ColMemberSeq
		},
		Count: func(ctx context.Context, c counted.Counter) (int64, bool, error) {
			r, err := st.Get(ctx, &hbase.Get{Table: tables.Roles, Row: board(c.Owner)})
			var n int64
			for _, c := range r.Family(tables.FamCount) {
				if strings.HasPrefix(string(c.Qualifier), "t") {
					n++
				}
			}
			return n, r.Exists(), err
		},
	})
	return x
}

func stampMarker(owner, other uint64) []byte { return fmt.Appendf(nil, "stamp/%d/%d", owner, other) }

// markers calls fn with the board and the time of every marker.
func (x *stamp) markers(ctx context.Context, fn func(owner uint64, at int64) error) error {
	return x.st.Scan(ctx, &hbase.Scan{Table: tables.Outbox}, func(r *hbase.Result) error {
		var owner, other uint64
		if _, err := fmt.Sscanf(string(r.Row), "stamp/%d/%d", &owner, &other); err != nil {
			return err
		}
		return fn(owner, tables.OutboxAt(r))
	})
}

// write stamps (on) or unstamps other on owner.
func (x *stamp) write(ctx context.Context, owner, other uint64, on bool) error {
	op := x.p.StartOp()
	steps := counted.StepsOf("stamp")
	c := counted.Counter{Kind: stampCount, Owner: owner}
	marker := &hbase.Put{Table: tables.Outbox, Row: stampMarker(owner, other),
		Values: hbase.Values{tables.FamOutbox: {tables.ColOutboxAt: tables.EncodeMillis(op.Start)}}}
	if x.flaw != "unmarked" {
		if err := x.st.Put(ctx, marker); err != nil {
			return err
		}
	}
	if err := x.p.Step(ctx, steps.Marked); err != nil {
		return err
	}
	if _, err := x.p.Increments(ctx, x.p.SeqIncrement(c)); err != nil {
		return err
	}
	if err := x.p.Step(ctx, steps.Sequenced); err != nil {
		return err
	}
	q := fmt.Sprint("t", other)
	var applied bool
	var err error
	if on {
		applied, err = x.st.CheckAndPut(ctx, &hbase.Put{Table: tables.Roles, Row: board(owner), Values: hbase.Values{tables.FamCount: {q: {1}}}},
			tables.FamCount, q, nil)
	} else {
		applied, err = x.st.CheckAndDelete(ctx, &hbase.Delete{Table: tables.Roles, Row: board(owner), Values: hbase.Values{tables.FamCount: {q: nil}}},
			tables.FamCount, q, []byte{1})
	}
	if err == nil {
		err = x.p.Step(ctx, steps.Decided)
	}
	if err != nil {
		return err
	}
	if !x.p.InBudget(op) {
		return nil // the marker stays: the sweep recounts
	}
	if applied {
		d := int64(1)
		if !on {
			d = -1
		}
		if _, err := x.p.Increments(ctx, x.p.Increment(c, d)); err != nil {
			return err
		}
	}
	if err := x.p.Step(ctx, steps.Counted); err != nil {
		return err
	}
	return x.st.Delete(ctx, &hbase.Delete{Table: tables.Outbox, Row: marker.Row})
}

// swept holds the boards a stamp sweep has found a dead marker of.
var swept sync.Map

// sweep repairs the writes whose markers are older than the grace: it
// recounts their boards and deletes the markers.
func (x *stamp) sweep(ctx context.Context) error {
	if x.flaw == "sweep" {
		return nil
	}
	var owners []uint64
	err := x.markers(ctx, func(owner uint64, at int64) error {
		if x.p.NowMillis()-at > x.p.GraceMillis() {
			owners = append(owners, owner)
		}
		return nil
	})
	for _, owner := range owners {
		if err != nil {
			break
		}
		if _, again := swept.LoadOrStore(owner, true); x.flaw == "late" && !again {
			continue // repaired at the next pass only
		}
		var res []counted.Recount
		res, err = x.p.RecountCounters(ctx, []counted.Counter{{Kind: stampCount, Owner: owner}})
		if err == nil && res[0].Done {
			err = x.st.Delete(ctx, &hbase.Delete{Table: tables.Outbox, Row: stampMarker(owner, 7)})
		}
	}
	return err
}

// stampKills counts the calls of the stamp pairs' Killed.
var stampKills atomic.Int64

func stampModule() countedtest.Module[*stamp] {
	s := counted.StepsOf("stamp")
	return countedtest.Module[*stamp]{
		Relation:     "stamp",
		MarkerTables: []string{tables.Outbox},
		Restarts:     1,
		Steps:        []string{s.Marked, s.Sequenced, s.Decided, s.Counted},
		Open:         newStamp,
		Protocol:     func(x *stamp) *counted.Protocol { return x.p },
		Quiesce:      func(ctx context.Context, x *stamp) error { return x.sweep(ctx) },
		Setup: func(t *testing.T, x *stamp) *countedtest.Pair[*stamp] {
			owner, other := boards.Add(1), uint64(7)
			if err := x.st.Put(t.Context(), &hbase.Put{Table: tables.Roles, Row: board(owner),
				Values: hbase.Values{tables.FamCount: {tables.ColMemberCount: tables.EncodeCounter(0)}}}); err != nil {
				t.Fatal(err)
			}
			return &countedtest.Pair[*stamp]{
				Counters: []counted.Counter{{Kind: stampCount, Owner: owner}},
				Do:       func(ctx context.Context, x *stamp) error { return x.write(ctx, owner, other, true) },
				Undo:     func(ctx context.Context, x *stamp) error { return x.write(ctx, owner, other, false) },
				Present: func(ctx context.Context, x *stamp) (bool, error) {
					r, err := x.st.Get(ctx, &hbase.Get{Table: tables.Roles, Row: board(owner)})
					return r.Value(tables.FamCount, fmt.Sprint("t", other)) != nil, err
				},
				// As the kill left it: the stamp as the call decided.
				Killed: func(ctx context.Context, x *stamp, undo bool, step string) error {
					stampKills.Add(1)
					r, err := x.st.Get(ctx, &hbase.Get{Table: tables.Roles, Row: board(owner)})
					if err != nil {
						return err
					}
					decided := step == s.Decided || step == s.Counted
					if on := r.Value(tables.FamCount, fmt.Sprint("t", other)) != nil; on != (undo != decided) {
						return fmt.Errorf("stamped: %v", on)
					}
					return nil
				},
			}
		},
	}
}

// TestStampConformance runs the suite over the toy relation whose markers
// live outside weibo:pending, named by name, with its declared steps, on
// the embedded store.
func TestStampConformance(t *testing.T) {
	st := testenv.Embedded(t)
	if err := tables.Migrate(t.Context(), st); err != nil {
		t.Fatal(err)
	}
	countedtest.Run(t, st, stampModule())
	if stampKills.Load() == 0 {
		t.Error("no case checked the store right after its kill")
	}
}

// TestPinWriteOnly runs the suite over the toy pin's write alone, as for
// a write without a reverse (Module.NoReverse): the pin's cases run, the
// unpin's do not (the pair's Undo is nil: a call of it would panic). One
// repair pass repairs a killed pin (Module.Restarts).
func TestPinWriteOnly(t *testing.T) {
	st := testenv.Embedded(t)
	if err := tables.Migrate(t.Context(), st); err != nil {
		t.Fatal(err)
	}
	m := pinModule()
	m.NoReverse = true
	m.Restarts = 1
	setup := m.Setup
	m.Setup = func(t *testing.T, x *pin) *countedtest.Pair[*pin] {
		pr := setup(t, x)
		pr.Undo = nil
		return pr
	}
	countedtest.Run(t, st, m)
}

// TestSuiteFailsOnBrokenRelation runs TestPinConformance and
// TestStampConformance again in a child process with a defect in a toy
// relation, once per defect, and requires the suite to fail and say why.
func TestSuiteFailsOnBrokenRelation(t *testing.T) {
	if os.Getenv(breakEnv) != "" {
		t.Skip("the child process runs only the toy relations' conformance")
	}
	for flaw, want := range map[string]string{
		"settle":   "without its dependent",
		"count":    "kept 2, counts 1",
		"step":     "want the crash",
		"unmarked": "left no marker",
		"sweep":    "markers left after",
		"late":     "markers left after 1 restarts",
	} {
		t.Run(flaw, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^(TestPinConformance|TestStampConformance)$", "-test.count=1")
			cmd.Env = append(os.Environ(), breakEnv+"="+flaw)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the suite passed a relation whose %s is broken:\n%s", flaw, out)
			}
			if !strings.Contains(string(out), want) {
				t.Errorf("the suite failed on the broken %s without saying %q:\n%s", flaw, want, out)
			}
		})
	}
}
