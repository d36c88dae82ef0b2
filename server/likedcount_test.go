package server_test

import (
	"testing"

	"github.com/weibohbase/gateway/internal/testenv"
)

// TestLikedPostsTotalCount drives User.likedPosts' totalCount over HTTP
// on both backends: it follows likes, unlikes and the delete of a liked
// post (once its retraction ran, the count and the list agree again), and
// it is the kept counter: a request that selects it makes exactly one
// store call more than the same request without it, however many posts
// the user likes — no scan of the list.
func TestLikedPostsTotalCount(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startGateway(t, b.Open(t))
			author, bob := g.register(uniqueName("author")), g.register(uniqueName("bob"))
			var posts []string
			for i := range 8 {
				posts = append(posts, g.publish(author.token, "post "+string(rune('a'+i))).ID)
			}
			for _, p := range posts {
				g.like(bob.token, p, true)
			}
			const withTotal = `query($id: ID!) { user(id: $id) { likedPosts(first: 2) { edges { node { id } } totalCount } } }`
			const withoutTotal = `query($id: ID!) { user(id: $id) { likedPosts(first: 2) { edges { node { id } } } } }`
			total := func() int {
				t.Helper()
				var d struct {
					User struct{ LikedPosts struct{ TotalCount int } }
				}
				g.ok("", withTotal, map[string]any{"id": bob.ID}, &d)
				return d.User.LikedPosts.TotalCount
			}
			if n := total(); n != 8 {
				t.Fatalf("totalCount after 8 likes = %d", n)
			}
			var d any
			calls := g.okCalls("", withTotal, map[string]any{"id": bob.ID}, &d)
			base := g.okCalls("", withoutTotal, map[string]any{"id": bob.ID}, &d)
			if calls != base+1 {
				t.Fatalf("likedPosts with totalCount: %v store calls, without: %v; want exactly one more (the counter's cell)", calls, base)
			}

			g.like(bob.token, posts[1], false)
			g.like(bob.token, posts[1], false) // idempotent
			g.like(bob.token, posts[2], true)  // already liked
			if n := total(); n != 7 {
				t.Fatalf("totalCount after an unlike = %d, want 7", n)
			}
			var del struct{ DeletePost bool }
			g.ok(author.token, `mutation($id: ID!) { deletePost(id: $id) }`, map[string]any{"id": posts[3]}, &del)
			if !del.DeletePost {
				t.Fatal("deletePost = false")
			}
			if err := g.svc.FlushFanout(t.Context()); err != nil { // the retraction
				t.Fatal(err)
			}
			if n := total(); n != 6 {
				t.Fatalf("totalCount after a liked post's delete = %d, want 6", n)
			}
			if ps, n := g.likedPostsOf(bob.token, bob.ID, 4); len(ps) != 6 || n != 6 {
				t.Fatalf("likedPosts after the delete: %d listed, totalCount %d; want 6 and 6", len(ps), n)
			}
			if got := g.likedPostOf("", posts[0]); got.LikeCount != 1 {
				t.Fatalf("a kept post = %+v, want likeCount 1", got)
			}
		})
	}
}
