package server_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/weibohbase/gateway/auth"
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

// HomePageQuery is the home-timeline page of the benchmarks (the query the
// PostGraphile comparison and the k6 script bench/k6/home.js send).
const homePageQuery = `query($first: Int) { homeTimeline(first: $first) { edges { cursor node { id content createdAt author { id username } } } pageInfo { hasNextPage endCursor } } }`

// BenchmarkHomePage measures the CPU and allocations of one home-timeline
// page of 50 (homePageQuery) on the demo subset of the real data, served
// in-process: the request goes straight to the gateway's http.Handler (chi
// stack, token, loaders, gqlgen, store) with no socket and no client-side
// decoding, so ns/op, B/op and allocs/op are the gateway's own; cpu-ms/op
// is the process's CPU time (user + system, every goroutine and the GC) per
// page, which a shared machine disturbs less than ns/op. The readers
// are the 64 users with the longest home timelines, in turn.
//
//	go test ./server/ -run '^$' -bench HomePage -benchtime 3s -cpuprofile /tmp/home.cpu
func BenchmarkHomePage(b *testing.B) { benchmarkHomePage(b, homePageQuery) }

// homePageActionsQuery is homePageQuery with what a client shows of each
// post's actions: its counts, likedByViewer and the original of a repost.
const homePageActionsQuery = `query($first: Int) { homeTimeline(first: $first) { edges { cursor node { id content createdAt author { id username } likeCount commentCount repostCount likedByViewer repostOf { content author { username } } } } pageInfo { hasNextPage endCursor } } }`

// BenchmarkHomePageActions is BenchmarkHomePage with
// homePageActionsQuery: its cpu-ms/op against BenchmarkHomePage's is what
// the post actions add to a page.
//
//	go test ./server/ -run '^$' -bench 'HomePage' -benchtime 3s
func BenchmarkHomePageActions(b *testing.B) { benchmarkHomePage(b, homePageActionsQuery) }

func benchmarkHomePage(b *testing.B, query string) {
	for _, be := range testenv.Backends() {
		b.Run(be.Name, func(b *testing.B) {
			g, ds := seededGatewayWith(b, be.Open(b), func(c *server.Config) { c.RateLimit = -1 })
			var auths []string
			for _, uid := range busiest(ds, 64) {
				u, _ := ds.User(uid)
				auths = append(auths, "Bearer "+g.login(u.Username, seed.DefaultPassword))
			}
			body := []byte(`{"query":` + strconv.Quote(query) + `,"variables":{"first":50}}`)
			do := func(w http.ResponseWriter, auth string) {
				req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", auth)
				g.h.ServeHTTP(w, req)
			}
			for _, a := range auths { // warm the caches; every page answers 50 edges
				w := httptest.NewRecorder()
				do(w, a)
				if w.Code != http.StatusOK || bytes.Contains(w.Body.Bytes(), []byte(`"errors"`)) || bytes.Count(w.Body.Bytes(), []byte(`"cursor"`)) != 50 {
					b.Fatalf("home page: status %d: %.300s", w.Code, w.Body.Bytes())
				}
			}
			b.ReportAllocs()
			cpu0 := processCPU()
			i := 0
			var w discard
			for b.Loop() {
				w.h = http.Header{}
				do(&w, auths[i%len(auths)])
				i++
			}
			b.ReportMetric(float64(processCPU()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
		})
	}
}

// processCPU returns the CPU time (user + system) the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// discard is a ResponseWriter that drops the body, so that a benchmark
// measures the server, not a client's buffer.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}

// BenchmarkTokenCheck measures the token check of a request,
// `{ me { id username } }` served in-process as in BenchmarkHomePage: with
// a token the gateway found good within its recheck window ("known": no
// read), and with a token it has never seen ("unknown": each request
// carries a new token of one of 16 users, signed by another Issuer with
// the same secret, so the gateway parses it and its check reads the
// viewer's users row — families i, c and t in one Get — which also
// answers me). The difference is what the check costs a request once the
// window has passed.
//
//	go test ./server/ -run '^$' -bench TokenCheck -benchtime 2s
func BenchmarkTokenCheck(b *testing.B) {
	for _, be := range testenv.Backends() {
		b.Run(be.Name, func(b *testing.B) {
			g := startGatewayWith(b, be.Open(b), func(c *server.Config) { c.RateLimit = -1; c.Signups.Rate = -1 })
			// The signer remembers no token (its memory would grow by one
			// per request and bill the benchmark for it).
			signer := auth.NewIssuer([]byte(testSecret), time.Hour, auth.WithRecheckAfter(0))
			var users []auth.Token
			for range 16 {
				a := g.register(uniqueName("check"))
				tok, err := signer.Verify(a.token)
				if err != nil {
					b.Fatal(err)
				}
				users = append(users, tok)
			}
			known := "Bearer " + g.register(uniqueName("known")).token
			body := []byte(`{"query":"{ me { id username } }"}`)
			do := func(auth string) {
				req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", auth)
				w := httptest.NewRecorder()
				g.h.ServeHTTP(w, req)
				if w.Code != http.StatusOK || bytes.Contains(w.Body.Bytes(), []byte(`"errors"`)) {
					b.Fatalf("me: status %d: %.300s", w.Code, w.Body.Bytes())
				}
			}
			b.Run("known", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					do(known)
				}
			})
			b.Run("unknown", func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					u := users[i%len(users)]
					i++
					tok, err := signer.Issue(u.User, time.UnixMilli(u.Created), u.Generation)
					if err != nil {
						b.Fatal(err)
					}
					do("Bearer " + tok)
				}
			})
		})
	}
}
