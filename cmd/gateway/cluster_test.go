package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/hbase/remote"
	"github.com/weibohbase/gateway/internal/hbasezk"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestCluster runs the gateway binary against the local cluster of three
// region servers (`HBASE_REGIONSERVERS=3 make hbase-up`, ZooKeeper address in
// GATEWAY_TEST_HBASE_CLUSTER_ZK; make test starts it) under a concurrent
// load of publishes, follows and home-timeline reads sent over HTTP, and
// injects, one after the other, the everyday faults of a cluster:
//
//   - regions of weibo:inbox and weibo:content moved to another region
//     server and split;
//   - kill -9 of a region server (the master reassigns its regions);
//   - the whole cluster stopped (make hbase-down) for 20 s and started
//     again (make hbase-up, same data);
//   - a second gateway instance started, and the first killed with SIGKILL
//     in the middle of fan-outs.
//
// After each fault it asserts that no acknowledged write is lost (posts
// present, follows present, every fan's inbox has every post published
// after the follow was acknowledged, counters equal to a recount), that
// every request that failed failed with UNAVAILABLE (HTTP 503) within the
// call timeout + 1 s, and that the load runs without an error again within
// 30 s of the fault ending; it logs the times, which docs/reliability.md
// records. The time bounds are the requirement; everything else is a hang
// guard.
//
// Counters: a write that failed (UNAVAILABLE) may have been applied in
// part — HBase has no cross-row transactions — so the users it touched may
// hold a counter off by one until the repairer has run (repair grace 6 s
// here); verify waits for that, then asserts every counter
// (countersRepaired).
func TestCluster(t *testing.T) {
	zk := hbasezk.ClusterAddr(t)
	rig := newClusterRig(t, zk)
	a := rig.startGateway(t, "a")
	rig.setup(t, a)
	ld := rig.startLoad(t, []*gwProc{a})

	t.Run("pre-split", func(t *testing.T) { rig.checkPreSplit(t) })
	t.Run("move and split", func(t *testing.T) { rig.moveAndSplit(t, ld) })
	t.Run("kill -9 region server", func(t *testing.T) { rig.killRegionServer(t, ld) })
	t.Run("cluster stopped for 20 s", func(t *testing.T) { rig.stopCluster(t, ld, a) })
	t.Run("gateway killed", func(t *testing.T) { rig.killGateway(t, ld, a) })
	ld.stop()

	t.Log("summary (docs/reliability.md):")
	for _, r := range rig.results {
		t.Logf("  %s", r)
	}
}

// The gateways' settings in this test; the call timeout is the default.
const (
	clusterCallTimeout = remote.DefaultCallTimeout
	clusterLease       = 6 * time.Second
	clusterSweep       = 2 * time.Second
	clusterRepairGrace = 6 * time.Second
	clusterUsers       = 16
	clusterWorkers     = 3
	celebFans          = 3000
)

// clusterRig is the test's fixture: the gateway binary, a namespace of its
// own on the cluster, a store on it for checks and region operations, the
// test users and what the load got acknowledged.
type clusterRig struct {
	zk      string
	ns      string
	bin     string
	logs    string
	remote  *remote.Store
	st      hbase.StoreAdmin // remote, with weibo's tables mapped to ns
	users   []account
	celeb   account
	results []string

	mu        sync.Mutex
	posts     []ackedPost
	follows   []ackedFollow
	dirty     map[int]bool // users whose counters an unacknowledged write may have touched
	celebOnly []ackedPost  // the celebrity's posts (fans checked by count)
}

// account is a registered test user.
type account struct {
	id    tables.UserID
	name  string
	token string
}

// ackedPost is a publish the gateway acknowledged.
type ackedPost struct {
	id      tables.PostID
	author  int // index in users; -1 for the celebrity
	content string
	start   time.Time
}

// ackedFollow is a follow the gateway acknowledged.
type ackedFollow struct {
	from, to int
	end      time.Time
}

func newClusterRig(t *testing.T, zk string) *clusterRig {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rs, err := remote.Open(ctx, zk, remote.WithCallTimeout(30*time.Second), remote.WithLogger(quiet))
	if err != nil {
		t.Fatalf("open the cluster at %s: %v", zk, err)
	}
	t.Cleanup(func() { _ = rs.Close() })
	servers, err := rs.RegionServers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(servers) != 3 {
		t.Fatalf("the cluster has %d live region servers %v, want 3: (re)start it with `HBASE_REGIONSERVERS=3 make hbase-up`", len(servers), servers)
	}
	r := &clusterRig{
		zk: zk, remote: rs, bin: buildGateway(t), logs: t.TempDir(), dirty: map[int]bool{},
		ns: fmt.Sprintf("gwcluster_%d_%x", time.Now().Unix(), rand.Uint32()),
	}
	r.st = hbase.WithNamespace(rs, tables.Namespace, r.ns)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("namespace %s kept for inspection; gateway logs in %s", r.ns, r.logs)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if err := rs.DropNamespace(ctx, r.ns); err != nil {
			t.Logf("DropNamespace(%s): %v", r.ns, err)
		}
	})
	run(t, r.bin, "migrate", "--store", "hbase", "--hbase-zk", zk, "--namespace", r.ns)
	return r
}
