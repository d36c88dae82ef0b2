package report

import (
	"context"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/check"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/tables"
)

// The reports' part of `gateway fsck` (package check):
//
//	pair      authority         dependents
//	report    its report row    its status's index row, its reporter's index row;
//	                            the counts of OPEN and RESOLVED reports
//
// One scan of weibo:reports reads every row: each report's index rows are
// checked against its row (missing: written by the relation's settle;
// stale — a status row of another status, a row of no report —: deleted
// by the same settle), and the two counters against the statuses counted
// (recounted through the protocol).

// Kinds of check.Issue of the reports.
const (
	IssueIndexMissing = "report-index-missing" // a report without its status or reporter index row: written
	IssueIndexStale   = "report-index-stale"   // an index row of another status or of no report: deleted
	IssueCount        = "report-count"         // a count of OPEN or RESOLVED reports off the report rows: recounted
)

// fsckCheck is the reports' check, registered by New.
func (s *Service) fsckCheck() check.Check {
	return check.Check{Name: Relation, Start: func(p *check.Pass) check.Run {
		return check.Run{Check: func(ctx context.Context) error { return s.check(ctx, p) }}
	}}
}

// check runs the check on p.
func (s *Service) check(ctx context.Context, p *check.Pass) error {
	type seen struct {
		rep    *Report
		ts     int64
		status map[tables.ReportStatus]int64 // index rows by status, their timestamps
		mine   bool
		mineTS int64
	}
	reports := map[weibo.ReportID]*seen{}
	get := func(id weibo.ReportID) *seen {
		f := reports[id]
		if f == nil {
			f = &seen{status: map[tables.ReportStatus]int64{}}
			reports[id] = f
		}
		return f
	}
	var counts *hbase.Result
	var reporters []struct {
		uid weibo.UserID
		id  weibo.ReportID
		ts  int64
	}
	err := p.Scan(ctx, &hbase.Scan{Table: tables.Reports}, func(r *hbase.Result) {
		switch {
		case len(r.Row) == 1 && r.Row[0] == tables.ReportCountsKey[0]:
			counts = r
		case len(r.Row) == tables.ReportKeyLen:
			if id, ok := tables.DecodeReportKey(r.Row); ok {
				f := get(id)
				f.rep, f.ts = fromRow(r), check.NewestTS(r)
			}
		case len(r.Row) == tables.ReportStatusKeyLen:
			if st, id, ok := tables.DecodeReportStatusKey(r.Row); ok {
				get(id).status[st] = check.NewestTS(r)
			}
		default:
			if uid, id, ok := tables.DecodeReportReporterKey(r.Row); ok {
				reporters = append(reporters, struct {
					uid weibo.UserID
					id  weibo.ReportID
					ts  int64
				}{uid, id, check.NewestTS(r)})
			}
		}
	})
	if err != nil {
		return err
	}
	var open, resolved int64
	for _, x := range reporters {
		f := get(x.id)
		if f.rep != nil && f.rep.Reporter == x.uid {
			f.mine, f.mineTS = true, x.ts
			continue
		}
		id, uid := x.id, x.uid
		if err := p.Issue(IssueIndexStale, x.ts, func() (bool, error) {
			return true, s.st.Delete(ctx, &hbase.Delete{Table: tables.Reports, Row: tables.ReportReporterKey(uid, id)})
		}, "reporter index row of report %s by user %s without its report", id, uid); err != nil {
			return err
		}
	}
	for id, f := range reports {
		fix := func() (bool, error) { _, err := s.settle(ctx, id); return true, err }
		if f.rep == nil {
			for st, ts := range f.status {
				if err := p.Issue(IssueIndexStale, ts, fix, "%s index row of report %s without its report", statuses[st], id); err != nil {
					return err
				}
			}
			continue
		}
		if f.rep.state.Status == tables.ReportOpen {
			open++
		} else {
			resolved++
		}
		if _, ok := f.status[f.rep.state.Status]; !ok {
			if err := p.Issue(IssueIndexMissing, f.ts, fix, "report %s (%s) without its index row", id, f.rep.Status); err != nil {
				return err
			}
		}
		for st, ts := range f.status {
			if st != f.rep.state.Status {
				if err := p.Issue(IssueIndexStale, max(ts, f.ts), fix, "report %s (%s) listed %s", id, f.rep.Status, statuses[st]); err != nil {
					return err
				}
			}
		}
		if !f.mine {
			if err := p.Issue(IssueIndexMissing, f.ts, fix, "report %s without its reporter's index row", id); err != nil {
				return err
			}
		}
	}
	var found []check.Found
	var cs []counted.Counter
	for i, want := range []int64{open, resolved} {
		c := counters[i]
		qual := []string{tables.ColReportsOpen, tables.ColReportsResolved}[i]
		var got, ts int64
		if counts != nil {
			got = tables.CounterIn(counts, tables.FamReportCount, qual)
			if cell := counts.Cell(tables.FamReportCount, qual); cell != nil {
				ts = cell.Timestamp
			}
		}
		if got != want {
			found = append(found, check.Found{Issue: check.Issue{Kind: IssueCount, Detail: c.String() + " off the report rows"}, TS: ts})
			cs = append(cs, c)
		}
	}
	if len(found) == 0 {
		return nil
	}
	return p.Batch(found, func(idx []int) ([]bool, error) {
		sub := make([]counted.Counter, len(idx))
		for i, j := range idx {
			sub[i] = cs[j]
		}
		rs, err := s.w.RecountCounters(ctx, sub)
		done := make([]bool, len(idx))
		for i := range rs {
			done[i] = rs[i].Done
		}
		return done, err
	})
}
