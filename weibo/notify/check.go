package notify

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/check"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/tables"
)

// The notifications' part of `gateway fsck` (package check):
//
//	pair                      authority                        dependent
//	notification              its group row's actor cells      the row's summary (actor count, newest
//	                                                           actors, a head), its index row at the
//	                                                           head's time, the recipient's unread count
//
// A group row's summary that disagrees with its actors' cells (or a row
// with actors but no head, or a head but no actor) is rewritten from the
// cells (RepairNotification, which also writes the index row); an index
// row whose group's head is elsewhere or gone is deleted; a user's
// unreadNotificationCount that differs from their unread notifications is
// recounted. Whether the actors' cells agree with the actions (the like
// rows, the follows) is the repairer's, from the notify writes' markers:
// an undone action's notification is a notification that was true once.

// Kinds of check.Issue of the notifications.
const (
	IssueSummary      = "notification-summary"       // a group row whose count, newest actors or head disagree with its actors: rewritten
	IssueIndexMissing = "notification-index-missing" // a notification without its index row at its time: written
	IssueIndexStale   = "notification-index-stale"   // an index row whose notification is gone or at another time: deleted
	IssueUnreadCount  = "notification-unread-count"  // an unreadNotificationCount that differs from the unread notifications: recounted
)

// notifGroup is what the scan found of one group row.
type notifGroup struct {
	g       tables.NotifGroup
	hasHead bool
	actors  []tables.NotifActor
	ts      int64
}

// fsckCheck is the notifications' check, registered by New.
func (s *Service) fsckCheck() check.Check {
	return check.Check{Name: Relation, Start: func(p *check.Pass) check.Run {
		kept := map[weibo.UserID]unreadCell{}
		return check.Run{
			User: func(uid weibo.UserID, r *hbase.Result) {
				c := unreadCell{n: tables.CounterValue(r, tables.ColUnread)}
				for _, q := range []string{tables.ColUnread, tables.ColUnreadSeq} {
					if cell := r.Cell(tables.FamCount, q); cell != nil {
						c.ts = max(c.ts, cell.Timestamp)
					}
				}
				kept[uid] = c
			},
			Check: func(ctx context.Context) error { return s.check(ctx, p, kept) },
		}
	}}
}

// unreadCell is a user's kept unreadNotificationCount and the newest time
// of its cells (the count and its sequence), from fsck's scan of
// weibo:users.
type unreadCell struct{ n, ts int64 }

// check scans weibo:notifications once and compares the groups, their
// index rows and the users' kept unread counters (kept, from fsck's scan
// of weibo:users).
func (s *Service) check(ctx context.Context, p *check.Pass, kept map[weibo.UserID]unreadCell) error {
	groups := map[weibo.NotificationID]*notifGroup{}
	type indexRow struct {
		key []byte
		id  weibo.NotificationID
		at  int64
		ts  int64
	}
	var index []indexRow
	indexed := map[weibo.NotificationID]map[int64]bool{}
	err := p.Scan(ctx, &hbase.Scan{Table: tables.Notifications}, func(r *hbase.Result) {
		if id, ok := tables.DecodeNotifGroupKey(r.Row); ok {
			g, hasHead := tables.DecodeNotifGroup(r)
			groups[id] = &notifGroup{g: g, hasHead: hasHead, actors: tables.NotifActors(r), ts: check.NewestTS(r)}
		} else if id, at, ok := tables.DecodeNotifIndexKey(r.Row); ok {
			index = append(index, indexRow{key: bytes.Clone(r.Row), id: id, at: at, ts: check.NewestTS(r)})
			if indexed[id] == nil {
				indexed[id] = map[int64]bool{}
			}
			indexed[id][at] = true
		}
	})
	if err != nil {
		return err
	}
	unread := map[weibo.UserID]int64{}
	ids := slices.SortedFunc(maps.Keys(groups), func(a, b weibo.NotificationID) int { return cmp.Compare(a.String(), b.String()) })
	for _, id := range ids {
		ng := groups[id]
		count, newest := NotificationSummary(ng.actors)
		summaryOK := ng.hasHead && count > 0 && ng.g.Count == count && slices.Equal(ng.g.Newest, newest) &&
			(ng.g.Head.Read || ng.g.Head.At >= newest[0].At)
		if ng.hasHead && !ng.g.Head.Read && count > 0 {
			unread[id.Recipient]++
		}
		repair := func() (bool, error) { return true, s.RepairNotification(ctx, id) }
		switch {
		case !summaryOK && (ng.hasHead || count > 0):
			err = p.Issue(IssueSummary, ng.ts, repair,
				"notification %s: head %v, count %d, %d newest; its actors' cells: %d", id, ng.hasHead, ng.g.Count, len(ng.g.Newest), count)
		case !summaryOK:
			// A tombstone (every actor left) over emptied cells:
			// nothing reads it.
		case !indexed[id][ng.g.Head.At]:
			err = p.Issue(IssueIndexMissing, ng.ts, repair, "notification %s has no index row at its time %d", id, ng.g.Head.At)
		}
		if err != nil {
			return err
		}
	}
	for _, ix := range index {
		ng := groups[ix.id]
		if ng != nil && ng.hasHead && ng.g.Head.At == ix.at {
			continue
		}
		err := p.Issue(IssueIndexStale, ix.ts, func() (bool, error) {
			ns, err := s.GetNotifications(ctx, []weibo.NotificationID{ix.id})
			if err != nil || (ns[0] != nil && ns[0].AtMillis == ix.at) {
				return false, err
			}
			return true, s.st.Delete(ctx, &hbase.Delete{Table: tables.Notifications, Row: ix.key})
		}, "index row of notification %s at %d: the notification is gone or at another time", ix.id, ix.at)
		if err != nil {
			return err
		}
	}
	return s.checkUnread(ctx, p, kept, unread)
}

// checkUnread compares every user's kept unreadNotificationCount with
// unread, their unread notifications counted by the scan, and recounts
// those that differ (pending while a counter cell is younger than the
// grace).
func (s *Service) checkUnread(ctx context.Context, p *check.Pass, kept map[weibo.UserID]unreadCell, unread map[weibo.UserID]int64) error {
	var found []check.Found
	var fixes []counted.Counter
	for _, uid := range slices.Sorted(maps.Keys(kept)) {
		has := kept[uid]
		if has.n == unread[uid] {
			continue
		}
		found = append(found, check.Found{TS: has.ts, Issue: check.Issue{Kind: IssueUnreadCount,
			Detail: fmt.Sprintf("user %d has unreadNotificationCount %d, %d unread notifications", uid, has.n, unread[uid])}})
		fixes = append(fixes, counted.Counter{Kind: UnreadCount, Owner: uint64(uid)})
	}
	return p.Batch(found, s.w.BatchRecount(ctx, fixes))
}
