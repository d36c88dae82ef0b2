package like_test

import (
	"io"
	"log/slog"
	"slices"
	"testing"

	"github.com/weibohbase/gateway/fsck"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/notify"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestLikeRegistered likes and unlikes a post through the domain's
// wiring, on both backends: the relation, the likeCount counter and the
// LIKE notification's check that New registers are the ones the writes,
// the repairer and fsck use — a notification synced from the like row
// appears and goes with it, the counter recounts to the lists, and fsck
// finds nothing.
func TestLikeRegistered(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := b.OpenOwn(t, tables.Namespace, "like")
			if err := tables.Migrate(ctx, st); err != nil {
				t.Fatal(err)
			}
			svc := domain.New(st, domain.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
				domain.WithBcryptCost(4), domain.WithOutboxSweep(0))
			author, err := svc.Accounts.Register(ctx, "author", "correct horse")
			if err != nil {
				t.Fatal(err)
			}
			fan, err := svc.Accounts.Register(ctx, "fan", "correct horse")
			if err != nil {
				t.Fatal(err)
			}
			p, err := svc.Feed.Publish(ctx, author.ID, "点赞")
			if err != nil {
				t.Fatal(err)
			}
			for range 2 { // idempotent
				got, err := svc.Likes.Like(ctx, fan.ID, p.ID)
				if err != nil || got.LikeCount != 1 {
					t.Fatalf("Like = %+v, %v; want likeCount 1", got, err)
				}
			}
			liked, err := svc.Likes.IsLiked(ctx, fan.ID, []weibo.PostID{p.ID, {Author: author.ID, Millis: 1}})
			if err != nil || !slices.Equal(liked, []bool{true, false}) {
				t.Fatalf("IsLiked = %v, %v", liked, err)
			}
			likers, err := svc.Likes.PostLikes(ctx, p.ID, nil, nil)
			if err != nil || len(likers.Edges) != 1 || likers.Edges[0].User != fan.ID {
				t.Fatalf("PostLikes = %+v, %v", likers, err)
			}
			mine, err := svc.Likes.LikedPosts(ctx, fan.ID, nil, nil)
			if err != nil || len(mine.Edges) != 1 || mine.Edges[0].Post.ID != p.ID {
				t.Fatalf("LikedPosts = %+v, %v", mine, err)
			}
			likes := func() int {
				page, err := svc.Notify.Notifications(ctx, author.ID, nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for _, e := range page.Edges {
					if e.Notification.Kind == notify.KindLike {
						n += e.Notification.ActorCount
					}
				}
				return n
			}
			if n := likes(); n != 1 {
				t.Fatalf("LIKE notification actors = %d, want 1", n)
			}
			// Every notify write settles against the action's authority,
			// which the like's registered check reads: taking the actor out
			// while the like row stands puts them back.
			notice := notify.Notice{Kind: tables.NotifLike, Recipient: author.ID, Actor: fan.ID, Subject: tables.PostSubject(p.ID), At: 1}
			if err := svc.Notify.SendNotice(ctx, notice, notify.NoticeRemove); err != nil {
				t.Fatal(err)
			}
			if n := likes(); n != 1 {
				t.Fatalf("LIKE notification actors after a remove = %d, want 1 (the like row stands)", n)
			}
			if _, err := svc.Likes.Unlike(ctx, fan.ID, p.ID); err != nil {
				t.Fatal(err)
			}
			if n := likes(); n != 0 {
				t.Fatalf("LIKE notification actors after the unlike = %d, want 0", n)
			}
			if n, err := svc.Likes.CountLikedPosts(ctx, fan.ID); err != nil || n != 0 {
				t.Fatalf("CountLikedPosts = %d, %v", n, err)
			}
			rep, err := fsck.Run(ctx, svc, fsck.Options{Areas: fsck.AreaSocial})
			if err != nil || len(rep.Issues) != 0 {
				t.Fatalf("fsck: %+v, %v", rep, err)
			}
		})
	}
}
