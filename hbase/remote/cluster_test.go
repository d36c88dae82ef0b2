package remote

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	gozk "github.com/tsuna/gohbase/zk"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/clustertest"
	"github.com/weibohbase/gateway/internal/hbasezk"
	"github.com/weibohbase/gateway/internal/syncbuf"
)

// The region-fault test runs against a local cluster of at least three region
// servers, `HBASE_REGIONSERVERS=3 make hbase-up`, whose ZooKeeper address
// arrives in GATEWAY_TEST_HBASE_CLUSTER_ZK; it skips without it (fails in
// CI: internal/hbasezk.ClusterAddr). It kills a
// region server (SIGKILL) whose pid it finds in the file named by
// GATEWAY_TEST_HBASE_CLUSTER_PIDS (default: .hbase/regionservers.pids of the
// repository). Afterwards the cluster has one region server less: the next
// `HBASE_REGIONSERVERS=3 make hbase-up` starts a new one.

// TestClusterRegionFaults writes rows without pause into a pre-split table
// while it moves a region to another region server, splits a region and kills
// a region server; after each fault it reads every acknowledged row back.
// It asserts that no acknowledged write is lost, that each fault really
// happened (the region is on its new server, the daughters replaced their
// parent, the killed server's regions are on live servers) and that writes
// are acknowledged again in every affected region, and logs how long each
// recovery took. The only time limits are generous hang guards.
func TestClusterRegionFaults(t *testing.T) {
	zk := hbasezk.ClusterAddr(t)
	pidsFile := clustertest.PidsFile(t)

	// gohbase logs every connection it loses, many lines per fault: they are
	// kept and shown only if the test fails.
	glog := &lockedBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("gohbase's log:\n%s", glog.String())
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// Without a call timeout: this test measures how long gohbase takes to
	// get each write through, with the writer's own one-minute bound.
	st, err := Open(ctx, zk, WithCallTimeout(0), WithLogger(slog.New(slog.NewTextHandler(glog, &slog.HandlerOptions{Level: slog.LevelWarn}))))
	if err != nil {
		t.Fatalf("Open(%s): %v", zk, err)
	}
	t.Cleanup(func() { _ = st.Close() })
	hs := st

	servers, err := hs.RegionServers(ctx)
	if err != nil {
		t.Fatalf("RegionServers: %v", err)
	}
	if len(servers) < 3 {
		t.Fatalf("the cluster has %d live region servers %v, want 3: (re)start it with `HBASE_REGIONSERVERS=3 make hbase-up`", len(servers), servers)
	}
	t.Logf("region servers: %v", servers)

	// A table pre-split into 8 regions at 0x20, 0x40, … 0xe0; rows start with a
	// random byte, so every region gets writes.
	ns := uniqueNamespace(t, st)
	table := ns + ":faults"
	var splits [][]byte
	for b := 0x20; b < 0x100; b += 0x20 {
		splits = append(splits, []byte{byte(b)})
	}
	if err := st.EnsureTables(tctx(t), ns, []hbase.TableSpec{{Name: "faults", Families: []hbase.FamilySpec{{Name: "f"}}, SplitKeys: splits}}); err != nil {
		t.Fatalf("EnsureTables: %v", err)
	}
	regions := clusterRegions(t, hs, table)
	if len(regions) != len(splits)+1 {
		t.Fatalf("%s has %d regions, want %d", table, len(regions), len(splits)+1)
	}
	logRegions(t, "after create", regions)

	w := startClusterWriter(t, st, table, 4)
	w.waitAcked(t, 200)
	verifyAcked(t, st, w, "baseline")

	t.Run("move", func(t *testing.T) {
		regions := clusterRegions(t, hs, table)
		region := regions[len(regions)/2]
		var dest string
		for _, s := range servers {
			if s != region.Server {
				dest = s
				break
			}
		}
		t0 := time.Now()
		if err := hs.MoveRegion(tctx(t), region.EncodedName, dest); err != nil {
			t.Fatalf("MoveRegion: %v", err)
		}
		moved := time.Since(t0)
		got := waitRegions(t, hs, table, "region "+region.EncodedName+" on "+dest, func(rs []RegionLocation) bool {
			r, ok := findRegion(rs, region.EncodedName)
			return ok && r.Server == dest
		})
		logRegions(t, "after move", got)
		acked := w.waitAckedIn(t, t0, region)
		verified := verifyAcked(t, st, w, "after move")
		t.Logf("move of %s from %s to %s: MoveRegion returned after %v; first write acknowledged in the region after %v; all %d acknowledged rows read back after %v; %s",
			region.EncodedName, region.Server, dest, moved.Round(time.Millisecond), acked.Round(time.Millisecond),
			w.count(), verified.Round(time.Millisecond), w.phaseStats(t0))
	})

	t.Run("split", func(t *testing.T) {
		regions := clusterRegions(t, hs, table)
		region := regions[1] // [0x20, 0x40)
		splitRow := []byte{region.StartKey[0] + 0x10}
		t0 := time.Now()
		if err := hs.SplitRegion(tctx(t), region, splitRow); err != nil {
			t.Fatalf("SplitRegion: %v", err)
		}
		split := time.Since(t0)
		got := waitRegions(t, hs, table, fmt.Sprintf("daughters of %s at %x", region.EncodedName, splitRow), func(rs []RegionLocation) bool {
			_, parent := findRegion(rs, region.EncodedName)
			a, okA := regionAt(rs, region.StartKey)
			b, okB := regionAt(rs, splitRow)
			return !parent && okA && okB && bytes.Equal(a.EndKey, splitRow) && bytes.Equal(b.EndKey, region.EndKey) &&
				a.Server != "" && b.Server != ""
		})
		logRegions(t, "after split", got)
		if len(got) != len(regions)+1 {
			t.Errorf("after the split %s has %d regions, want %d", table, len(got), len(regions)+1)
		}
		a, _ := regionAt(got, region.StartKey)
		b, _ := regionAt(got, splitRow)
		ackedA := w.waitAckedIn(t, t0, a)
		ackedB := w.waitAckedIn(t, t0, b)
		verified := verifyAcked(t, st, w, "after split")
		t.Logf("split of %s at %x: SplitRegion (procedure finished) returned after %v; first writes acknowledged in the daughters after %v and %v; all %d acknowledged rows read back after %v; %s",
			region.EncodedName, splitRow, split.Round(time.Millisecond), ackedA.Round(time.Millisecond), ackedB.Round(time.Millisecond),
			w.count(), verified.Round(time.Millisecond), w.phaseStats(t0))
	})

	t.Run("kill -9 region server", func(t *testing.T) {
		regions := clusterRegions(t, hs, table)
		victim := pickVictim(t, zk, regions)
		pid, err := clustertest.RegionServerPid(pidsFile, victim)
		if err != nil {
			t.Fatalf("pid of region server %s: %v", victim, err)
		}
		var hosted []RegionLocation
		for _, r := range regions {
			if r.Server == victim {
				hosted = append(hosted, r)
			}
		}
		t.Logf("killing region server %s (pid %d), which holds %d of the %d regions of %s", victim, pid, len(hosted), len(regions), table)
		t0 := time.Now()
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatalf("kill -9 %d: %v", pid, err)
		}

		// The master's view, watched meanwhile: when it declares the server
		// dead and when hbase:meta has every region on a live server.
		var dead, reassigned time.Duration
		var got []RegionLocation
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			deadline := time.Now().Add(3 * time.Minute)
			for time.Now().Before(deadline) && (dead == 0 || reassigned == 0) {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				if dead == 0 {
					if live, err := hs.RegionServers(ctx); err == nil && !contains(live, victim) {
						dead = time.Since(t0)
					}
				}
				if rs, err := hs.TableRegions(ctx, table); err == nil && allOnLiveServers(rs, victim) {
					got, reassigned = rs, time.Since(t0)
				}
				cancel()
				time.Sleep(100 * time.Millisecond)
			}
		}()

		// Reads right away: they wait (gohbase retries) until the regions are back.
		readBack := verifyAcked(t, st, w, "right after kill -9")
		<-watched
		if dead == 0 || reassigned == 0 {
			t.Fatalf("after 3 minutes: declared dead after %v, regions reassigned after %v (0: not yet)", dead, reassigned)
		}
		logRegions(t, "after kill", got)
		var ackedIn []string
		for _, h := range hosted {
			r, ok := findRegion(got, h.EncodedName)
			if !ok {
				t.Errorf("region %s of the killed server is gone from hbase:meta", h.EncodedName)
				continue
			}
			ackedIn = append(ackedIn, w.waitAckedIn(t, t0, r).Round(time.Millisecond).String())
		}
		verified := verifyAcked(t, st, w, "after kill -9")
		t.Logf("kill -9 of %s: declared dead after %v; its %d regions reassigned after %v; first writes acknowledged in them after %s; the rows acknowledged before the kill read back after %v; all %d acknowledged rows read back again in %v; %s",
			victim, dead.Round(time.Millisecond), len(hosted), reassigned.Round(time.Millisecond), strings.Join(ackedIn, ", "),
			readBack.Round(time.Millisecond), w.count(), verified.Round(time.Millisecond), w.phaseStats(t0))
	})

	w.stop()
	verifyAcked(t, st, w, "final")
	t.Logf("writer: %s", w.phaseStats(time.Time{}))
	t.Logf("gohbase logged %d warnings and errors (shown if the test fails)", strings.Count(glog.String(), "\n"))
}

// lockedBuffer is syncbuf.Buffer (an io.Writer safe for concurrent use).
type lockedBuffer = syncbuf.Buffer

// --- the writer ------------------------------------------------------------------

// ackedRow is a row the store acknowledged.
type ackedRow struct {
	value []byte
	sent  time.Time // when the Put started
	at    time.Time // when it was acknowledged
}

// clusterWriter puts rows into a table from several goroutines until stopped,
// remembering every acknowledged row. Each Put may wait up to a minute
// (gohbase retries while a region moves or is reassigned); a failed Put is
// counted, not remembered (it may or may not have been applied).
type clusterWriter struct {
	st     hbase.Store
	table  string
	seq    atomic.Uint64
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	acked  map[string]ackedRow
	errors []errorAt
}

// errorAt is a failed Put.
type errorAt struct {
	at  time.Time
	err error
}

func startClusterWriter(t *testing.T, st hbase.Store, table string, workers int) *clusterWriter {
	ctx, cancel := context.WithCancel(context.Background())
	w := &clusterWriter{st: st, table: table, cancel: cancel, acked: map[string]ackedRow{}}
	for i := 0; i < workers; i++ {
		w.wg.Add(1)
		go w.run(ctx, rand.New(rand.NewPCG(rand.Uint64(), uint64(i))))
	}
	t.Cleanup(w.stop)
	return w
}

func (w *clusterWriter) run(ctx context.Context, rng *rand.Rand) {
	defer w.wg.Done()
	for ctx.Err() == nil {
		n := w.seq.Add(1)
		row := append([]byte{byte(rng.IntN(256))}, fmt.Sprintf("w%08d", n)...)
		value := []byte(strconv.FormatUint(n, 10))
		pctx, cancel := context.WithTimeout(ctx, time.Minute)
		sent := time.Now()
		err := w.st.Put(pctx, &hbase.Put{Table: w.table, Row: row, Values: hbase.Values{"f": {"v": value}}})
		cancel()
		w.mu.Lock()
		switch {
		case err == nil:
			w.acked[string(row)] = ackedRow{value: value, sent: sent, at: time.Now()}
		case ctx.Err() == nil:
			w.errors = append(w.errors, errorAt{at: time.Now(), err: err})
		}
		w.mu.Unlock()
		// About 100 writes a second per worker: a steady load that leaves the
		// two cores of the test machine to HBase.
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (w *clusterWriter) stop() {
	w.cancel()
	w.wg.Wait()
}

func (w *clusterWriter) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.acked)
}

// snapshot returns a copy of the acknowledged rows.
func (w *clusterWriter) snapshot() map[string]ackedRow {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]ackedRow, len(w.acked))
	for k, v := range w.acked {
		out[k] = v
	}
	return out
}

// waitAcked waits until n rows are acknowledged.
func (w *clusterWriter) waitAcked(t *testing.T, n int) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%d acknowledged writes", n), func(context.Context) (bool, error) {
		return w.count() >= n, nil
	})
}

// waitAckedIn waits until a Put sent after t0 into region's key range is
// acknowledged and returns how long after t0 that was.
func (w *clusterWriter) waitAckedIn(t *testing.T, t0 time.Time, region RegionLocation) time.Duration {
	t.Helper()
	var first time.Duration
	waitFor(t, "a write acknowledged in region "+region.EncodedName, func(context.Context) (bool, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		found := false
		for row, a := range w.acked {
			if a.sent.After(t0) && region.Contains([]byte(row)) {
				if d := a.at.Sub(t0); !found || d < first {
					first, found = d, true
				}
			}
		}
		return found, nil
	})
	return first
}

// phaseStats summarizes the writes that ended since t0: acknowledged, failed
// (by message) and the longest acknowledged Put.
func (w *clusterWriter) phaseStats(t0 time.Time) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var n int
	var longest time.Duration
	for _, a := range w.acked {
		if a.at.After(t0) {
			n++
			longest = max(longest, a.at.Sub(a.sent))
		}
	}
	kinds := map[string]int{}
	for _, e := range w.errors {
		if e.at.After(t0) {
			msg := e.err.Error()
			if len(msg) > 80 {
				msg = msg[:80] + "…"
			}
			kinds[msg]++
		}
	}
	return fmt.Sprintf("writes since: %d acknowledged (longest %v), %d failed %v", n, longest.Round(time.Millisecond), len(kinds), kinds)
}

// verifyAcked reads back every row acknowledged so far (in batches of 500,
// while the writer goes on) and fails t for each missing or different one. It
// returns how long the read took.
func verifyAcked(t *testing.T, st hbase.Store, w *clusterWriter, when string) time.Duration {
	t.Helper()
	t0 := time.Now()
	rows := w.snapshot()
	keys := make([]string, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	lost := 0
	for i := 0; i < len(keys); i += 500 {
		batch := keys[i:min(i+500, len(keys))]
		gets := make([]*hbase.Get, len(batch))
		for j, k := range batch {
			gets[j] = &hbase.Get{Table: w.table, Row: []byte(k)}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		res, err := st.GetMany(ctx, gets)
		cancel()
		if err != nil {
			t.Fatalf("%s: reading back rows %d–%d of %d: %v", when, i, i+len(batch), len(keys), err)
		}
		for j, r := range res {
			want := rows[batch[j]].value
			if got := r.Value("f", "v"); !bytes.Equal(got, want) {
				lost++
				if lost <= 10 {
					t.Errorf("%s: row %x (acknowledged at %s) reads %q, want %q", when, batch[j],
						rows[batch[j]].at.Format(time.RFC3339Nano), got, want)
				}
			}
		}
	}
	if lost > 0 {
		t.Errorf("%s: %d of %d acknowledged rows lost", when, lost, len(keys))
	}
	d := time.Since(t0)
	t.Logf("%s: %d acknowledged rows read back in %v, %d lost", when, len(keys), d.Round(time.Millisecond), lost)
	return d
}

// --- regions and servers ---------------------------------------------------------

func clusterRegions(t *testing.T, hs *Store, table string) []RegionLocation {
	t.Helper()
	rs, err := hs.TableRegions(tctx(t), table)
	if err != nil {
		t.Fatalf("TableRegions(%s): %v", table, err)
	}
	return rs
}

// waitRegions polls hbase:meta until ok holds for table's regions and returns them.
func waitRegions(t *testing.T, hs *Store, table, what string, ok func([]RegionLocation) bool) []RegionLocation {
	t.Helper()
	var rs []RegionLocation
	waitFor(t, what, func(ctx context.Context) (bool, error) {
		var err error
		rs, err = hs.TableRegions(ctx, table)
		return err == nil && ok(rs), nil
	})
	return rs
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// allOnLiveServers reports whether every region has a server and none is dead.
func allOnLiveServers(rs []RegionLocation, dead string) bool {
	for _, r := range rs {
		if r.Server == "" || r.Server == dead {
			return false
		}
	}
	return true
}

func findRegion(rs []RegionLocation, encoded string) (RegionLocation, bool) {
	for _, r := range rs {
		if r.EncodedName == encoded {
			return r, true
		}
	}
	return RegionLocation{}, false
}

// regionAt returns the region starting exactly at start.
func regionAt(rs []RegionLocation, start []byte) (RegionLocation, bool) {
	for _, r := range rs {
		if bytes.Equal(r.StartKey, start) {
			return r, true
		}
	}
	return RegionLocation{}, false
}

func logRegions(t *testing.T, when string, rs []RegionLocation) {
	t.Helper()
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, " [%x,%x)@%s", r.StartKey, r.EndKey, clustertest.Port(r.Server))
	}
	t.Logf("regions %s:%s", when, b.String())
}

// pickVictim returns the region server holding the most regions of the table,
// preferring one that does not hold hbase:meta (whose loss the master handles
// first, before any table region).
func pickVictim(t *testing.T, zk string, regions []RegionLocation) string {
	t.Helper()
	metaAddr, err := gozk.NewClient(zk, 10*time.Second, nil, slog.Default()).LocateResource(gozk.Meta.Prepend("/hbase"))
	if err != nil {
		t.Fatalf("locating hbase:meta in ZooKeeper: %v", err)
	}
	count := map[string]int{}
	for _, r := range regions {
		if r.Server != "" {
			count[r.Server]++
		}
	}
	best, bestMeta := "", ""
	for s, n := range count {
		if clustertest.ServerAddr(s) == metaAddr {
			if bestMeta == "" || n > count[bestMeta] {
				bestMeta = s
			}
			continue
		}
		if best == "" || n > count[best] || (n == count[best] && s < best) {
			best = s
		}
	}
	if best == "" {
		best = bestMeta
	}
	if best == "" {
		t.Fatal("no region of the table is assigned")
	}
	return best
}

// --- helpers -----------------------------------------------------------------------

// waitFor polls cond every 100 ms until it holds; it fails t after 3 minutes
// (a hang guard, not a timing assertion) or on cond's error.
func waitFor(t *testing.T, what string, cond func(context.Context) (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		ok, err := cond(ctx)
		cancel()
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s after 3 minutes", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
