package domain_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/hbase/embedded"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/tables"
)

// benchGraph is a synthetic follow graph: an author whose fans rows were
// written directly (PutMany), with the author's fanCount set to match, and
// the started Service over it.
type benchGraph struct {
	st     hbase.StoreAdmin
	svc    *domain.Domain
	author weibo.UserID
	sample []weibo.UserID // fans with an attends row and a users row
}

// newBenchGraph writes fans fan rows of a new author (ids 1..fans), the
// attends rows of every fan when allAttends (a fan-out re-reads them) or
// else only of a sample of 100, sets the author's fanCount, and returns a
// started Service with opts.
func newBenchGraph(b *testing.B, fans int, allAttends bool, opts ...domain.Option) *benchGraph {
	b.Helper()
	st, err := embedded.Open(b.TempDir(), embedded.WithNoSync())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	return newBenchGraphOn(b, st, fans, allAttends, opts...)
}

// newBenchGraphOn is newBenchGraph on st.
func newBenchGraphOn(b *testing.B, st hbase.StoreAdmin, fans int, allAttends bool, opts ...domain.Option) *benchGraph {
	b.Helper()
	ctx := context.Background()
	if err := tables.Migrate(ctx, st); err != nil {
		b.Fatal(err)
	}
	svc := domaintest.Quiet(st, opts...)
	author := mustUserB(b, svc, uniq("author"))
	g := &benchGraph{st: st, svc: svc, author: author}
	now := tables.U64(uint64(time.Now().UnixMilli()))
	rel := hbase.Values{tables.FamRel: {tables.ColRelSet: now}}
	var puts []*hbase.Put
	flush := func() {
		if err := st.PutMany(ctx, puts); err != nil {
			b.Fatal(err)
		}
		puts = puts[:0]
	}
	step := max(1, fans/100)
	for i := 1; i <= fans; i++ {
		fan := weibo.UserID(i)
		puts = append(puts, &hbase.Put{Table: tables.Relations, Row: tables.RelationKey(author, tables.Fans, fan), Values: rel})
		if allAttends || i%step == 0 {
			puts = append(puts, &hbase.Put{Table: tables.Relations, Row: tables.RelationKey(fan, tables.Attends, author), Values: rel})
		}
		if i%step == 0 {
			g.sample = append(g.sample, fan)
		}
		if len(puts) >= 10000 {
			flush()
		}
	}
	flush()
	if err := st.Put(ctx, &hbase.Put{Table: tables.Users, Row: tables.UserKey(author),
		Values: hbase.Values{tables.FamCount: {tables.ColFans: tables.U64(uint64(fans))}}}); err != nil {
		b.Fatal(err)
	}
	if err := svc.Start(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = svc.Close(context.Background()) })
	return g
}

func mustUserB(b *testing.B, svc *domain.Domain, name string) weibo.UserID {
	b.Helper()
	u, err := svc.Accounts.Register(b.Context(), name, "correct horse")
	if err != nil {
		b.Fatal(err)
	}
	return u.ID
}

// BenchmarkPublishMillionFans: publishPost for an author
// with 1,000,000 fans (synthetic graph, on-disk embedded store), who is a
// large account (hybrid fan-out: one real follow takes the fan count over
// the threshold). Each iteration is one Publish; it reports the latency's
// p50 and p99 (target p99 <= 10 ms), then checks that the next home
// timeline of sampled fans shows the newest post.
//
//	go test ./weibo/domain -run '^$' -bench PublishMillionFans -benchtime 200x
func BenchmarkPublishMillionFans(b *testing.B) {
	const fans = 1_000_000
	g := newBenchGraph(b, fans-1, false)
	ctx := context.Background()
	follower := mustUserB(b, g.svc, uniq("follower"))
	if _, err := g.svc.Follows.Follow(ctx, follower, g.author); err != nil { // fanCount reaches 1,000,000
		b.Fatal(err)
	}
	if ls, err := g.svc.Fanout.LargeAccounts(ctx); err != nil || ls == nil {
		b.Fatalf("the author is not large: %v %v", ls, err)
	}
	lat := make([]time.Duration, 0, b.N)
	var last *feed.Post
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		p, err := g.svc.Feed.Publish(ctx, g.author, fmt.Sprintf("post %d to a million fans", i))
		lat = append(lat, time.Since(t0))
		if err != nil {
			b.Fatal(err)
		}
		last = p
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)].Microseconds())/1000, "p99-ms")
	for _, fan := range append([]weibo.UserID{follower}, g.sample[:10]...) {
		c, err := g.svc.Timeline.HomeTimeline(ctx, fan, weibo.Page{First: new(1)})
		if err != nil {
			b.Fatal(err)
		}
		if len(c.Edges) != 1 || c.Edges[0].Post.ID != last.ID {
			b.Fatalf("fan %v's home timeline does not start with the newest post %v: %+v", fan, last.ID, c.Edges)
		}
	}
}

// BenchmarkFanoutThroughput: the fan-out of a pushed
// author (below the threshold) with 100,000 fans on the on-disk embedded
// store: each iteration publishes one post and waits for its fan-out
// (FlushFanout). It reports inbox entries written per second and the
// fan-out lag (publish to the last inbox write; target >= 500,000
// entries/s).
//
//	go test ./weibo/domain -run '^$' -bench FanoutThroughput -benchtime 5x
//
// GATEWAY_BENCH_FANOUT_BATCH sets the fan-out batch (WithFanoutBatch).
// GATEWAY_BENCH_FANOUT_SYNC=1 opens the store without WithNoSync (every
// batch synced, as `gateway serve` runs it).
func BenchmarkFanoutThroughput(b *testing.B) {
	const fans = 100_000
	if os.Getenv("GATEWAY_BENCH_FANOUT_SYNC") == "1" {
		st, err := embedded.Open(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = st.Close() })
		fanoutThroughput(b, newBenchGraphOn(b, st, fans, true, fanoutBenchOptions(fans)...), fans)
		return
	}
	fanoutThroughput(b, newBenchGraph(b, fans, true, fanoutBenchOptions(fans)...), fans)
}

// fanoutBenchOptions are the options of the fan-out benchmarks: the
// threshold above fans (a pushed author), and the batch of
// GATEWAY_BENCH_FANOUT_BATCH if set.
func fanoutBenchOptions(fans int) []domain.Option {
	opts := []domain.Option{domain.WithFanoutThreshold(fans + 1)}
	if n, err := strconv.Atoi(os.Getenv("GATEWAY_BENCH_FANOUT_BATCH")); err == nil {
		opts = append(opts, domain.WithFanoutBatch(n)) // rows per PutMany/GetMany (default 500)
	}
	return opts
}

// BenchmarkFanoutThroughputHBase is BenchmarkFanoutThroughput on the real
// HBase (GATEWAY_TEST_HBASE_ZK), in a namespace of its own that it drops
// afterwards (target >= 100,000 entries/s).
//
//	GATEWAY_TEST_HBASE_ZK=... go test ./weibo/domain -run '^$' -bench FanoutThroughputHBase -benchtime 1x
//
// GATEWAY_BENCH_FANOUT_BATCH sets the fan-out batch (WithFanoutBatch).
func BenchmarkFanoutThroughputHBase(b *testing.B) {
	const fans = 100_000
	fanoutThroughput(b, newBenchGraphOn(b, benchNamespace(b), fans, true, fanoutBenchOptions(fans)...), fans)
}

func fanoutThroughput(b *testing.B, g *benchGraph, fans int) {
	ctx := context.Background()
	var total time.Duration
	lags := make([]time.Duration, 0, b.N)
	cpu0 := processCPU(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		p, err := g.svc.Feed.Publish(ctx, g.author, fmt.Sprintf("post %d", i))
		if err != nil {
			b.Fatal(err)
		}
		if err := g.svc.FlushFanout(ctx); err != nil {
			b.Fatal(err)
		}
		lag := time.Since(t0)
		total += lag
		lags = append(lags, lag)
		_ = p
	}
	b.StopTimer()
	cpu := processCPU(b) - cpu0
	slices.Sort(lags)
	b.ReportMetric(float64(fans)*float64(b.N)/total.Seconds(), "entries/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/1000/(float64(fans)*float64(b.N)), "cpu-us/entry")
	b.ReportMetric(float64(lags[len(lags)/2].Milliseconds()), "lag-p50-ms")
	b.ReportMetric(float64(lags[len(lags)-1].Milliseconds()), "lag-max-ms")
	c, err := g.svc.Timeline.HomeTimeline(ctx, g.sample[0], weibo.Page{First: new(1)})
	if err != nil || len(c.Edges) != 1 {
		b.Fatalf("a fan's timeline after the fan-out: %v %+v", err, c)
	}
}

// processCPU is the CPU time (user and system) this process has used: the
// fan-out's cost independent of the machine's load (on the real HBase it
// leaves out the server's).
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
