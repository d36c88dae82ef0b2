package notify

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/paging"
	"github.com/weibohbase/gateway/weibo/safety"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Notifications, the read side: the recipient's list, newest first, and
// markNotificationsRead. The write side and the table are in notify.go.

// NotificationKind is a notification's kind as the API names it (the
// GraphQL enum NotificationKind).
type NotificationKind string

// The kinds of notification.
const (
	KindFollow  NotificationKind = "FOLLOW"  // someone followed the recipient; grouped per day
	KindMention NotificationKind = "MENTION" // someone mentioned the recipient in a post, a repost's comment or a comment
	KindComment NotificationKind = "COMMENT" // someone commented on the recipient's post
	KindReply   NotificationKind = "REPLY"   // someone replied to the recipient's comment
	KindRepost  NotificationKind = "REPOST"  // someone reposted the recipient's post; grouped per post
	KindLike    NotificationKind = "LIKE"    // someone liked the recipient's post; grouped per post
	// KindReportResolved: the recipient's report was resolved; no actor
	// is shown (the moderator stays anonymous).
	KindReportResolved NotificationKind = "REPORT_RESOLVED"
)

var kindNames = map[tables.NotifKind]NotificationKind{
	tables.NotifFollow: KindFollow, tables.NotifMention: KindMention, tables.NotifComment: KindComment,
	tables.NotifReply: KindReply, tables.NotifRepost: KindRepost, tables.NotifLike: KindLike,
	tables.NotifReportResolved: KindReportResolved,
}

// MarshalGQL writes k as a GraphQL enum value.
func (k NotificationKind) MarshalGQL(w io.Writer) { _, _ = io.WriteString(w, strconv.Quote(string(k))) }

// UnmarshalGQL sets k from a GraphQL enum value; an unknown one is an
// error.
func (k *NotificationKind) UnmarshalGQL(v any) error {
	s, ok := v.(string)
	for _, name := range kindNames {
		if ok && string(name) == s {
			*k = name
			return nil
		}
	}
	return fmt.Errorf("%v is not a NotificationKind", v)
}

// Notification is one notification of a user, as its group row holds it.
type Notification struct {
	// ID is the notification's id (recipient, kind, subject, generation).
	ID weibo.NotificationID
	// Kind is its kind.
	Kind NotificationKind
	// AtMillis is its time: when it last gained an actor, ms.
	AtMillis int64
	// Read tells that the recipient marked it read.
	Read bool
	// ActorCount is the number of its actors (for LIKE: how many like the
	// post and are in it).
	ActorCount int
	// Newest are its newest actors (at most tables.NotifActorsKept), newest
	// first.
	Newest []tables.NotifActor
	// Filtered are the recipient's WARN keyword filters of the
	// NOTIFICATIONS context that the text its actor wrote matched (nil
	// when none, or not read: screen.go); a client blurs such a
	// notification, and its post, as it does a Post.filtered one.
	Filtered []safety.FilterResult

	screen *screener // the recipient's Set and suspensions it was screened with (ActorPage), nil for none
}

// At is the notification's time (ms precision).
func (n *Notification) At() time.Time { return time.UnixMilli(n.AtMillis) }

// NodeID returns n's global id.
func (n *Notification) NodeID() weibo.NodeID {
	return weibo.NodeID{Kind: weibo.NodeNotification, Notification: n.ID}
}

// PostID returns the post the notification is about: the post liked or
// reposted, commented on or mentioned in (the post of the comment for a
// comment, a reply or a mention in a comment); ok is false for a follow.
func (n *Notification) PostID() (weibo.PostID, bool) { return n.ID.Subject.Post() }

// CommentID returns the comment of a COMMENT, a REPLY or a MENTION in a
// comment; ok is false for the others.
func (n *Notification) CommentID() (weibo.CommentID, bool) { return n.ID.Subject.Comment() }

// notificationFromRow decodes the summary of id's group row; nil when it
// holds no notification.
func notificationFromRow(id weibo.NotificationID, r *hbase.Result) *Notification {
	g, ok := tables.DecodeNotifGroup(r)
	if !ok || g.Count <= 0 {
		return nil
	}
	n := &Notification{ID: id, Kind: kindNames[id.Kind], AtMillis: g.Head.At, Read: g.Head.Read, ActorCount: int(g.Count), Newest: g.Newest}
	if id.Kind == tables.NotifReportResolved {
		// Its actor (tables.NotifSystemActor) is no user: none is shown.
		n.ActorCount, n.Newest = 0, nil
	}
	return n
}

// ReportID returns the report of a REPORT_RESOLVED notification; ok is
// false for the other kinds.
func (n *Notification) ReportID() (weibo.ReportID, bool) {
	id, _ := n.ID.Subject.Report()
	return id, n.ID.Kind == tables.NotifReportResolved
}

// NotificationEdge is one edge of a NotificationConnection.
type NotificationEdge struct {
	// Notification is the edge's node.
	Notification *Notification
	// Cursor is the edge's opaque cursor.
	Cursor string
}

// NotificationConnection is one page of a user's notifications, newest
// first.
type NotificationConnection struct {
	// Edges are the page's edges, newest first.
	Edges []NotificationEdge
	// PageInfo is the Relay page info.
	PageInfo weibo.PageInfo
}

// notifRounds bounds the scans of one page of notifications: a page whose
// entries keep turning out hidden (screen.go) or stale stops after this
// many — a shorter page, with HasNextPage and an endCursor after the last
// row read, so that the next page goes on from there. Each round scans
// only as many rows as the page still lacks, so a page costs at most
// notifRounds scans and notifRounds GetManys, and exactly one of each
// while nothing is dropped.
const notifRounds = 8

// Notifications pages through uid's notifications, newest first (by the
// time each last gained an actor; ties in one millisecond by kind and
// subject), as uid sees them: screened with uid's safety Set (screen.go:
// hidden actors and notifications left out, keyword filters applied).
// One prefix scan of uid's index rows, each chunk checked with one
// GetMany of their group rows' summaries, which also hold the
// notifications (an index row whose group row is gone or is at another
// time is skipped: a write in flight, or the trace of one that died);
// the first GetMany also reads uid's safety row and the texts the actors
// wrote (the Set is not known yet), the later ones those texts only when
// uid has NOTIFICATIONS filters. A page short of first for what was
// skipped reads on, at most notifRounds scans. Errors: BAD_USER_INPUT for a bad first
// or after.
func (s *Service) Notifications(ctx context.Context, uid weibo.UserID, first *int, after *string) (_ *NotificationConnection, err error) {
	defer weibo.Wrap(&err, "notifications")
	q := paging.Query{Kind: paging.CursorNotifications, RowLen: tables.NotifIndexKeyLen, Rounds: notifRounds,
		Scan: hbase.Scan{Table: tables.Notifications, Prefix: tables.NotifIndexPrefix(uid)}}
	r := &screenRead{s: s, viewer: uid}
	edges, info, err := paging.Read(ctx, s.st, q, first, after, r.verify,
		func(n *Notification, cursor string) NotificationEdge {
			return NotificationEdge{Notification: n, Cursor: cursor}
		})
	if err != nil {
		return nil, err
	}
	return &NotificationConnection{Edges: edges, PageInfo: info}, nil
}

// verify resolves index rows as the viewer sees them (screenRead.read):
// the notification of each row its group's head places there and the
// viewer's Set shows, nil for the others.
func (r *screenRead) verify(ctx context.Context, rows []*hbase.Result) ([]*Notification, error) {
	ids, at := indexRows(rows)
	return r.read(ctx, ids, at)
}

// indexRows decodes index rows: each one's notification and time (a
// malformed row names no group row: skipped).
func indexRows(rows []*hbase.Result) ([]weibo.NotificationID, []int64) {
	ids := make([]weibo.NotificationID, len(rows))
	at := make([]int64, len(rows))
	for i, r := range rows {
		id, t, ok := tables.DecodeNotifIndexKey(r.Row)
		if !ok {
			id = weibo.NotificationID{} // no group row: skipped
		}
		ids[i], at[i] = id, t
	}
	return ids, at
}

// verifyNotifications resolves index rows with one GetMany of their group
// rows' summaries, unscreened: the notification of each row its group's
// head places there, nil for the others.
func (s *Service) verifyNotifications(ctx context.Context, rows []*hbase.Result) ([]*Notification, error) {
	ids, at := indexRows(rows)
	gets := make([]*hbase.Get, len(rows))
	for i, id := range ids {
		gets[i] = &hbase.Get{Table: tables.Notifications, Row: tables.NotifGroupKey(id), Families: []string{tables.FamNotifSummary}}
	}
	rs, err := s.st.GetMany(ctx, gets)
	if err != nil {
		return nil, err
	}
	out := make([]*Notification, len(rows))
	for i, r := range rs {
		if n := notificationFromRow(ids[i], r); n != nil && n.AtMillis == at[i] {
			out[i] = n
		}
	}
	return out, nil
}

// GetNotifications reads notifications by id with one batched GetMany of
// their group rows' summaries; one entry per id, nil where there is none.
func (s *Service) GetNotifications(ctx context.Context, ids []weibo.NotificationID) (_ []*Notification, err error) {
	defer weibo.Wrap(&err, "get notifications")
	gets := make([]*hbase.Get, len(ids))
	for i, id := range ids {
		gets[i] = &hbase.Get{Table: tables.Notifications, Row: tables.NotifGroupKey(id), Families: []string{tables.FamNotifSummary}}
	}
	rs, err := s.st.GetMany(ctx, gets)
	if err != nil {
		return nil, err
	}
	out := make([]*Notification, len(ids))
	for i, r := range rs {
		out[i] = notificationFromRow(ids[i], r)
	}
	return out, nil
}

// NotificationActors reads every actor of each notification with one
// batched GetMany of their group rows' actor cells: newest first (ties by
// user id descending), one list per id (empty where there is none). A page
// whose actors(first:) asks for more than a summary keeps reads them so.
func (s *Service) NotificationActors(ctx context.Context, ids []weibo.NotificationID) (_ [][]tables.NotifActor, err error) {
	defer weibo.Wrap(&err, "notification actors")
	gets := make([]*hbase.Get, len(ids))
	for i, id := range ids {
		gets[i] = &hbase.Get{Table: tables.Notifications, Row: tables.NotifGroupKey(id), Families: []string{tables.FamNotifActors}}
	}
	rs, err := s.st.GetMany(ctx, gets)
	if err != nil {
		return nil, err
	}
	out := make([][]tables.NotifActor, len(ids))
	for i, r := range rs {
		out[i] = sortActors(tables.NotifActors(r))
	}
	return out, nil
}

// markRun is how many notifications already read in a row end
// MarkNotificationsRead's scan: the unread ones are the newest (a read
// notification gets no new actor, so it never moves above an unread
// one), so after these nothing unread is left below, but for writes that
// raced the scan (slack for them).
const markRun = 50

// MarkNotificationsRead marks uid's notifications read — upTo and every
// older one, or all with upTo nil — and returns how many it marked.
// Errors: NOT_FOUND on "upTo" when upTo is not a notification of uid's.
//
// Writes, in order: its weibo:pending row (the notify relation's, actor
// 0), the operation sequence of uid's unread count; then, scanning uid's
// list from upTo (or the newest) down, each unread notification's head
// with CheckAndPut on the head read (re-read and retried when a new actor
// changed it; one that moved above upTo meanwhile is left unread), until
// markRun read ones in a row or the end; the unread count less the
// number marked (within the budget); the delete of the pending row. A
// call that dies leaves the marker: the repairer recounts.
func (s *Service) MarkNotificationsRead(ctx context.Context, uid weibo.UserID, upTo *weibo.NotificationID) (_ int, err error) {
	defer weibo.Wrap(&err, "mark notifications read")
	start := tables.NotifIndexPrefix(uid)
	limit := int64(-1) // the newest time a notification marked may have; -1: none
	if upTo != nil {
		ns, err := s.GetNotifications(ctx, []weibo.NotificationID{*upTo})
		if err != nil {
			return 0, err
		}
		if upTo.Recipient != uid || ns[0] == nil {
			return 0, weibo.NotFoundOn("upTo", "notification "+upTo.String()+" not found")
		}
		start, limit = tables.NotifIndexKey(*upTo, ns[0].AtMillis), ns[0].AtMillis
	}
	op, err := s.w.Begin(ctx, s.rel, uint64(uid), 0)
	if err != nil {
		return 0, err
	}
	marked, run := 0, 0
	sc := &hbase.Scan{Table: tables.Notifications, Prefix: tables.NotifIndexPrefix(uid), Start: start, Limit: 100}
	for run < markRun {
		rows, err := hbase.ScanAll(ctx, s.st, sc)
		if err != nil {
			return 0, err
		}
		if len(rows) == 0 {
			break
		}
		sc.Start = append(append([]byte(nil), rows[len(rows)-1].Row...), 0)
		ns, err := s.verifyNotifications(ctx, rows)
		if err != nil {
			return 0, err
		}
		var todo []*Notification
		for _, n := range ns {
			switch {
			case n == nil:
			case n.Read:
				run++
			default:
				run = 0
				todo = append(todo, n)
			}
		}
		done := make([]bool, len(todo))
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(8)
		for i, n := range todo {
			g.Go(func() (err error) {
				done[i], err = s.markRead(gctx, n.ID, limit)
				return err
			})
		}
		if err := g.Wait(); err != nil {
			return 0, err
		}
		for _, d := range done {
			if d {
				marked++
			}
		}
		if err := s.w.Step(ctx, StepRead); err != nil {
			return 0, err
		}
		if len(rows) < sc.Limit {
			break
		}
	}
	if marked > 0 {
		if _, err := s.w.Count(ctx, op, -int64(marked)); err != nil {
			return 0, err
		}
	}
	return marked, s.w.End(ctx, op)
}

// markRead marks notification id read with CheckAndPut on the head read,
// re-read and retried while other writes change it; it reports whether it
// did (false: read already, gone, or moved above limit, a time in ms; -1
// for no limit).
func (s *Service) markRead(ctx context.Context, id weibo.NotificationID, limit int64) (bool, error) {
	row := tables.NotifGroupKey(id)
	for range counted.SettleRounds {
		r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Notifications, Row: row, Families: []string{tables.FamNotifSummary}})
		if err != nil {
			return false, err
		}
		g, ok := tables.DecodeNotifGroup(r)
		if !ok || g.Head.Read || g.Count <= 0 || (limit >= 0 && g.Head.At > limit) {
			return false, nil
		}
		next := g
		next.Head.Read = true
		next.Head.Version++
		ok, err = s.st.CheckAndPut(ctx, &hbase.Put{Table: tables.Notifications, Row: row, Values: hbase.Values{tables.FamNotifSummary: tables.NotifGroupValues(next)}},
			tables.FamNotifSummary, tables.ColNotifHead, g.HeadCell)
		if err != nil || ok {
			return ok, err
		}
	}
	return false, fmt.Errorf("mark %s read: %w", id, counted.ErrUnsettled)
}

// ActorPage returns the newest first (1..100, default 20) actors of n, as
// a connection of users newest first whose totalCount is ActorCount:
// from n.Newest when they suffice, else from all, every actor of n
// (NotificationActors). need reports, with all nil, that all is needed.
// A notification read for its recipient (Notifications,
// VisibleNotifications) leaves out of all the actors the recipient hides
// (screen.go), and its totalCount is then what is left. Errors:
// BAD_USER_INPUT for a bad first.
func (n *Notification) ActorPage(first *int, all []tables.NotifActor) (_ *weibo.UserConnection, need bool, err error) {
	size, err := paging.Size(first)
	if err != nil {
		return nil, false, err
	}
	actors, total := n.Newest, n.ActorCount
	if size > len(actors) && n.ActorCount > len(actors) {
		if all == nil {
			return nil, true, nil
		}
		actors = screenActors(n.screen, all)
		if n.screen != nil {
			total = len(actors)
		}
	}
	actors = actors[:min(size, len(actors))]
	edges := make([]weibo.UserEdge, len(actors))
	for i, a := range actors {
		edges[i] = weibo.UserEdge{User: a.User, Cursor: paging.EncodeCursor(paging.CursorUsers, tables.U64(uint64(a.User)))}
	}
	conn := &weibo.UserConnection{Edges: edges, TotalCount: total}
	conn.PageInfo.HasNextPage = total > len(edges)
	if len(edges) > 0 {
		conn.PageInfo.StartCursor, conn.PageInfo.EndCursor = &edges[0].Cursor, &edges[len(edges)-1].Cursor
	}
	return conn, false, nil
}
