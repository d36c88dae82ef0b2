package fsck

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo/audit"
	"github.com/weibohbase/gateway/weibo/check"
	"github.com/weibohbase/gateway/weibo/tables"
)

// The audit log (weibo:audit, package weibo/audit) is checked in AreaOrg:
//
//	pair                      authority                        dependent
//	audit event               its event row ('t')              its index rows by actor, target, action
//
// Record writes the index rows first and the event row last; Remove
// deletes the event row first. So a write that died leaves index rows
// without their event (AuditIndexStale, deleted; pending while younger
// than Options.Grace, as a Record in flight may still write its event
// row), and no write in flight ever leaves an event row without an index
// row or with a copy that differs from it (AuditIndexMissing, rewritten
// from the event row; never pending).
//
// A pending event ('p' row: package audit, "Pending events") is written
// before its change's commit point and deleted once the event is listed;
// one older than the grace is the trace of a change that died
// (AuditPending): resolved from the change's authority row
// (audit.Log.Resolve), listed when the change committed, deleted when it
// did not.
//
// A proof cell (audit.ProofQualifier) in a users, roles or departments
// row exists only while its pending event does: a settle deletes a
// written proof before the pending row, an abandon an armed one before
// it, and Begin writes the pending row before arming. One without its
// pending row is debris (AuditProofStale, deleted; pending while younger
// than the grace, as a change that outlived the repairer's decision may
// still settle it).
//
// The table is streamed in chunks of auditChunk rows, each checked with
// one GetMany (an index row's event row; an event row's index rows), so
// the check's memory does not grow with the log.

// auditChunk is how many rows of weibo:audit are checked at a time.
const auditChunk = 500

// checkAudit checks every row of weibo:audit against its other side.
func (f *fsck) checkAudit(ctx context.Context) error {
	var start []byte
	for {
		rows, err := hbase.ScanAll(ctx, f.st, &hbase.Scan{Table: tables.Audit, Start: start, Limit: auditChunk})
		if errors.Is(err, hbase.ErrTableNotFound) {
			return fmt.Errorf("fsck: %s is missing (run gateway migrate): %w", tables.Audit, err)
		}
		if err != nil {
			return err
		}
		for range rows {
			f.p.CountRow(tables.Audit)
		}
		var index, events []*hbase.Result
		for _, r := range rows {
			switch {
			case len(r.Row) > 0 && audit.Index(r.Row[0]) == audit.ByTime:
				events = append(events, r)
			case len(r.Row) > 0 && audit.Index(r.Row[0]) == audit.Pending:
				if err := f.checkAuditPending(ctx, r); err != nil {
					return err
				}
			default:
				index = append(index, r)
			}
		}
		if err := f.checkAuditIndex(ctx, index); err != nil {
			return err
		}
		if err := f.checkAuditEvents(ctx, events); err != nil {
			return err
		}
		if len(rows) < auditChunk {
			return f.checkAuditProofs(ctx)
		}
		start = append(bytes.Clone(rows[len(rows)-1].Row), 0)
	}
}

// checkAuditPending reports a pending event (every one is an issue: a
// change in flight is younger than the grace) and resolves it: read
// again, it is made visible when its change committed, deleted when not.
// A pending row that does not decode is deleted: no change can prove it.
func (f *fsck) checkAuditPending(ctx context.Context, r *hbase.Result) error {
	key := r.Row
	p, ok := audit.DecodePending(r)
	desc := fmt.Sprintf("malformed pending audit row %q", key)
	if ok {
		desc = fmt.Sprintf("pending audit event %s (%s of %s)", p.Entry.ID, p.Entry.Action, p.Entry.Target)
	}
	return f.issue(ctx, AuditPending, check.NewestTS(r), func() (bool, error) {
		cur, err := f.st.Get(ctx, &hbase.Get{Table: tables.Audit, Row: key, Families: []string{tables.FamAudit}})
		if err != nil || !cur.Exists() {
			return false, err // resolved meanwhile
		}
		p, ok := audit.DecodePending(cur)
		if !ok {
			return true, f.st.Delete(ctx, &hbase.Delete{Table: tables.Audit, Row: key})
		}
		_, err = audit.New(f.st, nil).Resolve(ctx, p)
		return err == nil, err
	}, "%s: its change is over", desc)
}

// auditProof is a proof cell found in an org row.
type auditProof struct {
	table, family, qualifier string
	row                      []byte
	id                       audit.EventID
	ts                       int64
}

// noteProofs keeps the audit proof cells of family fam of r, a row of
// table.
func (f *fsck) noteProofs(table string, r *hbase.Result, fam string) {
	for _, c := range r.Family(fam) {
		if id, ok := audit.DecodeProofQualifier(c.Qualifier); ok {
			f.proofs = append(f.proofs, auditProof{table: table, family: fam, qualifier: c.Qualifier, row: bytes.Clone(r.Row), id: id, ts: c.Timestamp})
		}
	}
}

// checkAuditProofs checks the proof cells noted while loading: each must
// have its pending row (one GetMany per chunk).
func (f *fsck) checkAuditProofs(ctx context.Context) error {
	for chunk := range slices.Chunk(f.proofs, auditChunk) {
		gets := make([]*hbase.Get, len(chunk))
		for i, p := range chunk {
			gets[i] = &hbase.Get{Table: tables.Audit, Row: audit.PendingKey(p.id), Families: []string{tables.FamAudit}}
		}
		rs, err := f.st.GetMany(ctx, gets)
		if err != nil {
			return err
		}
		// The cells noted before the pending rows were checked: those
		// resolved since (their cell deleted) are no issue.
		var orphans []int
		var cells []*hbase.Get
		for i, p := range chunk {
			if !rs[i].Exists() {
				orphans = append(orphans, i)
				cells = append(cells, &hbase.Get{Table: p.table, Row: p.row, Families: []string{p.family}})
			}
		}
		if len(cells) == 0 {
			continue
		}
		now, err := f.st.GetMany(ctx, cells)
		if err != nil {
			return err
		}
		for j, i := range orphans {
			p := chunk[i]
			if now[j].Value(p.family, p.qualifier) == nil {
				continue
			}
			err := f.issue(ctx, AuditProofStale, p.ts, func() (bool, error) {
				cur, err := f.st.Get(ctx, gets[i])
				if err != nil || cur.Exists() {
					return false, err // pending again: not debris
				}
				return true, f.st.Delete(ctx, &hbase.Delete{Table: p.table, Row: p.row, Values: hbase.Values{p.family: {p.qualifier: nil}}})
			}, "proof cell of %s in a row of %s (%q) without its pending event", p.id, p.table, p.row)
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// auditEvents reads the event rows of ids with one GetMany: the stored
// entry of each, nil where there is none (or it does not decode).
func (f *fsck) auditEvents(ctx context.Context, ids []audit.EventID) ([]*audit.Entry, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	gets := make([]*hbase.Get, len(ids))
	for i, id := range ids {
		gets[i] = &hbase.Get{Table: tables.Audit, Row: audit.EventKey(id), Families: []string{tables.FamAudit}}
	}
	rs, err := f.st.GetMany(ctx, gets)
	if err != nil {
		return nil, err
	}
	out := make([]*audit.Entry, len(ids))
	for i, r := range rs {
		if ix, e, ok := audit.DecodeRow(r); ok && ix == audit.ByTime {
			out[i] = e
		}
	}
	return out, nil
}

// lists reports whether event e (nil: none) has an index row at key.
func lists(e *audit.Entry, key []byte) bool {
	return e != nil && slices.ContainsFunc(audit.IndexKeys(e), func(k []byte) bool { return bytes.Equal(k, key) })
}

// checkAuditIndex checks index rows: each must be one its event row
// lists. A row whose key does not decode is listed by no event.
func (f *fsck) checkAuditIndex(ctx context.Context, rows []*hbase.Result) error {
	ids := make([]audit.EventID, 0, len(rows))
	at := make([]int, 0, len(rows)) // ids[j] is the event of rows[at[j]]
	for i, r := range rows {
		if _, id, _, ok := audit.DecodeKey(r.Row); ok {
			ids = append(ids, id)
			at = append(at, i)
		}
	}
	evs, err := f.auditEvents(ctx, ids)
	if err != nil {
		return err
	}
	owner := make([]*audit.Entry, len(rows))
	for j, e := range evs {
		owner[at[j]] = e
	}
	for i, r := range rows {
		if lists(owner[i], r.Row) {
			continue
		}
		key := r.Row
		err := f.issue(ctx, AuditIndexStale, check.NewestTS(r), func() (bool, error) {
			_, id, _, ok := audit.DecodeKey(key)
			if ok {
				cur, err := f.auditEvents(ctx, []audit.EventID{id})
				if err != nil || lists(cur[0], key) {
					return false, err // the event was written meanwhile
				}
			}
			return true, f.st.Delete(ctx, &hbase.Delete{Table: tables.Audit, Row: key})
		}, "%s: its event does not exist or does not list it", describeAuditRow(key))
		if err != nil {
			return err
		}
	}
	return nil
}

// checkAuditEvents checks event rows: each of their index rows must exist
// and hold the event. An event row that does not decode is left alone
// (reads skip it; no index row can be derived from it).
func (f *fsck) checkAuditEvents(ctx context.Context, rows []*hbase.Result) error {
	var (
		entries []*audit.Entry
		gets    []*hbase.Get
		of      []int // gets[j] is an index row of entries[of[j]]
	)
	for _, r := range rows {
		if ix, e, ok := audit.DecodeRow(r); ok && ix == audit.ByTime {
			for _, k := range audit.IndexKeys(e) {
				gets = append(gets, &hbase.Get{Table: tables.Audit, Row: k, Families: []string{tables.FamAudit}})
				of = append(of, len(entries))
			}
			entries = append(entries, e)
		}
	}
	if len(gets) == 0 {
		return nil
	}
	rs, err := f.st.GetMany(ctx, gets)
	if err != nil {
		return err
	}
	var bad []int // indexes into gets of the rows missing or differing
	for j, r := range rs {
		if _, e, ok := audit.DecodeRow(r); !ok || *e != *entries[of[j]] {
			bad = append(bad, j)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	// Read the events again: one removed since the scan (Remove deletes
	// its event row first) is not an issue.
	ids := make([]audit.EventID, len(bad))
	for i, j := range bad {
		ids[i] = entries[of[j]].ID
	}
	now, err := f.auditEvents(ctx, ids)
	if err != nil {
		return err
	}
	for i, j := range bad {
		e := entries[of[j]]
		if now[i] == nil || *now[i] != *e {
			continue
		}
		key := gets[j].Row
		err := f.issue(ctx, AuditIndexMissing, 0, func() (bool, error) {
			return f.writeAuditIndex(ctx, e, key)
		}, "%s is missing or differs from its event", describeAuditRow(key))
		if err != nil {
			return err
		}
	}
	return nil
}

// writeAuditIndex writes e's index row key from e, then reads e's event
// row again and deletes the row it wrote if the event was removed
// meanwhile.
func (f *fsck) writeAuditIndex(ctx context.Context, e *audit.Entry, key []byte) (bool, error) {
	if err := f.st.Put(ctx, &hbase.Put{Table: tables.Audit, Row: key, Values: audit.Values(e)}); err != nil {
		return false, err
	}
	cur, err := f.auditEvents(ctx, []audit.EventID{e.ID})
	if err != nil || cur[0] != nil {
		return err == nil, err
	}
	return false, f.st.Delete(ctx, &hbase.Delete{Table: tables.Audit, Row: key})
}

// describeAuditRow names a weibo:audit row for an issue's detail: its
// listing, the listing's key and the event's id.
func describeAuditRow(key []byte) string {
	ix, id, prefix, ok := audit.DecodeKey(key)
	if !ok {
		return fmt.Sprintf("audit row %q", key)
	}
	switch ix {
	case audit.ByActor:
		return fmt.Sprintf("actor index row (user %d) of %s", tables.DecodeU64(prefix[1:]), id)
	case audit.ByTarget:
		return fmt.Sprintf("target index row (%c %d) of %s", prefix[1], tables.DecodeU64(prefix[2:]), id)
	case audit.ByAction:
		return fmt.Sprintf("action index row (%s) of %s", prefix[1:len(prefix)-1], id)
	}
	return fmt.Sprintf("event row of %s", id)
}
