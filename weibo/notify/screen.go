package notify

import (
	"context"
	"slices"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/safety"
	"github.com/weibohbase/gateway/weibo/tables"
)

// The recipient's safety Set applied to their notifications (package
// safety): what the list and the live events show.
//
//   - An actor the recipient blocks or is blocked by, or mutes with
//     notifications: true, is not shown: it leaves the notification's
//     newest actors and its actorCount (and actors(first:) beyond the
//     newest, ActorPage); a notification left with no actor is not shown.
//     The notification keeps its time and its place in the list (the
//     time its last actor joined, possibly a hidden one).
//   - A notification about a post whose author is blocked either way (a
//     REPLY on a third user's post) is not shown.
//   - The recipient's NOTIFICATIONS keyword filters match the text the
//     actor wrote: the comment of a COMMENT, a REPLY or a MENTION in a
//     comment, the post of a MENTION in a post. A HIDE match drops the
//     notification; WARN matches are kept in Notification.Filtered. A
//     LIKE, a REPOST or a FOLLOW carries no text of the actor's (a LIKE's
//     post is the recipient's own): filters never drop them.
//
// The unread count (unreadNotificationCount) counts what was written,
// hidden notifications included: it is a counter kept by the notify
// writes, and whom the recipient hides changes at any time without
// rewriting it. markNotificationsRead marks hidden ones read too.
//
// The Set and the texts cost no store call of their own: they are read
// with the group rows, in the page's (or the live event's) one GetMany.
// The texts are read whenever the Set is not known yet (its row is in
// the same GetMany), so a page's first batch reads them for every
// COMMENT, REPLY and MENTION it holds, filters or not: more bytes, no
// more calls.

// BlockCheck tells whether a block stands between two users, either way.
// *safety.Service implements it.
type BlockCheck interface {
	Blocked(ctx context.Context, a, b weibo.UserID) (bool, error)
}

// SetBlocks makes a MENTION across a block write no notification (the
// mention's check, noticeWanted, answers "not wanted", and a NoticeAdd
// of one writes nothing). It must be called before any call, while the
// domain is wired.
func (s *Service) SetBlocks(b BlockCheck) { s.blocks = b }

// SetSuspensions hides, in every recipient's notifications and their
// live events, the part of the users susp says are suspended: as actors
// (a notification whose actors are all suspended is none) and as authors
// of the post a notification is about. It must be called before any
// call, while the domain is wired.
func (s *Service) SetSuspensions(susp weibo.Suspensions) { s.susp = susp }

// mentionBlocked reports whether n is a MENTION across a block.
func (s *Service) mentionBlocked(ctx context.Context, n Notice) (bool, error) {
	if s.blocks == nil || n.Kind != tables.NotifMention {
		return false, nil
	}
	return s.blocks.Blocked(ctx, n.Recipient, n.Actor)
}

// screenRead is the reads of one batch of notifications of a viewer:
// their group rows, the viewer's safety row (once: set then holds the
// Set), and the texts the viewer's filters match.
type screenRead struct {
	s      *Service
	viewer weibo.UserID
	set    *safety.Set
	loaded bool
	// live: the reads of live events, each about the notification's
	// newest actor's join — one of a hidden actor's is not shown at all.
	live bool
}

// read reads the notifications ids of the viewer (their group rows'
// summaries), with, in the same GetMany, the viewer's safety row (the
// first time) and the texts of those with one (every time the Set is
// unknown or has NOTIFICATIONS filters); it returns each notification as
// the viewer sees it (screen), nil where there is none or it is hidden.
// at, when not nil, is each id's expected time: a group at another time
// yields nil (an index row of a write in flight).
func (r *screenRead) read(ctx context.Context, ids []weibo.NotificationID, at []int64) ([]*Notification, error) {
	gets := make([]*hbase.Get, len(ids), 2*len(ids)+1)
	for i, id := range ids {
		gets[i] = &hbase.Get{Table: tables.Notifications, Row: tables.NotifGroupKey(id), Families: []string{tables.FamNotifSummary}}
	}
	setAt := -1
	if !r.loaded {
		setAt = len(gets)
		gets = append(gets, safety.RowGet(r.viewer))
	}
	texts := make([]int, len(ids)) // index in gets of each text, 0: none
	if !r.loaded || r.set.HasFilters(safety.ContextNotifications) {
		for i, id := range ids {
			if g := textGet(id); g != nil {
				texts[i] = len(gets)
				gets = append(gets, g)
			}
		}
	}
	rs, err := r.s.st.GetMany(ctx, gets)
	if err != nil {
		return nil, err
	}
	if setAt >= 0 {
		r.set, r.loaded = safety.FromRow(r.viewer, rs[setAt], r.s.w.NowMillis()), true
	}
	sc := &screener{set: r.set, susp: r.s.susp, now: r.s.w.NowMillis()}
	out := make([]*Notification, len(ids))
	for i, id := range ids {
		n := notificationFromRow(id, rs[i])
		if n == nil || (at != nil && n.AtMillis != at[i]) {
			continue
		}
		if r.live && len(n.Newest) > 0 && sc.hidesActor(n.Newest[0].User) {
			continue // the event of a hidden actor's join
		}
		var text []byte
		if texts[i] > 0 {
			text = textOf(id, rs[texts[i]])
		}
		out[i] = screen(sc, n, text)
	}
	return out, nil
}

// textGet is the Get of the text the actor of notification id wrote (nil:
// it has none): the comment of a COMMENT, a REPLY or a MENTION in a
// comment, the post of a MENTION in a post.
func textGet(id weibo.NotificationID) *hbase.Get {
	switch id.Kind {
	case tables.NotifComment, tables.NotifReply, tables.NotifMention:
	default:
		return nil
	}
	if c, ok := id.Subject.Comment(); ok {
		return &hbase.Get{Table: tables.Comments, Row: tables.CommentKey(c), Families: []string{tables.FamComment}}
	}
	if p, ok := id.Subject.Post(); ok && id.Kind == tables.NotifMention {
		return &hbase.Get{Table: tables.Content, Row: tables.ContentKey(p), Families: []string{tables.FamPost}}
	}
	return nil
}

// textOf is the text textGet read (nil when gone).
func textOf(id weibo.NotificationID, r *hbase.Result) []byte {
	if _, ok := id.Subject.Comment(); ok {
		return r.Value(tables.FamComment, tables.ColCommentText)
	}
	return r.Value(tables.FamPost, tables.ColText)
}

// screener is what screens a recipient's notifications: their Set (nil:
// none) and the suspensions at one moment.
type screener struct {
	set  *safety.Set
	susp weibo.Suspensions
	now  int64 // ms
}

// hidesActor reports whether sc hides uid's part in notifications: a
// block either way, a mute with notifications, or uid suspended.
func (sc *screener) hidesActor(uid weibo.UserID) bool {
	return sc.set.Blocked(uid) || sc.set.MutesNotifications(uid) || sc.susp.Suspended(uid, sc.now)
}

// screen returns n as the owner of sc's Set sees it (n itself, changed:
// n is the caller's own, read just now), or nil when it is hidden — its
// post's author blocked either way or suspended, or all its actors
// hidden; text is what its actor wrote (nil: none, or not read).
func screen(sc *screener, n *Notification, text []byte) *Notification {
	set := sc.set
	if p, ok := n.PostID(); ok && (set.Blocked(p.Author) || sc.susp.Suspended(p.Author, sc.now)) {
		return nil
	}
	kept := n.Newest[:0:0]
	for _, a := range n.Newest {
		if !sc.hidesActor(a.User) {
			kept = append(kept, a)
		}
	}
	if dropped := len(n.Newest) - len(kept); dropped > 0 {
		n.Newest, n.ActorCount = kept, n.ActorCount-dropped
	}
	if n.ActorCount <= 0 && n.ID.Kind != tables.NotifReportResolved {
		return nil
	}
	if text != nil {
		hide, warn := set.Match(string(text), safety.ContextNotifications)
		if hide {
			return nil
		}
		n.Filtered = warn
	}
	n.screen = sc
	return n
}

// screenActors returns all without the actors sc hides (all itself when
// it hides none).
func screenActors(sc *screener, all []tables.NotifActor) []tables.NotifActor {
	if sc == nil || !slices.ContainsFunc(all, func(a tables.NotifActor) bool { return sc.hidesActor(a.User) }) {
		return all
	}
	return slices.DeleteFunc(slices.Clone(all), func(a tables.NotifActor) bool { return sc.hidesActor(a.User) })
}

// VisibleNotifications reads viewer's notifications by id as viewer sees
// them (screened with viewer's safety Set, see above): one GetMany of
// their group rows' summaries, viewer's safety row and the texts their
// actors wrote; one entry per id, nil where there is none or it is
// hidden.
func (s *Service) VisibleNotifications(ctx context.Context, viewer weibo.UserID, ids []weibo.NotificationID) (_ []*Notification, err error) {
	defer weibo.Wrap(&err, "get notifications")
	r := &screenRead{s: s, viewer: viewer}
	return r.read(ctx, ids, nil)
}

// liveNotifications is VisibleNotifications for live events: a
// notification whose newest actor viewer hides is left out too (its
// event tells of that actor's join, which viewer does not see).
func (s *Service) liveNotifications(ctx context.Context, viewer weibo.UserID, ids []weibo.NotificationID) (_ []*Notification, err error) {
	defer weibo.Wrap(&err, "get notifications")
	r := &screenRead{s: s, viewer: viewer, live: true}
	return r.read(ctx, ids, nil)
}
