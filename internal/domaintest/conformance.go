package domaintest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/weibohbase/gateway/fsck"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/counted/countedtest"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/notify"
	"github.com/weibohbase/gateway/weibo/tables"
)

// ConformanceDomain builds the domain the way a gateway process over st
// does, quiet, with the conformance suite's clock, repair grace and step
// hook (cfg); its fan-out lease is half the grace.
func ConformanceDomain(st hbase.Store, cfg countedtest.Config) *domain.Domain {
	return domain.New(st, domain.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		domain.WithBcryptCost(4), domain.WithOutboxSweep(0), domain.WithClock(cfg.Now),
		domain.WithRepairGrace(cfg.Grace), domain.WithFanoutLease(cfg.Grace/2), domain.WithStepHook(cfg.Hook))
}

// StepAcknowledged is the step every call the conformance suite makes
// through a DomainModule reaches once it has returned successfully, before
// its handle's background work (the fan-out, a delete's retraction) runs:
// a module that declares it has its calls killed right after they were
// acknowledged.
const StepAcknowledged = "call:acknowledged"

// DomainModule returns the module (countedtest.Module) of the domain's
// relation of marker kind marker: its wiring (ConformanceDomain), its
// background work run to its end at each restart (the fan-out, whose
// sweep also repairs), weibo:outbox as a table of markers (a publish's)
// and `gateway fsck` over the whole store, one line per issue ("kind:
// detail"). decided is the step after the pair's authority is written (""
// for the relation's counted.StepsOf Decided), steps the steps to kill its
// writes at (nil for the relation's declared ones), setup the pair of each
// case. A relation with no marker kind (a publish) is named by setting
// the module's Relation, with marker 0.
//
// A call the suite makes (on a handle with its step hook) that succeeds
// reaches StepAcknowledged, then has its handle's background work run to
// its end before it returns, as a process that lives on would finish it:
// the store the suite then checks is the one the call leaves, not one it
// is still writing. A kill there is the call's: the call returns it. A
// call that fails (killed) is left as it stopped. A handle killed once
// stays dead: every step it reaches afterwards fails too, as nothing runs
// in a killed process.
func DomainModule(marker tables.PendingKind, decided string, steps []string,
	setup func(t *testing.T, d *domain.Domain) *countedtest.Pair[*domain.Domain]) countedtest.Module[*domain.Domain] {
	var mu sync.Mutex
	calls := map[*domain.Domain]*atomic.Pointer[error]{} // the handles with the suite's step hook: their kill
	finish := func(ctx context.Context, d *domain.Domain, err error) error {
		mu.Lock()
		killed := calls[d]
		mu.Unlock()
		if err != nil || killed == nil {
			return err
		}
		if err := d.Writes.Step(ctx, StepAcknowledged); err != nil {
			return err
		}
		err = quiesce(ctx, d)
		if kill := killed.Load(); kill != nil {
			return errors.Join(*kill, d.Close(ctx))
		}
		return err
	}
	return countedtest.Module[*domain.Domain]{
		Marker:       marker,
		MarkerTables: []string{tables.Outbox},
		Steps:        steps,
		Decided:      decided,
		Open: func(st hbase.Store, cfg countedtest.Config) *domain.Domain {
			hook := cfg.Hook
			if hook == nil {
				return ConformanceDomain(st, cfg)
			}
			killed := new(atomic.Pointer[error])
			cfg.Hook = func(ctx context.Context, step string) error {
				if kill := killed.Load(); kill != nil {
					return *kill
				}
				err := hook(ctx, step)
				if err != nil {
					killed.CompareAndSwap(nil, &err)
				}
				return err
			}
			d := ConformanceDomain(st, cfg)
			mu.Lock()
			calls[d] = killed
			mu.Unlock()
			return d
		},
		Protocol: func(d *domain.Domain) *counted.Protocol { return d.Writes },
		Quiesce:  quiesce,
		Setup: func(t *testing.T, d *domain.Domain) *countedtest.Pair[*domain.Domain] {
			pr := setup(t, d)
			if pr == nil {
				return pr
			}
			if do := pr.Do; do != nil {
				pr.Do = func(ctx context.Context, d *domain.Domain) error { return finish(ctx, d, do(ctx, d)) }
			}
			if undo := pr.Undo; undo != nil {
				pr.Undo = func(ctx context.Context, d *domain.Domain) error { return finish(ctx, d, undo(ctx, d)) }
			}
			return pr
		},
		Fsck: func(ctx context.Context, d *domain.Domain) ([]string, error) {
			rep, err := fsck.Run(ctx, d, fsck.Options{RepairGrace: countedtest.Grace})
			if err != nil {
				return nil, err
			}
			var out []string
			for _, i := range rep.Issues {
				out = append(out, fmt.Sprintf("%s: %s", i.Kind, i.Detail))
			}
			return out, nil
		},
	}
}

// quiesce runs d's background work to its end and stops it: the fan-out
// (whose start also sweeps the outbox and repairs) and the retractions.
func quiesce(ctx context.Context, d *domain.Domain) error {
	if err := d.Start(ctx); err != nil {
		return err
	}
	if err := d.FlushFanout(ctx); err != nil {
		return err
	}
	return d.Close(ctx)
}

// Declared returns the steps that the relations of kinds declare on the
// protocol of a domain over st (counted.Protocol.Steps), then more, each
// once.
func Declared(st hbase.Store, kinds []tables.PendingKind, more ...string) []string {
	p := domain.New(st).Writes
	var out []string
	for _, k := range kinds {
		out = append(out, p.Steps(k)...)
	}
	for _, s := range more {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// NotifyWrite are the protocol's steps of the notify write an action
// makes; NotifySteps are those and the notify relation's own steps that
// such a write reaches (the relation declares one more, notify.StepRead,
// which only markNotificationsRead runs).
var (
	NotifyWrite = []string{notify.StepMarked, notify.StepSequenced, notify.StepCounted, counted.StepsOf(notify.Relation).Settled}
	NotifySteps = append(slices.Clone(NotifyWrite), notify.StepActor, notify.StepGroup, notify.StepIndexed)
)

// MarkDecidedBefore makes m's handles run the step decided just before
// each of the steps before: for a write that never runs its relation's
// decided step itself (the delete's, whose authority is the content row,
// marks it before the step that follows that row's write), so that the
// suite can tell a call killed before its decision from one killed after.
func MarkDecidedBefore(m *countedtest.Module[*domain.Domain], decided string, before ...string) {
	open := m.Open
	m.Open = func(st hbase.Store, cfg countedtest.Config) *domain.Domain {
		if hook := cfg.Hook; hook != nil {
			cfg.Hook = func(ctx context.Context, step string) error {
				if slices.Contains(before, step) {
					if err := hook(ctx, decided); err != nil {
						return err
					}
				}
				return hook(ctx, step)
			}
		}
		return open(st, cfg)
	}
}
