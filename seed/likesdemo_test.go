package seed

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/like"
)

// TestLikesDemo checks the demo's likes on both backends, with users of its
// own: the newest posts of the viewer's home timeline get the counts and
// likedByViewer LikesDemo promises, every user's likedPostCount is set
// (a recount finds it exact), a liker who does not exist is left out,
// and loading twice changes nothing.
func TestLikesDemo(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			svc := orgService(t, b.Open(t))
			viewer := domaintest.MustUser(t, svc, domaintest.Uniq("viewer"))
			var likers []string
			for i := range 3 {
				likers = append(likers, domaintest.MustUser(t, svc, domaintest.Uniq(fmt.Sprintf("liker%d", i))).Username)
			}
			likers = append(likers, domaintest.Uniq("nobody"))
			var posts []weibo.PostID // newest first
			for i := range 4 {
				p, err := svc.Feed.Publish(ctx, viewer.ID, fmt.Sprintf("demo post %d", i))
				if err != nil {
					t.Fatal(err)
				}
				posts = append([]weibo.PostID{p.ID}, posts...)
				time.Sleep(2 * time.Millisecond)
			}
			for range 2 {
				if err := LikesDemo(ctx, svc, viewer.Username, likers); err != nil {
					t.Fatal(err)
				}
			}
			ps, err := svc.Feed.GetPosts(ctx, posts)
			if err != nil {
				t.Fatal(err)
			}
			liked, err := svc.Likes.IsLiked(ctx, viewer.ID, posts)
			if err != nil {
				t.Fatal(err)
			}
			var counts []int64
			for _, p := range ps {
				counts = append(counts, p.LikeCount)
			}
			// The i-th newest: the 3 likers but the last i, and the viewer every other one.
			if !slices.Equal(counts, []int64{4, 2, 2, 0}) || !slices.Equal(liked, []bool{true, false, true, false}) {
				t.Fatalf("likeCounts %v, likedByViewer %v; want [4 2 2 0], [true false true false]", counts, liked)
			}
			// Through the domain's likes, each user's kept likedPostCount is set
			// too, and recounts to itself: the viewer's 2, the likers' 3, 2, 1.
			ids := []weibo.UserID{viewer.ID}
			for _, name := range likers[:3] {
				u, err := svc.Accounts.UserByUsername(ctx, name)
				if err != nil || u == nil {
					t.Fatalf("liker %s: %v", name, err)
				}
				ids = append(ids, u.ID)
			}
			var cs []counted.Counter
			for i, uid := range ids {
				if n, err := svc.Likes.CountLikedPosts(ctx, uid); err != nil || n != []int64{2, 3, 2, 1}[i] {
					t.Errorf("user %d: likedPostCount %d, %v; want %d", i, n, err, []int64{2, 3, 2, 1}[i])
				}
				cs = append(cs, counted.Counter{Kind: like.LikedPostCount, Owner: uint64(uid)})
			}
			res, err := svc.Writes.RecountCounters(ctx, cs)
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range res {
				if !r.Done || r.Before != r.After {
					t.Errorf("%s: %+v, want recounted to itself", cs[i], r)
				}
			}
			if err := LikesDemo(ctx, svc, domaintest.Uniq("nobody"), likers); err != nil {
				t.Fatalf("without the viewer: %v", err)
			}
		})
	}
}
