package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	gozk "github.com/tsuna/gohbase/zk"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/hbase/remote"
	"github.com/weibohbase/gateway/internal/clustertest"
	"github.com/weibohbase/gateway/weibo/tables"
)

// The faults TestCluster injects: regions moved and split, a region server
// killed, the whole cluster stopped and started, and a gateway killed in
// the middle of fan-outs while a second one takes over.

// nsTables are the rig's tables whose regions the faults act on.
func (r *clusterRig) nsTables() []string {
	var out []string
	for _, s := range tables.Specs() {
		out = append(out, r.ns+":"+s.Name)
	}
	return out
}

// checkPreSplit checks that every region server holds regions of the
// rig's inbox and content tables.
func (r *clusterRig) checkPreSplit(t *testing.T) {
	servers, err := r.remote.RegionServers(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"inbox", "content", "users", "relations", "outbox"} {
		rs, err := r.remote.TableRegions(t.Context(), r.ns+":"+table)
		if err != nil {
			t.Fatal(err)
		}
		on := map[string]int{}
		for _, reg := range rs {
			on[reg.Server]++
		}
		for _, s := range servers {
			if on[s] == 0 {
				t.Errorf("%s: %d regions, none on region server %s (regions per server: %v)", table, len(rs), s, on)
			}
		}
	}
}

func (r *clusterRig) regions(t *testing.T, table string) []remote.RegionLocation {
	t.Helper()
	rs, err := r.remote.TableRegions(t.Context(), r.ns+":"+table)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// waitRegions polls until ok holds for the regions of the rig's tables.
func (r *clusterRig) waitRegions(t *testing.T, what string, ok func(table string, rs []remote.RegionLocation) bool) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		all := true
		for _, table := range r.nsTables() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			rs, err := r.remote.TableRegions(ctx, table)
			cancel()
			if err != nil || !ok(table, rs) {
				all = false
				break
			}
		}
		if all {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s after 3 minutes", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (r *clusterRig) moveAndSplit(t *testing.T, ld *load) {
	servers, err := r.remote.RegionServers(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second) // some load before the fault
	f := &fault{name: "regions of inbox and content moved and split", start: time.Now(), gws: []string{"a"}}
	for _, table := range []string{"inbox", "content"} {
		rs := r.regions(t, table)
		reg := rs[1]
		dest := servers[0]
		for _, s := range servers {
			if s != reg.Server {
				dest = s
				break
			}
		}
		t0 := time.Now()
		if err := r.remote.MoveRegion(t.Context(), reg.EncodedName, dest); err != nil {
			t.Fatalf("move %s region [%x,%x): %v", table, reg.StartKey, reg.EndKey, err)
		}
		f.notes = append(f.notes, fmt.Sprintf("%s [%x,%x) moved in %v", table, reg.StartKey, reg.EndKey, time.Since(t0).Round(time.Millisecond)))

		rs = r.regions(t, table)
		reg = rs[2]
		split := []byte{reg.StartKey[0] + 2}
		t0 = time.Now()
		if err := r.remote.SplitRegion(t.Context(), reg, split); err != nil {
			t.Fatalf("split %s region [%x,%x) at %x: %v", table, reg.StartKey, reg.EndKey, split, err)
		}
		f.notes = append(f.notes, fmt.Sprintf("%s [%x,%x) split at %x in %v", table, reg.StartKey, reg.EndKey, split, time.Since(t0).Round(time.Millisecond)))
	}
	r.waitRegions(t, "the moved and split regions online", func(table string, rs []remote.RegionLocation) bool {
		for _, reg := range rs {
			if reg.Server == "" {
				return false
			}
		}
		return !strings.HasSuffix(table, ":inbox") && !strings.HasSuffix(table, ":content") || len(rs) == 5
	})
	f.end = time.Now()
	r.finish(t, ld, f)
}

func (r *clusterRig) killRegionServer(t *testing.T, ld *load) {
	// The victim holds the most regions of the rig's tables, and not
	// hbase:meta if another will do (the master recovers hbase:meta first).
	metaAddr, err := gozk.NewClient(r.zk, 10*time.Second, nil, slog.New(slog.NewTextHandler(io.Discard, nil))).LocateResource(gozk.Meta.Prepend("/hbase"))
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, table := range r.nsTables() {
		for _, reg := range r.regions(t, strings.TrimPrefix(table, r.ns+":")) {
			count[reg.Server]++
		}
	}
	var cands []string
	for s := range count {
		cands = append(cands, s)
	}
	sort.Slice(cands, func(i, j int) bool {
		mi, mj := clustertest.ServerAddr(cands[i]) == metaAddr, clustertest.ServerAddr(cands[j]) == metaAddr
		if mi != mj {
			return !mi
		}
		return count[cands[i]] > count[cands[j]]
	})
	victim := cands[0]
	pid, err := clustertest.RegionServerPid(clustertest.PidsFile(t), victim)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	f := &fault{name: "kill -9 of a region server", start: time.Now(), gws: []string{"a"}}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r.waitRegions(t, "the killed server's regions reassigned", func(_ string, rs []remote.RegionLocation) bool {
		for _, reg := range rs {
			if reg.Server == "" || reg.Server == victim {
				return false
			}
		}
		return true
	})
	f.end = time.Now()
	f.notes = append(f.notes, fmt.Sprintf("server %s (pid %d) held %d regions of the test's tables; all reassigned %v after the kill",
		clustertest.Port(victim), pid, count[victim], f.end.Sub(f.start).Round(100*time.Millisecond)))
	r.finish(t, ld, f)
}

func (r *clusterRig) stopCluster(t *testing.T, ld *load, a *gwProc) {
	time.Sleep(3 * time.Second)
	f := &fault{name: "whole cluster stopped for 20 s (hbase-down, hbase-up)", start: time.Now(), gws: []string{"a"}}
	down := clustertest.Down(t)
	downDone := time.Now()
	// While HBase is away: /readyz answers from the breaker, fast.
	var slowReady time.Duration
	readyz := map[int]int{}
	for time.Since(downDone) < 20*time.Second {
		t0 := time.Now()
		resp, err := http.Get(a.url + "/readyz")
		d := time.Since(t0)
		if err != nil {
			t.Fatalf("/readyz: %v", err)
		}
		resp.Body.Close()
		readyz[resp.StatusCode]++
		if time.Since(downDone) > 2*clusterCallTimeout {
			// once the breaker has had time to open
			slowReady = max(slowReady, d)
			if resp.StatusCode != http.StatusServiceUnavailable {
				t.Errorf("/readyz = %d %v after HBase stopped, want 503", resp.StatusCode, time.Since(downDone).Round(time.Millisecond))
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	if slowReady > 100*time.Millisecond {
		t.Errorf("/readyz took up to %v while HBase was away, want < 100 ms", slowReady)
	}
	upStart := time.Now()
	up := clustertest.Up(t, r.zk)
	f.end = time.Now()
	// Every request sent while HBase was away failed (finish judges how).
	codes := map[string]int{}
	for _, q := range ld.between(downDone, upStart) {
		if q.res.ok() {
			t.Errorf("%s at +%v succeeded while HBase was away", q.op, q.start.Sub(downDone).Round(time.Millisecond))
		}
		codes[q.res.code]++
	}
	// Serving again within 5 s of HBase being back (hbase-up done).
	var first time.Time
	for {
		if q := ld.firstSuccess(f.end); !q.IsZero() {
			first = q
			break
		}
		if time.Since(f.end) > 60*time.Second {
			t.Fatal("no request succeeded within 60 s of HBase being back")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if d := first.Sub(f.end); d > 5*time.Second {
		t.Errorf("first success %v after HBase was back, want within 5 s", d.Round(time.Millisecond))
	}
	f.notes = append(f.notes, fmt.Sprintf("hbase-down took %v, hbase-up %v; while away %v requests answered %v; /readyz %v, slowest %v; first success %v after hbase-up returned",
		down.Round(100*time.Millisecond), up.Round(100*time.Millisecond), len(ld.between(downDone, upStart)), codes, readyz,
		slowReady.Round(time.Millisecond), first.Sub(f.end).Round(time.Millisecond)))
	r.finish(t, ld, f)
	metrics := scrape(t, a)
	for _, m := range []string{`gateway_store_breaker_state 0`, `kind="breaker_open"`, `gateway_fanout_lag_seconds_count`, `gateway_outbox_depth`} {
		if !strings.Contains(metrics, m) {
			t.Errorf("gateway a's /metrics has no %s", m)
		}
	}
}

func scrape(t *testing.T, g *gwProc) string {
	t.Helper()
	resp, err := http.Get(g.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func (r *clusterRig) killGateway(t *testing.T, ld *load, a *gwProc) {
	b := r.startGateway(t, "b")
	both := []*gwProc{a, b}
	ld.targets.Store(&both)
	time.Sleep(3 * time.Second)
	// The celebrity publishes through a: each fan-out writes celebFans
	// inbox rows, long enough for a to die in the middle of one.
	for i := range 4 {
		if res := r.publish(a, -1, fmt.Sprintf("celebrity post %d", i)); !res.ok() {
			t.Fatalf("celebrity publish: %s", res.code)
		}
	}
	time.Sleep(150 * time.Millisecond)
	f := &fault{name: "gateway instance killed (kill -9) mid-load, another one running", start: time.Now(), gws: []string{"b"}}
	a.kill()
	onlyB := []*gwProc{b}
	ld.targets.Store(&onlyB)
	// The fault is over when every fan-out a held is done: its outbox row
	// is gone (taken over by b and finished).
	var heldByA map[string]bool
	for {
		rows, err := hbase.ScanAll(t.Context(), r.st, &hbase.Scan{Table: tables.Outbox})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, row := range rows {
			owner, _, ok := tables.DecodeLease(row.Value(tables.FamOutbox, tables.ColOutboxLease))
			if heldByA == nil && ok && owner == "a" || heldByA[string(row.Row)] {
				n++
			}
		}
		if heldByA == nil {
			heldByA = map[string]bool{}
			for _, row := range rows {
				if owner, _, ok := tables.DecodeLease(row.Value(tables.FamOutbox, tables.ColOutboxLease)); ok && owner == "a" {
					heldByA[string(row.Row)] = true
				}
			}
		}
		if n == 0 {
			break
		}
		if time.Since(f.start) > 2*time.Minute {
			t.Fatalf("%d fan-outs of the killed instance still in the outbox after 2 minutes", n)
		}
		time.Sleep(100 * time.Millisecond)
	}
	f.end = time.Now()
	f.notes = append(f.notes, fmt.Sprintf("the killed instance held %d fan-outs, all taken over and done %v after the kill (lease %v, sweep %v)",
		len(heldByA), f.end.Sub(f.start).Round(100*time.Millisecond), clusterLease, clusterSweep))
	r.finish(t, ld, f)
	r.checkNoRace(t, f.start, a, b)
}

// checkNoRace reads the fan-out lines of the instances' debug logs and
// checks that no post was worked by two instances at once and that each was
// finished at most once (a post the killed instance was working counts as
// worked by it until the kill).
func (r *clusterRig) checkNoRace(t *testing.T, killed time.Time, gws ...*gwProc) {
	type span struct {
		gw         string
		start, end time.Time
		done       bool
	}
	spans := map[string][]*span{}
	open := map[string]*span{} // gw/post → open span
	for _, g := range gws {
		f, err := os.Open(g.log)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			leased := strings.Contains(line, `msg="fan-out leased"`)
			done := strings.Contains(line, `msg="fan-out done"`)
			kept := strings.Contains(line, `msg="fan-out written; outbox row kept for the repairer"`)
			if !leased && !done && !kept {
				continue
			}
			at, err := time.Parse(time.RFC3339Nano, field(line, "time"))
			if err != nil {
				t.Fatalf("%s: bad time in %q", g.name, line)
			}
			post := field(line, "post")
			key := g.name + "/" + post
			if leased {
				s := &span{gw: g.name, start: at}
				spans[post] = append(spans[post], s)
				open[key] = s
			} else if s := open[key]; s != nil {
				s.end, s.done = at, done
				delete(open, key)
			}
		}
		_ = f.Close()
	}
	for _, s := range open {
		s.end = killed // the killed instance's, or still running (none: the outbox is empty)
	}
	worked, twice := 0, 0
	for post, ss := range spans {
		worked++
		dones := 0
		for i, a := range ss {
			if a.done {
				dones++
			}
			for _, b := range ss[i+1:] {
				if a.gw != b.gw && a.start.Before(b.end) && b.start.Before(a.end) {
					t.Errorf("post %s worked by %s [%v, %v] and %s [%v, %v] at once", post, a.gw,
						a.start.Format("15:04:05.000"), a.end.Format("15:04:05.000"), b.gw, b.start.Format("15:04:05.000"), b.end.Format("15:04:05.000"))
				}
			}
		}
		if dones > 1 {
			twice++
			t.Errorf("post %s: fan-out finished %d times", post, dones)
		}
	}
	t.Logf("fan-out leases: %d posts worked by the two instances, none at once by both, %d finished twice", worked, twice)
}

// field returns the value of key=value in a slog text line.
func field(line, key string) string {
	i := strings.Index(line, " "+key+"=")
	if i < 0 {
		if !strings.HasPrefix(line, key+"=") {
			return ""
		}
		i = -1
	}
	v := line[i+len(key)+2:]
	if strings.HasPrefix(v, `"`) {
		if j := strings.Index(v[1:], `"`); j >= 0 {
			return v[1 : j+1]
		}
	}
	if j := strings.IndexByte(v, ' '); j >= 0 {
		return v[:j]
	}
	return v
}
