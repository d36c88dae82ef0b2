package like_test

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
	"github.com/weibohbase/gateway/weibo/like"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestLikeChecks damages the likes of two posts row by row — a like
// without its post's likers row, one without its user's likes row, list
// rows of a like that is gone and of a like row holding another time, a
// likeCount off by some, a like of a post deleted with no retraction, list
// rows of a post that never was, a liker's likedPostCount off by some, a
// like that died long ago — and checks that fsck
// reports each kind, that --repair fixes all of them through the domain,
// and that a second run finds nothing. On HBase the store is a namespace
// of its own, so that fsck sees only this test's rows.
func TestLikeChecks(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st, svc, _ := domaintest.FsckService(t, b)
			author, u, v := domaintest.MustUser(t, svc, domaintest.Uniq("author")), domaintest.MustUser(t, svc, domaintest.Uniq("u")), domaintest.MustUser(t, svc, domaintest.Uniq("v"))
			var posts []weibo.PostID
			for i := range 3 {
				p, err := svc.Feed.Publish(ctx, author.ID, fmt.Sprintf("post %d", i))
				if err != nil {
					t.Fatal(err)
				}
				posts = append(posts, p.ID)
			}
			if err := svc.FlushFanout(ctx); err != nil {
				t.Fatal(err)
			}
			for _, l := range []struct {
				uid  weibo.UserID
				post weibo.PostID
			}{{u.ID, posts[0]}, {v.ID, posts[0]}, {u.ID, posts[1]}, {u.ID, posts[2]}} {
				if _, err := svc.Likes.Like(ctx, l.uid, l.post); err != nil {
					t.Fatal(err)
				}
				time.Sleep(2 * time.Millisecond) // distinct like times: the order of the likers is the test's
			}
			if rep, err := fsck.Run(ctx, svc, fsck.Options{}); err != nil || len(rep.Issues) > 0 {
				t.Fatalf("before the damage: %v %+v", err, rep)
			}
			likedAt := func(uid weibo.UserID, p weibo.PostID) int64 {
				r, err := st.Get(ctx, &hbase.Get{Table: tables.Likes, Row: tables.LikeKey(p, uid)})
				at, ok := tables.LikeAt(r)
				if err != nil || !ok {
					t.Fatalf("like of %s by %d: %v", p, uid, err)
				}
				return at
			}
			uAt0, vAt0, uAt1 := likedAt(u.ID, posts[0]), likedAt(v.ID, posts[0]), likedAt(u.ID, posts[1])
			old := time.Now().Add(-time.Hour).UnixMilli()
			entry := tables.LikeEntryValues()
			damage := []domaintest.Damage{
				{Kind: like.IssueDependentMissing, Do: func() error {
					return st.Delete(ctx, &hbase.Delete{Table: tables.Likes, Row: tables.PostLikerKey(posts[0], uAt0, u.ID)})
				}},
				{Kind: like.IssueDependentMissing, Do: func() error {
					return st.Delete(ctx, &hbase.Delete{Table: tables.Likes, Row: tables.UserLikeKey(v.ID, vAt0, posts[0])})
				}},
				{Kind: like.IssueDependentStale, Do: func() error { // the list rows of a like v never made
					return st.PutMany(ctx, []*hbase.Put{
						{Table: tables.Likes, Row: tables.PostLikerKey(posts[1], old, v.ID), Values: entry},
						{Table: tables.Likes, Row: tables.UserLikeKey(v.ID, old, posts[1]), Values: entry},
					})
				}},
				{Kind: like.IssueDependentStale, Do: func() error { // a list row of an older like of u, at another time
					return st.Put(ctx, &hbase.Put{Table: tables.Likes, Row: tables.UserLikeKey(u.ID, uAt1-1000, posts[1]), Values: entry})
				}},
				{Kind: like.IssueCount, Do: func() error { return domaintest.PutPostCounter(ctx, st, tables.ColLikes, posts[1], 5) }},
				{Kind: like.IssueOrphan, Do: func() error { // post 2 gone with no retraction: u's like of it stays
					return st.Delete(ctx, &hbase.Delete{Table: tables.Content, Row: tables.ContentKey(posts[2])})
				}},
				{Kind: like.IssueOrphan, Do: func() error { // the list rows of a like of a post that never was
					never := weibo.PostID{Author: author.ID, Millis: old}
					return st.PutMany(ctx, []*hbase.Put{
						{Table: tables.Likes, Row: tables.PostLikerKey(never, old, v.ID), Values: entry},
						{Table: tables.Likes, Row: tables.UserLikeKey(v.ID, old, never), Values: entry},
					})
				}},
				{Kind: like.IssueLikedCount, Do: func() error { return putUserCounter(ctx, st, tables.ColLikedPosts, v.ID, 7) }},
				{Kind: fsck.WriteUnfinished, Do: func() error {
					return st.Put(ctx, &hbase.Put{Table: tables.Pending, Row: tables.PendingKey(tables.PendingLike, uint64(posts[0].Author), uint64(posts[0].Millis), 42),
						Values: hbase.Values{tables.FamPending: {tables.ColPendingAt: tables.EncodeMillis(old), tables.ColPendingExtra: tables.EncodeLikeExtra(v.ID, old)}}})
				}},
			}
			domaintest.FsckRepairs(t, svc, domaintest.Damaged(t, damage))
			ps, err := svc.Feed.GetPosts(ctx, posts)
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range [][]weibo.UserID{{v.ID, u.ID}, {u.ID}} {
				var got []weibo.UserID
				page, err := svc.Likes.PostLikes(ctx, posts[i], nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range page.Edges {
					got = append(got, e.User)
				}
				if !slices.Equal(got, want) || ps[i].LikeCount != int64(len(want)) {
					t.Errorf("post %d after repair: likeCount %d, likers %v; want %v", i, ps[i].LikeCount, got, want)
				}
			}
			// u's like of the gone post is counted out, v's counter recounted.
			for _, c := range []struct {
				uid  weibo.UserID
				want int64
			}{{u.ID, 2}, {v.ID, 1}} {
				if n, err := svc.Likes.CountLikedPosts(ctx, c.uid); err != nil || n != c.want {
					t.Errorf("user %d after repair: likedPostCount %d, %v; want %d", c.uid, n, err, c.want)
				}
			}
			if rows, err := hbase.ScanAll(ctx, st, &hbase.Scan{Table: tables.Likes, Prefix: tables.LikePrefix(posts[2])}); err != nil || len(rows) != 0 {
				t.Errorf("like rows of the gone post after repair: %d, %v", len(rows), err)
			}
		})
	}
}

// putUserCounter overwrites the counter in qualifier qual of uid's users
// row (damage no API call makes), as a version newer than the cell's.
func putUserCounter(ctx context.Context, st hbase.Store, qual string, uid weibo.UserID, v uint64) error {
	r, err := st.Get(ctx, &hbase.Get{Table: tables.Users, Row: tables.UserKey(uid), Families: []string{tables.FamCount}})
	if err != nil {
		return err
	}
	put := &hbase.Put{Table: tables.Users, Row: tables.UserKey(uid), Values: hbase.Values{tables.FamCount: {qual: tables.U64(v)}}}
	if c := r.Cell(tables.FamCount, qual); c != nil {
		put.Timestamp = c.Timestamp + 1
	}
	return st.Put(ctx, put)
}
