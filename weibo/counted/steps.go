package counted

import (
	"fmt"
	"strings"

	"github.com/weibohbase/gateway/weibo/tables"
)

// Phase names one step of a counted write within its relation: the step
// itself is "<relation>:<phase>" (Step). The protocol's phases are the
// Phase constants; a relation names the phases of its own code (a settle
// round's dependents, say) with Phase values of its own.
type Phase string

// The phases of the protocol (see the package doc), in the order a write
// reaches them.
const (
	// PhaseMarked follows the marker's write (Begin): step 1.
	PhaseMarked Phase = "marked"
	// PhaseSequenced follows the operation sequences (Begin): step 2.
	PhaseSequenced Phase = "sequenced"
	// PhaseDecided follows the authority's conditional write, which the
	// relation's own code makes and marks with this step: step 3.
	PhaseDecided Phase = "decided"
	// PhaseCounted follows the counters' Increments (Count): step 4.
	PhaseCounted Phase = "counted"
	// PhaseSettled follows everything the write does before its marker is
	// deleted — its dependents settled, its counters counted — (End):
	// between steps 5 and 6.
	PhaseSettled Phase = "settled"
)

// Step returns the name of the step of relation rel at phase ph, as the
// step hook (WithStepHook) receives it: "like:marked" for ("like",
// PhaseMarked), "relation:fans" for ("relation", "fans").
func Step(rel string, ph Phase) string { return rel + ":" + string(ph) }

// Steps are the step names of one relation's protocol phases (StepsOf).
type Steps struct {
	// Marked is Step(rel, PhaseMarked): after the marker (Begin).
	Marked string
	// Sequenced is Step(rel, PhaseSequenced): after the sequences (Begin).
	Sequenced string
	// Decided is Step(rel, PhaseDecided): after the authority's
	// conditional write; the relation's code runs it.
	Decided string
	// Counted is Step(rel, PhaseCounted): after the counters (Count).
	Counted string
	// Settled is Step(rel, PhaseSettled): before the marker's delete (End).
	Settled string
}

// StepsOf returns the step names of relation rel's protocol phases:
// StepsOf("like").Marked is "like:marked".
func StepsOf(rel string) Steps {
	return Steps{
		Marked:    Step(rel, PhaseMarked),
		Sequenced: Step(rel, PhaseSequenced),
		Decided:   Step(rel, PhaseDecided),
		Counted:   Step(rel, PhaseCounted),
		Settled:   Step(rel, PhaseSettled),
	}
}

// Steps returns every step a write of rel (or of its reverse) may run,
// each once: with a Marker, the protocol's own — Marked, Sequenced,
// Counted and Settled of StepsOf(rel.Name), which Begin, Count and End
// run —, then Step(rel.Name, ph) for each of rel.Phases, then
// rel.MoreSteps.
func (rel *Relation) Steps() []string {
	var out []string
	if rel.Marker != 0 {
		s := StepsOf(rel.Name)
		out = append(out, s.Marked, s.Sequenced, s.Counted, s.Settled)
	}
	for _, ph := range rel.Phases {
		out = append(out, Step(rel.Name, ph))
	}
	out = append(out, rel.MoreSteps...)
	// Each once: a relation may list a protocol phase in Phases.
	seen := make(map[string]bool, len(out))
	kept := out[:0]
	for _, s := range out {
		if !seen[s] {
			seen[s] = true
			kept = append(kept, s)
		}
	}
	return kept
}

// Steps returns the steps of the relation registered with marker kind k
// (Relation.Steps), or nil when none is.
func (p *Protocol) Steps(k tables.PendingKind) []string {
	rel := p.relation(k)
	if rel == nil {
		return nil
	}
	return rel.Steps()
}

// checkSteps reports what is wrong with rel's declared steps: an empty
// phase or step, or a phase holding the separator.
func (rel *Relation) checkSteps() error {
	for _, ph := range rel.Phases {
		if ph == "" || strings.Contains(string(ph), ":") {
			return fmt.Errorf("counted: relation %q: phase %q", rel.Name, ph)
		}
	}
	for _, s := range rel.MoreSteps {
		if s == "" {
			return fmt.Errorf("counted: relation %q: an empty step", rel.Name)
		}
	}
	return nil
}
