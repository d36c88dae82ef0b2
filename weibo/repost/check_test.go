package repost_test

import (
	"cmp"
	"slices"
	"testing"
	"time"

	"github.com/weibohbase/gateway/fsck"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/repost"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestRepostChecks damages the reposts' two sides — a repost's list row
// lost, list rows of a repost that does not exist and of a repost of
// another post, a repostCount, a repost that died long ago (its marker
// left, its list row missing and its root's count behind) — and checks
// that fsck reports each kind, that --repair fixes them through the
// domain, and that a second run finds nothing. On HBase the store is a
// namespace of its own.
func TestRepostChecks(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st, svc, _ := domaintest.FsckService(t, b)
			a, bu, c := domaintest.MustUser(t, svc, domaintest.Uniq("a")), domaintest.MustUser(t, svc, domaintest.Uniq("b")), domaintest.MustUser(t, svc, domaintest.Uniq("c"))
			publish := func(author weibo.UserID, text string) weibo.PostID {
				t.Helper()
				p, err := svc.Feed.Publish(ctx, author, text)
				if err != nil {
					t.Fatal(err)
				}
				return p.ID
			}
			repostOf := func(author weibo.UserID, of weibo.PostID) weibo.PostID {
				t.Helper()
				p, err := svc.Reposts.Repost(ctx, author, of, "")
				if err != nil {
					t.Fatal(err)
				}
				return p.ID
			}
			root1, root2 := publish(a.ID, "one"), publish(a.ID, "two")
			r1, r2, r3 := repostOf(bu.ID, root1), repostOf(c.ID, root1), repostOf(bu.ID, root2)
			if err := svc.FlushFanout(ctx); err != nil {
				t.Fatal(err)
			}
			if rep, err := fsck.Run(ctx, svc, fsck.Options{}); err != nil || len(rep.Issues) > 0 {
				t.Fatalf("before the damage: %v %+v", err, rep)
			}

			old := tables.EncodeMillis(time.Now().Add(-time.Hour).UnixMilli())
			entry := hbase.Values{tables.FamRepost: {tables.ColRepostEntry: {}}}
			damage := []domaintest.Damage{
				{Kind: repost.IssueListMissing, Do: func() error {
					return st.Delete(ctx, &hbase.Delete{Table: tables.Reposts, Row: tables.RepostKey(root1, r1)})
				}},
				{Kind: repost.IssueListStale, Do: func() error { // a repost that does not exist
					return st.Put(ctx, &hbase.Put{Table: tables.Reposts, Row: tables.RepostKey(root1, weibo.PostID{Author: c.ID, Millis: 12345}), Values: entry})
				}},
				{Kind: repost.IssueListStale, Do: func() error { // r2 reposts root1, not root2
					return st.Put(ctx, &hbase.Put{Table: tables.Reposts, Row: tables.RepostKey(root2, r2), Values: entry})
				}},
				{Kind: repost.IssueCount, Do: func() error { return domaintest.PutPostCounter(ctx, st, tables.ColReposts, root1, 7) }},
				// A repost of root2 that died after its content row: its
				// marker, no list row, its root's count not Incremented.
				{Kind: fsck.WriteUnfinished, Do: func() error {
					if err := st.Delete(ctx, &hbase.Delete{Table: tables.Reposts, Row: tables.RepostKey(root2, r3)}); err != nil {
						return err
					}
					if err := domaintest.PutPostCounter(ctx, st, tables.ColReposts, root2, 0); err != nil {
						return err
					}
					return st.Put(ctx, &hbase.Put{Table: tables.Pending, Row: tables.PendingKey(tables.PendingRepost, uint64(root2.Author), uint64(root2.Millis), 42),
						Values: hbase.Values{tables.FamPending: {tables.ColPendingAt: old, tables.ColPendingExtra: tables.EncodeRepostExtra(r3)}}})
				}},
			}
			domaintest.Damaged(t, damage)
			found, repaired := domaintest.FsckRepairs(t, svc, map[string]int{repost.IssueListMissing: 2, repost.IssueListStale: 2, repost.IssueCount: 2, fsck.WriteUnfinished: 1})
			if len(found.Issues) != 7 {
				t.Errorf("check-only run: %+v", found.Issues)
			}
			// The dead repost's marker is repaired first (its list row
			// written, root2 recounted): the other checks then see it fixed.
			want := map[string]int{repost.IssueListMissing: 1, repost.IssueListStale: 2, repost.IssueCount: 1, fsck.WriteUnfinished: 1}
			if counts := repaired.Counts(); !equalCounts(counts, want) {
				t.Errorf("repair: %v, want %v; %+v", counts, want, repaired.Issues)
			}
			for root, reposts := range map[weibo.PostID][]weibo.PostID{root1: newestFirst(r1, r2), root2: {r3}} {
				ps, err := svc.Feed.GetPosts(ctx, []weibo.PostID{root})
				if err != nil {
					t.Fatal(err)
				}
				page, err := svc.Reposts.Reposts(ctx, root, nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				var got []weibo.PostID
				for _, e := range page.Edges {
					got = append(got, e.Post.ID)
				}
				if ps[0].RepostCount != int64(len(reposts)) || !slices.Equal(got, reposts) {
					t.Errorf("post %s after repair: repostCount %d, reposts %v; want %v", root, ps[0].RepostCount, got, reposts)
				}
				raw, err := hbase.ScanAll(ctx, st, &hbase.Scan{Table: tables.Reposts, Prefix: tables.RepostPrefix(root)})
				if err != nil || len(raw) != len(reposts) {
					t.Errorf("post %s: %d list rows (%v), want %d", root, len(raw), err, len(reposts))
				}
			}
		})
	}
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// newestFirst orders posts as a list of reposts does: newest first, ties
// in one millisecond by author id.
func newestFirst(ids ...weibo.PostID) []weibo.PostID {
	return slices.SortedFunc(slices.Values(ids), func(a, b weibo.PostID) int {
		return cmp.Or(cmp.Compare(b.Millis, a.Millis), cmp.Compare(a.Author, b.Author))
	})
}
