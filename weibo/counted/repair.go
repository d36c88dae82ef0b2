package counted

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo/tables"
)

// RepairReport counts what one repair pass did.
type RepairReport struct {
	// Dead is the number of weibo:pending rows older than the grace found.
	Dead int
	// Repaired is how many of them were settled, recounted and deleted.
	Repaired int
}

// Repair runs one pass of the repairer over weibo:pending: every row older
// than the repair grace is the trace of a counted write that died (or
// outlived its budget). For each, it settles the pair from its authority
// (the relation's Settle) — once the relation's Ready allows it — then
// recounts the counters the write may have changed (RecountCounters) —
// unless the write had counted and was kept only to wait
// (tables.ColPendingCounted) — and deletes the row once both are done;
// what cannot be done yet is left for the next pass, and rows of relations
// not registered here are left alone. Writes whose markers live elsewhere
// (publishes) are repaired by their owners (the fan-out's sweep). Then it
// runs the registered repairs (RegisterRepair) over what died before the
// grace. It is safe to run in several gateways at once. Errors are the
// store's.
func (p *Protocol) Repair(ctx context.Context) (RepairReport, error) {
	now := p.NowMillis()
	rep, err := p.repairPending(ctx, now)
	if err != nil {
		return rep, err
	}
	p.mu.RLock()
	repairs := slices.Clone(p.repairs)
	p.mu.RUnlock()
	for _, fn := range repairs {
		if err := fn(ctx, now-p.GraceMillis()); err != nil {
			return rep, wrapRepair(err)
		}
	}
	return rep, nil
}

// repairPending is Repair's pass over weibo:pending at now (ms).
func (p *Protocol) repairPending(ctx context.Context, now int64) (RepairReport, error) {
	var rep RepairReport
	type mark struct {
		key     []byte
		pair    pair
		bound   int64 // Ready's bound
		counted bool  // the write's counters are exact: no recount
	}
	var dead []mark
	err := p.st.Scan(ctx, &hbase.Scan{Table: tables.Pending}, func(r *hbase.Result) error {
		kind, owner, other, _, ok := tables.DecodePendingKey(r.Row)
		at := tables.PendingAt(r)
		if !ok || now-at <= p.GraceMillis() || p.relation(kind) == nil {
			return nil
		}
		m := mark{key: bytes.Clone(r.Row), pair: pair{kind, owner, other, string(tables.PendingExtra(r))}, bound: at + p.GraceMillis()}
		if b, ok := tables.PendingFanouts(r); ok {
			m.bound = b
		}
		m.counted = tables.PendingCounted(r)
		dead = append(dead, m)
		return nil
	})
	if err != nil || len(dead) == 0 {
		return rep, wrapRepair(err)
	}
	rep.Dead = len(dead)
	// Settle each pair once.
	settled := map[pair]bool{}
	for _, m := range dead {
		if _, done := settled[m.pair]; done {
			continue
		}
		ok, err := p.settle(ctx, m.pair, m.bound)
		if err != nil {
			return rep, wrapRepair(err)
		}
		settled[m.pair] = ok
	}
	// Recount the counters of the settled pairs, except those whose every
	// dead write counted (an unfollow kept only for the fan-outs it raced).
	recount := map[pair]bool{}
	for _, m := range dead {
		if !m.counted {
			recount[m.pair] = true
		}
	}
	idx := map[Counter]int{}
	var cs []Counter
	for pr, ok := range settled {
		if !ok || !recount[pr] {
			continue
		}
		for _, c := range pr.counters(p) {
			if _, seen := idx[c]; !seen {
				idx[c] = len(cs)
				cs = append(cs, c)
			}
		}
	}
	res, err := p.RecountCounters(ctx, cs)
	if err != nil {
		return rep, wrapRepair(err)
	}
	var dels []*hbase.Delete
	for _, m := range dead {
		if !settled[m.pair] {
			continue
		}
		done := true
		if recount[m.pair] {
			for _, c := range m.pair.counters(p) {
				done = done && res[idx[c]].Done
			}
		}
		if done {
			dels = append(dels, &hbase.Delete{Table: tables.Pending, Row: m.key})
		}
	}
	if len(dels) > 0 {
		if err := p.st.DeleteMany(ctx, dels); err != nil {
			return rep, wrapRepair(err)
		}
	}
	rep.Repaired = len(dels)
	p.log.Info("repair: dead writes", "found", rep.Dead, "repaired", rep.Repaired)
	return rep, nil
}

// pair is one relation's pair, as its markers name it.
type pair struct {
	kind         tables.PendingKind
	owner, other uint64
	extra        string // the marker's ColPendingExtra
}

func (pr pair) counters(p *Protocol) []Counter {
	var extra []byte
	if pr.extra != "" {
		extra = []byte(pr.extra)
	}
	return p.relation(pr.kind).counters(pr.owner, pr.other, extra)
}

// settle settles pr for the repairer once its relation is ready; false
// when it is not ready yet or its authority kept changing.
func (p *Protocol) settle(ctx context.Context, pr pair, bound int64) (bool, error) {
	rel := p.relation(pr.kind)
	if rel.Ready != nil {
		ready, err := rel.Ready(ctx, pr.owner, pr.other, bound)
		if err != nil || !ready {
			return false, err
		}
	}
	var extra []byte
	if pr.extra != "" {
		extra = []byte(pr.extra)
	}
	err := rel.Settle(ctx, pr.owner, pr.other, extra)
	if errors.Is(err, ErrUnsettled) {
		return false, nil
	}
	return err == nil, err
}

func wrapRepair(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("repair: %w", err)
}
