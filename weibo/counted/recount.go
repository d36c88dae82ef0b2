package counted

import (
	"context"
	"fmt"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo/tables"
)

// mustSpec returns the registered spec of k; an unregistered kind is a
// wiring mistake of the program and panics.
func (p *Protocol) mustSpec(k CounterKind) *CounterSpec {
	s, err := p.spec(k)
	if err != nil {
		panic(err)
	}
	return s
}

// SeqIncrement is the Increment of c's operation sequence (step 2 of a
// counted write).
func (p *Protocol) SeqIncrement(c Counter) *hbase.Increment {
	spec := p.mustSpec(c.Kind)
	table, row, _, seq := spec.Cell(c)
	return &hbase.Increment{Table: table, Row: row, Family: spec.seqFamily(), Qualifier: seq, Amount: 1}
}

// Increment is the Increment of c by d.
func (p *Protocol) Increment(c Counter, d int64) *hbase.Increment {
	spec := p.mustSpec(c.Kind)
	table, row, qual, _ := spec.Cell(c)
	return &hbase.Increment{Table: table, Row: row, Family: spec.family(), Qualifier: qual, Amount: d}
}

// Recount is the outcome of recounting one counter.
type Recount struct {
	// Done tells that the counter now holds the count (or its owner no
	// longer exists); false means a write was in flight and the counter
	// was left for a later pass.
	Done bool
	// Before is the counter's value when read; After the count written.
	Before, After int64
}

// RecountCounters sets each counter of cs to a recount of the rows it
// counts (its CounterSpec.Count) — unless a write that may change it is in
// flight (a marker younger than the repair grace names it), or one starts
// meanwhile: then that counter is left as it is (Done false) for a later
// pass. The write is a CheckAndPut on the counter's operation sequence as
// read before counting, so it never overwrites an Increment it did not
// count. One entry per counter, in order. Errors: an unregistered counter
// kind, and the store's.
func (p *Protocol) RecountCounters(ctx context.Context, cs []Counter) ([]Recount, error) {
	out := make([]Recount, len(cs))
	if len(cs) == 0 {
		return out, nil
	}
	specs := make([]*CounterSpec, len(cs))
	// 1. The sequences and values, before anything is counted.
	gets := make([]*hbase.Get, len(cs))
	for i, c := range cs {
		s, err := p.spec(c.Kind)
		if err != nil {
			return nil, fmt.Errorf("recount: %w", err)
		}
		specs[i] = s
		table, row, _, _ := s.Cell(c)
		fams := []string{s.family()}
		if s.seqFamily() != s.family() {
			fams = append(fams, s.seqFamily())
		}
		gets[i] = &hbase.Get{Table: table, Row: row, Families: fams}
	}
	rs, err := p.st.GetMany(ctx, gets)
	if err != nil {
		return nil, fmt.Errorf("recount: read counters: %w", err)
	}
	// 2. Writes in flight (markers younger than the grace).
	busy, err := p.busyCounters(ctx)
	if err != nil {
		return nil, fmt.Errorf("recount: markers: %w", err)
	}
	// 3. Count, and write the count if the sequence is unchanged.
	for i, c := range cs {
		if busy[c] {
			continue
		}
		table, row, qual, seq := specs[i].Cell(c)
		fam := specs[i].family()
		out[i].Before = tables.CounterIn(rs[i], fam, qual)
		n, exists, err := specs[i].Count(ctx, c)
		if err != nil {
			return nil, fmt.Errorf("recount %s: %w", c, err)
		}
		if !exists {
			out[i].Done = true
			continue
		}
		// Increments write at max(now, the cell's timestamp + 1), so a busy
		// counter's cell can be ahead of the clock: write past it, or the
		// count would be an older version, hidden under the cell.
		put := &hbase.Put{Table: table, Row: row, Values: hbase.Values{fam: {qual: tables.EncodeCounter(n)}}}
		if c := rs[i].Cell(fam, qual); c != nil {
			put.Timestamp = c.Timestamp + 1
		}
		seqFam := specs[i].seqFamily()
		ok, err := p.st.CheckAndPut(ctx, put, seqFam, seq, rs[i].Value(seqFam, seq))
		if err != nil {
			return nil, fmt.Errorf("recount %s: write: %w", c, err)
		}
		out[i] = Recount{Done: ok, Before: out[i].Before, After: n}
		if ok && n != out[i].Before {
			p.log.Info("repair: counter corrected", "counter", c.String(), "was", out[i].Before, "now", n)
		}
	}
	return out, nil
}

// busyCounters returns the counters named by a marker younger than the
// repair grace: a weibo:pending row of a registered relation, or a marker
// a relation's InFlight finds. weibo:pending holds only the writes in
// flight (and the traces of dead ones), so it is read with one scan.
func (p *Protocol) busyCounters(ctx context.Context) (map[Counter]bool, error) {
	young := p.NowMillis() - p.GraceMillis()
	busy := map[Counter]bool{}
	err := p.st.Scan(ctx, &hbase.Scan{Table: tables.Pending}, func(r *hbase.Result) error {
		kind, owner, other, _, ok := tables.DecodePendingKey(r.Row)
		if !ok || tables.PendingAt(r) < young {
			return nil
		}
		if rel := p.relation(kind); rel != nil {
			for _, c := range rel.counters(owner, other, tables.PendingExtra(r)) {
				busy[c] = true
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	p.mu.RLock()
	others := p.inFlight
	p.mu.RUnlock()
	for _, rel := range others {
		cs, err := rel.InFlight(ctx, young)
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			busy[c] = true
		}
	}
	return busy, nil
}

// CountRows counts the rows of sc; with verify, only those whose Get
// (batched, one GetMany per Batch rows) finds what keep accepts (nil keep:
// the row exists), verify returning nil skipping a row; without verify,
// the rows keep accepts (nil keep: all).
func (p *Protocol) CountRows(ctx context.Context, sc *hbase.Scan, verify func(*hbase.Result) *hbase.Get, keep func(*hbase.Result) bool) (int64, error) {
	var n int64
	var gets []*hbase.Get
	if verify == nil && keep != nil {
		err := p.st.Scan(ctx, sc, func(r *hbase.Result) error {
			if keep(r) {
				n++
			}
			return nil
		})
		return n, err
	}
	if keep == nil {
		keep = (*hbase.Result).Exists
	}
	check := func() error {
		if len(gets) == 0 {
			return nil
		}
		rs, err := p.st.GetMany(ctx, gets)
		for _, r := range rs {
			if keep(r) {
				n++
			}
		}
		gets = gets[:0]
		return err
	}
	err := p.st.Scan(ctx, sc, func(r *hbase.Result) error {
		if verify == nil {
			n++
			return nil
		}
		if g := verify(r); g != nil {
			if gets = append(gets, g); len(gets) >= p.batch {
				return check()
			}
		}
		return nil
	})
	if err == nil {
		err = check()
	}
	return n, err
}

// BatchRecount returns the repair of a batch of counter issues
// (check.Pass.Batch), cs holding the counter of each issue by its index:
// it recounts the ones the pass gives it in one RecountCounters call and
// reports which it recounted (a recount a write in flight holds back is
// not).
func (p *Protocol) BatchRecount(ctx context.Context, cs []Counter) func(which []int) ([]bool, error) {
	return func(which []int) ([]bool, error) {
		sel := make([]Counter, len(which))
		for j, i := range which {
			sel[j] = cs[i]
		}
		res, err := p.RecountCounters(ctx, sel)
		done := make([]bool, len(res))
		for i, r := range res {
			done[i] = r.Done
		}
		return done, err
	}
}

// RecountOne returns the repair of one counter issue (check.Pass.Issue):
// it recounts c and reports whether it did.
func (p *Protocol) RecountOne(ctx context.Context, c Counter) func() (bool, error) {
	return func() (bool, error) {
		res, err := p.RecountCounters(ctx, []Counter{c})
		return err == nil && res[0].Done, err
	}
}
