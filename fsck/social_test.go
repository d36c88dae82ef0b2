package fsck_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weibohbase/gateway/fsck"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestSocialChecks damages, row by row, everything the social side keeps
// on two sides — a fans row lost and one left over, each of the three
// counters of a user, the number of all users, an inbox entry lost, entries of an unfollowed author
// and of a post that does not exist, an own post missing from its author's
// inbox, a write and a publish that died long ago — and checks that fsck
// reports each kind, that --repair fixes all of them through the domain,
// and that a second run finds nothing. On HBase the store is a namespace
// of its own, so that fsck sees only this test's rows.
func TestSocialChecks(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st, svc, _ := startedService(t, b)
			a, bu, c := mustUser(t, svc, uniq("a")), mustUser(t, svc, uniq("b")), mustUser(t, svc, uniq("c"))
			var bPosts []weibo.PostID
			for i := range 3 {
				p, err := svc.Feed.Publish(ctx, bu.ID, fmt.Sprintf("b's post %d", i))
				if err != nil {
					t.Fatal(err)
				}
				bPosts = append(bPosts, p.ID)
			}
			cPost, err := svc.Feed.Publish(ctx, c.ID, "c's post")
			if err != nil {
				t.Fatal(err)
			}
			// Done fanning out: an unfollow that saw a fan-out of c running
			// would keep its pending row (and c's counters busy) for the grace.
			if err := svc.FlushFanout(ctx); err != nil {
				t.Fatal(err)
			}
			for _, f := range [][2]weibo.UserID{{a.ID, bu.ID}, {c.ID, bu.ID}, {a.ID, c.ID}} {
				if _, err := svc.Follows.Follow(ctx, f[0], f[1]); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := svc.Follows.Unfollow(ctx, a.ID, c.ID); err != nil {
				t.Fatal(err)
			}
			if rep, err := fsck.Run(ctx, svc, fsck.Options{}); err != nil || len(rep.Issues) > 0 {
				t.Fatalf("before the damage: %v %+v", err, rep)
			}

			old := tables.U64(uint64(time.Now().Add(-time.Hour).UnixMilli()))
			damage := []domaintest.Damage{
				{Kind: fsck.FansMissing, Do: func() error {
					return st.Delete(ctx, &hbase.Delete{Table: tables.Relations, Row: tables.RelationKey(bu.ID, tables.Fans, c.ID)})
				}},
				{Kind: fsck.FansStale, Do: func() error {
					return st.Put(ctx, &hbase.Put{Table: tables.Relations, Row: tables.RelationKey(a.ID, tables.Fans, bu.ID),
						Values: hbase.Values{tables.FamRel: {tables.ColRelSet: old}}})
				}},
				{Kind: fsck.FollowCount, Do: func() error { return putCounter(ctx, st, a.ID, tables.ColFollows, 7) }},
				{Kind: fsck.FanCount, Do: func() error { return putCounter(ctx, st, c.ID, tables.ColFans, 3) }},
				{Kind: fsck.PostCount, Do: func() error { return putCounter(ctx, st, bu.ID, tables.ColPosts, 1) }},
				{Kind: fsck.UserCount, Do: func() error { return putCounterIn(ctx, st, tables.UserCountKey, tables.ColUserCount, 99) }},
				{Kind: fsck.InboxMissing, Do: func() error {
					return st.Delete(ctx, &hbase.Delete{Table: tables.Inbox, Row: tables.InboxKey(a.ID, bPosts[1])})
				}},
				{Kind: fsck.InboxMissing, Do: func() error { // an own post
					return st.Delete(ctx, &hbase.Delete{Table: tables.Inbox, Row: tables.InboxKey(c.ID, cPost.ID)})
				}},
				{Kind: fsck.InboxExtra, Do: func() error { // a's unfollowed c
					return st.Put(ctx, &hbase.Put{Table: tables.Inbox, Row: tables.InboxKey(a.ID, cPost.ID), Values: hbase.Values{tables.FamInbox: {tables.ColInboxAt: {}}}})
				}},
				{Kind: fsck.InboxExtra, Do: func() error { // a post that does not exist
					return st.Put(ctx, &hbase.Put{Table: tables.Inbox, Row: tables.InboxKey(a.ID, weibo.PostID{Author: bu.ID, Millis: 12345}),
						Values: hbase.Values{tables.FamInbox: {tables.ColInboxAt: {}}}})
				}},
				{Kind: fsck.WriteUnfinished, Do: func() error {
					return st.Put(ctx, &hbase.Put{Table: tables.Pending, Row: tables.PendingKey(tables.PendingFollow, uint64(c.ID), uint64(a.ID), 42),
						Values: hbase.Values{tables.FamPending: {tables.ColPendingAt: old}}})
				}},
				{Kind: fsck.FanoutUnfinished, Do: func() error {
					return st.Put(ctx, &hbase.Put{Table: tables.Outbox, Row: tables.OutboxKey(bPosts[0]),
						Values: hbase.Values{tables.FamOutbox: {tables.ColOutboxAt: old}}})
				}},
			}
			domaintest.FsckRepairs(t, svc, domaintest.Damaged(t, damage))
			us, err := svc.Accounts.GetUsers(ctx, []weibo.UserID{a.ID, bu.ID, c.ID})
			if err != nil {
				t.Fatal(err)
			}
			if us[0].FollowCount != 1 || us[1].FanCount != 2 || us[1].PostCount != 3 || us[2].FanCount != 0 || us[2].PostCount != 1 {
				t.Errorf("counters after repair: a %+v, b %+v, c %+v", us[0], us[1], us[2])
			}
			if n, err := svc.Accounts.UserCount(ctx); err != nil || n != 3 {
				t.Errorf("user count after repair = %d, %v; want 3", n, err)
			}
			page, err := svc.Timeline.HomeTimeline(ctx, a.ID, weibo.Page{})
			if err != nil {
				t.Fatal(err)
			}
			var got []weibo.PostID
			for _, e := range page.Edges {
				got = append(got, e.Post.ID)
			}
			if want := []weibo.PostID{bPosts[2], bPosts[1], bPosts[0]}; !slices.Equal(got, want) {
				t.Errorf("a's timeline after repair = %v, want %v", got, want)
			}
		})
	}
}

// putCounter overwrites a user's counter (damage no API call makes), as a
// version newer than the cell's: Increments may have written it ahead of
// the clock.
func putCounter(ctx context.Context, st hbase.Store, uid weibo.UserID, qual string, v uint64) error {
	return putCounterIn(ctx, st, tables.UserKey(uid), qual, v)
}

// putCounterIn is putCounter on any row of weibo:users (the user count's).
func putCounterIn(ctx context.Context, st hbase.Store, row []byte, qual string, v uint64) error {
	r, err := st.Get(ctx, &hbase.Get{Table: tables.Users, Row: row, Families: []string{tables.FamCount}})
	if err != nil {
		return err
	}
	put := &hbase.Put{Table: tables.Users, Row: row, Values: hbase.Values{tables.FamCount: {qual: tables.U64(v)}}}
	if c := r.Cell(tables.FamCount, qual); c != nil {
		put.Timestamp = c.Timestamp + 1
	}
	return st.Put(ctx, put)
}
