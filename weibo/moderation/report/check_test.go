package report_test

import (
	"testing"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo/moderation/report"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestReportChecks damages the reports' rows one kind at a time — a
// report without its status's index row, one without its reporter's
// row, an index row of the other status, an index row of no report, the
// OPEN count off by some — and checks that fsck reports each, that
// --repair fixes all of them, and that a second run finds nothing.
func TestReportChecks(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st, svc, _ := domaintest.FsckService(t, b)
			mod := domaintest.MustUser(t, svc, domaintest.Uniq("mod"))
			a, c := reported(t, svc), reported(t, svc)
			resolved := reported(t, svc)
			if _, err := svc.Reports.Resolve(ctx, mod.ID, resolved.ID, report.ActionDismiss, nil, nil); err != nil {
				t.Fatal(err)
			}
			domaintest.CheckFsck(t, svc)
			entry := hbase.Values{tables.FamReportIndex: {tables.ColReportEntry: {}}}
			damage := []domaintest.Damage{
				{Kind: report.IssueIndexMissing, Do: func() error {
					return st.Delete(ctx, &hbase.Delete{Table: tables.Reports, Row: tables.ReportStatusKey(tables.ReportOpen, a.ID)})
				}},
				{Kind: report.IssueIndexMissing, Do: func() error {
					return st.Delete(ctx, &hbase.Delete{Table: tables.Reports, Row: tables.ReportReporterKey(c.Reporter, c.ID)})
				}},
				{Kind: report.IssueIndexStale, Do: func() error {
					return st.Put(ctx, &hbase.Put{Table: tables.Reports, Row: tables.ReportStatusKey(tables.ReportOpen, resolved.ID), Values: entry})
				}},
				{Kind: report.IssueIndexStale, Do: func() error {
					return st.Put(ctx, &hbase.Put{Table: tables.Reports, Row: tables.ReportStatusKey(tables.ReportResolved, tables.NewReportID(1, 7)), Values: entry})
				}},
				{Kind: report.IssueCount, Do: func() error {
					// A version newer than the counter's cell.
					r, err := st.Get(ctx, &hbase.Get{Table: tables.Reports, Row: tables.ReportCountsKey})
					if err != nil {
						return err
					}
					return st.Put(ctx, &hbase.Put{Table: tables.Reports, Row: tables.ReportCountsKey, Timestamp: r.Cell(tables.FamReportCount, tables.ColReportsOpen).Timestamp + 1,
						Values: hbase.Values{tables.FamReportCount: {tables.ColReportsOpen: tables.EncodeCounter(40)}}})
				}},
			}
			domaintest.FsckRepairs(t, svc, domaintest.Damaged(t, damage))
			open, res, err := svc.Reports.Counts(ctx)
			if err != nil || open != 2 || res != 1 {
				t.Fatalf("counts after the repair: %d open, %d resolved (%v), want 2, 1", open, res, err)
			}
			st2 := report.StatusOpen
			conn, err := svc.Reports.Queue(ctx, report.Filter{Status: &st2}, nil, nil)
			if err != nil || len(conn.Edges) != 2 || conn.Edges[0].Report.ID != c.ID || conn.Edges[1].Report.ID != a.ID {
				t.Fatalf("OPEN queue after the repair: %+v %v", conn, err)
			}
			mine, err := svc.Reports.Mine(ctx, c.Reporter, nil, nil)
			if err != nil || len(mine.Edges) != 1 {
				t.Fatalf("the reporter's list after the repair: %+v %v", mine, err)
			}
		})
	}
}
