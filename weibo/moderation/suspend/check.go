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

// Kinds of check.Issue of the suspensions.
const (
	IssueBadKey    = "suspension-bad-key"   // a rowkey that is no user's: reported
	IssueMalformed = "suspension-malformed" // cells that do not decode: reported
	IssueNoUser    = "suspension-no-user"   // a suspension of a user without a users row: reported
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
				err := p.Scan(ctx, &hbase.Scan{Table: tables.Suspensions}, func(r *hbase.Result) {
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
				return nil
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
