package resolvers

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/weibohbase/gateway/auth"
	"github.com/weibohbase/gateway/graph/model"
	"github.com/weibohbase/gateway/loaders"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/moderation/report"
	"github.com/weibohbase/gateway/weibo/notify"
	"github.com/weibohbase/gateway/weibo/org"
)

// Reports is the reports of content and the moderation queue
// (report.Service).
type Reports interface {
	Create(ctx context.Context, reporter weibo.UserID, in report.Input) (*report.Report, error)
	Assign(ctx context.Context, moderator weibo.UserID, id weibo.ReportID, toSelf bool) (*report.Report, error)
	Resolve(ctx context.Context, moderator weibo.UserID, id weibo.ReportID, action report.Action, note *string, suspendUntil *time.Time) (*report.Report, error)
	Reopen(ctx context.Context, moderator weibo.UserID, id weibo.ReportID) (*report.Report, error)
	Get(ctx context.Context, ids []weibo.ReportID) ([]*report.Report, error)
	Queue(ctx context.Context, f report.Filter, first *int, after *string) (*report.Connection, error)
	Mine(ctx context.Context, reporter weibo.UserID, first *int, after *string) (*report.Connection, error)
}

// codeRateLimited is the server's RATE_LIMITED code (server.CodeRateLimited),
// which a report beyond the reporter's limit answers with.
const codeRateLimited = "RATE_LIMITED"

// reportError turns a report's *report.RateLimitError into the
// RATE_LIMITED error the server's own throttles give (extensions.code,
// extensions.retryAfter in seconds); other errors pass as they are.
func reportError(err error) error {
	if rl, ok := errors.AsType[*report.RateLimitError](err); ok {
		return &gqlerror.Error{Message: rl.Error(), Extensions: map[string]any{
			"code": codeRateLimited, "retryAfter": int64((rl.RetryAfter + time.Second - 1) / time.Second)}}
	}
	return err
}

// moderates reports whether viewer may work the moderation queue: they
// hold MANAGE_REPORTS (their standing, read once per request).
func (r *Resolver) moderates(ctx context.Context, viewer weibo.UserID) (bool, error) {
	if viewer == 0 {
		return false, nil
	}
	st, err := loaders.For(ctx).ViewerStanding(ctx)
	if err != nil {
		return false, err
	}
	return st.Perms.Has(org.PermManageReports), nil
}

// shownTo marks reports as the viewer sees them: by a moderator (the
// assignee shown) or not (moderates), and returns them.
func shownTo[T any](v T, moderator bool, reps ...*report.Report) T {
	for _, rep := range reps {
		if rep != nil {
			rep.ShownToModerator = moderator
		}
	}
	return v
}

// reportContent is Mutation.reportContent.
func (r *Resolver) reportContent(ctx context.Context, in model.ReportContentInput) (*report.Report, error) {
	target, err := parseID[weibo.UserID]("input.userId", in.UserID)
	if err != nil {
		return nil, err
	}
	ri := report.Input{Target: target, Category: in.Category}
	if in.Comment != nil {
		ri.Comment = *in.Comment
	}
	for _, s := range in.PostIds {
		id, err := parseID[weibo.PostID]("input.postIds", s)
		if err != nil {
			return nil, err
		}
		ri.Posts = append(ri.Posts, id)
	}
	for _, s := range in.CommentIds {
		id, err := parseID[weibo.CommentID]("input.commentIds", s)
		if err != nil {
			return nil, err
		}
		ri.Comments = append(ri.Comments, id)
	}
	rep, err := r.Svc.Reports.Create(ctx, viewerOf(ctx), ri)
	if err != nil {
		return nil, reportError(err)
	}
	return rep, nil // the reporter's view: no assignee
}

// reportsQueue is Query.reports, for a moderator.
func (r *Resolver) reportsQueue(ctx context.Context, first *int, after *string, filter *model.ReportFilter) (*report.Connection, error) {
	var f report.Filter
	if filter != nil {
		f.Status, f.Category = filter.Status, filter.Category
		if filter.TargetUserID != nil {
			id, err := parseID[weibo.UserID]("filter.targetUserId", *filter.TargetUserID)
			if err != nil {
				return nil, err
			}
			f.Target = id
		}
		if filter.AssignedToID != nil {
			id, err := parseID[weibo.UserID]("filter.assignedToId", *filter.AssignedToID)
			if err != nil {
				return nil, err
			}
			f.Assignee = id
		}
	}
	conn, err := r.Svc.Reports.Queue(ctx, f, first, after)
	if err != nil {
		return nil, err
	}
	for _, e := range conn.Edges {
		e.Report.ShownToModerator = true
	}
	return conn, nil
}

// myReports is Query.myReports.
func (r *Resolver) myReports(ctx context.Context, first *int, after *string) (*report.Connection, error) {
	// The reporter's view of their own reports: no assignee, even for a
	// moderator (who sees it in the queue).
	return r.Svc.Reports.Mine(ctx, viewerOf(ctx), first, after)
}

// moderate runs one queue mutation on report id (parsed from the
// argument "id") as the viewer, a moderator.
func (r *Resolver) moderate(ctx context.Context, id string, do func(weibo.UserID, weibo.ReportID) (*report.Report, error)) (*report.Report, error) {
	rid, err := parseID[weibo.ReportID]("id", id)
	if err != nil {
		return nil, err
	}
	rep, err := do(viewerOf(ctx), rid)
	return shownTo(rep, true, rep), err
}

// reportFor returns report id as viewer may see it (visibleReport). It
// reads through the request's loader, so a page of notifications reads
// its reports in one batch.
func (r *Resolver) reportFor(ctx context.Context, viewer weibo.UserID, id weibo.ReportID) (*report.Report, error) {
	rep, err := loaders.For(ctx).Reports().Load(ctx, id)()
	if err != nil {
		return nil, err
	}
	return r.visibleReport(ctx, viewer, rep)
}

// visibleReport returns rep as viewer may see it: theirs (the reporter's
// view, without the assignee), or any for a moderator; nil otherwise
// (node(id:), Notification.report).
func (r *Resolver) visibleReport(ctx context.Context, viewer weibo.UserID, rep *report.Report) (*report.Report, error) {
	if rep == nil || rep.Reporter == viewer {
		return rep, nil // none, or the reporter's own view
	}
	mod, err := r.moderates(ctx, viewer)
	if err != nil || !mod {
		return nil, err
	}
	return shownTo(rep, true, rep), nil
}

// reportNode is node(id:) of a report (visibleReport): the load starts
// now, so that the nodes of one level share a batch.
func (r *Resolver) reportNode(ctx context.Context, id weibo.ReportID) func() (weibo.Node, error) {
	viewer, err := auth.Viewer(ctx)
	if err != nil {
		return func() (weibo.Node, error) { return nil, err }
	}
	thunk := loaders.For(ctx).Reports().Load(ctx, id)
	return func() (weibo.Node, error) {
		rep, err := thunk()
		if err == nil {
			rep, err = r.visibleReport(ctx, viewer, rep)
		}
		if err != nil || rep == nil {
			return nil, err
		}
		return rep, nil
	}
}

// reportUser loads uid (0: none) when shown.
func reportUser(ctx context.Context, uid weibo.UserID, shown bool) (*weibo.User, error) {
	if uid == 0 || !shown {
		return nil, nil
	}
	return loadUser(ctx, uid)
}

// notificationReports returns the reports of a page's REPORT_RESOLVED
// notifications, each once (prefetchNotifications primes them).
func notificationReports(page *notify.NotificationConnection) []weibo.ReportID {
	var ids []weibo.ReportID
	for _, e := range page.Edges {
		if id, ok := e.Notification.ReportID(); ok && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}
