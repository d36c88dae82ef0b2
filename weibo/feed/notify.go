package feed

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
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
//  3. adding: the newest generation of the notification is read; when
//     there is none, or it is read and the kind groups (like, repost,
//     follow: a read notification gets no new actor), the next
//     generation's index row, then its group row with CheckAndPut (head
//     absent) holding the head, the count 1, the actor and their cell —
//     one atomic write that creates the notification unread (+1); else the
//     actor's cell with CheckAndPut (absent: an actor already there is not
//     added again), then, when the notification's time moves, the index
//     row at the new time, then the summary with CheckAndPut on the head
//     read (still unread, else the cell is emptied again and the next
//     generation created), then the index row at the old time deleted;
//     taking out: the actor's cell emptied with CheckAndPut on its value in
//     every generation that holds it, then the summary with CheckAndPut on
//     the head read — or, for the last actor, the group row deleted with
//     CheckAndDelete on the head read (-1 when it was unread), then its
//     index row;
//  4. the unread count, by the changes of step 3 (within the budget);
//  5. the delete of the pending row.

// UnreadCount is a user's unreadNotificationCount: their unread
// notifications (group rows with a head marked unread and an actor). It is
// kept with Increment on the users row (family c) and registered with the
// protocol by New.
const UnreadCount counted.CounterKind = "unreadNotificationCount"

// Steps of a notify write, passed to the protocol's step hook
// (counted.WithStepHook); "notify:marked", "notify:sequenced" and
// "notify:counted" are the protocol's (counted.Protocol.BeginWith and
// Count).
const (
	StepNotifyMarked    = "notify:marked"    // after the pending row of a notify write or a markNotificationsRead
	StepNotifySequenced = "notify:sequenced" // after the recipient's unread-count sequence
	StepNotifyActor     = "notify:actor"     // after the actor's cell (joining or leaving a notification)
	StepNotifyGroup     = "notify:group"     // after the group row's summary is written, created or deleted
	StepNotifyCounted   = "notify:counted"   // after the unread count
	StepNotifyIndexed   = "notify:indexed"   // after the index row of the notification's old time is deleted
)

// notice is one actor's part in one notification.
type notice struct {
	kind      tables.NotifKind
	recipient weibo.UserID
	actor     weibo.UserID
	subject   tables.NotifSubject
	at        int64 // the action's time, ms (a repost's: the repost's ms)
}

func (n notice) String() string {
	return fmt.Sprintf("%c notification of %s by %s", n.kind, n.recipient, n.actor)
}

// errNextGen makes addActor start the next generation: the one it joined
// was read, or deleted, meanwhile.
var errNextGen = errors.New("the notification changed: take the next generation")

// noticeMode is what sendNotice does with the actor.
type noticeMode int

const (
	// noticeAdd adds the actor, who just acted (no check that they are in
	// the notification already, beyond its newest generation).
	noticeAdd noticeMode = iota
	// noticeRemove takes the actor out of every generation.
	noticeRemove
	// noticeSync makes the notification agree with the action's authority
	// (noticeWanted): added when missing from every generation, taken out
	// when the action was undone — what a repair or a re-run fan-out does.
	noticeSync
)

// notifyRelation is the notify relation: owner the recipient, other the
// actor, the notification in the marker's extra bytes; counter the
// recipient's unread count. A markNotificationsRead writes its marker with
// actor 0 and no extra bytes: nothing to settle, the recount is its
// repair.
func (s *Service) notifyRelation() *counted.Relation {
	return &counted.Relation{
		Name:   "notify",
		Marker: tables.PendingNotify,
		Counters: func(recipient, _ uint64) []counted.Counter {
			return []counted.Counter{{Kind: UnreadCount, Owner: recipient}}
		},
		Settle: func(ctx context.Context, recipient, actor uint64, extra []byte) error {
			kind, subject, at, ok := tables.DecodeNotifyExtra(extra)
			if !ok {
				return nil
			}
			return s.repairNotice(ctx, notice{kind: kind, recipient: weibo.UserID(recipient), actor: weibo.UserID(actor), subject: subject, at: at})
		},
	}
}

// registerNotifications adds the notify relation and the unread counter.
func (s *Service) registerNotifications() {
	s.notifies = s.notifyRelation()
	s.w.Register(s.notifies)
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

// sendNotice makes the notify write of n (see above) in mode. Nobody is
// notified of their own action: n with the actor as its recipient writes
// nothing. Errors are the store's (the marker then stays for the
// repairer) and the step hook's.
func (s *Service) sendNotice(ctx context.Context, n notice, mode noticeMode) error {
	if n.recipient == n.actor || n.recipient == 0 || n.actor == 0 {
		return nil
	}
	if mode == noticeSync {
		want, known, err := s.noticeWanted(ctx, n)
		if err != nil || !known {
			return err
		}
		present, err := s.noticePresent(ctx, n)
		if err != nil || present == want {
			return err
		}
		mode = noticeRemove
		if want {
			mode = noticeAdd
		}
	}
	op, err := s.w.BeginWith(ctx, s.notifies, uint64(n.recipient), uint64(n.actor), tables.EncodeNotifyExtra(n.kind, n.subject, n.at))
	if err != nil {
		return err
	}
	var d int64
	if mode == noticeAdd {
		d, err = s.addActor(ctx, n)
	} else {
		d, err = s.removeActor(ctx, n)
	}
	if errors.Is(err, counted.ErrUnsettled) {
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

// sendNotices sends each notice in mode (sendNotice), in order.
func (s *Service) sendNotices(ctx context.Context, ns []notice, mode noticeMode) error {
	for _, n := range ns {
		if err := s.sendNotice(ctx, n, mode); err != nil {
			return fmt.Errorf("%s: %w", n, err)
		}
	}
	return nil
}

// groupID is the notification of n's kind and subject at generation gen.
func (n notice) groupID(gen uint64) weibo.NotificationID {
	return weibo.NotificationID{Recipient: n.recipient, Kind: n.kind, Subject: n.subject, Gen: gen}
}

// addActor adds n's actor to the newest generation of n's notification
// that is unread (a new one when there is none), and returns the change
// of the unread count: 1 when it created the notification.
func (s *Service) addActor(ctx context.Context, n notice) (int64, error) {
	for range counted.SettleRounds {
		rows, err := hbase.ScanAll(ctx, s.st, &hbase.Scan{Table: tables.Notifications, Families: []string{tables.FamNotifSummary},
			Prefix: tables.NotifSubjectPrefix(n.recipient, n.kind, n.subject), Limit: 1})
		if err != nil {
			return 0, err
		}
		gen := uint64(1)
		if len(rows) == 1 {
			id, idOK := tables.DecodeNotifGroupKey(rows[0].Row)
			g, ok := tables.DecodeNotifGroup(rows[0])
			switch {
			case !idOK:
			case ok && !n.kind.Grouped():
				return 0, nil // one actor each: it is there
			case ok && !g.Head.Read:
				err := s.joinGroup(ctx, n, id, g)
				if !errors.Is(err, errNextGen) {
					return 0, err
				}
				continue
			case ok:
				gen = id.Gen + 1
			default:
				gen = id.Gen // a row without a head: take it
			}
		}
		created, err := s.createGroup(ctx, n, n.groupID(gen))
		if err != nil {
			return 0, err
		}
		if created {
			return 1, nil
		}
	}
	return 0, counted.ErrUnsettled
}

// createGroup creates notification id unread with n's actor alone: its
// index row, then its group row with CheckAndPut (head absent). It
// reports false, having written only the index row, when the notification
// exists already.
func (s *Service) createGroup(ctx context.Context, n notice, id weibo.NotificationID) (bool, error) {
	if err := s.st.Put(ctx, &hbase.Put{Table: tables.Notifications, Row: tables.NotifIndexKey(id, n.at), Values: tables.NotifEntryValues()}); err != nil {
		return false, err
	}
	g := tables.NotifGroup{Head: tables.NotifHead{At: n.at, Version: 1}, Count: 1, Newest: []tables.NotifActor{{User: n.actor, At: n.at}}}
	ok, err := s.st.CheckAndPut(ctx, &hbase.Put{Table: tables.Notifications, Row: tables.NotifGroupKey(id), Values: hbase.Values{
		tables.FamNotifSummary: tables.NotifGroupValues(g),
		tables.FamNotifActors:  {tables.NotifActorQualifier(n.actor): tables.EncodeMillis(n.at)},
	}}, tables.FamNotifSummary, tables.ColNotifHead, nil)
	if err == nil && ok {
		err = s.w.Step(ctx, StepNotifyGroup)
	}
	return ok, err
}

// joinGroup adds n's actor to notification id, unread with summary g as
// read: the actor's cell (CheckAndPut, absent), then the summary
// (CheckAndPut on g's head, re-read and retried while other writes change
// it). errNextGen when the notification was read or deleted meanwhile
// (the actor's cell emptied again).
func (s *Service) joinGroup(ctx context.Context, n notice, id weibo.NotificationID, g tables.NotifGroup) error {
	row := tables.NotifGroupKey(id)
	q := tables.NotifActorQualifier(n.actor)
	cell := tables.EncodeMillis(n.at)
	ok, err := s.st.CheckAndPut(ctx, &hbase.Put{Table: tables.Notifications, Row: row, Values: hbase.Values{tables.FamNotifActors: {q: cell}}},
		tables.FamNotifActors, q, nil)
	if err != nil || !ok {
		return err // !ok: the actor is in it already
	}
	if err := s.w.Step(ctx, StepNotifyActor); err != nil {
		return err
	}
	for range counted.SettleRounds {
		if g.Head.Read {
			_, err := s.st.CheckAndPut(ctx, &hbase.Put{Table: tables.Notifications, Row: row, Values: hbase.Values{tables.FamNotifActors: {q: {}}}},
				tables.FamNotifActors, q, cell)
			if err == nil {
				err = errNextGen
			}
			return err
		}
		next := g
		next.Count++
		next.Head.At = max(g.Head.At, n.at)
		next.Head.Version++
		next.Newest = newestActors(append(slices.Clone(g.Newest), tables.NotifActor{User: n.actor, At: n.at}))
		moved := next.Head.At != g.Head.At
		if moved {
			if err := s.st.Put(ctx, &hbase.Put{Table: tables.Notifications, Row: tables.NotifIndexKey(id, next.Head.At), Values: tables.NotifEntryValues()}); err != nil {
				return err
			}
		}
		ok, err := s.st.CheckAndPut(ctx, &hbase.Put{Table: tables.Notifications, Row: row, Values: hbase.Values{tables.FamNotifSummary: tables.NotifGroupValues(next)}},
			tables.FamNotifSummary, tables.ColNotifHead, g.HeadCell)
		if err != nil {
			return err
		}
		if ok {
			if err := s.w.Step(ctx, StepNotifyGroup); err != nil {
				return err
			}
			if moved {
				err = s.st.Delete(ctx, &hbase.Delete{Table: tables.Notifications, Row: tables.NotifIndexKey(id, g.Head.At)})
				if err == nil {
					err = s.w.Step(ctx, StepNotifyIndexed)
				}
			}
			return err
		}
		r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Notifications, Row: row, Families: []string{tables.FamNotifSummary}})
		if err != nil {
			return err
		}
		var exists bool
		if g, exists = tables.DecodeNotifGroup(r); !exists {
			// Deleted meanwhile (its last actor left): the cell written is
			// an orphan of a row without a head, which reads ignore.
			return errNextGen
		}
		if moved && g.Head.At != next.Head.At {
			// The index row written for the time that did not win.
			if err := s.st.Delete(ctx, &hbase.Delete{Table: tables.Notifications, Row: tables.NotifIndexKey(id, next.Head.At)}); err != nil {
				return err
			}
		}
	}
	return counted.ErrUnsettled
}

// newestActors returns the NotifActorsKept newest of actors (newest
// first, ties by user id descending), one entry per user.
func newestActors(actors []tables.NotifActor) []tables.NotifActor {
	out := sortActors(actors)[:0]
	for _, a := range actors {
		if !slices.ContainsFunc(out, func(x tables.NotifActor) bool { return x.User == a.User }) {
			out = append(out, a)
		}
	}
	return out[:min(len(out), tables.NotifActorsKept)]
}

// NotificationSummary returns what the summary of a notification whose
// actors' cells hold actors says: the count and the newest
// tables.NotifActorsKept, newest first (ties by user id descending). It
// does not change actors.
func NotificationSummary(actors []tables.NotifActor) (count int64, newest []tables.NotifActor) {
	return int64(len(actors)), newestActors(slices.Clone(actors))
}

// sortActors sorts actors newest first, ties by user id descending, and
// returns them.
func sortActors(actors []tables.NotifActor) []tables.NotifActor {
	slices.SortFunc(actors, func(a, b tables.NotifActor) int {
		return cmp.Or(cmp.Compare(b.At, a.At), cmp.Compare(b.User, a.User))
	})
	return actors
}

// removeActor takes n's actor out of every generation of n's
// notification that holds them, and returns the change of the unread
// count: -1 for each unread notification deleted with its last actor.
func (s *Service) removeActor(ctx context.Context, n notice) (int64, error) {
	rows, err := hbase.ScanAll(ctx, s.st, &hbase.Scan{Table: tables.Notifications, Families: []string{tables.FamNotifActors},
		Prefix: tables.NotifSubjectPrefix(n.recipient, n.kind, n.subject)})
	if err != nil {
		return 0, err
	}
	var d int64
	q := tables.NotifActorQualifier(n.actor)
	for _, r := range rows {
		id, ok := tables.DecodeNotifGroupKey(r.Row)
		cell := r.Value(tables.FamNotifActors, q)
		if !ok || len(cell) == 0 {
			continue
		}
		done, err := s.st.CheckAndPut(ctx, &hbase.Put{Table: tables.Notifications, Row: r.Row, Values: hbase.Values{tables.FamNotifActors: {q: {}}}},
			tables.FamNotifActors, q, cell)
		if err != nil {
			return d, err
		}
		if !done {
			continue // taken out (or changed) by another write, which settles it
		}
		if err := s.w.Step(ctx, StepNotifyActor); err != nil {
			return d, err
		}
		dd, err := s.shrinkGroup(ctx, id, n.actor)
		d += dd
		if err != nil {
			return d, err
		}
	}
	return d, nil
}

// shrinkGroup rewrites the summary of notification id, whose actor's cell
// was just emptied: the count one less and the actor out of the newest
// (refilled from the actors' cells when it was among them), with
// CheckAndPut on the head read — or, for the last actor, the group row
// deleted with CheckAndDelete on the head read, then its index row. It
// returns -1 when it deleted an unread notification.
func (s *Service) shrinkGroup(ctx context.Context, id weibo.NotificationID, actor weibo.UserID) (int64, error) {
	row := tables.NotifGroupKey(id)
	for range counted.SettleRounds {
		r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Notifications, Row: row})
		if err != nil {
			return 0, err
		}
		g, ok := tables.DecodeNotifGroup(r)
		if !ok {
			return 0, nil
		}
		actors := tables.NotifActors(r)
		if len(actors) == 0 {
			done, err := s.st.CheckAndDelete(ctx, &hbase.Delete{Table: tables.Notifications, Row: row}, tables.FamNotifSummary, tables.ColNotifHead, g.HeadCell)
			if err != nil || !done {
				if err != nil {
					return 0, err
				}
				continue
			}
			if err := s.w.Step(ctx, StepNotifyGroup); err != nil {
				return 0, err
			}
			err = s.st.Delete(ctx, &hbase.Delete{Table: tables.Notifications, Row: tables.NotifIndexKey(id, g.Head.At)})
			if err == nil {
				err = s.w.Step(ctx, StepNotifyIndexed)
			}
			if g.Head.Read {
				return 0, err
			}
			return -1, err
		}
		next := g
		next.Count = max(0, g.Count-1)
		next.Head.Version++
		next.Newest = slices.DeleteFunc(slices.Clone(g.Newest), func(a tables.NotifActor) bool { return a.User == actor })
		if len(next.Newest) < len(g.Newest) {
			next.Newest = newestActors(actors)
		}
		ok, err = s.st.CheckAndPut(ctx, &hbase.Put{Table: tables.Notifications, Row: row, Values: hbase.Values{tables.FamNotifSummary: tables.NotifGroupValues(next)}},
			tables.FamNotifSummary, tables.ColNotifHead, g.HeadCell)
		if err != nil {
			return 0, err
		}
		if ok {
			return 0, s.w.Step(ctx, StepNotifyGroup)
		}
	}
	return 0, counted.ErrUnsettled
}

// noticePresent reports whether n's actor is in some generation of n's
// notification: one scan of its group rows' actor cells.
func (s *Service) noticePresent(ctx context.Context, n notice) (bool, error) {
	q := tables.NotifActorQualifier(n.actor)
	found := false
	err := s.st.Scan(ctx, &hbase.Scan{Table: tables.Notifications, Families: []string{tables.FamNotifActors},
		Prefix: tables.NotifSubjectPrefix(n.recipient, n.kind, n.subject)}, func(r *hbase.Result) error {
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
// recounts), and deletes the index row the write may have left at the
// action's time.
func (s *Service) repairNotice(ctx context.Context, n notice) error {
	rows, err := hbase.ScanAll(ctx, s.st, &hbase.Scan{Table: tables.Notifications, Families: []string{tables.FamNotifSummary},
		Prefix: tables.NotifSubjectPrefix(n.recipient, n.kind, n.subject)})
	if err != nil {
		return err
	}
	// Rows with only actor cells (a head never written) are found through
	// the generation the marker's write may have created: the next one.
	gens := map[uint64]bool{1: true}
	for _, r := range rows {
		if id, ok := tables.DecodeNotifGroupKey(r.Row); ok {
			gens[id.Gen], gens[id.Gen+1] = true, true
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
			_, err = s.addActor(ctx, n)
		case !want && present:
			_, err = s.removeActor(ctx, n)
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
		if g, ok := tables.DecodeNotifGroup(r); !ok || g.Head.At != n.at {
			dels = append(dels, &hbase.Delete{Table: tables.Notifications, Row: tables.NotifIndexKey(id, n.at)})
		}
	}
	return s.st.DeleteMany(ctx, dels)
}

// RepairNotification makes notification id's summary agree with its
// actors' cells: the count and the newest actors recomputed (CheckAndPut
// on the head read), a row with actors but no head given one (unread, at
// its newest actor's time; a head older than its newest actor moved to
// that time), a row with a head but no actor deleted (and
// its index row), a row with neither deleted; then its index row written
// at its head's time. It is what the repairer does for a dead notify write
// and what `gateway fsck --repair` does for a summary or index row that
// disagrees. It does not change the unread count (the repairer and fsck
// recount it). Errors are the store's, or one wrapping
// counted.ErrUnsettled when the row kept changing.
func (s *Service) RepairNotification(ctx context.Context, id weibo.NotificationID) error {
	row := tables.NotifGroupKey(id)
	for range counted.SettleRounds {
		r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Notifications, Row: row})
		if err != nil || !r.Exists() {
			return err
		}
		g, hasHead := tables.DecodeNotifGroup(r)
		actors := tables.NotifActors(r)
		var ok bool
		switch {
		case len(actors) == 0 && hasHead:
			if ok, err = s.st.CheckAndDelete(ctx, &hbase.Delete{Table: tables.Notifications, Row: row}, tables.FamNotifSummary, tables.ColNotifHead, g.HeadCell); ok && err == nil {
				err = s.st.Delete(ctx, &hbase.Delete{Table: tables.Notifications, Row: tables.NotifIndexKey(id, g.Head.At)})
			}
		case len(actors) == 0:
			ok, err = s.st.CheckAndDelete(ctx, &hbase.Delete{Table: tables.Notifications, Row: row}, tables.FamNotifSummary, tables.ColNotifHead, nil)
		default:
			count, newest := NotificationSummary(actors)
			next := tables.NotifGroup{Head: g.Head, Count: count, Newest: newest}
			next.Head.At = max(g.Head.At, newest[0].At) // a head never written: 0
			next.Head.Version++
			if hasHead && next.Count == g.Count && slices.Equal(next.Newest, g.Newest) && next.Head.At == g.Head.At {
				next.Head = g.Head // nothing to rewrite
				ok = true
			} else {
				ok, err = s.st.CheckAndPut(ctx, &hbase.Put{Table: tables.Notifications, Row: row,
					Values: hbase.Values{tables.FamNotifSummary: tables.NotifGroupValues(next)}}, tables.FamNotifSummary, tables.ColNotifHead, g.HeadCell)
			}
			// The index row at the head's time, written after the head (an
			// index row is kept only while the head holds its time), and
			// the one at the time before deleted.
			if ok && err == nil {
				err = s.st.Put(ctx, &hbase.Put{Table: tables.Notifications, Row: tables.NotifIndexKey(id, next.Head.At), Values: tables.NotifEntryValues()})
			}
			if ok && err == nil && hasHead && g.Head.At != next.Head.At {
				err = s.st.Delete(ctx, &hbase.Delete{Table: tables.Notifications, Row: tables.NotifIndexKey(id, g.Head.At)})
			}
		}
		if err != nil || ok {
			return err
		}
	}
	return fmt.Errorf("repair notification %s: %w", id, counted.ErrUnsettled)
}

// noticeWanted reads the authority of n's action and reports whether n's
// actor belongs in the notification (want), and whether that is known:
// a like or a follow is known either way (an unlike or unfollow takes the
// actor out); a comment, reply, repost or mention only while the comment
// or post exists — a deleted one's notification stays (its post or
// comment then resolves to null), and one never written has none.
func (s *Service) noticeWanted(ctx context.Context, n notice) (want, known bool, err error) {
	post, _ := n.subject.Post()
	switch n.kind {
	case tables.NotifLike:
		r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Likes, Row: tables.LikeKey(post, n.actor)})
		return r.Exists(), err == nil, err
	case tables.NotifFollow:
		r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Relations, Row: tables.RelationKey(n.actor, tables.Attends, n.recipient)})
		v := r.Value(tables.FamRel, tables.ColRelSet)
		return v != nil && tables.DaySubject(int64(tables.DecodeU64(v))) == n.subject, err == nil, err
	case tables.NotifRepost:
		r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Content, Row: tables.ContentKey(weibo.PostID{Author: n.actor, Millis: n.at}), Families: []string{tables.FamPost}})
		ok := repostState(r, post)
		return ok, ok, err
	}
	var ns []notice
	if c, isComment := n.subject.Comment(); isComment {
		cs, err := s.GetComments(ctx, []weibo.CommentID{c})
		if err != nil || cs[0] == nil {
			return false, false, err
		}
		ns = commentNotices(cs[0], post.Author)
	} else {
		ps, err := s.GetPosts(ctx, []weibo.PostID{post})
		if err != nil || ps[0] == nil {
			return false, false, err
		}
		ns = postNotices(ps[0])
	}
	return slices.ContainsFunc(ns, func(x notice) bool {
		return x.kind == n.kind && x.recipient == n.recipient && x.actor == n.actor && x.subject == n.subject
	}), true, nil
}

// postNotices returns the notifications post p sends: REPOST to its
// root's author for a repost, MENTION to each user it mentions — one per
// recipient (a root author it mentions gets the REPOST), none to its
// author.
func postNotices(p *Post) []notice {
	var out []notice
	add := func(n notice) {
		if n.recipient != n.actor && !slices.ContainsFunc(out, func(x notice) bool { return x.recipient == n.recipient }) {
			out = append(out, n)
		}
	}
	if p.RepostOfID != nil {
		add(notice{kind: tables.NotifRepost, recipient: p.RepostOfID.Author, actor: p.ID.Author, subject: tables.PostSubject(*p.RepostOfID), at: p.ID.Millis})
	}
	for _, m := range p.MentionRefs {
		add(notice{kind: tables.NotifMention, recipient: m.User, actor: p.ID.Author, subject: tables.PostSubject(p.ID), at: p.ID.Millis})
	}
	return out
}

// commentNotices returns the notifications comment c on a post of
// postAuthor sends, one per recipient, first kind first: REPLY to the
// author of the comment it replies to, COMMENT to the post's author,
// MENTION to each user it mentions; none to its author.
func commentNotices(c *Comment, postAuthor weibo.UserID) []notice {
	var out []notice
	subject := tables.CommentSubject(c.ID)
	add := func(kind tables.NotifKind, to weibo.UserID) {
		if to != c.ID.Author && !slices.ContainsFunc(out, func(x notice) bool { return x.recipient == to }) {
			out = append(out, notice{kind: kind, recipient: to, actor: c.ID.Author, subject: subject, at: c.ID.Millis})
		}
	}
	if c.ReplyTo != nil {
		add(tables.NotifReply, c.ReplyTo.Author)
	}
	add(tables.NotifComment, postAuthor)
	for _, m := range c.MentionRefs {
		add(tables.NotifMention, m.User)
	}
	return out
}

// notifyPost sends post id's notifications (postNotices) as a sync, once
// its content row (r, as the fan-out read it) is stored: the fan-out
// calls it, and a fan-out run again (the outbox's sweep after a crash)
// adds nobody twice.
func (s *Service) notifyPost(ctx context.Context, id weibo.PostID, r *hbase.Result) error {
	p := postFromRow(id, r)
	if p == nil || (p.RepostOfID == nil && len(p.MentionRefs) == 0) {
		return nil
	}
	return s.sendNotices(ctx, postNotices(p), noticeSync)
}

// notifies reports whether a post with these cells sends notifications
// (a repost, or a text with mentions): its publish then leaves the
// sending to the fan-out, for a large author too.
func notifies(cells map[string][]byte) bool {
	return cells[tables.ColRepostOf] != nil || len(cells[tables.ColMentions]) > 0
}
