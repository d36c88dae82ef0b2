package counted_test

import (
	"context"
	"slices"
	"testing"

	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestStepsOf: the step names come from the relation's name and the
// protocol's phases, and the names the protocol runs are those.
func TestStepsOf(t *testing.T) {
	got := counted.StepsOf("like")
	want := counted.Steps{Marked: "like:marked", Sequenced: "like:sequenced", Decided: "like:decided",
		Counted: "like:counted", Settled: "like:settled"}
	if got != want {
		t.Errorf("StepsOf(like) = %+v, want %+v", got, want)
	}
	if s := counted.Step("relation", "fans"); s != "relation:fans" {
		t.Errorf("Step(relation, fans) = %q", s)
	}
}

// TestRelationSteps: a relation's steps are the protocol's, its phases'
// and its more steps, each once; the registry returns them by marker
// kind; and a write runs exactly the protocol's in order.
func TestRelationSteps(t *testing.T) {
	ctx := t.Context()
	st := testenv.Embedded(t)
	if err := tables.Migrate(ctx, st); err != nil {
		t.Fatal(err)
	}
	var ran []string
	w := counted.New(st, counted.WithStepHook(func(_ context.Context, s string) error {
		ran = append(ran, s)
		return nil
	}))
	x := &toy{w: w, st: st}
	rel := x.register()
	rel.Phases = []counted.Phase{counted.PhaseDecided, "dependents", counted.PhaseCounted}
	rel.MoreSteps = []string{"fanout:written"}
	want := []string{"toy:marked", "toy:sequenced", "toy:counted", "toy:settled", "toy:decided", "toy:dependents", "fanout:written"}
	if got := rel.Steps(); !slices.Equal(got, want) {
		t.Errorf("Steps() = %q, want %q", got, want)
	}
	if got := w.Steps(tables.PendingRole); !slices.Equal(got, want) {
		t.Errorf("Protocol.Steps(role) = %q, want %q", got, want)
	}
	if got := w.Steps(tables.PendingLike); got != nil {
		t.Errorf("Protocol.Steps of an unregistered kind = %q", got)
	}
	marker := &counted.Relation{Name: "outbox", InFlight: func(context.Context, int64) ([]counted.Counter, error) { return nil, nil },
		Counters: func(uint64, uint64) []counted.Counter { return nil }, Phases: []counted.Phase{"content"}}
	if got := marker.Steps(); !slices.Equal(got, []string{"outbox:content"}) {
		t.Errorf("Steps() of a relation without a marker = %q", got)
	}

	op, err := w.Begin(ctx, rel, 3, 4)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Count(ctx, op, 1); err != nil {
		t.Fatal(err)
	}
	if err := w.End(ctx, op); err != nil {
		t.Fatal(err)
	}
	s := counted.StepsOf("toy")
	if want := []string{s.Marked, s.Sequenced, s.Counted, s.Settled}; !slices.Equal(ran, want) {
		t.Errorf("a write ran %q, want %q", ran, want)
	}

	for _, bad := range [][]counted.Phase{{""}, {"a:b"}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("phases %q: no panic", bad)
				}
			}()
			w.Register(&counted.Relation{Name: "bad", Marker: tables.PendingLike, Phases: bad,
				Counters: func(uint64, uint64) []counted.Counter { return nil },
				Settle:   func(context.Context, uint64, uint64, []byte) error { return nil }})
		}()
	}
}
