package seed

import (
	"slices"
	"testing"

	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
)

// TestCommentDemo checks that the demo comments land on the viewer's
// newest home-timeline posts — the viewer's comment, then the author's
// reply to it —, that the counters agree, and that a second run changes
// nothing.
func TestCommentDemo(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			svc := orgService(t, b.Open(t))
			viewer := domaintest.MustUser(t, svc, domaintest.Uniq("viewer"))
			author := domaintest.MustUser(t, svc, domaintest.Uniq("author"))
			var posts []weibo.PostID
			for _, text := range []string{"oldest", "older", "newer", "newest"} {
				p, err := svc.Feed.Publish(ctx, author.ID, text)
				if err != nil {
					t.Fatal(err)
				}
				posts = append(posts, p.ID)
			}
			// The follow's backfill puts the posts into the viewer's inbox.
			if _, err := svc.Follows.Follow(ctx, viewer.ID, author.ID); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if err := CommentDemo(ctx, svc, viewer.Username); err != nil {
					t.Fatal(err)
				}
			}
			if err := CommentDemo(ctx, svc, "nobody_"+domaintest.Uniq("x")); err != nil {
				t.Fatalf("a viewer who does not exist: %v", err)
			}
			ps, err := svc.Feed.GetPosts(ctx, posts)
			if err != nil {
				t.Fatal(err)
			}
			for i, p := range ps {
				want := int64(2)
				if i == 0 { // the fourth newest: not commented
					want = 0
				}
				page, err := svc.Comments.PostComments(ctx, p.ID, weibo.Page{})
				if err != nil {
					t.Fatal(err)
				}
				if p.CommentCount != want || int64(len(page.Edges)) != want {
					t.Fatalf("post %d: commentCount %d, %d comments, want %d", i, p.CommentCount, len(page.Edges), want)
				}
				if want == 0 {
					continue
				}
				reply, first := page.Edges[0].Comment, page.Edges[1].Comment
				if first.ID.Author != viewer.ID || reply.ID.Author != author.ID || reply.ReplyTo == nil || *reply.ReplyTo != first.ID {
					t.Errorf("post %d: comments %+v, %+v", i, first, reply)
				}
				if !slices.ContainsFunc(demoComments, func(d struct{ comment, reply string }) bool {
					return d.comment == first.Content && d.reply == reply.Content
				}) {
					t.Errorf("post %d: texts %q, %q", i, first.Content, reply.Content)
				}
			}
		})
	}
}
