package domain_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/tables"
)

// retractionFans is one under the default fan-out threshold: the most fans
// a pushed author has, whose delete retracts the most inbox entries.
const retractionFans = feed.DefaultFanoutThreshold - 1

// BenchmarkDeleteRetraction: deletePost by a pushed author with 9,999 fans
// (one under the default fan-out threshold) on the on-disk embedded store.
// Each iteration publishes a post and waits for its fan-out (not timed),
// then deletes it and waits for the retraction of its inbox entries
// (FlushFanout). It reports inbox entries retracted a second (delete call
// to the last inbox delete), the gateway CPU per entry and the delete
// call's own p99, then checks that a fan's home timeline is empty.
//
//	go test ./weibo/domain -run '^$' -bench 'DeleteRetraction$' -benchtime 20x
func BenchmarkDeleteRetraction(b *testing.B) {
	deleteRetraction(b, newBenchGraph(b, retractionFans, true))
}

// BenchmarkDeleteRetractionHBase is BenchmarkDeleteRetraction on the real
// HBase (GATEWAY_TEST_HBASE_ZK), in a namespace of its own that it drops
// afterwards.
//
//	GATEWAY_TEST_HBASE_ZK=... go test ./weibo/domain -run '^$' -bench DeleteRetractionHBase -benchtime 10x
func BenchmarkDeleteRetractionHBase(b *testing.B) {
	deleteRetraction(b, newBenchGraphOn(b, benchNamespace(b), retractionFans, true))
}

func deleteRetraction(b *testing.B, g *benchGraph) {
	ctx := context.Background()
	var total time.Duration
	calls := make([]time.Duration, 0, b.N)
	var cpu time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		p, err := g.svc.Feed.Publish(ctx, g.author, fmt.Sprintf("post %d, soon deleted", i))
		if err != nil {
			b.Fatal(err)
		}
		if err := g.svc.FlushFanout(ctx); err != nil {
			b.Fatal(err)
		}
		cpu0 := processCPU(b)
		b.StartTimer()
		t0 := time.Now()
		deleted, err := g.svc.Feed.DeletePost(ctx, p.ID)
		calls = append(calls, time.Since(t0))
		if err != nil || !deleted {
			b.Fatalf("DeletePost = %v, %v", deleted, err)
		}
		if err := g.svc.FlushFanout(ctx); err != nil {
			b.Fatal(err)
		}
		total += time.Since(t0)
		cpu += processCPU(b) - cpu0
	}
	b.StopTimer()
	entries := float64(retractionFans+1) * float64(b.N) // the fans' and the author's own
	b.ReportMetric(entries/total.Seconds(), "entries/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/1000/entries, "cpu-us/entry")
	reportLatency(b, calls)
	if n := inboxLen(b, g.svc, g.sample[0]); n != 0 {
		b.Fatalf("a fan's inbox holds %d entries after the deletes", n)
	}
}

// BenchmarkDeleteMillionFans: deletePost by an author with 1,000,000 fans
// (synthetic graph, on-disk embedded store), a large account (hybrid
// fan-out): the post has no inbox entries to retract but the author's own.
// Each iteration publishes a post (not timed) and deletes it; it reports
// the delete call's p50 and p99, then checks that sampled fans' home
// timelines show none of the posts.
//
//	go test ./weibo/domain -run '^$' -bench 'DeleteMillionFans$' -benchtime 200x
func BenchmarkDeleteMillionFans(b *testing.B) {
	deleteMillionFans(b, newBenchGraph(b, 1_000_000-1, false))
}

// BenchmarkDeleteMillionFansHBase is BenchmarkDeleteMillionFans on the
// real HBase (GATEWAY_TEST_HBASE_ZK), in a namespace of its own that it
// drops afterwards.
//
//	GATEWAY_TEST_HBASE_ZK=... go test ./weibo/domain -run '^$' -bench DeleteMillionFansHBase -benchtime 200x
func BenchmarkDeleteMillionFansHBase(b *testing.B) {
	deleteMillionFans(b, newBenchGraphOn(b, benchNamespace(b), 1_000_000-1, false))
}

func deleteMillionFans(b *testing.B, g *benchGraph) {
	ctx := context.Background()
	follower := mustUserB(b, g.svc, uniq("follower"))
	if _, err := g.svc.Follows.Follow(ctx, follower, g.author); err != nil { // fanCount reaches 1,000,000
		b.Fatal(err)
	}
	if ls, err := g.svc.Fanout.LargeAccounts(ctx); err != nil || ls == nil {
		b.Fatalf("the author is not large: %v %v", ls, err)
	}
	calls := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		p, err := g.svc.Feed.Publish(ctx, g.author, fmt.Sprintf("post %d to a million fans, soon deleted", i))
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		t0 := time.Now()
		deleted, err := g.svc.Feed.DeletePost(ctx, p.ID)
		calls = append(calls, time.Since(t0))
		if err != nil || !deleted {
			b.Fatalf("DeletePost = %v, %v", deleted, err)
		}
	}
	b.StopTimer()
	reportLatency(b, calls)
	if err := g.svc.FlushFanout(ctx); err != nil {
		b.Fatal(err)
	}
	for _, fan := range append([]weibo.UserID{follower}, g.sample[:10]...) {
		c, err := g.svc.Timeline.HomeTimeline(ctx, fan, weibo.Page{First: new(1)})
		if err != nil {
			b.Fatal(err)
		}
		if len(c.Edges) != 0 {
			b.Fatalf("fan %v's home timeline shows a deleted post: %+v", fan, c.Edges)
		}
	}
}

// benchNamespace is the real HBase of GATEWAY_TEST_HBASE_ZK in a namespace
// of its own, dropped when the benchmark ends.
func benchNamespace(b *testing.B) hbase.StoreAdmin {
	ns := fmt.Sprintf("bench_%d", time.Now().UnixNano()%1e9)
	st := hbase.WithNamespace(testenv.HBase(b), tables.Namespace, ns)
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		_ = st.DropNamespace(ctx, tables.Namespace)
	})
	return st
}

// reportLatency reports the p50 and p99 of lat, in ms.
func reportLatency(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)].Microseconds())/1000, "p99-ms")
}

// inboxLen is the number of inbox rows of owner.
func inboxLen(b *testing.B, svc *domain.Domain, owner weibo.UserID) int {
	n := 0
	err := svc.Store().Scan(context.Background(), &hbase.Scan{Table: tables.Inbox, Prefix: tables.InboxPrefix(owner)}, func(*hbase.Result) error {
		n++
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return n
}
