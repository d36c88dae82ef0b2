// Package report is the reports of content to the moderators (举报) and
// the moderation queue: a user reports another user's posts and comments
// (reportContent), the report keeps their text as it was reported, and
// moderators work the queue newest first — assign, resolve with an action
// (dismiss, delete the content, suspend the user), reopen — while the
// kept counts of open and resolved reports stay exact.
//
// A report is one row of weibo:reports (tables/reports.go), the
// AUTHORITY: its state cell holds its status and a version that every
// change bumps, and every change of the row is one CheckAndPut on that
// cell, so two moderators resolving one report at once cannot both win:
// the second finds the report resolved (BAD_USER_INPUT, reason
// REPORT_NOT_OPEN). Its DEPENDENTS are its index rows: its place in its
// status's queue and in its reporter's list. Every write that changes a
// report's status — its creation (OPEN), its resolution (OPEN to
// RESOLVED), its reopening (RESOLVED to OPEN) — is one write of the
// counted relation "report" (package counted: marker kind
// tables.PendingReport, owner the report's id), whose counters are the
// number of reports of each status (OpenCount, ResolvedCount); a crash at
// any step leaves the marker, and the repairer settles the index rows,
// finishes what a resolution's action left undone and recounts.
package report

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/audit"
	"github.com/weibohbase/gateway/weibo/comment"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/notify"
	"github.com/weibohbase/gateway/weibo/org"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Limits of a report.
const (
	// MaxItems is the most posts and comments one report names.
	MaxItems = 20
	// MaxComment is the longest reporter's comment and moderator's note,
	// in characters (weibo.TextRule).
	MaxComment = 1000
	// RateLimit is the most OPEN reports one reporter may have made
	// within RateWindow; the next is refused (ErrRateLimited).
	RateLimit = 10
	// RateWindow is the window of RateLimit.
	RateWindow = time.Hour
)

// The audit actions of the queue.
const (
	ActionAssign  = "report.assign"
	ActionResolve = "report.resolve"
	ActionReopen  = "report.reopen"
)

// Reasons of the queue's BAD_USER_INPUT errors (extensions.reason).
const (
	// ReasonNotOpen: resolveReport of a report that is not OPEN (another
	// moderator resolved it first).
	ReasonNotOpen = "REPORT_NOT_OPEN"
	// ReasonNotResolved: reopenReport of a report that is OPEN.
	ReasonNotResolved = "REPORT_NOT_RESOLVED"
)

// The counters of the relation: reports per status, on the counts row.
const (
	// OpenCount is the number of OPEN reports.
	OpenCount counted.CounterKind = "openReportCount"
	// ResolvedCount is the number of RESOLVED reports.
	ResolvedCount counted.CounterKind = "resolvedReportCount"
)

// Relation is the report relation's name; its steps are
// counted.Step(Relation, phase).
const Relation = "report"

// The report write's own phases.
const (
	// PhaseIndexed follows the settle of the report's index rows.
	PhaseIndexed counted.Phase = "indexed"
	// PhaseActed follows a resolution's action (the content deleted, the
	// user suspended) and its REPORT_RESOLVED notification.
	PhaseActed counted.Phase = "acted"
)

// Steps of a report's counted write, passed to the protocol's step hook.
var (
	StepMarked    = counted.Step(Relation, counted.PhaseMarked)
	StepSequenced = counted.Step(Relation, counted.PhaseSequenced)
	StepDecided   = counted.Step(Relation, counted.PhaseDecided) // after the report row's CheckAndPut
	StepCounted   = counted.Step(Relation, counted.PhaseCounted)
	StepIndexed   = counted.Step(Relation, PhaseIndexed)
	StepActed     = counted.Step(Relation, PhaseActed)
	StepSettled   = counted.Step(Relation, counted.PhaseSettled)
)

// Status is a report's status as the API names it (GraphQL ReportStatus).
type Status string

// Category is a report's category (GraphQL ReportCategory).
type Category string

// Action is a resolution's action (GraphQL ReportAction).
type Action string

// The statuses, categories and actions.
const (
	StatusOpen     Status   = "OPEN"
	StatusResolved Status   = "RESOLVED"
	CategorySpam   Category = "SPAM"
	CategoryAbuse  Category = "ABUSE"
	// CategoryIllegal: illegal content.
	CategoryIllegal     Category = "ILLEGAL"
	CategoryOther       Category = "OTHER"
	ActionDismiss       Action   = "DISMISS"
	ActionDeleteContent Action   = "DELETE_CONTENT"
	ActionSuspendUser   Action   = "SUSPEND_USER"
)

var (
	statuses   = map[tables.ReportStatus]Status{tables.ReportOpen: StatusOpen, tables.ReportResolved: StatusResolved}
	categories = map[tables.ReportCategory]Category{tables.ReportSpam: CategorySpam, tables.ReportAbuse: CategoryAbuse,
		tables.ReportIllegal: CategoryIllegal, tables.ReportOther: CategoryOther}
	actions = map[tables.ReportAction]Action{tables.ReportDismiss: ActionDismiss,
		tables.ReportDeleteContent: ActionDeleteContent, tables.ReportSuspendUser: ActionSuspendUser}
)

// byteOf returns the key of m whose value is v; ok is false when none.
func byteOf[K comparable, V comparable](m map[K]V, v V) (K, bool) {
	for k, x := range m {
		if x == v {
			return k, true
		}
	}
	var zero K
	return zero, false
}

func marshalEnum(w io.Writer, s string) { _, _ = io.WriteString(w, strconv.Quote(s)) }

func unmarshalEnum[K comparable, V ~string](m map[K]V, v any, name string) (V, error) {
	s, ok := v.(string)
	if _, known := byteOf(m, V(s)); ok && known {
		return V(s), nil
	}
	return "", fmt.Errorf("%v is not a %s", v, name)
}

// MarshalGQL writes s as a GraphQL enum value.
func (s Status) MarshalGQL(w io.Writer) { marshalEnum(w, string(s)) }

// UnmarshalGQL sets s from a GraphQL enum value; an unknown one is an error.
func (s *Status) UnmarshalGQL(v any) (err error) {
	*s, err = unmarshalEnum(statuses, v, "ReportStatus")
	return err
}

// MarshalGQL writes c as a GraphQL enum value.
func (c Category) MarshalGQL(w io.Writer) { marshalEnum(w, string(c)) }

// UnmarshalGQL sets c from a GraphQL enum value; an unknown one is an error.
func (c *Category) UnmarshalGQL(v any) (err error) {
	*c, err = unmarshalEnum(categories, v, "ReportCategory")
	return err
}

// MarshalGQL writes a as a GraphQL enum value.
func (a Action) MarshalGQL(w io.Writer) { marshalEnum(w, string(a)) }

// UnmarshalGQL sets a from a GraphQL enum value; an unknown one is an error.
func (a *Action) UnmarshalGQL(v any) (err error) {
	*a, err = unmarshalEnum(actions, v, "ReportAction")
	return err
}

// Report is one report as its row holds it.
type Report struct {
	// ID is the report's id.
	ID weibo.ReportID
	// Status is OPEN or RESOLVED.
	Status Status
	// Category is what the reporter says is wrong.
	Category Category
	// Comment is the reporter's comment; nil for none.
	Comment *string
	// CreatedAtMillis is when it was made, ms.
	CreatedAtMillis int64
	// Reporter is who made it; Target whom it reports.
	Reporter, Target weibo.UserID
	// Assignee is the moderator it is assigned to; 0 for none.
	Assignee weibo.UserID
	// Action is the resolution's action; nil while open.
	Action *Action
	// Note is the moderator's note of the resolution; nil for none.
	Note *string
	// ResolvedAtMillis is the time of its resolution, ms; 0 while open.
	ResolvedAtMillis int64
	// Posts and Comments are the reported items as they were reported,
	// newest first.
	Posts    []*ReportedPost
	Comments []*ReportedComment
	// Media are the pictures of the reported posts, which the report holds
	// while OPEN (SetMedia).
	Media []weibo.MediaID
	// ShownToModerator is set by the API layer when the viewer works the
	// queue: the assignee is shown to them only (the moderator stays
	// anonymous to the reporter).
	ShownToModerator bool

	state tables.ReportState
}

// NodeID returns r's global id.
func (r *Report) NodeID() weibo.NodeID { return weibo.NodeID{Kind: weibo.NodeReport, Report: r.ID} }

// CreatedAt is when r was made (ms precision).
func (r *Report) CreatedAt() time.Time { return time.UnixMilli(r.CreatedAtMillis) }

// ResolvedAt is when r was resolved; nil while open.
func (r *Report) ResolvedAt() *time.Time {
	if r.ResolvedAtMillis == 0 {
		return nil
	}
	t := time.UnixMilli(r.ResolvedAtMillis)
	return &t
}

// ReportedPost is a reported post as it was when reported.
type ReportedPost struct {
	// ID is the post's id.
	ID weibo.PostID
	// Content is its text when reported.
	Content string
}

// CreatedAt is when the post was made.
func (p *ReportedPost) CreatedAt() time.Time { return time.UnixMilli(p.ID.Millis) }

// ReportedComment is a reported comment as it was when reported.
type ReportedComment struct {
	// ID is the comment's id.
	ID weibo.CommentID
	// Content is its text when reported.
	Content string
}

// CreatedAt is when the comment was made.
func (c *ReportedComment) CreatedAt() time.Time { return time.UnixMilli(c.ID.Millis) }

// Suspender suspends a user for SUSPEND_USER: until nil means until
// lifted. It authorizes nothing (the caller has).
type Suspender interface {
	Suspend(ctx context.Context, target weibo.UserID, until *time.Time, reason string) error
}

// Ranks decides whether a moderator may act on a user (the rank rule);
// nil or FORBIDDEN naming the ranks. SUSPEND_USER asks it before the
// resolution commits (SetRanks).
type Ranks interface {
	ActOn(ctx context.Context, viewer, target weibo.UserID) error
}

// Users reads accounts: whether the reported user exists.
// *account.Service implements it.
type Users interface {
	GetUsers(ctx context.Context, ids []weibo.UserID) ([]*weibo.User, error)
}

// Posts reads and deletes posts. *feed.Service implements it.
type Posts interface {
	GetPosts(ctx context.Context, ids []weibo.PostID) ([]*feed.Post, error)
	DeletePost(ctx context.Context, id weibo.PostID) (bool, error)
}

// Comments reads and deletes comments. *comment.Service implements it.
type Comments interface {
	GetComments(ctx context.Context, ids []weibo.CommentID) ([]*comment.Comment, error)
	DeleteComment(ctx context.Context, viewer weibo.UserID, id weibo.CommentID) (bool, error)
}

// Notices sends notifications and learns how to check one kind of them.
// *notify.Service implements it.
type Notices interface {
	SendNotice(ctx context.Context, n notify.Notice, mode notify.NoticeMode) error
	RegisterNoticeCheck(match func(notify.Notice) bool, wanted notify.WantedFunc)
}

// Service is the reports and the moderation queue. It is safe for
// concurrent use.
type Service struct {
	st       hbase.Store
	w        *counted.Protocol
	rel      *counted.Relation
	users    Users
	posts    Posts
	comments Comments
	notices  Notices
	audit    *org.Recorder
	suspend  Suspender
	ranks    Ranks // SetRanks; nil: no rank rule
	media    Media // SetMedia; nil: no pictures held
	log      *slog.Logger
}

// Media holds the pictures of reported posts while a report is open.
// *media.Service implements it.
type Media interface {
	// Hold makes report hold the bytes of media (idempotent).
	Hold(ctx context.Context, report weibo.ReportID, media []weibo.MediaID) error
	// Release drops what report holds (idempotent).
	Release(ctx context.Context, report weibo.ReportID) error
}

// SetMedia makes every OPEN report hold the pictures of its posts through
// m, and a RESOLVED one release them (each settle of the report makes it
// so, also the repairer's). Call it while the domain is wired, before any
// call.
func (s *Service) SetMedia(m Media) { s.media = m }

// SetRanks makes SUSPEND_USER check the rank rule with r before the
// resolution commits (a refusal is the resolution's error, nothing
// written). Call it while the domain is wired, before any call.
func (s *Service) SetRanks(r Ranks) { s.ranks = r }

// New returns the reports over st and registers with w the report
// relation, its two counters (OpenCount, ResolvedCount) and its fsck
// check (check.go), and with notices how a REPORT_RESOLVED notification
// is checked. It reads users, posts and comments through users, posts and
// comments, deletes the content of DELETE_CONTENT through posts and
// comments (as their author's delete would), suspends for SUSPEND_USER
// through suspend (nil: SUSPEND_USER is refused) and records the
// queue's changes with rec. The weibo tables must exist (tables.Migrate).
func New(st hbase.Store, w *counted.Protocol, users Users, posts Posts, comments Comments, notices Notices, rec *org.Recorder, suspend Suspender) *Service {
	s := &Service{st: st, w: w, users: users, posts: posts, comments: comments, notices: notices, audit: rec, suspend: suspend, log: w.Logger()}
	s.register()
	return s
}

// counters are the relation's counters, in order.
var counters = []counted.Counter{{Kind: OpenCount}, {Kind: ResolvedCount}}

// register adds the relation, its counters, its check and its notice
// check.
func (s *Service) register() {
	s.rel = &counted.Relation{
		Name:     Relation,
		Marker:   tables.PendingReport,
		Phases:   []counted.Phase{counted.PhaseDecided, PhaseIndexed, PhaseActed},
		Counters: func(uint64, uint64) []counted.Counter { return counters },
		Settle: func(ctx context.Context, id, _ uint64, extra []byte) error {
			return s.repair(ctx, weibo.ReportID(id), extra)
		},
	}
	s.w.Register(s.rel)
	for _, c := range []struct {
		kind      counted.CounterKind
		qual, seq string
		status    tables.ReportStatus
	}{
		{OpenCount, tables.ColReportsOpen, tables.ColReportsOpenSeq, tables.ReportOpen},
		{ResolvedCount, tables.ColReportsResolved, tables.ColReportsResolvedSeq, tables.ReportResolved},
	} {
		s.w.RegisterCounter(&counted.CounterSpec{
			Kind:   c.kind,
			Family: tables.FamReportCount,
			Cell: func(counted.Counter) (string, []byte, string, string) {
				return tables.Reports, tables.ReportCountsKey, c.qual, c.seq
			},
			Count: func(ctx context.Context, _ counted.Counter) (int64, bool, error) {
				n, err := s.countStatus(ctx, c.status)
				return n, true, err
			},
		})
	}
	s.w.RegisterCheck(s.fsckCheck())
	s.notices.RegisterNoticeCheck(func(n notify.Notice) bool { return n.Kind == tables.NotifReportResolved }, s.noticeWanted)
}

// countStatus counts the report rows whose status is st: one scan of
// their state cells.
func (s *Service) countStatus(ctx context.Context, st tables.ReportStatus) (int64, error) {
	return s.w.CountRows(ctx, &hbase.Scan{Table: tables.Reports, Prefix: tables.ReportsPrefix(), Families: []string{tables.FamReport}}, nil,
		func(r *hbase.Result) bool {
			state, ok := tables.DecodeReportState(r.Value(tables.FamReport, tables.ColReportState))
			return ok && state.Status == st
		})
}

// noticeWanted is the check of a REPORT_RESOLVED notification: wanted
// while its report is resolved at the subject's time and the recipient
// reported it; left as it is once the report was reopened or resolved
// again (the reporter was told, and is told again).
func (s *Service) noticeWanted(ctx context.Context, n notify.Notice) (bool, bool, error) {
	id, at := n.Subject.Report()
	rs, err := s.Get(ctx, []weibo.ReportID{id})
	if err != nil {
		return false, false, err
	}
	r := rs[0]
	if r == nil || r.Reporter != n.Recipient {
		return false, true, nil
	}
	if r.Status == StatusResolved && r.ResolvedAtMillis == at {
		return true, true, nil
	}
	return false, false, nil
}

// ReportProof is the audit proof of a change of report id: its row's
// family r.
func ReportProof(id weibo.ReportID) audit.Proof {
	return audit.Proof{Table: tables.Reports, Row: tables.ReportKey(id), Family: tables.FamReport}
}

// ReportNode is report id's global id, the audit log's target.
func ReportNode(id weibo.ReportID) weibo.NodeID {
	return weibo.NodeID{Kind: weibo.NodeReport, Report: id}
}

// RateLimitError is the error of a report beyond RateLimit: the
// reporter may report again after RetryAfter. The GraphQL layer gives it
// code RATE_LIMITED with extensions.retryAfter in seconds, as the
// server's own throttles do.
type RateLimitError struct {
	// RetryAfter is how long until one of the reporter's open reports of
	// the window leaves it.
	RetryAfter time.Duration
}

func (e *RateLimitError) Error() string {
	return fmt.Sprintf("at most %d open reports an hour: try again in %d s", RateLimit, int64((e.RetryAfter+time.Second-1)/time.Second))
}

// ErrRateLimited matches every *RateLimitError (errors.Is).
var ErrRateLimited = errors.New("report rate limited")

// Is makes errors.Is(err, ErrRateLimited) true.
func (e *RateLimitError) Is(target error) bool { return target == ErrRateLimited }
