package seed

import (
	"cmp"
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"

	"github.com/weibohbase/gateway/fsck"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestSeedLargeAccounts: with a fan-out threshold, the importer writes no
// fan's inbox entry of a large account's post and lists the account in row
// tables.LargeKey; home timelines (merged at read time) equal the data
// set's, and fsck finds nothing. A re-run without large accounts pushes
// their posts and empties the row.
func TestSeedLargeAccounts(t *testing.T) {
	ctx := context.Background()
	ds := smallDataset(t)
	st := newSeedStore(t)
	svc := domain.New(st, domain.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))), domain.WithOutboxSweep(0))
	var large []uint64
	for _, u := range ds.Users {
		if ds.FanCount(u.ID) >= 3 {
			large = append(large, u.ID)
		}
	}
	if len(large) == 0 {
		t.Fatal("the small data set has no user with 3 fans")
	}
	for _, c := range []struct {
		threshold int
		large     []uint64
	}{{3, large}, {-1, nil}} {
		opts := seedTestOptions
		opts.FanoutThreshold = c.threshold
		stats, err := Import(ctx, st, ds, opts)
		if err != nil {
			t.Fatal(err)
		}
		if stats.Large != int64(len(c.large)) {
			t.Errorf("threshold %d: stats.Large = %d, want %d", c.threshold, stats.Large, len(c.large))
		}
		got, err := svc.Fanout.LargeAccounts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(c.large) {
			t.Errorf("threshold %d: large accounts %v, want %v", c.threshold, got, c.large)
		}
		isLarge := map[uint64]bool{}
		for _, id := range c.large {
			isLarge[id] = true
			if _, ok := got[weibo.UserID(id)]; !ok {
				t.Errorf("threshold %d: %d not listed as large", c.threshold, id)
			}
		}
		for _, u := range ds.Users {
			// Inbox rows of followees' posts: none of a large account's.
			var inbox int
			err := st.Scan(ctx, &hbase.Scan{Table: tables.Inbox, Prefix: tables.InboxPrefix(weibo.UserID(u.ID))}, func(r *hbase.Result) error {
				if _, id, ok := tables.DecodeInboxKey(r.Row); ok && uint64(id.Author) != u.ID {
					if isLarge[uint64(id.Author)] {
						t.Errorf("threshold %d: inbox of %d holds %v of a large account", c.threshold, u.ID, id)
					}
					inbox++
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			// The merged timeline is the data set's.
			var want []weibo.PostID
			for _, a := range append([]uint64{u.ID}, ds.Following(u.ID)...) {
				for _, j := range ds.PostsOf(a) {
					p := ds.Posts[j]
					want = append(want, weibo.PostID{Author: weibo.UserID(p.Author), Millis: p.Millis})
				}
			}
			slices.SortFunc(want, func(a, b weibo.PostID) int {
				return cmp.Or(cmp.Compare(b.Millis, a.Millis), cmp.Compare(a.Author, b.Author))
			})
			conn, err := svc.Timeline.HomeTimeline(ctx, weibo.UserID(u.ID), weibo.Page{First: new(weibo.MaxPageSize)})
			if err != nil {
				t.Fatal(err)
			}
			var ids []weibo.PostID
			for _, e := range conn.Edges {
				ids = append(ids, e.Post.ID)
			}
			if !slices.Equal(ids, want) {
				t.Errorf("threshold %d: timeline of %d = %v, want %v", c.threshold, u.ID, ids, want)
			}
		}
		rep, err := fsck.Run(ctx, svc, fsck.Options{})
		if err != nil || len(rep.Issues) > 0 {
			t.Errorf("threshold %d: fsck: %v %+v", c.threshold, err, rep.Issues)
		}
	}
}
