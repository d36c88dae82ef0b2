package report

import (
	"cmp"
	"context"
	"slices"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/paging"
	"github.com/weibohbase/gateway/weibo/tables"
)

// fromRow decodes a report row; nil when r holds no report (no row, or
// no valid state cell).
func fromRow(r *hbase.Result) *Report {
	id, ok := tables.DecodeReportKey(r.Row)
	if !ok {
		return nil
	}
	state, ok := tables.DecodeReportState(r.Value(tables.FamReport, tables.ColReportState))
	if !ok {
		return nil
	}
	cat := r.Value(tables.FamReport, tables.ColReportCategory)
	rep := &Report{ID: id, Status: statuses[state.Status], state: state,
		CreatedAtMillis:  int64(tables.DecodeU64(r.Value(tables.FamReport, tables.ColReportCreated))),
		Reporter:         weibo.UserID(tables.DecodeU64(r.Value(tables.FamReport, tables.ColReportReporter))),
		Target:           weibo.UserID(tables.DecodeU64(r.Value(tables.FamReport, tables.ColReportTarget))),
		Assignee:         weibo.UserID(tables.DecodeU64(r.Value(tables.FamReport, tables.ColReportAssignee))),
		ResolvedAtMillis: int64(tables.DecodeU64(r.Value(tables.FamReport, tables.ColReportResolved))),
		Comment:          text(r.Value(tables.FamReport, tables.ColReportComment)),
		Note:             text(r.Value(tables.FamReport, tables.ColReportNote)),
	}
	rep.Media = tables.DecodeMediaIDs(r.Value(tables.FamReport, tables.ColReportMedia))
	if len(cat) == 1 {
		rep.Category = categories[tables.ReportCategory(cat[0])]
	}
	if a := r.Value(tables.FamReport, tables.ColReportAction); len(a) == 1 {
		if act, ok := actions[tables.ReportAction(a[0])]; ok {
			rep.Action = &act
		}
	}
	for _, c := range r.Cells {
		if c.Family != tables.FamReport {
			continue
		}
		isPost, post, ms, ok := tables.DecodeReportItemQualifier(c.Qualifier)
		switch {
		case !ok:
		case isPost:
			rep.Posts = append(rep.Posts, &ReportedPost{ID: weibo.PostID{Author: rep.Target, Millis: post.Millis}, Content: string(c.Value)})
		default:
			rep.Comments = append(rep.Comments, &ReportedComment{ID: weibo.CommentID{Post: post, Millis: ms, Author: rep.Target}, Content: string(c.Value)})
		}
	}
	slices.SortFunc(rep.Posts, func(a, b *ReportedPost) int { return cmp.Compare(b.ID.Millis, a.ID.Millis) })
	slices.SortFunc(rep.Comments, func(a, b *ReportedComment) int { return cmp.Compare(b.ID.Millis, a.ID.Millis) })
	return rep
}

// text is v as a string, nil when empty.
func text(v []byte) *string {
	if len(v) == 0 {
		return nil
	}
	s := string(v)
	return &s
}

// Get reads reports by id with one batched read: one entry per id, nil
// where none exists. Errors are the store's.
func (s *Service) Get(ctx context.Context, ids []weibo.ReportID) (_ []*Report, err error) {
	defer weibo.Wrap(&err, "reports")
	gets := make([]*hbase.Get, len(ids))
	for i, id := range ids {
		gets[i] = &hbase.Get{Table: tables.Reports, Row: tables.ReportKey(id), Families: []string{tables.FamReport}}
	}
	rs, err := s.st.GetMany(ctx, gets)
	if err != nil {
		return nil, err
	}
	out := make([]*Report, len(ids))
	for i, r := range rs {
		out[i] = fromRow(r)
	}
	return out, nil
}

// Filter narrows the queue; zero fields do not.
type Filter struct {
	// Status keeps the reports of one status; nil: both.
	Status *Status
	// Category keeps those of one category; nil: all.
	Category *Category
	// Target keeps those reporting one user; 0: all.
	Target weibo.UserID
	// Assignee keeps those assigned to one moderator; 0: all.
	Assignee weibo.UserID
}

// match reports whether r passes f.
func (f Filter) match(r *Report) bool {
	return r != nil && (f.Status == nil || r.Status == *f.Status) && (f.Category == nil || r.Category == *f.Category) &&
		(f.Target == 0 || r.Target == f.Target) && (f.Assignee == 0 || r.Assignee == f.Assignee)
}

// Edge is one edge of a Connection.
type Edge struct {
	// Report is the edge's node.
	Report *Report
	// Cursor is the edge's opaque cursor.
	Cursor string
}

// Connection is one page of reports, newest first.
type Connection struct {
	// Edges are the page's edges.
	Edges []Edge
	// PageInfo is the Relay page info.
	PageInfo weibo.PageInfo
	// TotalCount is the number of reports of the filter's status (of
	// both without one) from the kept counters; nil when the filter has
	// other criteria, and for a reporter's list.
	TotalCount *int
}

// QueueRounds bounds the scans of one page of the queue: each reads at
// most as many rows as the page still lacks (first+1 at most), so a page
// reads at most QueueRounds*(first+1) index rows and their report rows,
// whatever the filter. A page cut short by the bound has HasNextPage and
// an endCursor after the last row read, where the next page goes on.
const QueueRounds = 4

// cursor of the queue and of a reporter's list: + ~id(8), the rowkey
// after its prefix.
const cursorReports paging.CursorKind = 'F'

// Queue pages through the reports f keeps, newest first. With a status,
// it scans that status's index rows, each verified against its report
// row (one batched read per scan: an index row whose report holds
// another status is skipped, a write in flight or the trace of one that
// died); without, the report rows themselves. The other criteria are
// applied to the report rows as read, within QueueRounds scans.
// TotalCount is set from the kept counters when f has at most a status.
// Errors: BAD_USER_INPUT for a bad first or after; the store's.
func (s *Service) Queue(ctx context.Context, f Filter, first *int, after *string) (_ *Connection, err error) {
	defer weibo.Wrap(&err, "reports")
	q := paging.Query{Kind: cursorReports, Rounds: QueueRounds, RowLen: tables.ReportKeyLen,
		Scan: hbase.Scan{Table: tables.Reports, Prefix: tables.ReportsPrefix(), Families: []string{tables.FamReport}}}
	verify := func(_ context.Context, rows []*hbase.Result) ([]*Report, error) {
		out := make([]*Report, len(rows))
		for i, r := range rows {
			if rep := fromRow(r); f.match(rep) {
				out[i] = rep
			}
		}
		return out, nil
	}
	if f.Status != nil {
		st, _ := byteOf(statuses, *f.Status)
		q.RowLen = tables.ReportStatusKeyLen
		q.Scan = hbase.Scan{Table: tables.Reports, Prefix: tables.ReportStatusPrefix(st), Families: []string{tables.FamReportIndex}}
		verify = s.verifyIndex(f)
	}
	conn, err := s.page(ctx, q, first, after, verify)
	if err != nil {
		return nil, err
	}
	if f.Category == nil && f.Target == 0 && f.Assignee == 0 {
		open, resolved, err := s.Counts(ctx)
		if err != nil {
			return nil, err
		}
		n := open + resolved
		if f.Status != nil && *f.Status == StatusOpen {
			n = open
		} else if f.Status != nil {
			n = resolved
		}
		total := int(n)
		conn.TotalCount = &total
	}
	return conn, nil
}

// Mine pages through reporter's reports, newest first: their index rows,
// each verified against its report row.
// Errors: BAD_USER_INPUT for a bad first or after; the store's.
func (s *Service) Mine(ctx context.Context, reporter weibo.UserID, first *int, after *string) (_ *Connection, err error) {
	defer weibo.Wrap(&err, "my reports")
	q := paging.Query{Kind: cursorReports, Rounds: QueueRounds, RowLen: tables.ReportReporterKeyLen,
		Scan: hbase.Scan{Table: tables.Reports, Prefix: tables.ReportReporterPrefix(reporter), Families: []string{tables.FamReportIndex}}}
	return s.page(ctx, q, first, after, s.verifyIndex(Filter{}))
}

// page reads one page of q.
func (s *Service) page(ctx context.Context, q paging.Query, first *int, after *string,
	verify func(context.Context, []*hbase.Result) ([]*Report, error)) (*Connection, error) {
	edges, info, err := paging.Read(ctx, s.st, q, first, after, verify, func(r *Report, c string) Edge { return Edge{Report: r, Cursor: c} })
	if err != nil {
		return nil, err
	}
	return &Connection{Edges: edges, PageInfo: info}, nil
}

// verifyIndex returns the verify of a page of index rows (status or
// reporter): their report rows in one GetMany, each kept when it agrees
// with the row (its status, its reporter) and passes f.
func (s *Service) verifyIndex(f Filter) func(context.Context, []*hbase.Result) ([]*Report, error) {
	return func(ctx context.Context, rows []*hbase.Result) ([]*Report, error) {
		ids := make([]weibo.ReportID, len(rows))
		for i, r := range rows {
			if st, id, ok := tables.DecodeReportStatusKey(r.Row); ok {
				ids[i] = id
				if f.Status == nil || statuses[st] != *f.Status {
					ids[i] = 0
				}
			} else if _, id, ok := tables.DecodeReportReporterKey(r.Row); ok {
				ids[i] = id
			}
		}
		reps, err := s.Get(ctx, ids)
		if err != nil {
			return nil, err
		}
		for i, rep := range reps {
			if ids[i] == 0 || !f.match(rep) {
				reps[i] = nil
				continue
			}
			if uid, _, ok := tables.DecodeReportReporterKey(rows[i].Row); ok && rep.Reporter != uid {
				reps[i] = nil
			}
		}
		return reps, nil
	}
}

// Counts reads the kept numbers of OPEN and RESOLVED reports: one Get.
// Errors are the store's.
func (s *Service) Counts(ctx context.Context) (open, resolved int64, err error) {
	r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Reports, Row: tables.ReportCountsKey, Families: []string{tables.FamReportCount}})
	if err != nil {
		return 0, 0, err
	}
	return tables.CounterIn(r, tables.FamReportCount, tables.ColReportsOpen), tables.CounterIn(r, tables.FamReportCount, tables.ColReportsResolved), nil
}
