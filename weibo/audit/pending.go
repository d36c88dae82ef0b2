package audit

import (
	"bytes"
	"context"
	"errors"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Pending events: an event of a change is written before the change's
// commit point, as a PENDING row that no listing reads ('p' | rev(8) |
// nonce(8), the event's cells and the Proof of its change), and becomes
// visible — its index rows, then its event row, as Record writes them —
// only once the change committed. Whether it committed is decided from
// the change's own authority row, never guessed: the change's commit
// write (the authority's Put, CheckAndPut, Delete or CheckAndDelete) also
// writes, or deletes, a proof cell of its own in that row, in the same
// atomic row operation (Proof). So a pending event whose change died is
// resolved (Resolve) by the change itself, by the repairer or by `gateway
// fsck`: made visible when the proof says the change committed, deleted
// when it says it did not. Repeated changes of one object (assign,
// revoke, assign) do not confuse it: each event has its own proof cell.

// Pending marks a pending event's row: 'p' | rev(8) | nonce(8). No
// listing reads it; Pending and Resolve do.
const Pending Index = 'p'

// Qualifiers of family tables.FamAudit that only a pending row holds,
// besides the event's cells (Values): where its Proof lives.
const (
	// ColProofTable (audit, e, pending rows) is the table of the change's
	// authority row, as the store names it.
	ColProofTable = "pt"
	// ColProofRow (audit, e, pending rows) is the authority's rowkey.
	ColProofRow = "pr"
	// ColProofFamily (audit, e, pending rows) is the family of the proof
	// cell in the authority row.
	ColProofFamily = "pf"
	// ColProofMode (audit, e, pending rows) is "w" when the commit writes
	// the proof cell, "d" when it deletes it.
	ColProofMode = "pm"
	// ColProofArmed (audit, e, pending rows of mode "d") is "1" once the
	// proof cell was written into the authority row, before the commit.
	ColProofArmed = "pa"
)

// ProofPrefix starts the qualifier of every proof cell: 'A' then the
// event's rev(8) | nonce(8), 17 bytes, a shape no other qualifier of the
// authority families has (a role cell has 8 bytes, a manager cell 9).
const ProofPrefix = "A"

// Proof names the authority row of a change and how its commit write
// proves it: a cell of the event's own (ProofQualifier) in family Family
// of row Row of Table, which the commit writes (Deleted false: a Put or
// CheckAndPut, the cell added to its values) or deletes (Deleted true:
// a Delete or CheckAndDelete, the cell added to what it deletes — or a
// delete of the whole row —, the cell being written, "armed", before the
// commit).
type Proof struct {
	// Table is the authority's table (tables.Users, ...).
	Table string
	// Row is the authority's rowkey.
	Row []byte
	// Family is the family the proof cell goes in.
	Family string
	// Deleted says the commit deletes the proof cell rather than writing it.
	Deleted bool
}

// ProofQualifier is the qualifier of event id's proof cell.
func ProofQualifier(id EventID) string {
	return string(appendSuffix([]byte(ProofPrefix), id))
}

// DecodeProofQualifier decodes a proof cell's qualifier (ProofQualifier);
// ok is false for any other qualifier.
func DecodeProofQualifier(q string) (EventID, bool) {
	if len(q) != 1+16 || q[:1] != ProofPrefix {
		return EventID{}, false
	}
	ix, id, _, ok := DecodeKey(append([]byte{byte(ByTime)}, q[1:]...))
	return id, ok && ix == ByTime
}

// PendingEvent is a pending event: its entry and its change's proof.
type PendingEvent struct {
	// Entry is the event as it will be listed.
	Entry *Entry
	// Proof is where the change's commit proves itself.
	Proof Proof
	// Armed says, for a Proof.Deleted, that the proof cell was written
	// into the authority row: from then on its absence means the change
	// committed.
	Armed bool
}

// Cell returns the proof cell of p: family, qualifier and the value a
// commit that writes it writes (the event's id).
func (p *PendingEvent) Cell() (family, qualifier string, value []byte) {
	return p.Proof.Family, ProofQualifier(p.Entry.ID), []byte(p.Entry.ID.String())
}

// PendingKey is the key of event id's pending row.
func PendingKey(id EventID) []byte { return RowKey([]byte{byte(Pending)}, id) }

// Begin writes e as a pending event of a change about to be committed,
// whose commit proves itself as proof says, and returns it. It checks and
// completes e as Record does. For a proof the commit deletes, it then arms
// it: writes the proof cell into the authority row, then marks the
// pending row armed (before that mark, the event's change cannot have
// committed). Errors: Record's.
func (l *Log) Begin(ctx context.Context, e *Event, proof Proof) (_ *PendingEvent, err error) {
	defer weibo.Wrap(&err, "record audit event")
	entry, err := l.entry(ctx, e)
	if err != nil {
		return nil, err
	}
	p := &PendingEvent{Entry: entry, Proof: proof}
	vals := Values(entry)
	mode := "w"
	if proof.Deleted {
		mode = "d"
	}
	cells := vals[tables.FamAudit]
	cells[ColProofTable], cells[ColProofRow] = []byte(proof.Table), proof.Row
	cells[ColProofFamily], cells[ColProofMode] = []byte(proof.Family), []byte(mode)
	key := PendingKey(entry.ID)
	if err := l.st.Put(ctx, &hbase.Put{Table: tables.Audit, Row: key, Values: vals}); err != nil {
		return nil, err
	}
	if !proof.Deleted {
		return p, nil
	}
	if err := l.putProof(ctx, p); err != nil {
		return nil, err
	}
	if err := l.st.Put(ctx, &hbase.Put{Table: tables.Audit, Row: key, Values: hbase.Values{
		tables.FamAudit: {ColProofArmed: []byte("1")}}}); err != nil {
		return nil, err
	}
	p.Armed = true
	return p, nil
}

// putProof writes p's proof cell into its authority row.
func (l *Log) putProof(ctx context.Context, p *PendingEvent) error {
	fam, q, v := p.Cell()
	return l.st.Put(ctx, &hbase.Put{Table: p.Proof.Table, Row: p.Proof.Row, Values: hbase.Values{fam: {q: v}}})
}

// deleteProof deletes p's proof cell from its authority row.
func (l *Log) deleteProof(ctx context.Context, p *PendingEvent) error {
	fam, q, _ := p.Cell()
	return l.st.Delete(ctx, &hbase.Delete{Table: p.Proof.Table, Row: p.Proof.Row, Values: hbase.Values{fam: {q: nil}}})
}

// Prove records that p's change succeeded without a commit write of its
// own (it changed nothing: a revoke of a role not held): it writes, or
// deletes, the proof cell as the commit would have. Errors are the
// store's.
func (l *Log) Prove(ctx context.Context, p *PendingEvent) error {
	if p.Proof.Deleted {
		return l.deleteProof(ctx, p)
	}
	return l.putProof(ctx, p)
}

// Settle makes p visible, its change having committed: its index rows,
// then its event row (from then on every read lists it), then step (nil:
// none; an error stops Settle there), then the proof cell's delete (a
// written one) and the pending row's. Settling again writes the same
// rows. Errors are the store's or step's.
func (l *Log) Settle(ctx context.Context, p *PendingEvent, step func(context.Context) error) error {
	if err := l.publish(ctx, p.Entry); err != nil {
		return err
	}
	if step != nil {
		if err := step(ctx); err != nil {
			return err
		}
	}
	if !p.Proof.Deleted {
		if err := l.deleteProof(ctx, p); err != nil {
			return err
		}
	}
	return l.st.Delete(ctx, &hbase.Delete{Table: tables.Audit, Row: PendingKey(p.Entry.ID)})
}

// Abandon deletes p, its change having not committed and never to commit
// (refused, or dead past the repair grace): an armed proof is first
// disarmed in the pending row, then deleted from the authority row, so
// that no moment leaves an armed pending row without its proof cell;
// then the pending row goes. Errors are the store's.
func (l *Log) Abandon(ctx context.Context, p *PendingEvent) error {
	key := PendingKey(p.Entry.ID)
	if p.Proof.Deleted {
		if p.Armed {
			if err := l.st.Delete(ctx, &hbase.Delete{Table: tables.Audit, Row: key, Values: hbase.Values{
				tables.FamAudit: {ColProofArmed: nil}}}); err != nil {
				return err
			}
			p.Armed = false
		}
		if err := l.deleteProof(ctx, p); err != nil {
			return err
		}
	}
	return l.st.Delete(ctx, &hbase.Delete{Table: tables.Audit, Row: key})
}

// Resolve settles p when its change committed, else abandons it, and
// reports which (false too when another resolver got there first). It is
// for a pending event whose change is over: dead past the repair grace,
// or refused. The change committed when its event row exists already (a
// settle got that far), or its proof cell was written (Proof.Deleted
// false), or its armed proof cell is gone (true). The authority row is
// read first, then the event and pending rows: a settle writes the event
// row before it deletes a written proof cell, and an abandon disarms the
// pending row before it deletes an armed one, so resolvers running at
// once decide alike. Errors are the store's.
func (l *Log) Resolve(ctx context.Context, p *PendingEvent) (visible bool, err error) {
	defer weibo.Wrapf(&err, "resolve audit event %s", p.Entry.ID)
	fam, q, _ := p.Cell()
	auth, err := l.st.Get(ctx, &hbase.Get{Table: p.Proof.Table, Row: p.Proof.Row, Families: []string{fam}})
	if err != nil {
		return false, err
	}
	has := auth.Value(fam, q) != nil
	rs, err := l.st.GetMany(ctx, []*hbase.Get{
		{Table: tables.Audit, Row: EventKey(p.Entry.ID), Families: []string{tables.FamAudit}},
		{Table: tables.Audit, Row: PendingKey(p.Entry.ID), Families: []string{tables.FamAudit}},
	})
	if err != nil {
		return false, err
	}
	if ix, _, ok := DecodeRow(rs[0]); ok && ix == ByTime {
		return true, l.Settle(ctx, p, nil)
	}
	cur, ok := DecodePending(rs[1])
	if !ok {
		return false, nil // resolved meanwhile
	}
	if cur.Proof.Deleted {
		if cur.Armed && !has {
			return true, l.Settle(ctx, cur, nil)
		}
	} else if has {
		return true, l.Settle(ctx, cur, nil)
	}
	return false, l.Abandon(ctx, cur)
}

// PendingEvents reads the pending events recorded before beforeMs (ms
// since the epoch; math.MaxInt64 for all), oldest first. A pending row
// that does not decode is skipped. Errors are the store's.
func (l *Log) PendingEvents(ctx context.Context, beforeMs int64) (_ []*PendingEvent, err error) {
	defer weibo.Wrap(&err, "pending audit events")
	var out []*PendingEvent
	err = l.st.Scan(ctx, &hbase.Scan{Table: tables.Audit, Prefix: []byte{byte(Pending)}, Families: []string{tables.FamAudit}},
		func(r *hbase.Result) error {
			if p, ok := DecodePending(r); ok && p.Entry.ID.Millis < beforeMs {
				out = append(out, p)
			}
			return nil
		})
	// The rows are newest first (rev); the oldest are resolved first.
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, err
}

// ResolvePending resolves every pending event recorded before beforeMs
// (Resolve) and returns how many were made visible and how many deleted.
// It is the repairer's part of the audit log: a change in flight is
// younger than the repair grace, so beforeMs is now less the grace. Errors
// are the store's; the events resolved before one stay resolved.
func (l *Log) ResolvePending(ctx context.Context, beforeMs int64) (visible, deleted int, err error) {
	ps, err := l.PendingEvents(ctx, beforeMs)
	if err != nil {
		return 0, 0, err
	}
	var errs []error
	for _, p := range ps {
		ok, err := l.Resolve(ctx, p)
		switch {
		case err != nil:
			errs = append(errs, err)
		case ok:
			visible++
		default:
			deleted++
		}
	}
	return visible, deleted, errors.Join(errs...)
}

// DecodePending decodes a pending row; ok is false for any other row and
// for a malformed one.
func DecodePending(r *hbase.Result) (*PendingEvent, bool) {
	ix, e, ok := DecodeRow(r)
	if !ok || ix != Pending {
		return nil, false
	}
	p := &PendingEvent{Entry: e, Proof: Proof{
		Table:  string(r.Value(tables.FamAudit, ColProofTable)),
		Row:    bytes.Clone(r.Value(tables.FamAudit, ColProofRow)),
		Family: string(r.Value(tables.FamAudit, ColProofFamily)),
	}}
	switch string(r.Value(tables.FamAudit, ColProofMode)) {
	case "w":
	case "d":
		p.Proof.Deleted = true
		p.Armed = string(r.Value(tables.FamAudit, ColProofArmed)) == "1"
	default:
		return nil, false
	}
	if p.Proof.Table == "" || len(p.Proof.Row) == 0 || p.Proof.Family == "" {
		return nil, false
	}
	return p, true
}
