package comment_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/weibohbase/gateway/fsck"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/comment"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestCommentChecks damages the comments — a post's comment counter
// changed behind the protocol's back (two posts), a comment row of a post
// that does not exist, a comment write that died long ago after writing
// its comment row — and checks that fsck reports each kind, that --repair
// fixes them (recounts, the orphan deleted, the dead write repaired), and
// that a second run finds nothing. On HBase the store is a namespace of
// its own.
func TestCommentChecks(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st, svc, _ := domaintest.FsckService(t, b)
			a, bu := domaintest.MustUser(t, svc, domaintest.Uniq("a")), domaintest.MustUser(t, svc, domaintest.Uniq("b"))
			var posts []weibo.PostID
			for i := range 3 {
				p, err := svc.Feed.Publish(ctx, a.ID, fmt.Sprintf("post %d", i))
				if err != nil {
					t.Fatal(err)
				}
				posts = append(posts, p.ID)
			}
			for i := range 3 {
				if _, err := svc.Comments.AddComment(ctx, bu.ID, posts[i%2], fmt.Sprintf("comment %d", i), nil); err != nil {
					t.Fatal(err)
				}
			}
			if err := svc.FlushFanout(ctx); err != nil {
				t.Fatal(err)
			}
			if rep, err := fsck.Run(ctx, svc, fsck.Options{}); err != nil || len(rep.Issues) > 0 {
				t.Fatalf("before the damage: %v %+v", err, rep)
			}

			old := tables.U64(uint64(time.Now().Add(-time.Hour).UnixMilli()))
			gone := weibo.PostID{Author: a.ID, Millis: 12345}
			damage := []domaintest.Damage{
				{Kind: comment.IssueCount, Do: func() error { return domaintest.PutPostCounter(ctx, st, tables.ColComments, posts[0], 9) }},
				{Kind: comment.IssueCount, Do: func() error { return domaintest.PutPostCounter(ctx, st, tables.ColComments, posts[2], 1) }},
				{Kind: comment.IssueOrphan, Do: func() error {
					return st.Put(ctx, &hbase.Put{Table: tables.Comments, Row: tables.CommentKey(weibo.CommentID{Post: gone, Millis: 12346, Author: bu.ID}),
						Values: tables.CommentValues("orphan", bu.Username, nil, nil)})
				}},
				{Kind: fsck.WriteUnfinished, Do: func() error {
					// An addComment that wrote its marker and its comment row, and died.
					c := weibo.CommentID{Post: posts[1], Millis: time.Now().UnixMilli(), Author: a.ID}
					if err := st.Put(ctx, &hbase.Put{Table: tables.Comments, Row: tables.CommentKey(c), Values: tables.CommentValues("died", a.Username, nil, nil)}); err != nil {
						return err
					}
					return st.Put(ctx, &hbase.Put{Table: tables.Pending, Row: tables.PendingKey(tables.PendingComment, uint64(a.ID), uint64(posts[1].Millis), 42),
						Values: hbase.Values{tables.FamPending: {tables.ColPendingAt: old, tables.ColPendingExtra: tables.EncodeCommentRef(c)}}})
				}},
			}
			want := domaintest.Damaged(t, damage)
			// The dead write's post counts one comment fewer than its rows, too.
			want[comment.IssueCount]++
			domaintest.FsckRepairs(t, svc, want)
			ps, err := svc.Feed.GetPosts(ctx, posts)
			if err != nil {
				t.Fatal(err)
			}
			for i, wantN := range []int64{2, 2, 0} {
				if ps[i].CommentCount != wantN {
					t.Errorf("post %d: commentCount %d after repair, want %d", i, ps[i].CommentCount, wantN)
				}
			}
			if orphans, err := hbase.ScanAll(ctx, st, &hbase.Scan{Table: tables.Comments, Prefix: tables.CommentsPrefix(gone)}); err != nil || len(orphans) != 0 {
				t.Errorf("orphan rows after repair: %d, %v", len(orphans), err)
			}
		})
	}
}
