// Package notify is the notifications (new fan, mention, comment, reply,
// repost, like; grouped like Mastodon's): the notify write every
// notifying action makes inside its own counted write (a relation of the
// write protocol, package counted, whose counter is the recipient's
// unreadNotificationCount), a recipient's list and markNotificationsRead,
// and live notification events. It knows no action: each module that
// notifies registers how its notifications are checked against its
// authority (RegisterNoticeCheck).
package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/account"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/events"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Notifications, the write side. A notification is one group row of
// weibo:notifications (the authority: the notification exists while the
// row has a head cell) and one index row, its place in the recipient's
// list, newest first (the dependent: kept while the head holds its time).
// The group row holds the actors, one cell each, and a summary — the head
// (time, read state, version), the actor count and the newest actors —
// that every change rewrites with one CheckAndPut on the head it read, so
// concurrent changes of one notification serialize on that cell.
//
// Each action that notifies (a like, a follow, a comment, a repost, a
// mention) adds its actor to a notification, and an undone like or follow
// takes its actor out, with a write of the counted relation "notify"
// (marker kind 'n': owner the recipient, other the actor, the
// notification and the action's time in the marker's extra bytes; counter
// the recipient's unreadNotificationCount). It runs inside the action's
// own counted write, after the action's authority is decided and before
// its marker is deleted (a publish's: in its fan-out, which the outbox
// makes durable), so a crash anywhere leaves a marker: the action's, whose
// repair sends the notification again (idempotent: an actor already in
// the notification is not added twice), or the notification's, whose
// repair settles it from the action's authority and recounts the unread
// count. Writes of one notification, in order:
//  1. the weibo:pending row of the notify write (the marker);
//  2. the operation sequence of the recipient's unread count;
//  3. adding: the newest generation of the notification is read (its
//     summary); the actor's cell is written in it — in the next one when
//     it is read and the kind groups (like, repost, follow: a read
//     notification gets no new actor) —; taking out: the actor's cell
//     emptied in every generation that holds it;
//  4. each row whose cell changed is touched (touch.go): its summary
//     recomputed from its actors' cells — the index row at a new time
//     first, the head with CheckAndPut on the head read (a row without
//     one: created unread, +1), then the index row at the old time
//     deleted; or, with no actor left, a tombstone summary (count 0)
//     written with CheckAndPut on the head read (-1 when unread), then
//     its index row deleted. A touch writes the head even when the
//     summary agrees (its version bumped), so that a touch computed from
//     an older read of the cells loses its CheckAndPut. A join whose notification turned read meanwhile empties its
//     cell again (and touches it) and takes the next generation;
//  5. the settle: the action's authority read again, steps 3-4 the other
//     way while the notification disagrees with it;
//  6. the unread count, by the changes of step 4 (within the budget);
//  7. the delete of the pending row.

// UnreadCount is a user's unreadNotificationCount: their unread
// notifications (group rows with a head marked unread and an actor). It is
// kept with Increment on the users row (family c) and registered with the
// protocol by New.
const UnreadCount counted.CounterKind = "unreadNotificationCount"

// Steps of a notify write, passed to the protocol's step hook
// (counted.WithStepHook); "notify:marked", "notify:sequenced" and
// "notify:counted" are the protocol's (counted.Protocol.BeginWith and
// Count).
var (
	StepMarked    = counted.Step(Relation, counted.PhaseMarked)    // after the pending row of a notify write or a markNotificationsRead
	StepSequenced = counted.Step(Relation, counted.PhaseSequenced) // after the recipient's unread-count sequence
	StepActor     = counted.Step(Relation, PhaseActor)             // after the actor's cell (joining or leaving a notification)
	StepGroup     = counted.Step(Relation, PhaseGroup)             // after the group row's summary is written, created or deleted
	StepCounted   = counted.Step(Relation, counted.PhaseCounted)   // after the unread count
	StepIndexed   = counted.Step(Relation, PhaseIndexed)           // after the index row of the notification's old time is deleted
	StepRead      = counted.Step(Relation, PhaseRead)              // in a markNotificationsRead: after each batch of notifications marked read
)

// Relation is the notify relation's name; its steps are
// counted.Step(Relation, phase).
const Relation = "notify"

// The notify write's own phases.
const (
	PhaseActor   counted.Phase = "actor"
	PhaseGroup   counted.Phase = "group"
	PhaseIndexed counted.Phase = "indexed"
	PhaseRead    counted.Phase = "read"
)

// Notice is one actor's part in one notification.
type Notice struct {
	Kind      tables.NotifKind
	Recipient weibo.UserID
	Actor     weibo.UserID
	Subject   tables.NotifSubject
	At        int64 // the action's time, ms (a repost's: the repost's ms)
}

func (n Notice) String() string {
	return fmt.Sprintf("%c notification of %s by %s", n.Kind, n.Recipient, n.Actor)
}

// NoticeMode is what sendNotice does with the actor.
type NoticeMode int

const (
	// NoticeAdd adds the actor, who just acted (no check that they are in
	// the notification already, beyond its newest generation).
	NoticeAdd NoticeMode = iota
	// NoticeRemove takes the actor out of every generation.
	NoticeRemove
	// NoticeSync makes the notification agree with the action's authority
	// (noticeWanted): added when missing from every generation, taken out
	// when the action was undone — what a repair or a re-run fan-out does.
	NoticeSync
)

// notifyRelation is the notify relation: owner the recipient, other the
// actor, the notification in the marker's extra bytes; counter the
// recipient's unread count. A markNotificationsRead writes its marker with
// actor 0 and no extra bytes: nothing to settle, the recount is its
// repair.
func (s *Service) notifyRelation() *counted.Relation {
	return &counted.Relation{
		Name:   Relation,
		Marker: tables.PendingNotify,
		Phases: []counted.Phase{PhaseActor, PhaseGroup, PhaseIndexed, PhaseRead},
		Counters: func(recipient, _ uint64) []counted.Counter {
			return []counted.Counter{{Kind: UnreadCount, Owner: recipient}}
		},
		Settle: func(ctx context.Context, recipient, actor uint64, extra []byte) error {
			kind, subject, at, left, ok := tables.DecodeNotifyExtra(extra)
			if !ok {
				return nil
			}
			return s.repairNotice(ctx, Notice{Kind: kind, Recipient: weibo.UserID(recipient), Actor: weibo.UserID(actor), Subject: subject, At: at}, left)
		},
	}
}

// Service is the notifications' API: the notify writes of every module,
// a recipient's list, unread count and live events. It is safe for
// concurrent use.
type Service struct {
	st     hbase.Store
	w      *counted.Protocol
	rel    *counted.Relation
	wanted []noticeCheck     // RegisterNoticeCheck
	blocks BlockCheck        // SetBlocks; nil: none
	susp   weibo.Suspensions // SetSuspensions
	events *events.Emitter
	queue  int
	log    *slog.Logger
}

// Users reads the recipients whose unread count is recounted.
// *account.Service implements it.
type Users interface {
	GetUsers(ctx context.Context, ids []weibo.UserID) ([]*weibo.User, error)
}

// New returns the notifications over st and registers with w the notify
// relation, the unread-notification counter (of users' users rows) and
// the notifications' fsck check (check.go); live events are published
// with ev, and a subscription holds at most queue events
// (events.DefaultQueue when queue <= 0). The modules whose actions notify
// register how their notifications are checked (RegisterNoticeCheck)
// before any call. The weibo tables must exist (tables.Migrate).
func New(st hbase.Store, w *counted.Protocol, ev *events.Emitter, users Users, queue int) *Service {
	if queue <= 0 {
		queue = events.DefaultQueue
	}
	s := &Service{st: st, w: w, events: ev, queue: queue, log: w.Logger(), susp: weibo.NoSuspensions}
	s.rel = s.notifyRelation()
	w.Register(s.rel)
	w.RegisterCheck(s.fsckCheck())
	w.RegisterCounter(account.Counter(users, UnreadCount, tables.ColUnread, tables.ColUnreadSeq, s.countUnread))
	return s
}

// countUnread counts uid's unread notifications: one scan of their group
// rows' summaries.
func (s *Service) countUnread(ctx context.Context, uid weibo.UserID) (int64, error) {
	return s.w.CountRows(ctx, &hbase.Scan{Table: tables.Notifications, Prefix: tables.NotifGroupsPrefix(uid), Families: []string{tables.FamNotifSummary}},
		nil, func(r *hbase.Result) bool {
			g, ok := tables.DecodeNotifGroup(r)
			return ok && !g.Head.Read && g.Count > 0
		})
}

// SendNotice makes the notify write of n (see above) in mode, settled:
// after adding or taking out the actor it reads the action's authority
// again and, while the notification disagrees with it (an undo that ran
// before this write, or an action done again after it), takes the actor
// out or adds them again (at most counted.SettleRounds times; the marker
// is kept for the repairer beyond). Whatever the interleaving, the last
// write to the actor's cells is then made for the action's final state.
// Nobody is notified of their own action: n with the actor as its
// recipient writes nothing. Errors are the store's (the marker then stays
// for the repairer) and the step hook's.
func (s *Service) SendNotice(ctx context.Context, n Notice, mode NoticeMode) error {
	if n.Recipient == n.Actor || n.Recipient == 0 || n.Actor == 0 {
		return nil
	}
	want := mode == NoticeAdd
	if mode == NoticeAdd {
		if blocked, err := s.mentionBlocked(ctx, n); err != nil || blocked {
			return err
		}
	}
	if mode == NoticeSync {
		w, known, err := s.noticeWanted(ctx, n)
		if err != nil || !known {
			return err
		}
		present, err := s.noticePresent(ctx, n)
		if err != nil || present == w {
			return err
		}
		want = w
	}
	op, err := s.w.BeginWith(ctx, s.rel, uint64(n.Recipient), uint64(n.Actor), tables.EncodeNotifyExtra(n.Kind, n.Subject, n.At, 0))
	if err != nil {
		return err
	}
	var d int64
	settled := false
	for range counted.SettleRounds {
		var dd int64
		if want {
			dd, err = s.addActor(ctx, op, n)
		} else {
			dd, err = s.removeActor(ctx, op, n)
		}
		d += dd
		if err != nil {
			break
		}
		w, known, err2 := s.noticeWanted(ctx, n)
		if err = err2; err != nil || !known || w == want {
			settled = err == nil
			break
		}
		want = w
	}
	if errors.Is(err, counted.ErrUnsettled) || (err == nil && !settled) {
		// The notification kept changing: the repairer settles it.
		return s.w.Keep(ctx, op, nil)
	}
	if err != nil {
		return err
	}
	if d != 0 {
		if _, err := s.w.Count(ctx, op, d); err != nil {
			return err
		}
	}
	return s.w.End(ctx, op)
}

// SendNotices sends each notice in mode (sendNotice), in order.
func (s *Service) SendNotices(ctx context.Context, ns []Notice, mode NoticeMode) error {
	for _, n := range ns {
		if err := s.SendNotice(ctx, n, mode); err != nil {
			return fmt.Errorf("%s: %w", n, err)
		}
	}
	return nil
}

// groupID is the notification of n's kind and subject at generation gen.
func (n Notice) groupID(gen uint64) weibo.NotificationID {
	return weibo.NotificationID{Recipient: n.Recipient, Kind: n.Kind, Subject: n.Subject, Gen: gen}
}

// noticePresent reports whether n's actor is in some generation of n's
// notification: one scan of its group rows' actor cells.
func (s *Service) noticePresent(ctx context.Context, n Notice) (bool, error) {
	q := tables.NotifActorQualifier(n.Actor)
	found := false
	err := s.st.Scan(ctx, &hbase.Scan{Table: tables.Notifications, Families: []string{tables.FamNotifActors},
		Prefix: tables.NotifSubjectPrefix(n.Recipient, n.Kind, n.Subject)}, func(r *hbase.Result) error {
		if len(r.Value(tables.FamNotifActors, q)) > 0 {
			found = true
			return hbase.ErrStopScan
		}
		return nil
	})
	return found, err
}

// repairNotice is the repairer's settle of a dead notify write of n: it
// rewrites the summary of every generation of n's notification from its
// actors' cells (RepairNotification), then adds or takes out n's actor as
// the action's authority says (noticeWanted; not counted: the repairer
// recounts), and deletes the index rows the write may have left: at the
// action's time, and at left (ms; 0 for none), the time of the one it was
// moving or deleting (leaving).
func (s *Service) repairNotice(ctx context.Context, n Notice, left int64) error {
	rows, err := hbase.ScanAll(ctx, s.st, &hbase.Scan{Table: tables.Notifications, Families: []string{tables.FamNotifActors},
		Prefix: tables.NotifSubjectPrefix(n.Recipient, n.Kind, n.Subject)})
	if err != nil {
		return err
	}
	gens := map[uint64]bool{1: true}
	for _, r := range rows {
		if id, ok := tables.DecodeNotifGroupKey(r.Row); ok {
			gens[id.Gen] = true
		}
	}
	for gen := range gens {
		if err := s.RepairNotification(ctx, n.groupID(gen)); err != nil {
			return err
		}
	}
	want, known, err := s.noticeWanted(ctx, n)
	if err != nil {
		return err
	}
	if known {
		present, err := s.noticePresent(ctx, n)
		if err != nil {
			return err
		}
		switch {
		case want && !present:
			_, err = s.addActor(ctx, nil, n)
		case !want && present:
			_, err = s.removeActor(ctx, nil, n)
		}
		if err != nil {
			return err
		}
	}
	var dels []*hbase.Delete
	for gen := range gens {
		id := n.groupID(gen)
		r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Notifications, Row: tables.NotifGroupKey(id), Families: []string{tables.FamNotifSummary}})
		if err != nil {
			return err
		}
		g, ok := tables.DecodeNotifGroup(r)
		for _, at := range []int64{n.At, left} {
			if at != 0 && (!ok || g.Head.At != at) {
				dels = append(dels, &hbase.Delete{Table: tables.Notifications, Row: tables.NotifIndexKey(id, at)})
			}
		}
	}
	return s.st.DeleteMany(ctx, dels)
}

// WantedFunc reads the authority of n's action and reports whether n's
// actor belongs in the notification (want), and whether that is known
// (false: the notification is left as it is). Errors are the store's.
type WantedFunc func(ctx context.Context, n Notice) (want, known bool, err error)

// RegisterNoticeCheck makes wanted decide whether a notification that
// match accepts should hold its actor (what a repair and a NoticeSync
// check); the first registered match decides. The module whose actions
// send those notifications registers it while the domain is wired,
// before any call.
func (s *Service) RegisterNoticeCheck(match func(Notice) bool, wanted WantedFunc) {
	s.wanted = append(s.wanted, noticeCheck{match, wanted})
}

// noticeCheck is one RegisterNoticeCheck.
type noticeCheck struct {
	match  func(Notice) bool
	wanted WantedFunc
}

// noticeWanted reads the authority of n's action, through the check the
// action's module registered (RegisterNoticeCheck), and reports whether
// n's actor belongs in the notification (want), and whether that is
// known: a like or a follow is known either way (an unlike or unfollow
// takes the actor out); a comment, reply, repost or mention only while
// the comment or post exists — a deleted one's notification stays (its
// post or comment then resolves to null), and one never written has none.
// A MENTION across a block is not wanted (SetBlocks): a sync or a repair
// takes its actor out, and a mention whose settle sees a block that
// landed during its write undoes itself.
func (s *Service) noticeWanted(ctx context.Context, n Notice) (want, known bool, err error) {
	for _, c := range s.wanted {
		if c.match(n) {
			want, known, err = c.wanted(ctx, n)
			if err == nil && want {
				var blocked bool
				blocked, err = s.mentionBlocked(ctx, n)
				want = !blocked
			}
			return want, known, err
		}
	}
	return false, false, nil // no module checks it: left as it is
}

// NoticeIn reports whether ns holds n: the same kind, recipient, actor
// and subject.
func NoticeIn(ns []Notice, n Notice) bool {
	return slices.ContainsFunc(ns, func(x Notice) bool {
		return x.Kind == n.Kind && x.Recipient == n.Recipient && x.Actor == n.Actor && x.Subject == n.Subject
	})
}
