package server_test

import (
	"slices"
	"testing"
	"time"

	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/server"
)

// BenchmarkTopics measures topic reads over HTTP (loopback) on the demo
// subset of the real data, on both backends: trendingTopics with the DAY
// window at the end of 2020-03-02 (48 hour rows: the 2nd against the 1st;
// the 10 listed topics' rows) and a page of 50 posts of the busiest topic
// (the topic's row, one ScanMany of its four buckets, one GetMany of the
// posts). It reports the request's p50 and p99 and its store calls.
//
//	go test ./server/ -run '^$' -bench Topics -benchtime 200x
func BenchmarkTopics(b *testing.B) {
	for _, be := range testenv.Backends() {
		b.Run(be.Name, func(b *testing.B) {
			g, ds := seededGatewayWith(b, be.Open(b), func(c *server.Config) { c.RateLimit = -1 })
			name := indexTopics(ds).names[0]
			for _, c := range []struct {
				name, query string
				vars        map[string]any
			}{
				{"trendingTopics_DAY", `query($at: Time!) { trendingTopics(at: $at, window: DAY, first: 10) { topic { name postCount } count previousCount score } }`,
					map[string]any{"at": "2020-03-03T00:00:00+08:00"}},
				{"topic_page_50", `query($name: String!) { topic(name: $name) { postCount posts(first: 50) { edges { cursor node { id content createdAt author { username } } } pageInfo { hasNextPage endCursor } } } }`,
					map[string]any{"name": name}},
			} {
				b.Run(c.name, func(b *testing.B) {
					lat := make([]time.Duration, 0, b.N)
					var calls float64
					for b.Loop() {
						t0 := time.Now()
						n := g.okCalls("", c.query, c.vars, nil)
						lat = append(lat, time.Since(t0))
						calls += n
					}
					slices.Sort(lat)
					b.ReportMetric(calls/float64(len(lat)), "calls/op")
					b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
					b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)].Microseconds())/1000, "p99-ms")
				})
			}
		})
	}
}
