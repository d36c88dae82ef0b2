package like_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weibohbase/gateway/fsck"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/like"
	"github.com/weibohbase/gateway/weibo/notify"
	"github.com/weibohbase/gateway/weibo/tables"
)

// likedPosts reads every page of the posts uid likes, newest like first.
func likedPosts(t *testing.T, svc *domain.Domain, uid weibo.UserID, pageSize int) []weibo.PostID {
	t.Helper()
	var out []weibo.PostID
	var after *string
	for {
		p, err := svc.Likes.LikedPosts(t.Context(), uid, &pageSize, after)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range p.Edges {
			out = append(out, e.Post.ID)
		}
		if !p.PageInfo.HasNextPage {
			return out
		}
		after = p.PageInfo.EndCursor
	}
}

// checkLikes checks, after quiescence, that the likes of post agree
// everywhere: its likeCount equals the likers listed, who are exactly the
// users of users IsLiked says like it, each of whom lists the post among
// their likes (and no one else does), each user's CountLikedPosts equals
// their likes listed; and fsck finds nothing in the whole store. It
// returns the likers listed.
func checkLikes(t *testing.T, svc *domain.Domain, post weibo.PostID, users []weibo.UserID, grace time.Duration) []weibo.UserID {
	t.Helper()
	ctx := t.Context()
	ps, err := svc.Feed.GetPosts(ctx, []weibo.PostID{post})
	if err != nil || ps[0] == nil {
		t.Fatalf("post %s: %v", post, err)
	}
	listed := domaintest.Likers(t, svc, post, 3)
	if ps[0].LikeCount != int64(len(listed)) {
		t.Errorf("post %s: likeCount %d, %d likers listed %v", post, ps[0].LikeCount, len(listed), listed)
	}
	for _, u := range users {
		l, err := svc.Likes.IsLiked(ctx, u, []weibo.PostID{post})
		if err != nil {
			t.Fatal(err)
		}
		mine := likedPosts(t, svc, u, 2)
		if l[0] != slices.Contains(listed, u) || l[0] != slices.Contains(mine, post) {
			t.Errorf("user %d: likes %s %v, among its likers %v, among the user's likes %v", u, post, l[0], slices.Contains(listed, u), mine)
		}
		if n, err := svc.Likes.CountLikedPosts(ctx, u); err != nil || n != int64(len(mine)) {
			t.Errorf("user %d: CountLikedPosts = %d, %v; lists %d", u, n, err, len(mine))
		}
	}
	// The post's LIKE notifications hold every liker but its author, once.
	var notified []weibo.UserID
	for _, n := range domaintest.Notifs(t, svc, post.Author, 50) {
		if p, _ := n.PostID(); n.Kind != notify.KindLike || p != post {
			continue
		}
		all, err := svc.Notify.NotificationActors(ctx, []weibo.NotificationID{n.ID})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range all[0] {
			notified = append(notified, a.User)
		}
	}
	want := slices.DeleteFunc(slices.Clone(listed), func(u weibo.UserID) bool { return u == post.Author })
	slices.Sort(want)
	slices.Sort(notified)
	if !slices.Equal(notified, want) {
		t.Errorf("post %s: LIKE notifications of %v, likers %v", post, notified, want)
	}
	rep, err := fsck.Run(ctx, svc, fsck.Options{RepairGrace: grace})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Issues) > 0 {
		t.Errorf("fsck found %d issues: %v; first: %+v", len(rep.Issues), rep.Counts(), rep.Issues[0])
	}
	return listed
}

// TestLikes checks likes through the domain on both backends: likes and
// unlikes are idempotent and counted once, the lists are newest like
// first and page, a post that does not exist is NOT_FOUND, and a like
// made again after an unlike is listed at its new time.
func TestLikes(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			svc := domaintest.Quiet(domaintest.OwnStore(t, b))
			author, u1, u2, u3 := domaintest.MustUser(t, svc, domaintest.Uniq("author")), domaintest.MustUser(t, svc, domaintest.Uniq("l1")), domaintest.MustUser(t, svc, domaintest.Uniq("l2")), domaintest.MustUser(t, svc, domaintest.Uniq("l3"))
			p1, err := svc.Feed.Publish(ctx, author.ID, "like me")
			if err != nil {
				t.Fatal(err)
			}
			p2, err := svc.Feed.Publish(ctx, author.ID, "like me too")
			if err != nil {
				t.Fatal(err)
			}
			like := func(u *weibo.User, p *feed.Post, want int64) {
				t.Helper()
				time.Sleep(2 * time.Millisecond) // likes in distinct milliseconds: the lists' order is the test's
				got, err := svc.Likes.Like(ctx, u.ID, p.ID)
				if err != nil || got.LikeCount != want || got.ID != p.ID {
					t.Fatalf("like %s by %d = %+v, %v; want likeCount %d", p.ID, u.ID, got, err, want)
				}
			}
			unlike := func(u *weibo.User, p *feed.Post, want int64) {
				t.Helper()
				got, err := svc.Likes.Unlike(ctx, u.ID, p.ID)
				if err != nil || got.LikeCount != want {
					t.Fatalf("unlike %s by %d = %+v, %v; want likeCount %d", p.ID, u.ID, got, err, want)
				}
			}
			like(u1, p1, 1)
			like(u1, p1, 1) // idempotent
			like(u2, p1, 2)
			like(u3, p1, 3)
			like(u2, p2, 1)
			unlike(u1, p2, 1) // not liked: nothing changes
			users := []weibo.UserID{u1.ID, u2.ID, u3.ID, author.ID}
			if got := checkLikes(t, svc, p1.ID, users, time.Minute); !slices.Equal(got, []weibo.UserID{u3.ID, u2.ID, u1.ID}) {
				t.Fatalf("likers of p1 = %v, want newest like first", got)
			}
			if got := likedPosts(t, svc, u2.ID, 1); !slices.Equal(got, []weibo.PostID{p2.ID, p1.ID}) {
				t.Fatalf("u2's likes = %v, want [p2 p1]", got)
			}
			unlike(u2, p1, 2)
			unlike(u2, p1, 2)
			like(u2, p1, 3) // again: now the newest like
			if got := checkLikes(t, svc, p1.ID, users, time.Minute); !slices.Equal(got, []weibo.UserID{u2.ID, u3.ID, u1.ID}) {
				t.Fatalf("likers of p1 = %v, want u2 first (liked again)", got)
			}
			if got := likedPosts(t, svc, u2.ID, 5); !slices.Equal(got, []weibo.PostID{p1.ID, p2.ID}) {
				t.Fatalf("u2's likes = %v, want [p1 p2]", got)
			}
			ok, err := svc.Likes.IsLiked(ctx, u1.ID, []weibo.PostID{p1.ID, p2.ID, {Author: author.ID, Millis: 1}})
			if err != nil || !slices.Equal(ok, []bool{true, false, false}) {
				t.Fatalf("IsLiked = %v, %v", ok, err)
			}
			missing := weibo.PostID{Author: author.ID, Millis: 7}
			for name, call := range map[string]func() (*feed.Post, error){
				"like":   func() (*feed.Post, error) { return svc.Likes.Like(ctx, u1.ID, missing) },
				"unlike": func() (*feed.Post, error) { return svc.Likes.Unlike(ctx, u1.ID, missing) },
			} {
				if _, err := call(); weibo.CodeOf(err) != weibo.CodeNotFound {
					t.Errorf("%s of a missing post: %v, want NOT_FOUND", name, err)
				}
			}
			if rows, err := hbase.ScanAll(ctx, svc.Store(), &hbase.Scan{Table: tables.Pending}); err != nil || len(rows) != 0 {
				t.Errorf("%d pending rows left (%v)", len(rows), err)
			}
		})
	}
}

// TestLikesOfDeletedPost: a post whose content row is gone (no
// retraction ran) is not listed among its likers' likes, is counted in
// their likedPostCount until fsck --repair removes the like, and cannot
// be liked; a like
// counter that an Increment left on the gone post's row makes no post.
func TestLikesOfDeletedPost(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) { likesOfDeletedPost(t, domaintest.Quiet(domaintest.OwnStore(t, b))) })
	}
}

func likesOfDeletedPost(t *testing.T, svc *domain.Domain) {
	ctx := t.Context()
	author, u := domaintest.MustUser(t, svc, domaintest.Uniq("author")), domaintest.MustUser(t, svc, domaintest.Uniq("liker"))
	keep, err := svc.Feed.Publish(ctx, author.ID, "kept")
	if err != nil {
		t.Fatal(err)
	}
	gone, err := svc.Feed.Publish(ctx, author.ID, "deleted later")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []*feed.Post{keep, gone} {
		if _, err := svc.Likes.Like(ctx, u.ID, p.ID); err != nil {
			t.Fatal(err)
		}
	}
	// The post's own cells go; its like counter stays, as a late Increment would leave it.
	if err := svc.Store().Delete(ctx, &hbase.Delete{Table: tables.Content, Row: tables.ContentKey(gone.ID),
		Values: hbase.Values{tables.FamPost: {tables.ColText: nil, tables.ColAuthorName: nil}}}); err != nil {
		t.Fatal(err)
	}
	if got := likedPosts(t, svc, u.ID, 1); !slices.Equal(got, []weibo.PostID{keep.ID}) {
		t.Fatalf("likes = %v, want only the kept post", got)
	}
	// The kept count holds the like until a retraction removes it: this
	// delete ran none, fsck's repair does it (like-orphan).
	if n, err := svc.Likes.CountLikedPosts(ctx, u.ID); err != nil || n != 2 {
		t.Fatalf("CountLikedPosts = %d, %v; want 2 before the orphan's repair", n, err)
	}
	if _, err := svc.Likes.Like(ctx, author.ID, gone.ID); weibo.CodeOf(err) != weibo.CodeNotFound {
		t.Fatalf("like of a deleted post: %v", err)
	}
	us, err := svc.Accounts.GetUsers(ctx, []weibo.UserID{author.ID})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := svc.Writes.RecountCounters(ctx, []counted.Counter{{Kind: feed.PostCount, Owner: uint64(author.ID)}}); err != nil || !res[0].Done || res[0].After != 1 || us[0].PostCount != 2 {
		t.Fatalf("recount of the author's posts: %+v, %v (was %d); want 1", res, err, us[0].PostCount)
	}
	if rep, err := fsck.Run(ctx, svc, fsck.Options{Repair: true}); err != nil || rep.Counts()[like.IssueOrphan] != 1 || rep.Unrepaired() > 0 {
		t.Fatalf("fsck --repair: %v %+v", err, rep)
	}
	if n, err := svc.Likes.CountLikedPosts(ctx, u.ID); err != nil || n != 1 {
		t.Fatalf("CountLikedPosts = %d, %v after the repair", n, err)
	}
}

// TestLikeStorm runs, on each backend (the embedded store's calls delayed
// at random, see jittery), 600 concurrent likes and unlikes of two posts
// by 4 users, 32 calls at a time — so that calls of one user on one post
// race each other —, then checks that each post's likeCount equals its
// likers listed, the lists agree with the like rows, and fsck finds
// nothing.
func TestLikeStorm(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	const (
		calls       = 600
		concurrency = 32
		grace       = 10 * time.Second
	)
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := domaintest.OwnStore(t, b)
			if b.Name == hbase.BackendEmbedded {
				st = domaintest.Jittery{StoreAdmin: st}
			}
			svc := domaintest.Quiet(st, domain.WithRepairGrace(grace), domain.WithOutboxSweep(time.Second))
			if err := svc.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer svc.Close(context.Background())
			author := domaintest.MustUser(t, svc, domaintest.Uniq("stormauthor"))
			var posts []weibo.PostID
			for i := range 2 {
				p, err := svc.Feed.Publish(ctx, author.ID, fmt.Sprintf("storm %d", i))
				if err != nil {
					t.Fatal(err)
				}
				posts = append(posts, p.ID)
			}
			var users []weibo.UserID
			for i := range 4 {
				users = append(users, domaintest.MustUser(t, svc, domaintest.Uniq(fmt.Sprintf("stormliker%d", i))).ID)
			}
			work := make(chan func() error)
			var (
				wg       sync.WaitGroup
				mu       sync.Mutex
				failures []error
			)
			for range concurrency {
				wg.Go(func() {
					for call := range work {
						if err := call(); err != nil {
							mu.Lock()
							failures = append(failures, err)
							mu.Unlock()
						}
					}
				})
			}
			for range calls {
				u, p := users[rand.IntN(len(users))], posts[rand.IntN(len(posts))]
				if rand.IntN(2) == 0 {
					work <- func() error { _, err := svc.Likes.Like(ctx, u, p); return err }
				} else {
					work <- func() error { _, err := svc.Likes.Unlike(ctx, u, p); return err }
				}
			}
			close(work)
			wg.Wait()
			if len(failures) > 0 {
				t.Fatalf("%d calls failed, first: %v", len(failures), failures[0])
			}
			domaintest.WaitQuiet(t, svc, 2*time.Minute)
			for _, p := range posts {
				checkLikes(t, svc, p, users, grace)
			}
		})
	}
}
