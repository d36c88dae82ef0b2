package counted

import (
	"context"
	"fmt"
	"slices"

	"github.com/weibohbase/gateway/weibo/check"
	"github.com/weibohbase/gateway/weibo/tables"
)

// CounterKind names one kind of counter kept with Increment; its value is
// the counter's GraphQL field name ("followCount", "memberCount", ...).
type CounterKind string

// Counter names one counter: its kind and its owner (a user's, a role's or
// a department's id, or a post's two ids, as the kind says).
type Counter struct {
	// Kind is which counter.
	Kind CounterKind
	// Owner is the id of the row that holds it.
	Owner uint64
	// Sub completes Owner for a row that two ids name — a post: Owner its
	// author, Sub its ms —; 0 for the others.
	Sub uint64
	// Name completes the owner of a counter keyed by a name (a topic's:
	// its name, with Sub the hour for a per-hour counter); "" for the
	// others.
	Name string
}

// String names c in logs and errors: "followCount of 22732", "likeCount
// of 5802/1583037296789".
func (c Counter) String() string {
	if c.Name != "" {
		if c.Sub != 0 {
			return fmt.Sprintf("%s of %q at %d", c.Kind, c.Name, c.Sub)
		}
		return fmt.Sprintf("%s of %q", c.Kind, c.Name)
	}
	if c.Sub != 0 {
		return fmt.Sprintf("%s of %d/%d", c.Kind, c.Owner, c.Sub)
	}
	return fmt.Sprintf("%s of %d", c.Kind, c.Owner)
}

// CounterSpec is a registered kind of counter: where it lives and how to
// count what it counts.
type CounterSpec struct {
	// Kind names it.
	Kind CounterKind
	// Cell returns the table and row of counter c, its qualifier and the
	// qualifier of its operation sequence, both in Family.
	Cell func(c Counter) (table string, row []byte, qual, seq string)
	// Family is the column family of the counter and its sequence; ""
	// means tables.FamCount.
	Family string
	// SeqFamily, when set, is the column family of the sequence instead
	// of Family: a row whose counters are read together (a topic's hour
	// row) keeps its sequences apart so that a read of the counters does
	// not return them.
	SeqFamily string
	// Count counts the rows counter c counts; exists is false when its
	// owner (the user, role, department or post) does not exist.
	Count func(ctx context.Context, c Counter) (n int64, exists bool, err error)
}

// Relation is a registered counted relation: a two-sided pair whose writes
// carry a marker and change counters.
type Relation struct {
	// Name names the relation in the step names of its writes (StepsOf:
	// "<Name>:marked", "<Name>:sequenced", ...) and in logs and fsck's
	// reports.
	Name string
	// Marker is the kind of its weibo:pending rows; 0 when its writes keep
	// their markers elsewhere (InFlight then finds them).
	Marker tables.PendingKind
	// Counters returns the counters a write on (owner, other) may change,
	// in the order Count returns their values.
	Counters func(owner, other uint64) []Counter
	// CountersWith, when set, is used instead of Counters for a relation
	// whose counters the marker's extra bytes (BeginWith) name — a post's
	// topics, which owner and other cannot hold.
	CountersWith func(owner, other uint64, extra []byte) []Counter
	// Settle makes the dependents of (owner, other) — with extra, the
	// bytes the write's marker carried (BeginWith), nil for none — agree
	// with the authority (see Settle); an error wrapping ErrUnsettled
	// leaves the marker for the next pass. Required with a Marker.
	Settle func(ctx context.Context, owner, other uint64, extra []byte) error
	// Ready, when set, reports whether a dead write on (owner, other) may
	// be repaired now; bound is the marker's time (ms) plus the repair
	// grace, or the later time the write kept in tables.ColPendingFanouts.
	// A follow pair waits for the fan-outs it raced.
	Ready func(ctx context.Context, owner, other uint64, bound int64) (bool, error)
	// InFlight, for a relation whose markers live elsewhere, returns the
	// counters named by markers written at or after young (ms): writes
	// that may still be running.
	InFlight func(ctx context.Context, young int64) ([]Counter, error)
	// Phases are the phases of the steps its own code runs, each the
	// step Step(Name, phase): PhaseDecided after the authority's
	// conditional write, and phases of its own ("fans" after a follow
	// settle's fans row). With MoreSteps they make Steps, every step its
	// writes run, which tests crash a write at.
	Phases []Phase
	// MoreSteps are steps of other names its writes run: those of the
	// writes it makes on other relations or outside the protocol (a
	// follow's backfill, "fanout:written").
	MoreSteps []string
}

// Register adds a counted relation. It panics when rel is incomplete, one
// of its Phases is empty or holds ':', or its marker kind is taken:
// registration is a program's wiring, not input.
func (p *Protocol) Register(rel *Relation) {
	if rel.Name == "" || (rel.Counters == nil && rel.CountersWith == nil) || (rel.Marker != 0 && rel.Settle == nil) || (rel.Marker == 0 && rel.InFlight == nil) {
		panic(fmt.Sprintf("counted: incomplete relation %q", rel.Name))
	}
	if err := rel.checkSteps(); err != nil {
		panic(err.Error())
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if rel.Marker == 0 {
		p.inFlight = append(p.inFlight, rel)
		return
	}
	if _, dup := p.relations[rel.Marker]; dup {
		panic(fmt.Sprintf("counted: marker kind %q registered twice", rel.Marker))
	}
	p.relations[rel.Marker] = rel
}

// RegisterCounter adds a kind of counter. It panics when spec is incomplete
// or its kind is taken.
func (p *Protocol) RegisterCounter(spec *CounterSpec) {
	if spec.Kind == "" || spec.Cell == nil || spec.Count == nil {
		panic(fmt.Sprintf("counted: incomplete counter %q", spec.Kind))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, dup := p.counters[spec.Kind]; dup {
		panic(fmt.Sprintf("counted: counter %q registered twice", spec.Kind))
	}
	p.counters[spec.Kind] = spec
}

// RegisterCheck adds a module's checks for `gateway fsck` (package
// check); fsck runs the registered checks in the order they were
// registered. It panics on a check without a Name or Start, or a Name
// registered twice.
func (p *Protocol) RegisterCheck(c check.Check) {
	if c.Name == "" || c.Start == nil {
		panic(fmt.Sprintf("counted: incomplete check %q", c.Name))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, o := range p.checks {
		if o.Name == c.Name {
			panic(fmt.Sprintf("counted: check %q registered twice", c.Name))
		}
	}
	p.checks = append(p.checks, c)
}

// RepairFunc is one more repair of every repair pass (RegisterRepair):
// it finishes the writes that died before beforeMs (ms since the epoch:
// the pass's time less the repair grace) and leaves younger ones alone.
// Its error is the pass's.
type RepairFunc func(ctx context.Context, beforeMs int64) error

// RegisterRepair adds a repair that each pass of Repair runs after its
// own, in the order registered: what a module keeps of its writes in
// flight outside weibo:pending (the audit log's pending events). It
// panics on nil.
func (p *Protocol) RegisterRepair(fn RepairFunc) {
	if fn == nil {
		panic("counted: nil repair")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.repairs = append(p.repairs, fn)
}

// Checks returns the registered checks (RegisterCheck), in the order
// registered.
func (p *Protocol) Checks() []check.Check {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return slices.Clone(p.checks)
}

// Relations returns the registered relations that keep weibo:pending
// markers, by marker kind.
func (p *Protocol) Relations() map[tables.PendingKind]*Relation {
	p.mu.RLock()
	defer p.mu.RUnlock()
	out := make(map[tables.PendingKind]*Relation, len(p.relations))
	for k, r := range p.relations {
		out[k] = r
	}
	return out
}

func (p *Protocol) relation(k tables.PendingKind) *Relation {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.relations[k]
}

func (p *Protocol) spec(k CounterKind) (*CounterSpec, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	s := p.counters[k]
	if s == nil {
		return nil, fmt.Errorf("counted: counter %q is not registered", k)
	}
	return s, nil
}

// family returns the spec's column family.
func (s *CounterSpec) family() string {
	if s.Family == "" {
		return tables.FamCount
	}
	return s.Family
}

// seqFamily returns the column family of the spec's sequences.
func (s *CounterSpec) seqFamily() string {
	if s.SeqFamily != "" {
		return s.SeqFamily
	}
	return s.family()
}

// CountersOf returns the counters a write of rel on (owner, other), whose
// marker carries extra (nil for none), may change: CountersWith's, or
// Counters'.
func (rel *Relation) CountersOf(owner, other uint64, extra []byte) []Counter {
	return rel.counters(owner, other, extra)
}

// counters returns the counters a write of rel on (owner, other), whose
// marker carries extra, may change.
func (rel *Relation) counters(owner, other uint64, extra []byte) []Counter {
	if rel.CountersWith != nil {
		return rel.CountersWith(owner, other, extra)
	}
	return rel.Counters(owner, other)
}
