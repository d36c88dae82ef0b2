package server_test

import (
	"fmt"
	"testing"

	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/seed"
	"github.com/weibohbase/gateway/server"
)

// BenchmarkGraphQL measures whole GraphQL requests over HTTP (loopback) on
// the demo subset of the real data, on both backends: a home-timeline page
// of 20 and of 100 with author names, a user with counters, and publishing
// a post (the request path: outbox, content, own inbox, counter).
//
//	make bench   (or: go test ./server/ -run '^$' -bench GraphQL -benchtime 3s)
func BenchmarkGraphQL(b *testing.B) {
	for _, be := range testenv.Backends() {
		b.Run(be.Name, func(b *testing.B) {
			// No budget: the loop sends far more than a client may in a minute.
			g, ds := seededGatewayWith(b, be.Open(b), func(c *server.Config) { c.RateLimit = -1 })
			uid := busiest(ds, 1)[0]
			u, _ := ds.User(uid)
			token := g.login(u.Username, seed.DefaultPassword)
			for _, first := range []int{20, 100} {
				b.Run(fmt.Sprintf("homeTimeline_first_%d", first), func(b *testing.B) {
					for b.Loop() {
						g.ok(token, `query($first: Int) { homeTimeline(first: $first) { edges { node { id content createdAt author { username } } } pageInfo { hasNextPage endCursor } } }`, map[string]any{"first": first}, nil)
					}
				})
			}
			b.Run("user_with_counters", func(b *testing.B) {
				for b.Loop() {
					g.ok(token, userQuery, map[string]any{"id": fmt.Sprint(uid)}, nil)
				}
			})
			// A fresh author, so that the seeded users' timelines stay as the
			// data set says (the HBase is shared with the tests).
			author := g.register(uniqueName("bench"))
			b.Run("publishPost", func(b *testing.B) {
				for b.Loop() {
					g.ok(author.token, `mutation { publishPost(content: "benchmark post") { id } }`, nil, nil)
				}
				b.StopTimer()
				g.flush()
			})
		})
	}
}
