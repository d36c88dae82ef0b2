package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/timeline"
)

// serveClusterFlags are serve's flags for running against an HBase cluster,
// several instances side by side: the circuit breaker and the fan-out's
// lease and sweep (docs/operations.md).
type serveClusterFlags struct {
	breaker     bool
	lease       time.Duration
	sweep       time.Duration
	instance    string
	fanWorkers  int
	fanBatch    int
	breakerOpen time.Duration
	postCache   int
	postTTL     time.Duration
	liveQueue   int
}

// maxFanoutBatch bounds --fanout-batch: one PutMany of that many inbox rows
// is one multi-request per region server.
const maxFanoutBatch = 20_000

// postCacheByStore is --post-cache's default: the size follows the store
// (postCacheSize). On HBase the post cache spares the RegionServer most of
// a page's content-row Gets; on the embedded store its row cache already
// answers them from memory, and a second copy of the posts in the Go heap
// costs the collector more than it saves (docs/benchmarks.md, "The floor").
const postCacheByStore = -1

// maxLiveQueue bounds --live-queue: a subscription's queue holds events of
// up to a few kB each (a post's text), so 10,000 is tens of MB per client.
const maxLiveQueue = 10_000

func (f *serveClusterFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.breaker, "hbase-breaker", envBool("GATEWAY_HBASE_BREAKER", true),
		"hbase store: fail calls fast with UNAVAILABLE while HBase does not answer, and probe it back (env GATEWAY_HBASE_BREAKER)")
	fs.DurationVar(&f.breakerOpen, "hbase-breaker-open", envDuration("GATEWAY_HBASE_BREAKER_OPEN", hbase.DefaultBreakerOpenFor),
		"hbase store: how long the breaker stays open before it probes HBase (env GATEWAY_HBASE_BREAKER_OPEN)")
	fs.DurationVar(&f.lease, "fanout-lease", envDuration("GATEWAY_FANOUT_LEASE", 30*time.Second),
		"lease of a fan-out in its outbox row: a dead instance's posts are taken over this long after it stopped renewing (env GATEWAY_FANOUT_LEASE)")
	fs.DurationVar(&f.sweep, "outbox-sweep", envDuration("GATEWAY_OUTBOX_SWEEP", 30*time.Second),
		"how often the outbox is swept for fan-outs no instance finished; 0 disables (env GATEWAY_OUTBOX_SWEEP)")
	fs.IntVar(&f.fanWorkers, "fanout-workers", envInt("GATEWAY_FANOUT_WORKERS", 4), "fan-out workers (env GATEWAY_FANOUT_WORKERS)")
	fs.IntVar(&f.fanBatch, "fanout-batch", envInt("GATEWAY_FANOUT_BATCH", 500),
		"inbox rows a fan-out writes (and settles) per batch, 1 to 20000; larger batches mean fewer round trips to HBase (env GATEWAY_FANOUT_BATCH)")
	fs.IntVar(&f.postCache, "post-cache", envInt("GATEWAY_POST_CACHE", postCacheByStore),
		"posts the post cache of home-timeline pages holds; 0 turns it off; -1: by store, "+strconv.Itoa(feed.DefaultPostCacheSize)+
			" on the hbase store and off on the embedded store, whose row cache answers a page's content rows for less (env GATEWAY_POST_CACHE)")
	fs.DurationVar(&f.postTTL, "post-cache-ttl", envDuration("GATEWAY_POST_CACHE_TTL", feed.DefaultPostCacheTTL),
		"how long a cached post serves: the longest another instance shows a deleted post (env GATEWAY_POST_CACHE_TTL)")
	fs.IntVar(&f.liveQueue, "live-queue", envInt("GATEWAY_LIVE_QUEUE", timeline.DefaultEventQueue),
		"events one homeTimelineEvents subscription holds for a client that has not taken them, 1 to 10000; past that the client gets SLOW_CONSUMER (env GATEWAY_LIVE_QUEUE)")
	fs.StringVar(&f.instance, "instance", env("GATEWAY_INSTANCE", ""),
		"this instance's name in fan-out leases (env GATEWAY_INSTANCE; default HOST:PID:RANDOM)")
}

// guard puts the hbase store behind the circuit breaker (unless
// --hbase-breaker=false); the embedded store is returned as it is.
func (f *serveClusterFlags) guard(st hbase.StoreAdmin, log *slog.Logger) hbase.StoreAdmin {
	if !f.breaker || st.Backend() != hbase.BackendHBase {
		return st
	}
	return hbase.WithBreaker(st, hbase.BreakerLogger(log), hbase.BreakerOpenFor(f.breakerOpen))
}

// err reports a flag value out of its range.
func (f *serveClusterFlags) err() error {
	if f.fanWorkers < 1 {
		return fmt.Errorf("--fanout-workers %d: want at least 1", f.fanWorkers)
	}
	if f.fanBatch < 1 || f.fanBatch > maxFanoutBatch {
		return fmt.Errorf("--fanout-batch %d: want 1 to %d", f.fanBatch, maxFanoutBatch)
	}
	if f.liveQueue < 1 || f.liveQueue > maxLiveQueue {
		return fmt.Errorf("--live-queue %d: want 1 to %d", f.liveQueue, maxLiveQueue)
	}
	if f.postCache < postCacheByStore || f.postCache != 0 && f.postTTL <= 0 {
		return fmt.Errorf("--post-cache %d, --post-cache-ttl %s: want a size of 0 (off) or more (-1: by store), and a positive TTL", f.postCache, f.postTTL)
	}
	return nil
}

// postCacheSize is the post cache's size on a store of backend: --post-cache,
// or for postCacheByStore feed.DefaultPostCacheSize on HBase and 0 (off) on
// the embedded store.
func (f *serveClusterFlags) postCacheSize(backend string) int {
	switch {
	case f.postCache != postCacheByStore:
		return f.postCache
	case backend == hbase.BackendHBase:
		return feed.DefaultPostCacheSize
	default:
		return 0
	}
}

// serviceOptions are the domain.Domain options of these flags, for a store
// of backend.
func (f *serveClusterFlags) serviceOptions(backend string) []domain.Option {
	opts := []domain.Option{domain.WithFanoutLease(f.lease), domain.WithOutboxSweep(f.sweep), domain.WithFanoutWorkers(f.fanWorkers),
		domain.WithFanoutBatch(f.fanBatch), domain.WithPostCache(f.postCacheSize(backend), f.postTTL), domain.WithEventQueue(f.liveQueue)}
	if f.instance != "" {
		opts = append(opts, domain.WithInstanceName(f.instance))
	}
	return opts
}

// envDuration returns the duration in the environment variable key, or def
// when it is unset; a value that is not a Go duration ends the program.
func envDuration(key string, def time.Duration) time.Duration {
	v, ok := os.LookupEnv(key)
	if !ok {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gateway: %s=%q: want a duration such as 5s or 500ms\n", key, v)
		os.Exit(2)
	}
	return d
}

// envBool returns the boolean in the environment variable key, or def when
// it is unset; a value strconv.ParseBool refuses ends the program.
func envBool(key string, def bool) bool {
	v, ok := os.LookupEnv(key)
	if !ok {
		return def
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gateway: %s=%q: want true or false\n", key, v)
		os.Exit(2)
	}
	return b
}

// envInt returns the integer in the environment variable key, or def when
// it is unset; a value that is not an integer ends the program.
func envInt(key string, def int) int {
	v, ok := os.LookupEnv(key)
	if !ok {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gateway: %s=%q: want an integer\n", key, v)
		os.Exit(2)
	}
	return n
}
