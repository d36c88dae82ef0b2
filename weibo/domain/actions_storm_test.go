package domain_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/weibohbase/gateway/fsck"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/comment"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/feed"
)

// TestPostActionsStorm: concurrent likes and unlikes, comments and their
// deletes, reposts, deletes of originals and of reposts, and follows and
// unfollows of the authors, on the same few posts, on both backends (the
// embedded store's calls jittered). Once they quiesce, every kept counter
// of every post equals its list, no home timeline shows a deleted post,
// and fsck over the whole store finds nothing.
func TestPostActionsStorm(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	const (
		calls       = 240
		concurrency = 16
	)
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := domaintest.OwnStore(t, b)
			if b.Name == hbase.BackendEmbedded {
				st = domaintest.Jittery{StoreAdmin: st}
			}
			svc := domaintest.Quiet(st, domain.WithRepairGrace(10*time.Second), domain.WithOutboxSweep(time.Second))
			if err := svc.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer svc.Close(context.Background())
			var users []weibo.UserID
			for i := range 5 {
				users = append(users, mustUser(t, svc, uniq(fmt.Sprintf("act%d", i))).ID)
			}
			var originals []weibo.PostID
			for i := range 4 {
				p, err := svc.Feed.Publish(ctx, users[i%2], fmt.Sprintf("original %d", i))
				if err != nil {
					t.Fatal(err)
				}
				originals = append(originals, p.ID)
			}
			var (
				mu       sync.Mutex
				posts    = append([]weibo.PostID(nil), originals...) // every post made, reposts too
				comments []weibo.CommentID
				deleted  = map[weibo.PostID]bool{}
				failures = map[string]int{}
			)
			pickPost := func() weibo.PostID {
				mu.Lock()
				defer mu.Unlock()
				return posts[rand.IntN(len(posts))]
			}
			user := func() weibo.UserID { return users[rand.IntN(len(users))] }
			var wg sync.WaitGroup
			sem := make(chan struct{}, concurrency)
			for i := range calls {
				wg.Add(1)
				sem <- struct{}{}
				go func() {
					defer func() { <-sem; wg.Done() }()
					var err error
					switch i % 10 {
					case 0, 1:
						_, err = svc.Likes.Like(ctx, user(), pickPost())
					case 2:
						_, err = svc.Likes.Unlike(ctx, user(), pickPost())
					case 3, 4:
						var c *comment.Comment
						if c, err = svc.Comments.AddComment(ctx, user(), pickPost(), "a comment", nil); err == nil {
							mu.Lock()
							comments = append(comments, c.ID)
							mu.Unlock()
						}
					case 5:
						mu.Lock()
						var id weibo.CommentID
						if len(comments) > 0 {
							id = comments[rand.IntN(len(comments))]
						}
						mu.Unlock()
						if id != (weibo.CommentID{}) {
							_, err = svc.Comments.DeleteComment(ctx, id.Post.Author, id)
						}
					case 6:
						var p *feed.Post
						if p, err = svc.Reposts.Repost(ctx, user(), pickPost(), "转发"); err == nil {
							mu.Lock()
							posts = append(posts, p.ID)
							mu.Unlock()
						}
					case 7:
						if rand.IntN(4) == 0 { // a few deletes, so that most posts live on
							id := pickPost()
							var ok bool
							if ok, err = svc.Feed.DeletePost(ctx, id); ok {
								mu.Lock()
								deleted[id] = true
								mu.Unlock()
							}
						}
					case 8:
						_, err = svc.Follows.Follow(ctx, users[2+rand.IntN(3)], users[rand.IntN(2)])
					default:
						_, err = svc.Follows.Unfollow(ctx, users[2+rand.IntN(3)], users[rand.IntN(2)])
					}
					if err != nil && weibo.CodeOf(err) != weibo.CodeNotFound { // a post deleted meanwhile
						mu.Lock()
						failures[err.Error()]++
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			if len(failures) > 0 {
				t.Fatalf("failures: %v", failures)
			}
			domaintest.WaitQuiet(t, svc, time.Minute)

			// Every counter of every post equals its list.
			ps, err := svc.Feed.GetPosts(ctx, posts)
			if err != nil {
				t.Fatal(err)
			}
			hundred := weibo.MaxPageSize
			for i, p := range ps {
				if p == nil {
					if !deleted[posts[i]] {
						t.Errorf("post %s is gone but was never deleted", posts[i])
					}
					continue
				}
				likes, err := svc.Likes.PostLikes(ctx, p.ID, &hundred, nil)
				if err != nil {
					t.Fatal(err)
				}
				cs, err := svc.Comments.PostComments(ctx, p.ID, weibo.Page{First: &hundred})
				if err != nil {
					t.Fatal(err)
				}
				rs, err := svc.Reposts.Reposts(ctx, p.ID, &hundred, nil)
				if err != nil {
					t.Fatal(err)
				}
				if p.LikeCount != int64(len(likes.Edges)) || p.CommentCount != int64(len(cs.Edges)) || p.RepostCount != int64(len(rs.Edges)) {
					t.Errorf("post %s: likeCount %d / %d listed, commentCount %d / %d, repostCount %d / %d", p.ID,
						p.LikeCount, len(likes.Edges), p.CommentCount, len(cs.Edges), p.RepostCount, len(rs.Edges))
				}
			}
			// No timeline shows a deleted post.
			for _, u := range users {
				page, err := svc.Timeline.HomeTimeline(ctx, u, weibo.Page{First: &hundred})
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range page.Edges {
					if deleted[e.Post.ID] {
						t.Errorf("user %s's home timeline shows the deleted post %s", u, e.Post.ID)
					}
				}
			}
			rep, err := fsck.Run(ctx, svc, fsck.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Issues) != 0 {
				t.Errorf("fsck after the storm: %+v", rep.Issues)
			}
		})
	}
}
