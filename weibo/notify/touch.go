package notify

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/tables"
)

// The rows of one notification (notify.go): an actor joins or leaves by
// their cell, then the row is touched — its summary recomputed from the
// actors' cells with CheckAndPut on the head read. Every write that
// changes a cell touches the row after it, and a touch that loses its
// CheckAndPut reads the row again, so the last summary written is computed
// from a read made after the last cell change: the summary ends up
// agreeing with the cells, whatever the interleaving.

// addActor writes n's actor's cell into the newest generation of n's
// notification that is unread (a new one when there is none, or it was
// read, for the kinds that group; the others have one actor and are
// written once) and touches it; it returns the change of the unread count
// (1 when the touch created the notification). op is the notify write's
// (nil in a repair).
func (s *Service) addActor(ctx context.Context, op *counted.Op, n Notice) (int64, error) {
	q := tables.NotifActorQualifier(n.Actor)
	for range counted.SettleRounds {
		rows, err := hbase.ScanAll(ctx, s.st, &hbase.Scan{Table: tables.Notifications, Families: []string{tables.FamNotifSummary},
			Prefix: tables.NotifSubjectPrefix(n.Recipient, n.Kind, n.Subject), Limit: 1})
		if err != nil {
			return 0, err
		}
		gen := uint64(1)
		if len(rows) == 1 {
			id, _ := tables.DecodeNotifGroupKey(rows[0].Row)
			g, ok := tables.DecodeNotifGroup(rows[0])
			switch {
			case ok && !n.Kind.Grouped():
				return 0, nil // one actor each: it is there
			case ok && g.Head.Read:
				gen = id.Gen + 1
			default:
				gen = max(1, id.Gen)
			}
		}
		id := n.groupID(gen)
		row := tables.NotifGroupKey(id)
		if err := s.st.Put(ctx, &hbase.Put{Table: tables.Notifications, Row: row,
			Values: hbase.Values{tables.FamNotifActors: {q: tables.EncodeMillis(n.At)}}}); err != nil {
			return 0, err
		}
		if err := s.w.Step(ctx, StepActor); err != nil {
			return 0, err
		}
		d, read, err := s.touch(ctx, op, n, id)
		if err != nil || !read || !n.Kind.Grouped() {
			return d, err
		}
		// Read meanwhile: out of it again, and into the next generation.
		if err := s.st.Put(ctx, &hbase.Put{Table: tables.Notifications, Row: row, Values: hbase.Values{tables.FamNotifActors: {q: {}}}}); err != nil {
			return d, err
		}
		dd, _, err := s.touch(ctx, op, n, id)
		if err != nil {
			return d + dd, err
		}
	}
	return 0, counted.ErrUnsettled
}

// removeActor empties n's actor's cell in every generation of n's
// notification that holds it, and touches each; it returns the change of
// the unread count (-1 for each unread notification deleted with its
// last actor).
func (s *Service) removeActor(ctx context.Context, op *counted.Op, n Notice) (int64, error) {
	rows, err := hbase.ScanAll(ctx, s.st, &hbase.Scan{Table: tables.Notifications, Families: []string{tables.FamNotifActors},
		Prefix: tables.NotifSubjectPrefix(n.Recipient, n.Kind, n.Subject)})
	if err != nil {
		return 0, err
	}
	var d int64
	q := tables.NotifActorQualifier(n.Actor)
	for _, r := range rows {
		id, ok := tables.DecodeNotifGroupKey(r.Row)
		if !ok || len(r.Value(tables.FamNotifActors, q)) == 0 {
			continue
		}
		if err := s.st.Put(ctx, &hbase.Put{Table: tables.Notifications, Row: r.Row, Values: hbase.Values{tables.FamNotifActors: {q: {}}}}); err != nil {
			return d, err
		}
		if err := s.w.Step(ctx, StepActor); err != nil {
			return d, err
		}
		dd, _, err := s.touch(ctx, op, n, id)
		d += dd
		if err != nil {
			return d, err
		}
	}
	return d, nil
}

// touch makes notification id's rows agree with its actors' cells: it
// reads the row whole and, with CheckAndPut on the head read (re-read and
// retried while other writes change it):
//   - a row with actors but no head gets one, unread, at its newest
//     actor's time, after its index row (created: +1);
//   - a row with a head but no actor gets a tombstone summary (count 0,
//     CheckAndPut on the head read; rows are never deleted), then its
//     index row is deleted (-1 when it was unread);
//   - else the count and the newest actors are rewritten, with the head's
//     version bumped even when they agree, and an unread notification's
//     time moves to its newest actor's when that is later: the index row
//     at the new time first, the one at the old time deleted after the
//     head.
//
// It returns the change of the unread count and whether the notification
// was read. An index row about to be left behind is recorded in op's
// marker first (leaving; op nil in a repair and in fsck). Errors are the
// store's and the step hook's, or counted.ErrUnsettled when the row kept
// changing.
func (s *Service) touch(ctx context.Context, op *counted.Op, n Notice, id weibo.NotificationID) (d int64, read bool, err error) {
	row := tables.NotifGroupKey(id)
	var wrote int64 // the time of the index row written for a head that did not win, if any
	for range counted.SettleRounds {
		r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Notifications, Row: row})
		if err != nil {
			return 0, false, err
		}
		g, hasHead := tables.DecodeNotifGroup(r)
		actors := tables.NotifActors(r)
		if err := s.dropLostIndex(ctx, id, wrote, g, hasHead); err != nil {
			return 0, false, err
		}
		wrote = 0
		switch {
		case len(actors) == 0 && !hasHead:
			if len(r.Family(tables.FamNotifActors)) == 0 {
				return 0, false, nil // never had an actor
			}
			// No notification, as read; still written (a tombstone, its
			// version bumped), so that a touch that read an actor's cell
			// before this writer emptied it cannot create the head after.
			ok, err := s.putTombstone(ctx, row, g, tables.NotifHead{})
			if err != nil {
				return 0, false, err
			}
			if ok {
				return 0, false, nil
			}
			continue
		case len(actors) == 0:
			if err := s.leaving(ctx, op, n, g.Head.At); err != nil {
				return 0, false, err
			}
			// Not deleted: a tombstone (putTombstone keeps the head's
			// time and read state).
			ok, err := s.putTombstone(ctx, row, g, g.Head)
			if err != nil || !ok {
				if err != nil {
					return 0, false, err
				}
				continue
			}
			if err := s.w.Step(ctx, StepGroup); err != nil {
				return 0, false, err
			}
			if err := s.st.Delete(ctx, &hbase.Delete{Table: tables.Notifications, Row: tables.NotifIndexKey(id, g.Head.At)}); err != nil {
				return 0, false, err
			}
			if g.Head.Read {
				return 0, true, s.w.Step(ctx, StepIndexed)
			}
			return -1, false, s.w.Step(ctx, StepIndexed)
		}
		count, newest := NotificationSummary(actors)
		next := tables.NotifGroup{Head: g.Head, Count: count, Newest: newest}
		if !hasHead { // created: unread, at its newest actor's time
			next.Head = tables.NotifHead{Version: g.Head.Version}
			g.Head = tables.NotifHead{}
		}
		if !next.Head.Read {
			next.Head.At = max(g.Head.At, newest[0].At)
		}
		// Written even when it agrees already: the version bump makes a
		// concurrent touch that read the cells before this one's cell
		// change fail its CheckAndPut and read again.
		next.Head.Version++
		moved := next.Head.At != g.Head.At
		if moved {
			if err := s.st.Put(ctx, &hbase.Put{Table: tables.Notifications, Row: tables.NotifIndexKey(id, next.Head.At), Values: tables.NotifEntryValues()}); err != nil {
				return 0, false, err
			}
			if hasHead {
				if err := s.leaving(ctx, op, n, g.Head.At); err != nil {
					return 0, false, err
				}
			}
		}
		ok, err := s.st.CheckAndPut(ctx, &hbase.Put{Table: tables.Notifications, Row: row,
			Values: hbase.Values{tables.FamNotifSummary: tables.NotifGroupValues(next)}}, tables.FamNotifSummary, tables.ColNotifHead, g.HeadCell)
		if err != nil {
			return 0, false, err
		}
		if !ok {
			if moved {
				wrote = next.Head.At // deleted at the next round unless it won meanwhile
			}
			continue
		}
		if moved && !next.Head.Read {
			s.emitNotification(id)
		}
		if err := s.w.Step(ctx, StepGroup); err != nil {
			return 0, false, err
		}
		if moved && hasHead {
			if err := s.st.Delete(ctx, &hbase.Delete{Table: tables.Notifications, Row: tables.NotifIndexKey(id, g.Head.At)}); err != nil {
				return 0, false, err
			}
			if err := s.w.Step(ctx, StepIndexed); err != nil {
				return 0, false, err
			}
		}
		if !hasHead {
			return 1, false, nil
		}
		return 0, g.Head.Read, nil
	}
	if wrote != 0 {
		// Giving up after a lost CheckAndPut: the index row written for
		// that head goes too (checked as at the top of a round), so that
		// the repair, which knows only the action's time, has none to find.
		r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Notifications, Row: row, Families: []string{tables.FamNotifSummary}})
		if err != nil {
			return 0, false, err
		}
		g, hasHead := tables.DecodeNotifGroup(r)
		if err := s.dropLostIndex(ctx, id, wrote, g, hasHead); err != nil {
			return 0, false, err
		}
	}
	return 0, false, counted.ErrUnsettled
}

// dropLostIndex deletes notification id's index row at wrote (ms; 0 for
// none), written for a head whose CheckAndPut lost, unless the head read
// since (g, live) holds that time.
func (s *Service) dropLostIndex(ctx context.Context, id weibo.NotificationID, wrote int64, g tables.NotifGroup, live bool) error {
	if wrote == 0 || (live && g.Head.At == wrote) {
		return nil
	}
	return s.st.Delete(ctx, &hbase.Delete{Table: tables.Notifications, Row: tables.NotifIndexKey(id, wrote)})
}

// putTombstone writes a tombstone summary (count 0, no newest actor) with
// head's time and read state and the version after g's, with CheckAndPut
// on g's head cell, and reports whether it won. Rows are never deleted:
// a delete would take with it an actor's cell written since (a join
// racing the leave), and in HBase it would also hide a head written again
// in its millisecond.
func (s *Service) putTombstone(ctx context.Context, row []byte, g tables.NotifGroup, head tables.NotifHead) (bool, error) {
	head.Version = g.Head.Version + 1
	return s.st.CheckAndPut(ctx, &hbase.Put{Table: tables.Notifications, Row: row,
		Values: hbase.Values{tables.FamNotifSummary: tables.NotifGroupValues(tables.NotifGroup{Head: head})}},
		tables.FamNotifSummary, tables.ColNotifHead, g.HeadCell)
}

// RepairNotification makes notification id's rows agree with its actors'
// cells (touch: the summary recomputed, a head given to a row with actors
// and none, a row with no actor deleted, the index row at the head's
// time), and writes that index row again. It is what the repairer does
// for a dead notify write and what `gateway fsck --repair` does for a
// summary or an index row that disagrees. It does not change the unread
// count (the repairer and fsck recount it). Errors are the store's, or
// one wrapping counted.ErrUnsettled when the row kept changing.
func (s *Service) RepairNotification(ctx context.Context, id weibo.NotificationID) error {
	if _, _, err := s.touch(ctx, nil, Notice{}, id); err != nil {
		return fmt.Errorf("repair notification %s: %w", id, err)
	}
	r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Notifications, Row: tables.NotifGroupKey(id), Families: []string{tables.FamNotifSummary}})
	if err != nil {
		return err
	}
	if g, ok := tables.DecodeNotifGroup(r); ok {
		return s.st.Put(ctx, &hbase.Put{Table: tables.Notifications, Row: tables.NotifIndexKey(id, g.Head.At), Values: tables.NotifEntryValues()})
	}
	return nil
}

// leaving records in op's marker (counted.Protocol.Extend) that the write
// is about to move or delete n's index row at time at: a crash before its
// delete leaves that row, which the repair then deletes (repairNotice).
// Without op (a repair) it does nothing.
func (s *Service) leaving(ctx context.Context, op *counted.Op, n Notice, at int64) error {
	if op == nil {
		return nil
	}
	return s.w.Extend(ctx, op, tables.EncodeNotifyExtra(n.Kind, n.Subject, n.At, at))
}

// NotificationSummary returns what the summary of a notification whose
// actors' cells hold actors says: the count and the newest
// tables.NotifActorsKept, newest first (ties by user id descending). It
// does not change actors.
func NotificationSummary(actors []tables.NotifActor) (count int64, newest []tables.NotifActor) {
	newest = sortActors(slices.Clone(actors))
	return int64(len(actors)), newest[:min(len(newest), tables.NotifActorsKept)]
}

// sortActors sorts actors newest first, ties by user id descending, and
// returns them.
func sortActors(actors []tables.NotifActor) []tables.NotifActor {
	slices.SortFunc(actors, func(a, b tables.NotifActor) int {
		return cmp.Or(cmp.Compare(b.At, a.At), cmp.Compare(b.User, a.User))
	})
	return actors
}
