package notify_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/weibohbase/gateway/fsck"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/notify"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestNotificationChecks damages the notifications — a group row's count
// and newest actors, an actor cell written behind the summary's back, an
// index row deleted, a stale index row, a row of emptied actor cells with
// a head, an unread counter, a notify write that died after its actor
// cell — and checks that fsck reports each kind, that --repair fixes them
// and that a second run finds nothing. On HBase the store is a namespace
// of its own.
func TestNotificationChecks(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := b.OpenOwn(t, tables.Namespace, "fsckn")
			svc := domaintest.Service(t, st)
			a, b1, b2, b3 := domaintest.MustUser(t, svc, domaintest.Uniq("a")), domaintest.MustUser(t, svc, domaintest.Uniq("b1")), domaintest.MustUser(t, svc, domaintest.Uniq("b2")), domaintest.MustUser(t, svc, domaintest.Uniq("b3"))
			var posts []weibo.PostID
			for i := range 3 {
				p, err := svc.Feed.Publish(ctx, a.ID, fmt.Sprintf("post %d", i))
				if err != nil {
					t.Fatal(err)
				}
				posts = append(posts, p.ID)
			}
			for _, u := range []weibo.UserID{b1.ID, b2.ID} {
				for _, p := range posts {
					if _, err := svc.Likes.Like(ctx, u, p); err != nil {
						t.Fatal(err)
					}
				}
			}
			if _, err := svc.Follows.Follow(ctx, b1.ID, a.ID); err != nil {
				t.Fatal(err)
			}
			if rep, err := fsck.Run(ctx, svc, fsck.Options{}); err != nil || len(rep.Issues) > 0 {
				t.Fatalf("before the damage: %v %+v", err, rep)
			}
			like := func(p weibo.PostID) weibo.NotificationID {
				return weibo.NotificationID{Recipient: a.ID, Kind: tables.NotifLike, Subject: tables.PostSubject(p), Gen: 1}
			}
			group := func(id weibo.NotificationID) tables.NotifGroup {
				r, err := st.Get(ctx, &hbase.Get{Table: tables.Notifications, Row: tables.NotifGroupKey(id), Families: []string{tables.FamNotifSummary}})
				g, ok := tables.DecodeNotifGroup(r)
				if err != nil || !ok {
					t.Fatalf("group %s: %v", id, err)
				}
				return g
			}
			putSummary := func(id weibo.NotificationID, g tables.NotifGroup) error {
				return st.Put(ctx, &hbase.Put{Table: tables.Notifications, Row: tables.NotifGroupKey(id), Values: hbase.Values{tables.FamNotifSummary: tables.NotifGroupValues(g)}})
			}
			old := tables.U64(uint64(time.Now().Add(-time.Hour).UnixMilli()))
			damage := []domaintest.Damage{
				{Kind: notify.IssueSummary, Do: func() error { g := group(like(posts[0])); g.Count = 7; return putSummary(like(posts[0]), g) }},
				{Kind: notify.IssueSummary, Do: func() error {
					return st.Put(ctx, &hbase.Put{Table: tables.Notifications, Row: tables.NotifGroupKey(like(posts[1])),
						Values: hbase.Values{tables.FamNotifActors: {tables.NotifActorQualifier(b3.ID): tables.EncodeMillis(1)}}})
				}},
				{Kind: notify.IssueIndexMissing, Do: func() error {
					return st.Delete(ctx, &hbase.Delete{Table: tables.Notifications, Row: tables.NotifIndexKey(like(posts[2]), group(like(posts[2])).Head.At)})
				}},
				{Kind: notify.IssueIndexStale, Do: func() error {
					return st.Put(ctx, &hbase.Put{Table: tables.Notifications, Row: tables.NotifIndexKey(like(posts[2]), 5), Values: tables.NotifEntryValues()})
				}},
				{Kind: notify.IssueSummary, Do: func() error {
					// A head whose actors' cells are all emptied.
					id := weibo.NotificationID{Recipient: b3.ID, Kind: tables.NotifLike, Subject: tables.PostSubject(posts[0]), Gen: 1}
					return st.Put(ctx, &hbase.Put{Table: tables.Notifications, Row: tables.NotifGroupKey(id), Values: hbase.Values{
						tables.FamNotifSummary: tables.NotifGroupValues(tables.NotifGroup{Head: tables.NotifHead{At: 9, Version: 1}, Count: 1}),
						tables.FamNotifActors:  {tables.NotifActorQualifier(b1.ID): {}},
					}})
				}},
				{Kind: notify.IssueUnreadCount, Do: func() error {
					_, err := st.Increment(ctx, &hbase.Increment{Table: tables.Users, Row: tables.UserKey(b2.ID), Family: tables.FamCount, Qualifier: tables.ColUnread, Amount: 3})
					return err
				}},
				{Kind: fsck.WriteUnfinished, Do: func() error {
					// b2's follow of a that died after its attends row and its
					// notify write's marker and actor cell.
					at := time.Now().UnixMilli()
					if err := st.Put(ctx, &hbase.Put{Table: tables.Relations, Row: tables.RelationKey(b2.ID, tables.Attends, a.ID),
						Values: hbase.Values{tables.FamRel: {tables.ColRelSet: tables.EncodeMillis(at)}}}); err != nil {
						return err
					}
					id := weibo.NotificationID{Recipient: a.ID, Kind: tables.NotifFollow, Subject: tables.DaySubject(at), Gen: 1}
					if group(id).Head.Read {
						return fmt.Errorf("the follow notification is read")
					}
					if err := st.Put(ctx, &hbase.Put{Table: tables.Notifications, Row: tables.NotifGroupKey(id),
						Values: hbase.Values{tables.FamNotifActors: {tables.NotifActorQualifier(b2.ID): tables.EncodeMillis(at)}}}); err != nil {
						return err
					}
					return st.Put(ctx, &hbase.Put{Table: tables.Pending, Row: tables.PendingKey(tables.PendingNotify, uint64(a.ID), uint64(b2.ID), 42),
						Values: hbase.Values{tables.FamPending: {tables.ColPendingAt: old,
							tables.ColPendingExtra: tables.EncodeNotifyExtra(tables.NotifFollow, tables.DaySubject(at), at, 0)}}})
				}},
			}
			want := domaintest.Damaged(t, damage)
			// The dead write's actor cell is behind its summary's back too.
			want[notify.IssueSummary]++
			domaintest.FsckRepairs(t, svc, want)
			n := 2
			page, err := svc.Notify.Notifications(ctx, a.ID, &n, nil)
			if err != nil {
				t.Fatal(err)
			}
			if f := page.Edges[0].Notification; f.Kind != "FOLLOW" || f.ActorCount != 2 {
				t.Errorf("a's newest notification after the repair: %+v, want the FOLLOW of b1 and b2", f)
			}
		})
	}
}
