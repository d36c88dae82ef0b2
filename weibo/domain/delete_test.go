package domain_test

import (
	"context"
	"testing"
	"time"

	"github.com/weibohbase/gateway/fsck"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/tables"
)

// inboxHolders returns how many of owners' inboxes hold post: one GetMany.
func inboxHolders(t *testing.T, st hbase.Store, owners []weibo.UserID, post weibo.PostID) int {
	t.Helper()
	gets := make([]*hbase.Get, len(owners))
	for i, o := range owners {
		gets[i] = &hbase.Get{Table: tables.Inbox, Row: tables.InboxKey(o, post)}
	}
	rs, err := st.GetMany(t.Context(), gets)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range rs {
		if r.Exists() {
			n++
		}
	}
	return n
}

// TestDeletePostRetracts: a post of an author with 1,000 fans, pushed into
// every inbox, leaves every inbox when deleted (the retraction runs in the
// background; FlushFanout waits for it); the author's postCount drops by
// one; a second delete reports false. A large account's post (never
// pushed) is gone from its followers' home timelines at once.
func TestDeletePostRetracts(t *testing.T) {
	const fans = 1000
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := domaintest.OwnStore(t, b)
			svc := domaintest.Quiet(st, domain.WithFanoutThreshold(0))
			author := mustUser(t, svc, uniq("author"))
			// The fans' follow rows, written as the importer writes them.
			var owners []weibo.UserID
			var puts []*hbase.Put
			rel := hbase.Values{tables.FamRel: {tables.ColRelSet: tables.EncodeMillis(time.Now().UnixMilli())}}
			for i := range fans {
				fan := weibo.UserID(900_000_000 + i)
				owners = append(owners, fan)
				puts = append(puts, &hbase.Put{Table: tables.Relations, Row: tables.RelationKey(author.ID, tables.Fans, fan), Values: rel},
					&hbase.Put{Table: tables.Relations, Row: tables.RelationKey(fan, tables.Attends, author.ID), Values: rel})
			}
			if err := st.PutMany(ctx, puts); err != nil {
				t.Fatal(err)
			}
			p, err := svc.Feed.Publish(ctx, author.ID, "to be deleted")
			if err != nil {
				t.Fatal(err)
			}
			if err := svc.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer svc.Close(t.Context())
			if err := svc.FlushFanout(ctx); err != nil {
				t.Fatal(err)
			}
			if n := inboxHolders(t, st, owners, p.ID); n != fans {
				t.Fatalf("%d inboxes hold the post before the delete, want %d", n, fans)
			}
			ok, err := svc.Feed.DeletePost(ctx, p.ID)
			if err != nil || !ok {
				t.Fatalf("delete: %v, %v", ok, err)
			}
			if err := svc.FlushFanout(ctx); err != nil {
				t.Fatal(err)
			}
			if n := inboxHolders(t, st, append(owners, author.ID), p.ID); n != 0 {
				t.Fatalf("%d inboxes still hold the deleted post", n)
			}
			us, err := svc.Accounts.GetUsers(ctx, []weibo.UserID{author.ID})
			if err != nil || us[0].PostCount != 0 {
				t.Fatalf("postCount after the delete: %+v, %v", us[0], err)
			}
			if ok, err := svc.Feed.DeletePost(ctx, p.ID); err != nil || ok {
				t.Fatalf("second delete: %v, %v; want false", ok, err)
			}
			left, err := hbase.ScanAll(ctx, st, &hbase.Scan{Table: tables.Pending})
			if err != nil || len(left) != 0 {
				t.Fatalf("markers left: %d, %v", len(left), err)
			}

			// A large account: nothing was pushed, the post leaves at once.
			big := domaintest.Quiet(st, domain.WithFanoutThreshold(1))
			star, fan := mustUser(t, big, uniq("star")), mustUser(t, big, uniq("fan"))
			if _, err := big.Follows.Follow(ctx, fan.ID, star.ID); err != nil {
				t.Fatal(err)
			}
			if err := big.FlushFanout(ctx); err != nil {
				t.Fatal(err)
			}
			sp, err := big.Feed.Publish(ctx, star.ID, "large")
			if err != nil {
				t.Fatal(err)
			}
			page := func() int {
				c, err := big.Timeline.HomeTimeline(ctx, fan.ID, weibo.Page{})
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for _, e := range c.Edges {
					if e.Post.ID == sp.ID {
						n++
					}
				}
				return n
			}
			if page() != 1 {
				t.Fatal("the large account's post is not in its follower's timeline")
			}
			if ok, err := big.Feed.DeletePost(ctx, sp.ID); err != nil || !ok {
				t.Fatalf("delete: %v, %v", ok, err)
			}
			if page() != 0 {
				t.Fatal("the deleted post of a large account is still in its follower's timeline")
			}
		})
	}
}

// TestDeleteRepost: deleting a repost takes it out of its original's
// reposts and repostCount; deleting the original leaves the repost, whose
// original is then gone.
func TestDeleteRepost(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			svc := domaintest.Quiet(domaintest.OwnStore(t, b))
			if err := svc.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer svc.Close(context.Background())
			a, bu := mustUser(t, svc, uniq("orig")), mustUser(t, svc, uniq("reposter"))
			orig, err := svc.Feed.Publish(ctx, a.ID, "original")
			if err != nil {
				t.Fatal(err)
			}
			r1, err := svc.Reposts.Repost(ctx, bu.ID, orig.ID, "one")
			if err != nil {
				t.Fatal(err)
			}
			r2, err := svc.Reposts.Repost(ctx, bu.ID, orig.ID, "two")
			if err != nil {
				t.Fatal(err)
			}
			state := func() (int64, int) {
				ps, err := svc.Feed.GetPosts(ctx, []weibo.PostID{orig.ID})
				if err != nil || ps[0] == nil {
					t.Fatalf("original: %v", err)
				}
				page, err := svc.Reposts.Reposts(ctx, orig.ID, nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				return ps[0].RepostCount, len(page.Edges)
			}
			if n, listed := state(); n != 2 || listed != 2 {
				t.Fatalf("before: repostCount %d, listed %d", n, listed)
			}
			if ok, err := svc.Feed.DeletePost(ctx, r1.ID); err != nil || !ok {
				t.Fatalf("delete the repost: %v, %v", ok, err)
			}
			if n, listed := state(); n != 1 || listed != 1 {
				t.Fatalf("after deleting a repost: repostCount %d, listed %d", n, listed)
			}
			if ok, err := svc.Feed.DeletePost(ctx, orig.ID); err != nil || !ok {
				t.Fatalf("delete the original: %v, %v", ok, err)
			}
			ps, err := svc.Feed.GetPosts(ctx, []weibo.PostID{r2.ID, orig.ID})
			if err != nil || ps[0] == nil || ps[1] != nil || ps[0].RepostOfID == nil || *ps[0].RepostOfID != orig.ID {
				t.Fatalf("after deleting the original: %+v, %+v, %v", ps[0], ps[1], err)
			}
			if err := svc.FlushFanout(ctx); err != nil {
				t.Fatal(err)
			}
			rep, err := fsck.Run(ctx, svc, fsck.Options{Areas: fsck.AreaSocial})
			if err != nil || len(rep.Issues) != 0 {
				for _, tb := range []string{tables.Pending, tables.Outbox} {
					rows, _ := hbase.ScanAll(ctx, svc.Store(), &hbase.Scan{Table: tb})
					for _, r := range rows {
						t.Logf("%s row %x: %v", tb, r.Row, r.Cells)
					}
				}
				t.Fatalf("fsck: %+v, %v", rep.Issues, err)
			}
		})
	}
}
