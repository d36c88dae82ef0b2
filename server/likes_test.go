package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/server"
)

// likedPost is a post as the like tests select it.
type likedPost struct {
	ID            string `json:"id"`
	LikeCount     int    `json:"likeCount"`
	LikedByViewer bool   `json:"likedByViewer"`
}

const likeFields = `id likeCount likedByViewer`

// like runs likePost (or unlikePost when !on) as the account with token
// and returns the post it answers.
func (g *gw) like(token, postID string, on bool) likedPost {
	g.t.Helper()
	name := "likePost"
	if !on {
		name = "unlikePost"
	}
	var d map[string]likedPost
	g.ok(token, `mutation($id: ID!) { `+name+`(postId: $id) { `+likeFields+` } }`, map[string]any{"id": postID}, &d)
	return d[name]
}

// likedPostOf reads post(id:) as the account with token ("" anonymous).
func (g *gw) likedPostOf(token, postID string) likedPost {
	g.t.Helper()
	var d struct{ Post *likedPost }
	g.ok(token, `query($id: ID!) { post(id: $id) { `+likeFields+` } }`, map[string]any{"id": postID}, &d)
	if d.Post == nil {
		g.t.Fatalf("post %s not found", postID)
	}
	return *d.Post
}

// likers reads every page of the post's likes (pages of size), newest like
// first, and the totalCount each page gave.
func (g *gw) likers(token, postID string, size int) ([]string, []int) {
	g.t.Helper()
	var ids []string
	var totals []int
	var after *string
	for {
		var d struct {
			Post struct {
				Likes struct {
					Edges []struct {
						Cursor string
						Node   userData
					}
					PageInfo struct {
						HasNextPage bool
						EndCursor   *string
					}
					TotalCount int
				}
			}
		}
		g.ok(token, `query($id: ID!, $first: Int, $after: String) { post(id: $id) {
			likes(first: $first, after: $after) { edges { cursor node { id username } } pageInfo { hasNextPage endCursor } totalCount } } }`,
			map[string]any{"id": postID, "first": size, "after": after}, &d)
		for _, e := range d.Post.Likes.Edges {
			ids = append(ids, e.Node.ID)
		}
		totals = append(totals, d.Post.Likes.TotalCount)
		if !d.Post.Likes.PageInfo.HasNextPage {
			return ids, totals
		}
		after = d.Post.Likes.PageInfo.EndCursor
	}
}

// likedPostsOf reads every page of user uid's likedPosts as the account
// with token, and the totalCount of the first page.
func (g *gw) likedPostsOf(token, uid string, size int) ([]likedPost, int) {
	g.t.Helper()
	var out []likedPost
	total := -1
	var after *string
	for {
		var d struct {
			User struct {
				LikedPosts struct {
					Edges    []struct{ Node likedPost }
					PageInfo struct {
						HasNextPage bool
						EndCursor   *string
					}
					TotalCount int
				}
			}
		}
		g.ok(token, `query($id: ID!, $first: Int, $after: String) { user(id: $id) {
			likedPosts(first: $first, after: $after) { edges { node { `+likeFields+` } } pageInfo { hasNextPage endCursor } totalCount } } }`,
			map[string]any{"id": uid, "first": size, "after": after}, &d)
		for _, e := range d.User.LikedPosts.Edges {
			out = append(out, e.Node)
		}
		if total < 0 {
			total = d.User.LikedPosts.TotalCount
		}
		if !d.User.LikedPosts.PageInfo.HasNextPage {
			return out, total
		}
		after = d.User.LikedPosts.PageInfo.EndCursor
	}
}

// TestLikesFlow drives likePost and unlikePost over HTTP on both backends:
// idempotence, likeCount, likedByViewer with and without a token, the two
// lists newest like first across pages, the home timeline, and the
// errors.
func TestLikesFlow(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startGateway(t, b.Open(t))
			author, alice, bob := g.register(uniqueName("author")), g.register(uniqueName("alice")), g.register(uniqueName("bob"))
			p1 := g.publish(author.token, "点赞 me")
			p2 := g.publish(author.token, "and me")

			if got := g.like(alice.token, p1.ID, true); got != (likedPost{p1.ID, 1, true}) {
				t.Fatalf("likePost = %+v", got)
			}
			if got := g.like(alice.token, p1.ID, true); got != (likedPost{p1.ID, 1, true}) {
				t.Fatalf("likePost again = %+v, want the same (idempotent)", got)
			}
			time.Sleep(2 * time.Millisecond) // distinct like times: the lists' order is the test's
			if got := g.like(bob.token, p1.ID, true); got != (likedPost{p1.ID, 2, true}) {
				t.Fatalf("bob's likePost = %+v", got)
			}
			time.Sleep(2 * time.Millisecond)
			g.like(bob.token, p2.ID, true)

			// likedByViewer: the viewer's own; false without a token.
			for _, c := range []struct {
				who   string
				token string
				liked bool
			}{{"alice", alice.token, true}, {"bob", bob.token, true}, {"the author", author.token, false}, {"anonymous", "", false}} {
				if got := g.likedPostOf(c.token, p1.ID); got.LikeCount != 2 || got.LikedByViewer != c.liked {
					t.Errorf("post as %s = %+v, want likeCount 2, likedByViewer %v", c.who, got, c.liked)
				}
			}

			// Post.likes, newest like first, in pages of one.
			if ids, totals := g.likers("", p1.ID, 1); !equalStrings(ids, []string{bob.ID, alice.ID}) || !slices.Equal(totals, []int{2, 2}) {
				t.Fatalf("likes of p1 = %v (totalCount %v), want [bob alice] (2)", ids, totals)
			}
			// User.likedPosts, newest like first, likedByViewer as the viewer sees it.
			ps, total := g.likedPostsOf(bob.token, bob.ID, 1)
			if total != 2 || len(ps) != 2 || ps[0] != (likedPost{p2.ID, 1, true}) || ps[1] != (likedPost{p1.ID, 2, true}) {
				t.Fatalf("bob's likedPosts = %+v (totalCount %d)", ps, total)
			}
			if ps, _ := g.likedPostsOf(alice.token, bob.ID, 10); len(ps) != 2 || ps[0].LikedByViewer || !ps[1].LikedByViewer {
				t.Fatalf("bob's likedPosts seen by alice = %+v", ps)
			}
			// The home timeline carries them too.
			var home struct {
				HomeTimeline struct{ Edges []struct{ Node likedPost } }
			}
			g.ok(author.token, `{ homeTimeline(first: 10) { edges { node { `+likeFields+` } } } }`, nil, &home)
			if e := home.HomeTimeline.Edges; len(e) != 2 || e[0].Node != (likedPost{p2.ID, 1, false}) || e[1].Node != (likedPost{p1.ID, 2, false}) {
				t.Fatalf("author's home timeline = %+v", e)
			}

			// unlikePost, idempotent; a like again is the newest.
			if got := g.like(alice.token, p1.ID, false); got != (likedPost{p1.ID, 1, false}) {
				t.Fatalf("unlikePost = %+v", got)
			}
			if got := g.like(alice.token, p1.ID, false); got != (likedPost{p1.ID, 1, false}) {
				t.Fatalf("unlikePost again = %+v", got)
			}
			if ids, _ := g.likers(alice.token, p1.ID, 10); !equalStrings(ids, []string{bob.ID}) {
				t.Fatalf("likes of p1 after the unlike = %v", ids)
			}
			time.Sleep(2 * time.Millisecond)
			g.like(alice.token, p1.ID, true)
			if ids, _ := g.likers(alice.token, p1.ID, 10); !equalStrings(ids, []string{alice.ID, bob.ID}) {
				t.Fatalf("likes of p1 after alice's new like = %v", ids)
			}
			// One request that likes and unlikes: each answer is its own.
			var both struct {
				A likedPost `json:"a"`
				B likedPost `json:"b"`
			}
			g.ok(bob.token, `mutation($id: ID!) { a: unlikePost(postId: $id) { `+likeFields+` } b: likePost(postId: $id) { `+likeFields+` } }`,
				map[string]any{"id": p2.ID}, &both)
			if both.A != (likedPost{p2.ID, 0, false}) || both.B != (likedPost{p2.ID, 1, true}) {
				t.Fatalf("unlike then like in one request = %+v", both)
			}

			missing := author.ID + "_1"
			for _, c := range []struct {
				name, token, code, query, field string
			}{
				{"like missing", alice.token, "NOT_FOUND", `mutation { likePost(postId: "` + missing + `") { id } }`, ""},
				{"unlike missing", alice.token, "NOT_FOUND", `mutation { unlikePost(postId: "` + missing + `") { id } }`, ""},
				{"like malformed", alice.token, "BAD_USER_INPUT", `mutation { likePost(postId: "nope") { id } }`, "postId"},
				{"unlike malformed", alice.token, "BAD_USER_INPUT", `mutation { unlikePost(postId: "1_05") { id } }`, "postId"},
				{"like anonymous", "", "UNAUTHENTICATED", `mutation { likePost(postId: "` + p1.ID + `") { id } }`, ""},
				{"likes malformed cursor", "", "BAD_USER_INPUT", `{ post(id: "` + p1.ID + `") { likes(after: "bm9wZQ") { totalCount } } }`, "after"},
				{"likedPosts first too big", "", "BAD_USER_INPUT", `{ user(id: "` + bob.ID + `") { likedPosts(first: 101) { totalCount } } }`, "first"},
			} {
				t.Run(c.name, func(t *testing.T) {
					e := g.in(t).fails(c.token, c.code, c.query, nil)
					if c.field != "" && e.Extensions["field"] != c.field {
						t.Errorf("error %+v does not name %s", e, c.field)
					}
				})
			}
			// Nothing half-written by the failures.
			if got := g.likedPostOf("", p1.ID); got.LikeCount != 2 {
				t.Fatalf("p1 likeCount = %d after the failures, want 2", got.LikeCount)
			}
		})
	}
}

// tryGraphQL sends one GraphQL request without failing the test (for
// goroutines): the error of the transport, or the first GraphQL error.
func (g *gw) tryGraphQL(token, query string, vars map[string]any) error {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, err := http.NewRequest(http.MethodPost, g.url+"/graphql", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var out gqlResponse
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return fmt.Errorf("HTTP %d: %w", resp.StatusCode, err)
	}
	if len(out.Errors) > 0 {
		return fmt.Errorf("%s (%v)", out.Errors[0].Message, out.Errors[0].Extensions["code"])
	}
	return nil
}

// TestLikeStormGraphQL: 32 clients like and unlike one post at once over
// HTTP, each its own sequence of calls; afterwards, on both backends, the
// post's likeCount equals the likes listed, which are exactly the users
// whose last call was a like, and each user's likedByViewer and
// likedPosts agree.
func TestLikeStormGraphQL(t *testing.T) {
	const clients, calls = 32, 6
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			// 33 registrations from one address: more than the login throttle
			// and the sign-up limit let through.
			g := startGatewayWith(t, b.Open(t), func(c *server.Config) {
				c.Logins = server.LoginThrottle{UserFailures: -1, AddressFailures: -1}
				c.Signups.Rate = -1
			})
			author := g.register(uniqueName("stormauthor"))
			post := g.publish(author.token, "a post 32 clients like at once")
			users := make([]account, clients)
			for i := range users {
				users[i] = g.register(uniqueName(fmt.Sprintf("fan%02d", i)))
			}
			final := make([]bool, clients) // whether each client's last call was a like
			errs := make([]error, clients)
			var wg sync.WaitGroup
			for i, u := range users {
				wg.Go(func() {
					for range calls {
						on := rand.IntN(2) == 0
						name := "likePost"
						if !on {
							name = "unlikePost"
						}
						if err := g.tryGraphQL(u.token, `mutation($id: ID!) { `+name+`(postId: $id) { likeCount } }`, map[string]any{"id": post.ID}); err != nil {
							errs[i] = fmt.Errorf("%s: %w", name, err)
							return
						}
						final[i] = on
					}
				})
			}
			wg.Wait()
			var want []string
			for i, u := range users {
				if errs[i] != nil {
					t.Fatalf("client %d: %v", i, errs[i])
				}
				if final[i] {
					want = append(want, u.ID)
				}
			}
			got := g.likedPostOf("", post.ID)
			listed, totals := g.likers("", post.ID, 10)
			if got.LikeCount != len(listed) || totals[0] != len(listed) {
				t.Fatalf("likeCount %d (totalCount %d), %d likes listed", got.LikeCount, totals[0], len(listed))
			}
			slices.Sort(want)
			slices.Sort(listed)
			if !equalStrings(listed, want) {
				t.Fatalf("likes listed %v, want the clients whose last call liked %v", listed, want)
			}
			for i, u := range users {
				liked := g.likedPostOf(u.token, post.ID).LikedByViewer
				mine, total := g.likedPostsOf(u.token, u.ID, 5)
				if liked != final[i] || (len(mine) == 1) != final[i] || total != len(mine) {
					t.Errorf("client %d: likedByViewer %v, likedPosts %+v (totalCount %d); last call liked: %v", i, liked, mine, total, final[i])
				}
			}
		})
	}
}
