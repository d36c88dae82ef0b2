package comment_test

import (
	"io"
	"log/slog"
	"testing"

	"github.com/weibohbase/gateway/fsck"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/notify"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestCommentRegistered comments on a post through the domain's wiring,
// on both backends, and checks what New registers beyond the writes: the
// check of a comment's notifications (a COMMENT actor taken out while the
// comment stands is put back) and the delete hook (a deleted post's
// comment rows go with its retraction), with a clean fsck after.
func TestCommentRegistered(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := b.OpenOwn(t, tables.Namespace, "comment")
			if err := tables.Migrate(ctx, st); err != nil {
				t.Fatal(err)
			}
			svc := domain.New(st, domain.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
				domain.WithBcryptCost(4), domain.WithOutboxSweep(0))
			if err := svc.Start(ctx); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = svc.Close(ctx) })
			author, err := svc.Accounts.Register(ctx, "author", "correct horse")
			if err != nil {
				t.Fatal(err)
			}
			ann, err := svc.Accounts.Register(ctx, "ann", "correct horse")
			if err != nil {
				t.Fatal(err)
			}
			p, err := svc.Feed.Publish(ctx, author.ID, "评论我")
			if err != nil {
				t.Fatal(err)
			}
			c, err := svc.Comments.AddComment(ctx, ann.ID, p.ID, "说得好", nil)
			if err != nil {
				t.Fatal(err)
			}
			comments := func() int {
				page, err := svc.Notify.Notifications(ctx, author.ID, nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for _, e := range page.Edges {
					if e.Notification.Kind == notify.KindComment {
						n += e.Notification.ActorCount
					}
				}
				return n
			}
			if n := comments(); n != 1 {
				t.Fatalf("COMMENT notification actors = %d, want 1", n)
			}
			notice := notify.Notice{Kind: tables.NotifComment, Recipient: author.ID, Actor: ann.ID, Subject: tables.CommentSubject(c.ID), At: c.ID.Millis}
			if err := svc.Notify.SendNotice(ctx, notice, notify.NoticeRemove); err != nil {
				t.Fatal(err)
			}
			if n := comments(); n != 1 {
				t.Fatalf("COMMENT notification actors after a remove = %d, want 1 (the comment stands)", n)
			}

			if ok, err := svc.Feed.DeletePost(ctx, p.ID); err != nil || !ok {
				t.Fatalf("DeletePost = %v, %v", ok, err)
			}
			if err := svc.FlushFanout(ctx); err != nil {
				t.Fatal(err)
			}
			// FlushFanout waits for the retractions started so far.
			rows, err := hbase.ScanAll(ctx, st, &hbase.Scan{Table: tables.Comments, Prefix: tables.CommentsPrefix(p.ID)})
			if err != nil || len(rows) != 0 {
				t.Fatalf("%d comment rows of the deleted post left (%v)", len(rows), err)
			}
			if cs, err := svc.Comments.GetComments(ctx, []weibo.CommentID{c.ID}); err != nil || cs[0] != nil {
				t.Fatalf("GetComments of the deleted post's comment = %v, %v", cs, err)
			}
			rep, err := fsck.Run(ctx, svc, fsck.Options{Areas: fsck.AreaSocial})
			if err != nil || len(rep.Issues) != 0 {
				t.Fatalf("fsck: %+v, %v", rep, err)
			}
		})
	}
}
