package comment_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weibohbase/gateway/fsck"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/tables"
)

// checkPostComments checks that each post's commentCount equals its
// comments listed (newest first, the same both ways) and the comment rows,
// and that fsck finds nothing; it returns the comments listed.
func checkPostComments(t *testing.T, svc *domain.Domain, posts []weibo.PostID) map[weibo.PostID][]weibo.CommentID {
	t.Helper()
	out := map[weibo.PostID][]weibo.CommentID{}
	for _, p := range posts {
		listed := domaintest.PostComments(t, svc, p, 7)
		rows, err := hbase.ScanAll(t.Context(), svc.Store(), &hbase.Scan{Table: tables.Comments, Prefix: tables.CommentsPrefix(p)})
		if err != nil {
			t.Fatal(err)
		}
		stored := 0
		for _, r := range rows {
			if tables.CommentStored(r) { // not a deleted comment's tombstone
				stored++
			}
		}
		if n := domaintest.CommentCount(t, svc, p); n != int64(len(listed)) || stored != len(listed) {
			t.Errorf("post %s: commentCount %d, %d comments listed, %d comment rows", p, n, len(listed), stored)
		}
		if !slices.IsSortedFunc(listed, func(a, b weibo.CommentID) int {
			return strings.Compare(string(tables.CommentKey(a)), string(tables.CommentKey(b)))
		}) {
			t.Errorf("post %s: comments not in rowkey order: %v", p, listed)
		}
		out[p] = listed
	}
	rep, err := fsck.Run(t.Context(), svc, fsck.Options{Areas: fsck.AreaSocial})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Issues) != 0 {
		t.Errorf("fsck: %+v", rep.Issues)
	}
	return out
}

// TestComments covers adding, listing, replying to and deleting comments,
// who may delete, the counter, and bad input, on both backends.
func TestComments(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			svc := domaintest.Quiet(domaintest.OwnStore(t, b))
			author, ann, bob := domaintest.MustUser(t, svc, domaintest.Uniq("author")), domaintest.MustUser(t, svc, domaintest.Uniq("ann")), domaintest.MustUser(t, svc, domaintest.Uniq("bob"))
			post, err := svc.Feed.Publish(ctx, author.ID, "今天天气不错")
			if err != nil {
				t.Fatal(err)
			}
			other, err := svc.Feed.Publish(ctx, bob.ID, "another post")
			if err != nil {
				t.Fatal(err)
			}
			var added []weibo.CommentID
			for i, u := range []*weibo.User{ann, bob, author, ann} {
				c, err := svc.Comments.AddComment(ctx, u.ID, post.ID, fmt.Sprintf("comment %d", i), nil)
				if err != nil {
					t.Fatal(err)
				}
				if c.ID.Post != post.ID || c.ID.Author != u.ID || c.AuthorName != u.Username || c.Content != fmt.Sprintf("comment %d", i) {
					t.Fatalf("comment %d = %+v", i, c)
				}
				added = append(added, c.ID)
				time.Sleep(2 * time.Millisecond) // distinct milliseconds: newest first is then the order added
			}
			reply, err := svc.Comments.AddComment(ctx, author.ID, post.ID, "回复 ann", &added[0])
			if err != nil {
				t.Fatal(err)
			}
			if reply.ReplyTo == nil || *reply.ReplyTo != added[0] {
				t.Fatalf("reply's replyTo = %v", reply.ReplyTo)
			}
			added = append(added, reply.ID)
			listed := checkPostComments(t, svc, []weibo.PostID{post.ID, other.ID})[post.ID]
			want := slices.Clone(added)
			slices.Reverse(want)
			if !slices.Equal(listed, want) {
				t.Fatalf("comments %v, want newest first %v", listed, want)
			}
			cs, err := svc.Comments.GetComments(ctx, []weibo.CommentID{reply.ID, added[1], {Post: post.ID, Millis: 1, Author: ann.ID}})
			if err != nil {
				t.Fatal(err)
			}
			if cs[0] == nil || cs[0].Content != "回复 ann" || *cs[0].ReplyTo != added[0] || cs[1] == nil || cs[1].ReplyTo != nil || cs[2] != nil {
				t.Fatalf("GetComments = %+v, %+v, %+v", cs[0], cs[1], cs[2])
			}

			// Refused, writing nothing.
			_, err = svc.Comments.AddComment(ctx, ann.ID, other.ID, "wrong post", &added[0])
			domaintest.WantCode(t, err, weibo.CodeBadUserInput, "reply to a comment of another post")
			_, err = svc.Comments.AddComment(ctx, ann.ID, weibo.PostID{Author: author.ID, Millis: 1}, "x", nil)
			domaintest.WantCode(t, err, weibo.CodeNotFound, "missing post")
			_, err = svc.Comments.AddComment(ctx, ann.ID, post.ID, "x", &weibo.CommentID{Post: post.ID, Millis: 1, Author: bob.ID})
			domaintest.WantCode(t, err, weibo.CodeNotFound, "reply to a missing comment")
			for _, bad := range []string{"", " \n", strings.Repeat("评", feed.MaxPostLength+1)} {
				_, err = svc.Comments.AddComment(ctx, ann.ID, post.ID, bad, nil)
				domaintest.WantCode(t, err, weibo.CodeBadUserInput, "bad content")
			}
			// Deletes: the comment's author, the post's author; not another user.
			_, err = svc.Comments.DeleteComment(ctx, bob.ID, added[0])
			domaintest.WantCode(t, err, weibo.CodeForbidden, "bob deletes ann's comment on author's post")
			for _, d := range []struct {
				who  weibo.UserID
				id   weibo.CommentID
				want bool
			}{{ann.ID, added[0], true}, {author.ID, added[1], true}, {ann.ID, added[0], false}, {author.ID, added[1], false}} {
				if ok, err := svc.Comments.DeleteComment(ctx, d.who, d.id); err != nil || ok != d.want {
					t.Fatalf("delete %s by %s = %v, %v; want %v", d.id, d.who, ok, err, d.want)
				}
			}
			listed = checkPostComments(t, svc, []weibo.PostID{post.ID, other.ID})[post.ID]
			if want := []weibo.CommentID{reply.ID, added[3], added[2]}; !slices.Equal(listed, want) {
				t.Fatalf("after the deletes %v, want %v", listed, want)
			}
			// The reply outlives the comment it replied to.
			if cs, err := svc.Comments.GetComments(ctx, []weibo.CommentID{reply.ID, added[0]}); err != nil || cs[0] == nil || *cs[0].ReplyTo != added[0] || cs[1] != nil {
				t.Fatalf("reply after its comment went: %v, %v", cs, err)
			}
		})
	}
}

// TestCommentSameMillisecond: comments of one author on one post in the
// same millisecond (a frozen clock) are all kept, each in the next free
// millisecond, and a deleted comment's millisecond is not taken again.
func TestCommentSameMillisecond(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			frozen := time.Now().Truncate(time.Millisecond)
			svc := domaintest.Quiet(domaintest.OwnStore(t, b), domain.WithClock(func() time.Time { return frozen }))
			u := domaintest.MustUser(t, svc, domaintest.Uniq("fast"))
			post, err := svc.Feed.Publish(ctx, u.ID, "fast")
			if err != nil {
				t.Fatal(err)
			}
			var ids []weibo.CommentID
			for i := range 3 {
				c, err := svc.Comments.AddComment(ctx, u.ID, post.ID, fmt.Sprintf("c%d", i), nil)
				if err != nil {
					t.Fatal(err)
				}
				if c.ID.Millis != frozen.UnixMilli()+int64(i) {
					t.Errorf("comment %d at %d, want %d", i, c.ID.Millis, frozen.UnixMilli()+int64(i))
				}
				ids = append(ids, c.ID)
			}
			// A deleted comment's id is not taken again: its tombstone stays.
			if ok, err := svc.Comments.DeleteComment(ctx, u.ID, ids[0]); err != nil || !ok {
				t.Fatalf("delete: %v, %v", ok, err)
			}
			c, err := svc.Comments.AddComment(ctx, u.ID, post.ID, "after the delete", nil)
			if err != nil || c.ID.Millis != frozen.UnixMilli()+3 {
				t.Fatalf("comment after the delete: %+v, %v; want it at %d", c, err, frozen.UnixMilli()+3)
			}
			ids = append(ids[1:], c.ID)
			slices.Reverse(ids)
			if got := checkPostComments(t, svc, []weibo.PostID{post.ID})[post.ID]; !slices.Equal(got, ids) {
				t.Fatalf("comments %v, want %v", got, ids)
			}
		})
	}
}

// TestCommentStorm runs, on each backend (the embedded store's calls
// delayed at random, see jittery), concurrent addComments and
// deleteComments on three posts by four users — deletes of comments just
// added, some deleted twice at once — then checks that each post's
// commentCount equals its comments listed and its rows, and that fsck
// finds nothing.
func TestCommentStorm(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	const (
		calls       = 400
		concurrency = 32
	)
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := domaintest.OwnStore(t, b)
			if b.Name == hbase.BackendEmbedded {
				st = domaintest.Jittery{StoreAdmin: st}
			}
			svc := domaintest.Quiet(st, domain.WithRepairGrace(time.Minute))
			if err := svc.Start(ctx); err != nil { // the posts' fan-outs
				t.Fatal(err)
			}
			defer svc.Close(context.Background())
			var users []weibo.UserID
			for i := range 4 {
				users = append(users, domaintest.MustUser(t, svc, domaintest.Uniq(fmt.Sprintf("storm%d", i))).ID)
			}
			var posts []weibo.PostID
			for i := range 3 {
				p, err := svc.Feed.Publish(ctx, users[i], fmt.Sprintf("storm %d", i))
				if err != nil {
					t.Fatal(err)
				}
				posts = append(posts, p.ID)
			}
			var (
				wg       sync.WaitGroup
				mu       sync.Mutex
				live     []weibo.CommentID // comments added, deleted or not
				failures []error
				deleted  = map[weibo.CommentID]int{}
			)
			fail := func(err error) {
				mu.Lock()
				failures = append(failures, err)
				mu.Unlock()
			}
			work := make(chan int)
			for range concurrency {
				wg.Go(func() {
					for i := range work {
						mu.Lock()
						var victim *weibo.CommentID
						if i%3 == 2 && len(live) > 0 {
							v := live[rand.IntN(len(live))]
							victim = &v
						}
						mu.Unlock()
						if victim != nil {
							// Its author deletes it (or the post's author, every other time).
							who := victim.Author
							if i%2 == 0 {
								who = victim.Post.Author
							}
							ok, err := svc.Comments.DeleteComment(ctx, who, *victim)
							if err != nil {
								fail(err)
							} else if ok {
								mu.Lock()
								deleted[*victim]++
								mu.Unlock()
							}
							continue
						}
						var reply *weibo.CommentID
						p := posts[rand.IntN(len(posts))]
						mu.Lock()
						for _, c := range live {
							if c.Post == p && rand.IntN(4) == 0 {
								reply = &c
								break
							}
						}
						mu.Unlock()
						c, err := svc.Comments.AddComment(ctx, users[rand.IntN(len(users))], p, fmt.Sprintf("storm comment %d", i), reply)
						if err != nil && weibo.CodeOf(err) != weibo.CodeNotFound { // the comment replied to went meanwhile
							fail(err)
						} else if err == nil {
							mu.Lock()
							live = append(live, c.ID)
							mu.Unlock()
						}
					}
				})
			}
			for i := range calls {
				work <- i
			}
			close(work)
			wg.Wait()
			if len(failures) > 0 {
				t.Fatalf("%d calls failed, first: %v", len(failures), failures[0])
			}
			for id, n := range deleted {
				if n != 1 {
					t.Errorf("comment %s deleted %d times", id, n)
				}
			}
			domaintest.WaitQuiet(t, svc, time.Minute)
			listed := checkPostComments(t, svc, posts)
			want := map[weibo.CommentID]bool{}
			for _, c := range live {
				if deleted[c] == 0 {
					want[c] = true
				}
			}
			n := 0
			for _, p := range posts {
				for _, c := range listed[p] {
					if !want[c] {
						t.Errorf("comment %s listed, deleted or never added", c)
					}
					n++
				}
			}
			if n != len(want) {
				t.Errorf("%d comments listed, %d added and not deleted", n, len(want))
			}
		})
	}
}
