package server_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weibohbase/gateway/fsck"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/server"
	"github.com/weibohbase/gateway/weibo/moderation/report"
	"github.com/weibohbase/gateway/weibo/tables"
)

// reportData is a report as the tests select it.
type reportData struct {
	ID         string
	Status     string
	Category   string
	Comment    *string
	Reporter   *struct{ ID string }
	Target     *struct{ ID string }
	AssignedTo *struct{ ID string }
	Action     *string
	Note       *string
	ResolvedAt *time.Time
	Posts      []struct{ ID, Content string }
	Comments   []struct{ ID, Content string }
}

const reportFields = `id status category comment reporter { id } target { id } assignedTo { id } action note resolvedAt
	posts { id content createdAt } comments { id content createdAt }`

// reportConn is a page of reports.
type reportConn struct {
	Edges []struct {
		Cursor string
		Node   reportData
	}
	PageInfo struct {
		HasNextPage bool
		EndCursor   *string
	}
	TotalCount *int
}

// ids returns the page's report ids.
func (c reportConn) ids() []string {
	var out []string
	for _, e := range c.Edges {
		out = append(out, e.Node.ID)
	}
	return out
}

// startReportGateway is a gateway on a store of its own (the tests count
// every report and run fsck over every row), without the sign-up limit (a
// test registers many users from one address).
func startReportGateway(t *testing.T, b testenv.Backend) *gw {
	return startGatewayWith(t, b.OpenOwn(t, tables.Namespace, "reports"), func(c *server.Config) { c.Signups.Rate = -1 })
}

const reportMutation = `mutation($in: ReportContentInput!) { reportContent(input: $in) { ` + reportFields + ` } }`

// report runs reportContent as token's user.
func (g *gw) report(token, target string, posts, comments []string, category string) reportData {
	g.t.Helper()
	var d struct{ ReportContent reportData }
	g.ok(token, reportMutation, map[string]any{"in": map[string]any{"userId": target, "postIds": posts, "commentIds": comments, "category": category}}, &d)
	return d.ReportContent
}

// queue reads one page of the moderation queue as token's user.
func (g *gw) queue(token string, filter map[string]any, first int, after *string) reportConn {
	g.t.Helper()
	var d struct{ Reports reportConn }
	g.ok(token, `query($f: ReportFilter, $first: Int, $after: String) { reports(filter: $f, first: $first, after: $after) {
		edges { cursor node { `+reportFields+` } } pageInfo { hasNextPage endCursor } totalCount } }`,
		map[string]any{"f": filter, "first": first, "after": after}, &d)
	return d.Reports
}

// allQueue reads every page of the queue, pages of size.
func (g *gw) allQueue(token string, filter map[string]any, size int) []string {
	g.t.Helper()
	var out []string
	var after *string
	for range 1000 {
		c := g.queue(token, filter, size, after)
		out = append(out, c.ids()...)
		if !c.PageInfo.HasNextPage {
			return out
		}
		after = c.PageInfo.EndCursor
	}
	g.t.Fatal("reports: more than 1000 pages")
	return nil
}

// myReports reads the viewer's first page of reports.
func (g *gw) myReports(token string) reportConn {
	g.t.Helper()
	var d struct{ MyReports reportConn }
	g.ok(token, `{ myReports(first: 50) { edges { cursor node { `+reportFields+` } } pageInfo { hasNextPage endCursor } totalCount } }`, nil, &d)
	return d.MyReports
}

// moderate runs a queue mutation (assignReport, resolveReport,
// reopenReport) with args as token's user.
func (g *gw) moderate(token, name, args string, vars map[string]any) reportData {
	g.t.Helper()
	decl := "$id: ID!"
	if _, ok := vars["note"]; ok {
		decl += ", $note: String"
	}
	if _, ok := vars["until"]; ok {
		decl += ", $until: Time"
	}
	var d map[string]reportData
	g.ok(token, `mutation(`+decl+`) { `+name+`(id: $id`+args+`) { `+reportFields+` } }`, vars, &d)
	return d[name]
}

// reportCounts reads the totalCount of the queue per status.
func (g *gw) reportCounts(token string) (open, resolved int) {
	g.t.Helper()
	o := g.queue(token, map[string]any{"status": "OPEN"}, 1, nil).TotalCount
	r := g.queue(token, map[string]any{"status": "RESOLVED"}, 1, nil).TotalCount
	if o == nil || r == nil {
		g.t.Fatalf("totalCount null for a status filter")
	}
	return *o, *r
}

// TestReportFlow works a report through over HTTP on both backends: the
// reporter reports two posts and a comment, the author deletes a post
// (the report keeps it as reported), a moderator assigns it (hidden from
// the reporter), resolves it, the reporter is notified without actors,
// node(id:) shows it to the reporter and the moderator only, the audit
// log lists each change with the report's id, and reopening counts it
// back; fsck is clean.
func TestReportFlow(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startReportGateway(t, b)
			author, reporter, mod, other := g.register(uniqueName("author")), g.register(uniqueName("reporter")), g.register(uniqueName("mod")), g.register(uniqueName("other"))
			g.makeAdmin(mod)
			p1, p2 := g.publish(author.token, "first post 举报"), g.publish(author.token, "second post")
			c := g.addComment(author.token, p2.ID, "a comment", "")
			rep := g.report(reporter.token, author.ID, []string{p1.ID, p2.ID}, []string{c.ID}, "ABUSE")
			if !strings.HasPrefix(rep.ID, "report:") || rep.Status != "OPEN" || rep.Category != "ABUSE" || rep.Reporter == nil || rep.Reporter.ID != reporter.ID ||
				rep.Target == nil || rep.Target.ID != author.ID || rep.AssignedTo != nil || rep.Action != nil || rep.ResolvedAt != nil {
				t.Fatalf("reportContent: %+v", rep)
			}
			if len(rep.Posts) != 2 || rep.Posts[0].ID != p2.ID || rep.Posts[1].Content != "first post 举报" || len(rep.Comments) != 1 || rep.Comments[0].Content != "a comment" {
				t.Fatalf("reported items: %+v %+v", rep.Posts, rep.Comments)
			}
			// The evidence outlives the post.
			var del struct{ DeletePost bool }
			g.ok(author.token, `mutation($id: ID!) { deletePost(id: $id) }`, map[string]any{"id": p1.ID}, &del)
			mine := g.myReports(reporter.token)
			if len(mine.Edges) != 1 || mine.TotalCount != nil || len(mine.Edges[0].Node.Posts) != 2 || mine.Edges[0].Node.Posts[1].Content != "first post 举报" {
				t.Fatalf("myReports after the post's delete: %+v", mine)
			}
			// Assigned: the moderator sees it, the reporter does not.
			got := g.moderate(mod.token, "assignReport", "", map[string]any{"id": rep.ID})
			if got.AssignedTo == nil || got.AssignedTo.ID != mod.ID {
				t.Fatalf("assignReport: %+v", got)
			}
			if q := g.queue(mod.token, map[string]any{"assignedToId": mod.ID}, 10, nil); len(q.Edges) != 1 || q.Edges[0].Node.AssignedTo == nil || q.TotalCount != nil {
				t.Fatalf("queue assigned to the moderator: %+v", q)
			}
			if m := g.myReports(reporter.token).Edges[0].Node; m.AssignedTo != nil || m.Reporter == nil {
				t.Fatalf("the reporter sees the assignee: %+v", m)
			}
			// Unassigned, then assigned again: each a change in the audit log.
			if got := g.moderate(mod.token, "assignReport", ", toSelf: false", map[string]any{"id": rep.ID}); got.AssignedTo != nil {
				t.Fatalf("assignReport(toSelf: false): %+v", got)
			}
			g.moderate(mod.token, "assignReport", ", toSelf: true", map[string]any{"id": rep.ID})
			// Unknown and malformed ids.
			if e := g.fails(mod.token, "NOT_FOUND", `mutation { resolveReport(id: "report:1", action: DISMISS) { id } }`, nil); e.Extensions["field"] != "id" {
				t.Fatalf("an unknown report: %+v", e)
			}
			g.fails(mod.token, "BAD_USER_INPUT", `mutation { assignReport(id: "role:1") { id } }`, nil)
			// Only moderators work the queue.
			g.fails(reporter.token, "FORBIDDEN", `{ reports { totalCount } }`, nil)
			g.fails(reporter.token, "FORBIDDEN", `mutation($id: ID!) { resolveReport(id: $id, action: DISMISS) { id } }`, map[string]any{"id": rep.ID})
			g.fails("", "UNAUTHENTICATED", `{ myReports { totalCount } }`, nil)
			// node(id:): the reporter's and the moderators', nobody else's.
			for _, who := range []struct {
				tok  string
				seen bool
			}{{reporter.token, true}, {mod.token, true}, {other.token, false}} {
				var d struct{ Node *struct{ ID string } }
				g.ok(who.tok, `query($id: ID!) { node(id: $id) { id ... on Report { status } } }`, map[string]any{"id": rep.ID}, &d)
				if (d.Node != nil) != who.seen {
					t.Fatalf("node(id:) as %s: %+v, want seen %v", who.tok[:8], d.Node, who.seen)
				}
			}
			open0, res0 := g.reportCounts(mod.token)
			got = g.moderate(mod.token, "resolveReport", ", action: DISMISS, note: $note", map[string]any{"id": rep.ID, "note": "not abuse"})
			if got.Status != "RESOLVED" || got.Action == nil || *got.Action != "DISMISS" || got.Note == nil || *got.Note != "not abuse" || got.ResolvedAt == nil {
				t.Fatalf("resolveReport: %+v", got)
			}
			if o, r := g.reportCounts(mod.token); o != open0-1 || r != res0+1 {
				t.Fatalf("counts after resolve: %d, %d; before %d, %d", o, r, open0, res0)
			}
			// The reporter's notification: their report, no actors.
			var n struct {
				Notifications struct {
					Edges []struct {
						Node struct {
							Kind       string
							ActorCount int
							Actors     struct{ TotalCount int }
							Report     *reportData
						}
					}
				}
				UnreadNotificationCount int
			}
			g.ok(reporter.token, `{ notifications(first: 10) { edges { node { kind actorCount actors { totalCount } report { `+reportFields+` } } } } unreadNotificationCount }`, nil, &n)
			if len(n.Notifications.Edges) != 1 || n.UnreadNotificationCount != 1 {
				t.Fatalf("the reporter's notifications: %+v", n)
			}
			nn := n.Notifications.Edges[0].Node
			if nn.Kind != "REPORT_RESOLVED" || nn.ActorCount != 0 || nn.Actors.TotalCount != 0 || nn.Report == nil || nn.Report.ID != rep.ID ||
				nn.Report.Status != "RESOLVED" || nn.Report.AssignedTo != nil {
				t.Fatalf("REPORT_RESOLVED notification: %+v", nn)
			}
			// Two moderators may not both resolve: the second is refused.
			e := g.fails(mod.token, "BAD_USER_INPUT", `mutation($id: ID!) { resolveReport(id: $id, action: DISMISS) { id } }`, map[string]any{"id": rep.ID})
			if e.Extensions["reason"] != report.ReasonNotOpen {
				t.Fatalf("resolving a resolved report: %+v", e)
			}
			got = g.moderate(mod.token, "reopenReport", "", map[string]any{"id": rep.ID})
			if got.Status != "OPEN" || got.Action != nil || got.Note != nil || got.ResolvedAt != nil {
				t.Fatalf("reopenReport: %+v", got)
			}
			if o, r := g.reportCounts(mod.token); o != open0 || r != res0 {
				t.Fatalf("counts after reopen: %d, %d; want %d, %d", o, r, open0, res0)
			}
			e = g.fails(mod.token, "BAD_USER_INPUT", `mutation($id: ID!) { reopenReport(id: $id) { id } }`, map[string]any{"id": rep.ID})
			if e.Extensions["reason"] != report.ReasonNotResolved {
				t.Fatalf("reopening an open report: %+v", e)
			}
			// The audit log, by the report's id, newest first.
			var actions []string
			for _, ev := range g.audit(mod.token, map[string]any{"targetId": rep.ID}) {
				if ev.TargetID != rep.ID || ev.Actor == nil || ev.Actor.ID != mod.ID {
					t.Fatalf("audit event: %+v", ev)
				}
				actions = append(actions, ev.Action)
			}
			if want := []string{report.ActionReopen, report.ActionResolve, report.ActionAssign, report.ActionAssign, report.ActionAssign}; !slices.Equal(actions, want) {
				t.Fatalf("audit log of %s: %q, want %q", rep.ID, actions, want)
			}
			reportFsckClean(t, g)
		})
	}
}

// reportFsckClean runs fsck over g's store and fails on any issue.
func reportFsckClean(t *testing.T, g *gw) {
	t.Helper()
	rep, err := fsck.Run(t.Context(), g.svc, fsck.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Issues) != 0 {
		t.Fatalf("fsck: %+v", rep.Issues)
	}
}

// TestReportBadInput sends reports that must be refused, each with
// BAD_USER_INPUT naming the argument (NOT_FOUND for an unknown user), and
// checks that nothing was written.
func TestReportBadInput(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startReportGateway(t, b)
			author, reporter, stranger := g.register(uniqueName("author")), g.register(uniqueName("reporter")), g.register(uniqueName("stranger"))
			own := g.publish(author.token, "the author's")
			foreign := g.publish(stranger.token, "a stranger's")
			fc := g.addComment(stranger.token, own.ID, "a stranger's comment", "")
			var many []string
			for i := range report.MaxItems + 1 {
				many = append(many, fmt.Sprintf("%s_%d", author.ID, 1000+i))
			}
			long := strings.Repeat("长", report.MaxComment+1)
			for _, c := range []struct {
				name, code, field string
				in                map[string]any
			}{
				{"a foreign post", "BAD_USER_INPUT", "input.postIds", map[string]any{"userId": author.ID, "postIds": []string{own.ID, foreign.ID}, "category": "SPAM"}},
				{"a foreign comment", "BAD_USER_INPUT", "input.commentIds", map[string]any{"userId": author.ID, "commentIds": []string{fc.ID}, "category": "SPAM"}},
				{"a post that never was", "BAD_USER_INPUT", "input.postIds", map[string]any{"userId": author.ID, "postIds": []string{author.ID + "_5"}, "category": "SPAM"}},
				{"more than 20 items", "BAD_USER_INPUT", "input", map[string]any{"userId": author.ID, "postIds": many, "category": "SPAM"}},
				{"no item", "BAD_USER_INPUT", "input", map[string]any{"userId": author.ID, "category": "SPAM"}},
				{"oneself", "BAD_USER_INPUT", "input.userId", map[string]any{"userId": reporter.ID, "postIds": []string{own.ID}, "category": "SPAM"}},
				{"a comment too long", "BAD_USER_INPUT", "input.comment", map[string]any{"userId": author.ID, "postIds": []string{own.ID}, "category": "SPAM", "comment": long}},
				{"a malformed post id", "BAD_USER_INPUT", "input.postIds", map[string]any{"userId": author.ID, "postIds": []string{"x"}, "category": "SPAM"}},
				{"an unknown user", "NOT_FOUND", "input.userId", map[string]any{"userId": "999999999", "postIds": []string{own.ID}, "category": "SPAM"}},
			} {
				e := g.fails(reporter.token, c.code, reportMutation, map[string]any{"in": c.in})
				if e.Extensions["field"] != c.field {
					t.Errorf("%s: field %v, want %s (%s)", c.name, e.Extensions["field"], c.field, e.Message)
				}
			}
			if m := g.myReports(reporter.token); len(m.Edges) != 0 {
				t.Fatalf("refused reports were written: %+v", m)
			}
			reportFsckClean(t, g)
		})
	}
}

// TestReportRateLimit makes report.RateLimit reports, then one more:
// RATE_LIMITED with retryAfter, nothing written; once a moderator
// resolves one of them, the reporter may report again.
func TestReportRateLimit(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startReportGateway(t, b)
			author, reporter, mod := g.register(uniqueName("author")), g.register(uniqueName("reporter")), g.register(uniqueName("mod"))
			g.makeAdmin(mod)
			p := g.publish(author.token, "reported again and again")
			var ids []string
			for range report.RateLimit {
				ids = append(ids, g.report(reporter.token, author.ID, []string{p.ID}, nil, "SPAM").ID)
			}
			in := map[string]any{"in": map[string]any{"userId": author.ID, "postIds": []string{p.ID}, "category": "SPAM"}}
			e := g.fails(reporter.token, "RATE_LIMITED", reportMutation, in)
			if ra, ok := e.Extensions["retryAfter"].(float64); !ok || ra < 1 || ra > 3600 {
				t.Fatalf("RATE_LIMITED without a retryAfter within the hour: %+v", e)
			}
			if n := len(g.myReports(reporter.token).Edges); n != report.RateLimit {
				t.Fatalf("%d reports after the refusal, want %d", n, report.RateLimit)
			}
			// Another reporter is not limited by this one.
			other := g.register(uniqueName("other"))
			g.report(other.token, author.ID, []string{p.ID}, nil, "SPAM")
			g.moderate(mod.token, "resolveReport", ", action: DISMISS", map[string]any{"id": ids[3]})
			g.report(reporter.token, author.ID, []string{p.ID}, nil, "OTHER")
			g.fails(reporter.token, "RATE_LIMITED", reportMutation, in)
		})
	}
}

// TestReportQueue fills the queue with reports of several categories and
// targets and reads it: newest first, each filter keeping exactly its
// reports through pages of every size, totalCount exact per status and
// null with another criterion, and a page whose filter keeps few rows
// ending early with a cursor to go on from.
func TestReportQueue(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startReportGateway(t, b)
			mod := g.register(uniqueName("mod"))
			g.makeAdmin(mod)
			t1, t2 := g.register(uniqueName("t1")), g.register(uniqueName("t2"))
			p1, p2 := g.publish(t1.token, "one"), g.publish(t2.token, "two")
			type made struct{ id, target, category string }
			var all []made // oldest first
			cats := []string{"SPAM", "ABUSE", "ILLEGAL", "OTHER"}
			for i := range 14 {
				r := g.register(uniqueName("r"))
				target, post := t1, p1
				if i%3 == 0 {
					target, post = t2, p2
				}
				rep := g.report(r.token, target.ID, []string{post.ID}, nil, cats[i%len(cats)])
				all = append(all, made{rep.ID, target.ID, cats[i%len(cats)]})
				time.Sleep(2 * time.Millisecond)
			}
			// Resolve four of them; assign two more.
			resolved := map[string]bool{}
			for _, i := range []int{1, 4, 8, 13} {
				g.moderate(mod.token, "resolveReport", ", action: DISMISS", map[string]any{"id": all[i].id})
				resolved[all[i].id] = true
			}
			assigned := map[string]bool{}
			for _, i := range []int{2, 9} {
				g.moderate(mod.token, "assignReport", "", map[string]any{"id": all[i].id})
				assigned[all[i].id] = true
			}
			want := func(keep func(m made) bool) []string {
				var out []string
				for i := len(all) - 1; i >= 0; i-- {
					if keep(all[i]) {
						out = append(out, all[i].id)
					}
				}
				return out
			}
			for _, c := range []struct {
				name   string
				filter map[string]any
				keep   func(m made) bool
				total  *int
			}{
				{"all", nil, func(made) bool { return true }, new(14)},
				{"open", map[string]any{"status": "OPEN"}, func(m made) bool { return !resolved[m.id] }, new(10)},
				{"resolved", map[string]any{"status": "RESOLVED"}, func(m made) bool { return resolved[m.id] }, new(4)},
				{"spam", map[string]any{"category": "SPAM"}, func(m made) bool { return m.category == "SPAM" }, nil},
				{"open abuse", map[string]any{"status": "OPEN", "category": "ABUSE"}, func(m made) bool { return !resolved[m.id] && m.category == "ABUSE" }, nil},
				{"target t2", map[string]any{"targetUserId": t2.ID}, func(m made) bool { return m.target == t2.ID }, nil},
				{"assigned", map[string]any{"assignedToId": mod.ID, "status": "OPEN"}, func(m made) bool { return assigned[m.id] }, nil},
			} {
				w := want(c.keep)
				for _, size := range []int{1, 2, 5, 50} {
					if got := g.allQueue(mod.token, c.filter, size); !slices.Equal(got, w) {
						t.Errorf("%s, pages of %d: %q, want %q", c.name, size, got, w)
					}
				}
				first := g.queue(mod.token, c.filter, 50, nil)
				if (first.TotalCount == nil) != (c.total == nil) || (c.total != nil && *first.TotalCount != *c.total) {
					t.Errorf("%s: totalCount %v, want %v", c.name, first.TotalCount, c.total)
				}
			}
			// A filter that keeps nothing reads a bounded number of rows
			// a page: pages of 1 over 14 reports end early, each with a
			// cursor to go on from, and end empty.
			pages := 0
			var after *string
			for {
				c := g.queue(mod.token, map[string]any{"assignedToId": t1.ID}, 1, after)
				pages++
				if len(c.Edges) != 0 {
					t.Fatalf("a filter that keeps nothing: %+v", c)
				}
				if !c.PageInfo.HasNextPage {
					break
				}
				after = c.PageInfo.EndCursor
			}
			if pages < 2 {
				t.Errorf("14 rows were read in one page of first 1 (%d pages): the read per page is not bounded", pages)
			}
		})
	}
}

// TestReportResolveStorm has several moderators resolve each of a few
// reports at once: exactly one wins each (the others REPORT_NOT_OPEN),
// the counts are exact and fsck is clean.
func TestReportResolveStorm(t *testing.T) {
	const mods, reports = 6, 3
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startReportGateway(t, b)
			author := g.register(uniqueName("author"))
			p := g.publish(author.token, "stormy")
			var tokens []string
			for range mods {
				m := g.register(uniqueName("mod"))
				g.makeAdmin(m)
				tokens = append(tokens, m.token)
			}
			var ids []string
			for range reports {
				r := g.register(uniqueName("r"))
				ids = append(ids, g.report(r.token, author.ID, []string{p.ID}, nil, "SPAM").ID)
			}
			open0, res0 := g.reportCounts(tokens[0])
			for _, id := range ids {
				var wg sync.WaitGroup
				var mu sync.Mutex
				wins, lost := 0, 0
				for _, tok := range tokens {
					wg.Go(func() {
						r := g.post(tok, `mutation($id: ID!) { resolveReport(id: $id, action: DISMISS) { id status } }`, map[string]any{"id": id})
						mu.Lock()
						defer mu.Unlock()
						switch {
						case len(r.Errors) == 0:
							wins++
						case r.Errors[0].Extensions["reason"] == report.ReasonNotOpen:
							lost++
						default:
							t.Errorf("resolve %s: %+v", id, r.Errors)
						}
					})
				}
				wg.Wait()
				if wins != 1 || lost != mods-1 {
					t.Fatalf("report %s: %d resolutions won, %d refused; want 1 and %d", id, wins, lost, mods-1)
				}
			}
			if o, r := g.reportCounts(tokens[0]); o != open0-reports || r != res0+reports {
				t.Fatalf("counts after the storm: %d, %d; want %d, %d", o, r, open0-reports, res0+reports)
			}
			reportFsckClean(t, g)
		})
	}
}

// TestReportActions resolves reports with DELETE_CONTENT (the reported
// post and comment are deleted, as their author's delete would; the
// report keeps their text) and SUSPEND_USER (the Suspender is called with
// the target, the end and a reason naming the report).
func TestReportActions(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startReportGateway(t, b)
			author, reporter, mod, fan := g.register(uniqueName("author")), g.register(uniqueName("reporter")), g.register(uniqueName("mod")), g.register(uniqueName("fan"))
			g.makeAdmin(mod)
			p := g.publish(author.token, "delete me")
			keep := g.publish(author.token, "keep me")
			c := g.addComment(author.token, keep.ID, "and delete this", "")
			kept := g.addComment(fan.token, keep.ID, "a fan's comment stays", "")
			rep := g.report(reporter.token, author.ID, []string{p.ID}, []string{c.ID}, "ILLEGAL")
			got := g.moderate(mod.token, "resolveReport", ", action: DELETE_CONTENT", map[string]any{"id": rep.ID})
			if *got.Action != "DELETE_CONTENT" || len(got.Posts) != 1 || got.Posts[0].Content != "delete me" || len(got.Comments) != 1 {
				t.Fatalf("resolved with DELETE_CONTENT: %+v", got)
			}
			var d struct {
				Gone *struct{ ID string }
				Kept *struct {
					ID       string
					Comments struct {
						Edges []struct{ Node struct{ ID string } }
					}
				}
			}
			g.ok(fan.token, `query($p: ID!, $k: ID!) { gone: post(id: $p) { id } kept: post(id: $k) { id comments(first: 10) { edges { node { id } } } } }`,
				map[string]any{"p": p.ID, "k": keep.ID}, &d)
			if d.Gone != nil || d.Kept == nil || len(d.Kept.Comments.Edges) != 1 || d.Kept.Comments.Edges[0].Node.ID != kept.ID {
				t.Fatalf("after DELETE_CONTENT: %+v", d)
			}
			// SUSPEND_USER suspends the author until the time given, the
			// reason naming the report and the note.
			p2 := g.publish(author.token, "suspend me")
			rep2 := g.report(reporter.token, author.ID, []string{p2.ID}, nil, "ABUSE")
			g.fails(mod.token, "BAD_USER_INPUT", `mutation($id: ID!, $until: Time) { resolveReport(id: $id, action: DISMISS, suspendUntil: $until) { id } }`,
				map[string]any{"id": rep2.ID, "until": time.Now().Add(time.Hour).Format(time.RFC3339)})
			until := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)
			got = g.moderate(mod.token, "resolveReport", ", action: SUSPEND_USER, note: $note, suspendUntil: $until",
				map[string]any{"id": rep2.ID, "note": "repeat offender", "until": until.Format(time.RFC3339)})
			if *got.Action != "SUSPEND_USER" {
				t.Fatalf("resolved with SUSPEND_USER: %+v", got)
			}
			var sus struct {
				User struct {
					Suspension *struct {
						Until  *time.Time
						Reason *string
					}
				}
			}
			g.ok(mod.token, `query($id: ID!) { user(id: $id) { suspension { until reason } } }`, map[string]any{"id": author.ID}, &sus)
			if sp := sus.User.Suspension; sp == nil || sp.Until == nil || !sp.Until.Equal(until) || sp.Reason == nil ||
				!strings.Contains(*sp.Reason, rep2.ID) || !strings.Contains(*sp.Reason, "repeat offender") {
				t.Fatalf("the author's suspension after SUSPEND_USER: %+v, want until %s naming the report", sus.User.Suspension, until)
			}
			var un struct{ UnsuspendUser struct{ ID string } }
			g.ok(mod.token, `mutation($id: ID!) { unsuspendUser(userId: $id) { id } }`, map[string]any{"id": author.ID}, &un)
			// DISMISS suspends no one.
			rep3 := g.report(reporter.token, author.ID, []string{p2.ID}, nil, "ABUSE")
			g.moderate(mod.token, "resolveReport", ", action: DISMISS", map[string]any{"id": rep3.ID})
			g.ok(mod.token, `query($id: ID!) { user(id: $id) { suspension { until reason } } }`, map[string]any{"id": author.ID}, &sus)
			if sus.User.Suspension != nil {
				t.Fatalf("suspended after a DISMISS: %+v", sus.User.Suspension)
			}
			var still struct{ Post *struct{ ID string } }
			g.ok(fan.token, `query($p: ID!) { post(id: $p) { id } }`, map[string]any{"p": p2.ID}, &still)
			if still.Post == nil {
				t.Fatal("DISMISS deleted the post")
			}
			reportFsckClean(t, g)
		})
	}
}

// TestReportNotificationsStoreCalls checks that a page of notifications
// selecting each REPORT_RESOLVED notification's report costs the same
// store calls for 2 and for 8 of them: the reports are read in one batch
// (the request's loader), whatever the page's size.
func TestReportNotificationsStoreCalls(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startReportGateway(t, b)
			author, mod := g.register(uniqueName("author")), g.register(uniqueName("mod"))
			g.makeAdmin(mod)
			p := g.publish(author.token, "reported")
			calls := map[int]float64{}
			for _, n := range []int{2, 8} {
				reporter := g.register(uniqueName("reporter"))
				for range n {
					rep := g.report(reporter.token, author.ID, []string{p.ID}, nil, "SPAM")
					g.moderate(mod.token, "resolveReport", ", action: DISMISS", map[string]any{"id": rep.ID})
				}
				var d struct {
					Notifications struct {
						Edges []struct {
							Node struct {
								Kind   string
								Report *struct{ ID, Status string }
							}
						}
					}
				}
				q := `{ notifications(first: 20) { edges { node { kind report { id status posts { content } } } } } }`
				g.ok(reporter.token, q, nil, &d) // warm: the token check's reads
				calls[n] = g.okCalls(reporter.token, q, nil, &d)
				if len(d.Notifications.Edges) != n {
					t.Fatalf("%d notifications, want %d", len(d.Notifications.Edges), n)
				}
				for _, e := range d.Notifications.Edges {
					if e.Node.Kind != "REPORT_RESOLVED" || e.Node.Report == nil || e.Node.Report.Status != "RESOLVED" {
						t.Fatalf("notification: %+v", e.Node)
					}
				}
			}
			if calls[2] != calls[8] {
				t.Fatalf("store calls of a page with 2 reports %v, with 8 %v: want the same", calls[2], calls[8])
			}
		})
	}
}
