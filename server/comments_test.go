package server_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weibohbase/gateway/internal/testenv"
)

// commentNode is a Comment as the comment tests select it.
type commentNode struct {
	ID        string
	Content   string
	CreatedAt time.Time
	Author    struct{ ID, Username string }
	Post      *struct {
		ID           string
		CommentCount int
	}
	ReplyTo *struct {
		ID      string
		Content string
	}
}

const commentFields = `id content createdAt author { id username } post { id commentCount } replyTo { id content }`

// commentConn is one page of Post.comments.
type commentConn struct {
	Edges []struct {
		Cursor string
		Node   commentNode
	}
	PageInfo struct {
		HasNextPage, HasPreviousPage bool
		StartCursor, EndCursor       *string
	}
	TotalCount int
}

func (c commentConn) ids() []string {
	var out []string
	for _, e := range c.Edges {
		out = append(out, e.Node.ID)
	}
	return out
}

// addComment comments on post as token's user, replying to replyTo unless "".
func (g *gw) addComment(token, post, content, replyTo string) commentNode {
	g.t.Helper()
	vars := map[string]any{"p": post, "c": content}
	if replyTo != "" {
		vars["r"] = replyTo
	}
	var d struct{ AddComment commentNode }
	g.ok(token, `mutation($p: ID!, $c: String!, $r: ID) { addComment(postId: $p, content: $c, replyToId: $r) { `+commentFields+` } }`, vars, &d)
	time.Sleep(2 * time.Millisecond) // one comment a millisecond: newest first is the order made
	return d.AddComment
}

// deleteComment deletes comment id as token's user.
func (g *gw) deleteComment(token, id string) bool {
	g.t.Helper()
	var d struct{ DeleteComment bool }
	g.ok(token, `mutation($id: ID!) { deleteComment(id: $id) }`, map[string]any{"id": id}, &d)
	return d.DeleteComment
}

// commentPage reads one page of post's comments with args (first, after,
// last, before) and the post's commentCount.
func (g *gw) commentPage(post string, args map[string]any) (commentConn, int) {
	g.t.Helper()
	var d struct {
		Post struct {
			CommentCount int
			Comments     commentConn
		}
	}
	vars := map[string]any{"id": post}
	for k, v := range args {
		vars[k] = v
	}
	g.ok("", `query($id: ID!, $first: Int, $after: String, $last: Int, $before: String) { post(id: $id) { commentCount
		comments(first: $first, after: $after, last: $last, before: $before) {
			edges { cursor node { `+commentFields+` } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } totalCount } } }`, vars, &d)
	return d.Post.Comments, d.Post.CommentCount
}

// allComments pages through post's comments both ways, n a page, checks
// that both ways agree and that commentCount and totalCount equal the
// comments listed, and returns their ids, newest first.
func (g *gw) allComments(post string, n int) []string {
	g.t.Helper()
	var fwd, back []string
	args := map[string]any{"first": n}
	for range 50 {
		p, count := g.commentPage(post, args)
		if count != p.TotalCount {
			g.t.Fatalf("commentCount %d, totalCount %d", count, p.TotalCount)
		}
		fwd = append(fwd, p.ids()...)
		if !p.PageInfo.HasNextPage {
			break
		}
		args = map[string]any{"first": n, "after": *p.PageInfo.EndCursor}
	}
	args = map[string]any{"last": n}
	count := 0
	for range 50 {
		p, c := g.commentPage(post, args)
		count = c
		back = append(p.ids(), back...)
		if !p.PageInfo.HasPreviousPage {
			break
		}
		args = map[string]any{"last": n, "before": *p.PageInfo.StartCursor}
	}
	if !slices.Equal(fwd, back) {
		g.t.Fatalf("comments forward %v, backward %v", fwd, back)
	}
	if count != len(fwd) {
		g.t.Fatalf("commentCount %d, %d comments listed", count, len(fwd))
	}
	return fwd
}

// TestComments drives comments over HTTP on both backends: addComment and
// replies, Post.comments newest first paged both ways, commentCount on
// the post wherever it is read, node(id:) of a comment, deleteComment by
// the comment's author and by the post's author (FORBIDDEN for anyone
// else, false once gone), and the error codes of bad input, which write
// nothing.
func TestComments(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startGateway(t, b.Open(t))
			author, ann, bob := g.register(uniqueName("author")), g.register(uniqueName("ann")), g.register(uniqueName("bob"))
			post := g.publish(author.token, "今天吃什么")
			other := g.publish(bob.token, "bob's own post")

			c1 := g.addComment(ann.token, post.ID, "火锅", "")
			c2 := g.addComment(bob.token, post.ID, "饺子", "")
			c3 := g.addComment(author.token, post.ID, "都好", "")
			c4 := g.addComment(ann.token, post.ID, "还是火锅", "")
			r1 := g.addComment(author.token, post.ID, "好，火锅", c1.ID)
			if !strings.HasPrefix(c1.ID, "comment:"+post.ID+"_") || !strings.HasSuffix(c1.ID, "_"+ann.ID) {
				t.Errorf("comment id %q: want comment:<post>_<ms>_<author>", c1.ID)
			}
			if c1.Content != "火锅" || c1.Author.ID != ann.ID || c1.Author.Username != ann.Username || c1.ReplyTo != nil ||
				c1.Post == nil || c1.Post.ID != post.ID || c1.CreatedAt.Before(post.CreatedAt) {
				t.Errorf("addComment = %+v", c1)
			}
			if r1.ReplyTo == nil || r1.ReplyTo.ID != c1.ID || r1.ReplyTo.Content != "火锅" || r1.Post.CommentCount != 5 {
				t.Errorf("reply = %+v", r1)
			}
			// Newest first, both ways, pages of 2.
			want := []string{r1.ID, c4.ID, c3.ID, c2.ID, c1.ID}
			if got := g.allComments(post.ID, 2); !slices.Equal(got, want) {
				t.Fatalf("comments %v, want %v", got, want)
			}
			// A page's edges carry the replies.
			page, _ := g.commentPage(post.ID, map[string]any{"first": 1})
			if len(page.Edges) != 1 || page.Edges[0].Node.ReplyTo == nil || page.Edges[0].Node.ReplyTo.ID != c1.ID ||
				!page.PageInfo.HasNextPage || page.PageInfo.HasPreviousPage || page.TotalCount != 5 {
				t.Errorf("first page = %+v", page)
			}
			if got := g.allComments(other.ID, 10); len(got) != 0 {
				t.Errorf("the other post has comments %v", got)
			}

			// node(id:) of a comment.
			var nd struct {
				Node *struct {
					Typename string `json:"__typename"`
					commentNode
				}
			}
			g.ok("", `query($id: ID!) { node(id: $id) { __typename ... on Comment { `+commentFields+` } } }`, map[string]any{"id": r1.ID}, &nd)
			if nd.Node == nil || nd.Node.Typename != "Comment" || nd.Node.ID != r1.ID || nd.Node.Content != "好，火锅" ||
				nd.Node.ReplyTo == nil || nd.Node.ReplyTo.ID != c1.ID || nd.Node.Post == nil || nd.Node.Post.ID != post.ID {
				t.Errorf("node(%s) = %+v", r1.ID, nd.Node)
			}

			// Bad input: refused, nothing written.
			missingPost := author.ID + "_1"
			missingComment := "comment:" + post.ID + "_1_" + ann.ID
			otherComment := g.addComment(bob.token, other.ID, "mine", "")
			for _, c := range []struct {
				name, token, code, query string
				vars                     map[string]any
			}{
				{"no token", "", "UNAUTHENTICATED", `mutation($p: ID!) { addComment(postId: $p, content: "x") { id } }`, map[string]any{"p": post.ID}},
				{"no token delete", "", "UNAUTHENTICATED", `mutation($id: ID!) { deleteComment(id: $id) }`, map[string]any{"id": c1.ID}},
				{"missing post", ann.token, "NOT_FOUND", `mutation($p: ID!) { addComment(postId: $p, content: "x") { id } }`, map[string]any{"p": missingPost}},
				{"reply to a missing comment", ann.token, "NOT_FOUND", `mutation($p: ID!, $r: ID) { addComment(postId: $p, content: "x", replyToId: $r) { id } }`,
					map[string]any{"p": post.ID, "r": missingComment}},
				{"reply to a comment of another post", ann.token, "BAD_USER_INPUT", `mutation($p: ID!, $r: ID) { addComment(postId: $p, content: "x", replyToId: $r) { id } }`,
					map[string]any{"p": post.ID, "r": otherComment.ID}},
				{"empty content", ann.token, "BAD_USER_INPUT", `mutation($p: ID!) { addComment(postId: $p, content: "") { id } }`, map[string]any{"p": post.ID}},
				{"blank content", ann.token, "BAD_USER_INPUT", `mutation($p: ID!) { addComment(postId: $p, content: " \u200b\n") { id } }`, map[string]any{"p": post.ID}},
				{"too long content", ann.token, "BAD_USER_INPUT", `mutation($p: ID!, $c: String!) { addComment(postId: $p, content: $c) { id } }`,
					map[string]any{"p": post.ID, "c": strings.Repeat("评", 10001)}},
				{"malformed post id", ann.token, "BAD_USER_INPUT", `mutation { addComment(postId: "x_y", content: "x") { id } }`, nil},
				{"a comment id as post id", ann.token, "BAD_USER_INPUT", `mutation($p: ID!) { addComment(postId: $p, content: "x") { id } }`, map[string]any{"p": c1.ID}},
				{"malformed reply id", ann.token, "BAD_USER_INPUT", `mutation($p: ID!) { addComment(postId: $p, content: "x", replyToId: "comment:1") { id } }`, map[string]any{"p": post.ID}},
				{"a post id as reply id", ann.token, "BAD_USER_INPUT", `mutation($p: ID!) { addComment(postId: $p, content: "x", replyToId: $p) { id } }`, map[string]any{"p": post.ID}},
				{"malformed comment id", ann.token, "BAD_USER_INPUT", `mutation { deleteComment(id: "comment:1_2_x_4") }`, nil},
				{"another user's comment", bob.token, "FORBIDDEN", `mutation($id: ID!) { deleteComment(id: $id) }`, map[string]any{"id": c1.ID}},
				{"a comment on another's post", ann.token, "FORBIDDEN", `mutation($id: ID!) { deleteComment(id: $id) }`, map[string]any{"id": otherComment.ID}},
				{"malformed node id", "", "BAD_USER_INPUT", `{ node(id: "comment:1_2_3") { id } }`, nil},
				{"cursor of another list", "", "BAD_USER_INPUT", `query($id: ID!, $a: String) { post(id: $id) { comments(after: $a) { totalCount } } }`,
					map[string]any{"id": post.ID, "a": "UAAAAAAAAAAA"}},
				{"first and last", "", "BAD_USER_INPUT", `query($id: ID!) { post(id: $id) { comments(first: 1, last: 1) { totalCount } } }`, map[string]any{"id": post.ID}},
			} {
				t.Run(c.name, func(t *testing.T) {
					g.t = t
					if e := g.fails(c.token, c.code, c.query, c.vars); e.Message == "" {
						t.Fatal("error without a message")
					}
				})
			}
			g.t = t
			if got := g.allComments(post.ID, 3); !slices.Equal(got, want) {
				t.Fatalf("after the refused calls: comments %v, want %v", got, want)
			}

			// Deletes: the comment's author, the post's author; false once gone.
			for _, d := range []struct {
				token, id string
				want      bool
			}{{ann.token, c1.ID, true}, {author.token, c2.ID, true}, {ann.token, c1.ID, false}, {author.token, c2.ID, false},
				{author.token, missingComment, false}} {
				if got := g.deleteComment(d.token, d.id); got != d.want {
					t.Errorf("deleteComment(%s) = %v, want %v", d.id, got, d.want)
				}
			}
			want = []string{r1.ID, c4.ID, c3.ID}
			if got := g.allComments(post.ID, 2); !slices.Equal(got, want) {
				t.Fatalf("after the deletes: comments %v, want %v", got, want)
			}
			var gone struct{ Node *struct{ ID string } }
			g.ok("", `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": c1.ID}, &gone)
			if gone.Node != nil {
				t.Errorf("node of a deleted comment = %+v", gone.Node)
			}
			// The reply stays; the comment it replied to is gone.
			page, _ = g.commentPage(post.ID, map[string]any{"first": 1})
			if n := page.Edges[0].Node; n.ID != r1.ID || n.ReplyTo != nil {
				t.Errorf("the reply after its comment went: %+v", n)
			}
			// commentCount wherever the post is read: timelines, a user's posts.
			type counted struct {
				Edges []struct {
					Node struct {
						ID           string
						CommentCount int
					}
				}
			}
			var tl struct {
				HomeTimeline counted
				Me           struct{ Posts counted }
			}
			g.ok(author.token, `{ homeTimeline(first: 5) { edges { node { id commentCount } } } me { posts(first: 5) { edges { node { id commentCount } } } } }`, nil, &tl)
			for _, l := range []counted{tl.HomeTimeline, tl.Me.Posts} {
				if len(l.Edges) == 0 || l.Edges[0].Node.ID != post.ID || l.Edges[0].Node.CommentCount != 3 {
					t.Errorf("the post as listed: %+v, want commentCount 3", l.Edges)
				}
			}
		})
	}
}
