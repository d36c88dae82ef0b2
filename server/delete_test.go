package server_test

import (
	"testing"

	"github.com/weibohbase/gateway/internal/testenv"
)

// TestDeletePost over HTTP on both backends: the author deletes a post
// (true, then false on a retry); it is gone from the author's posts and
// postCount, from a fan's home timeline, and from post(id); another user's
// delete is FORBIDDEN, an admin's goes through; bad ids are refused.
func TestDeletePost(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g, _ := startAdminGateway(t, b.Open(t))
			author, fan, boss := g.register(uniqueName("author")), g.register(uniqueName("fan")), g.register(uniqueName("boss"))
			g.makeAdmin(boss)
			g.follow(fan.token, author.ID)
			keep, gone := g.publish(author.token, "keep me"), g.publish(author.token, "delete me")
			if err := g.svc.FlushFanout(t.Context()); err != nil {
				t.Fatal(err)
			}
			del := func(token, id string) bool {
				t.Helper()
				var d struct{ DeletePost bool }
				g.ok(token, `mutation($id: ID!) { deletePost(id: $id) }`, map[string]any{"id": id}, &d)
				return d.DeletePost
			}
			g.fails(fan.token, "FORBIDDEN", `mutation($id: ID!) { deletePost(id: $id) }`, map[string]any{"id": gone.ID})
			g.fails("", "UNAUTHENTICATED", `mutation($id: ID!) { deletePost(id: $id) }`, map[string]any{"id": gone.ID})
			g.fails(author.token, "BAD_USER_INPUT", `mutation { deletePost(id: "nope") }`, nil)
			if !del(author.token, gone.ID) {
				t.Fatal("deletePost = false for an existing post")
			}
			if del(author.token, gone.ID) {
				t.Fatal("deletePost = true for a deleted post")
			}
			if err := g.svc.FlushFanout(t.Context()); err != nil {
				t.Fatal(err)
			}
			var d struct {
				Post *struct{ ID string }
				User struct {
					PostCount int
					Posts     struct {
						Edges []struct{ Node struct{ ID string } }
					}
				}
			}
			g.ok(fan.token, `query($p: ID!, $u: ID!) { post(id: $p) { id } user(id: $u) { postCount posts { edges { node { id } } } } }`,
				map[string]any{"p": gone.ID, "u": author.ID}, &d)
			if d.Post != nil || d.User.PostCount != 1 || len(d.User.Posts.Edges) != 1 || d.User.Posts.Edges[0].Node.ID != keep.ID {
				t.Fatalf("after the delete: %+v", d)
			}
			for _, e := range g.timeline(fan.token, 20, nil).Edges {
				if e.Node.ID == gone.ID {
					t.Fatal("the deleted post is in the fan's home timeline")
				}
			}
			if !del(boss.token, keep.ID) {
				t.Fatal("an admin's deletePost = false")
			}
		})
	}
}
