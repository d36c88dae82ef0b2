package main

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestCluster's load of publishes, follows and home-timeline reads, and the
// judging of one fault by the load's requests: how long until full
// service, which requests failed and how.

// request is one request of the load.
type request struct {
	op         string
	gw         string
	start, end time.Time
	res        gqlResult
}

// load sends publishes, follows and home-timeline reads of random users
// from clusterWorkers goroutines, about ten a second each, to the current
// target gateways.
type load struct {
	r       *clusterRig
	targets atomic.Pointer[[]*gwProc]
	paused  atomic.Bool
	quit    chan struct{}
	wg      sync.WaitGroup
	seq     atomic.Int64

	mu   sync.Mutex
	reqs []request
	busy int // requests in flight
}

func (r *clusterRig) startLoad(t *testing.T, gws []*gwProc) *load {
	ld := &load{r: r, quit: make(chan struct{})}
	ld.targets.Store(&gws)
	for w := range clusterWorkers {
		ld.wg.Add(1)
		go ld.work(w)
	}
	t.Cleanup(ld.stop)
	return ld
}

func (ld *load) stop() {
	select {
	case <-ld.quit:
	default:
		close(ld.quit)
	}
	ld.wg.Wait()
}

func (ld *load) work(w int) {
	defer ld.wg.Done()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(w)))
	for {
		select {
		case <-ld.quit:
			return
		case <-time.After(time.Duration(80+rng.IntN(40)) * time.Millisecond):
		}
		if ld.paused.Load() {
			continue
		}
		gws := *ld.targets.Load()
		g := gws[rng.IntN(len(gws))]
		u := rng.IntN(clusterUsers)
		ld.mu.Lock()
		ld.busy++
		ld.mu.Unlock()
		req := request{gw: g.name, start: time.Now()}
		switch x := rng.IntN(10); {
		case x < 3:
			req.op = "publish"
			req.res = ld.r.publish(g, u, fmt.Sprintf("post %d by %d", ld.seq.Add(1), u))
		case x < 5:
			req.op = "follow"
			v := (u + 1 + rng.IntN(clusterUsers-1)) % clusterUsers
			req.res = ld.r.follow(g, u, v)
		default:
			req.op = "timeline"
			req.res = g.gql(ld.r.users[u].token, qTimeline, nil)
		}
		req.end = time.Now()
		ld.mu.Lock()
		ld.reqs = append(ld.reqs, req)
		ld.busy--
		ld.mu.Unlock()
	}
}

// pause stops sending and waits for the requests in flight.
func (ld *load) pause() {
	ld.paused.Store(true)
	for {
		ld.mu.Lock()
		n := ld.busy
		ld.mu.Unlock()
		if n == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (ld *load) resume() { ld.paused.Store(false) }

// between returns the requests that started in [from, to).
func (ld *load) between(from, to time.Time) []request {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	var out []request
	for _, q := range ld.reqs {
		if !q.start.Before(from) && q.start.Before(to) {
			out = append(out, q)
		}
	}
	return out
}

// lastFailure returns the end of the last failed request that started after
// from and went to one of the gateways named, or the zero time.
func (ld *load) lastFailure(from time.Time, gws ...string) time.Time {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	var last time.Time
	for _, q := range ld.reqs {
		if q.start.After(from) && !q.res.ok() && (len(gws) == 0 || slices.Contains(gws, q.gw)) && q.end.After(last) {
			last = q.end
		}
	}
	return last
}

// firstSuccess returns the end of the first request that started after
// from and succeeded, or the zero time.
func (ld *load) firstSuccess(from time.Time) time.Time {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	var first time.Time
	for _, q := range ld.reqs {
		if q.start.After(from) && q.res.ok() && (first.IsZero() || q.end.Before(first)) {
			first = q.end
		}
	}
	return first
}

// --- one fault -----------------------------------------------------------------------

// fault is the record of one injected fault.
type fault struct {
	name       string
	start, end time.Time // injected; over (HBase recovered, or the instance gone)
	gws        []string  // the live gateways whose requests are judged
	notes      []string
}

// settle waits, with the load running, until the load has run 10 s without
// an error, and returns when the last error was (the time of full service);
// it fails t when that is more than 30 s after the fault ended, or when no
// quiet 10 s come within 90 s.
func (r *clusterRig) settle(t *testing.T, ld *load, f *fault) time.Time {
	t.Helper()
	for {
		last := ld.lastFailure(f.start, f.gws...)
		quietSince := f.end
		if last.After(quietSince) {
			quietSince = last
		}
		if time.Since(quietSince) >= 10*time.Second {
			full := f.end
			if last.After(full) {
				full = last
			}
			if d := full.Sub(f.end); d > 30*time.Second {
				t.Errorf("%s: the last error came %v after the fault ended, want full service within 30 s", f.name, d.Round(time.Millisecond))
			}
			return full
		}
		if time.Since(f.end) > 90*time.Second {
			t.Fatalf("%s: errors still 90 s after the fault ended (last at %v)", f.name, last.Sub(f.end).Round(time.Millisecond))
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// judge checks the requests to f.gws that started in [f.start, full]: every
// failure must be UNAVAILABLE with HTTP 503 and Retry-After, answered within
// the call timeout + 1 s. It returns the errors by code.
func (r *clusterRig) judge(t *testing.T, ld *load, f *fault, full time.Time) map[string]int {
	t.Helper()
	codes := map[string]int{}
	bad := 0
	var slowest time.Duration
	for _, q := range ld.between(f.start, full.Add(time.Millisecond)) {
		if !slices.Contains(f.gws, q.gw) || q.res.ok() {
			continue
		}
		codes[q.res.code]++
		d := q.end.Sub(q.start)
		slowest = max(slowest, d)
		if q.res.code != "UNAVAILABLE" || q.res.status != http.StatusServiceUnavailable || q.res.retry == "" || d > clusterCallTimeout+time.Second {
			if bad++; bad <= 10 {
				t.Errorf("%s: %s to %s at +%v failed with %s, HTTP %d, Retry-After %q after %v; want UNAVAILABLE, 503, Retry-After, within %v",
					f.name, q.op, q.gw, q.start.Sub(f.start).Round(time.Millisecond), q.res.code, q.res.status, q.res.retry,
					d.Round(time.Millisecond), clusterCallTimeout+time.Second)
			}
		}
	}
	if bad > 10 {
		t.Errorf("%s: %d failed requests in all broke the rule", f.name, bad)
	}
	f.notes = append(f.notes, fmt.Sprintf("slowest failed request %v", slowest.Round(time.Millisecond)))
	return codes
}

// finish settles the load after fault f, judges its errors, pauses the load,
// checks that no acknowledged write is lost, records the result line and
// resumes the load.
func (r *clusterRig) finish(t *testing.T, ld *load, f *fault) {
	t.Helper()
	full := r.settle(t, ld, f)
	codes := r.judge(t, ld, f, full)
	ld.pause()
	defer ld.resume()
	lost := r.verify(t, f.name)
	total := 0
	for _, n := range codes {
		total += n
	}
	reqs := len(ld.between(f.start, full))
	line := fmt.Sprintf("%s: %d of %d requests failed %v; full service %v after the fault ended (%v after it began); acknowledged writes lost: %d; %s",
		f.name, total, reqs, codes, full.Sub(f.end).Round(100*time.Millisecond), full.Sub(f.start).Round(100*time.Millisecond),
		lost, strings.Join(f.notes, "; "))
	t.Log(line)
	r.results = append(r.results, line)
}
