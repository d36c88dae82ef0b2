package suspend

import (
	"context"
	"strings"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/audit"
	"github.com/weibohbase/gateway/weibo/check"
	"github.com/weibohbase/gateway/weibo/tables"
)

// The suspensions' part of `gateway fsck` (package check). The table is
// its own authority, with nothing derived from it, so what can be wrong
// is a row itself: a rowkey that is no user's (IssueBadKey), a row whose
// cells do not decode (IssueMalformed: it suspends nobody, as the
// registry reads it), and a suspension of a user who does not exist
// (IssueNoUser). A row is written whole by one Put, so none of these is a
// write in flight: no grace spares them. All are reported, none repaired: which suspension a
// moderator meant is not for fsck to guess. A row holding only an audit
// proof cell (a change whose event is pending, audit.ProofPrefix) is the
// audit log's, and not an issue here.

// A proof cell of a change's audit event (audit.ProofQualifier) exists
// only while its pending event does (the audit log's settle deletes the
// cell before the pending row); one without its pending row, older than
// the grace, is debris (IssueProofStale), deleted by the repair, as fsck
// does for the organisation's rows.

// Kinds of check.Issue of the suspensions.
const (
	IssueProofStale = "suspension-proof-stale" // an audit proof cell without its pending event: deleted
	IssueBadKey     = "suspension-bad-key"     // a rowkey that is no user's: reported
	IssueMalformed  = "suspension-malformed"   // cells that do not decode: reported
	IssueNoUser     = "suspension-no-user"     // a suspension of a user without a users row: reported
)

// fsckCheck is the suspensions' check, registered by New.
func (s *Service) fsckCheck() check.Check {
	return check.Check{Name: "suspension", Start: func(p *check.Pass) check.Run {
		users := map[weibo.UserID]bool{}
		return check.Run{
			User: func(uid weibo.UserID, r *hbase.Result) {
				if r.Value(tables.FamInfo, tables.ColUsername) != nil {
					users[uid] = true
				}
			},
			Check: func(ctx context.Context) error {
				var issues []func() error
				var proofs []proofCell
				err := p.Scan(ctx, &hbase.Scan{Table: tables.Suspensions}, func(r *hbase.Result) {
					for _, c := range r.Cells {
						if id, ok := audit.DecodeProofQualifier(c.Qualifier); ok {
							proofs = append(proofs, proofCell{row: r.Row, qualifier: c.Qualifier, id: id, ts: c.Timestamp})
						}
					}
					uid, ok := tables.DecodeSuspensionKey(r.Row)
					if !ok {
						issues = append(issues, func() error {
							return p.Issue(IssueBadKey, 0, nil, "weibo:suspensions row %x is no user's", r.Row)
						})
						return
					}
					if onlyProofs(r) {
						return
					}
					if _, ok := tables.DecodeSuspension(r); !ok {
						issues = append(issues, func() error {
							return p.Issue(IssueMalformed, 0, nil, "the suspension of user %s does not decode", uid)
						})
						return
					}
					if !users[uid] {
						issues = append(issues, func() error {
							return p.Issue(IssueNoUser, 0, nil, "user %s is suspended but has no users row", uid)
						})
					}
				})
				if err != nil {
					return err
				}
				for _, f := range issues {
					if err := f(); err != nil {
						return err
					}
				}
				return checkProofs(ctx, p, proofs)
			},
		}
	}}
}

// onlyProofs reports whether r holds nothing but audit proof cells.
func onlyProofs(r *hbase.Result) bool {
	for _, c := range r.Cells {
		if !strings.HasPrefix(c.Qualifier, audit.ProofPrefix) {
			return false
		}
	}
	return true
}

// proofCell is an audit proof cell found in a weibo:suspensions row.
type proofCell struct {
	row       []byte
	qualifier string
	id        audit.EventID
	ts        int64
}

// checkProofs reports (and, repairing, deletes) each proof cell whose
// pending event is gone: one GetMany of the pending rows.
func checkProofs(ctx context.Context, p *check.Pass, proofs []proofCell) error {
	if len(proofs) == 0 {
		return nil
	}
	gets := make([]*hbase.Get, len(proofs))
	for i, c := range proofs {
		gets[i] = &hbase.Get{Table: tables.Audit, Row: audit.PendingKey(c.id), Families: []string{tables.FamAudit}}
	}
	rs, err := p.Store().GetMany(ctx, gets)
	if err != nil {
		return err
	}
	for i, c := range proofs {
		if rs[i].Exists() {
			continue
		}
		err := p.Issue(IssueProofStale, c.ts, func() (bool, error) {
			cur, err := p.Store().Get(ctx, gets[i])
			if err != nil || cur.Exists() {
				return false, err // pending again: not debris
			}
			return true, p.Store().Delete(ctx, &hbase.Delete{Table: tables.Suspensions, Row: c.row,
				Values: hbase.Values{tables.FamSuspension: {c.qualifier: nil}}})
		}, "audit proof cell %s in the weibo:suspensions row %x without its pending event", c.id, c.row)
		if err != nil {
			return err
		}
	}
	return nil
}
