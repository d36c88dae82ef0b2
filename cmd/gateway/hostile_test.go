package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weibohbase/gateway/internal/gatewaytest"
	"github.com/weibohbase/gateway/internal/hostile"
	"github.com/weibohbase/gateway/internal/syncbuf"
	"github.com/weibohbase/gateway/seed"
	"github.com/weibohbase/gateway/server"
)

// rssBound is the required bound on the gateway's resident memory
// throughout the hostile suite.
const rssBound = 300 << 20

// procRSS returns a process's resident set size and its peak (VmRSS and
// VmHWM of /proc/PID/status), in bytes.
func procRSS(pid int) (rss, peak int64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || (k != "VmRSS" && k != "VmHWM") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			return 0, 0, err
		}
		if k == "VmRSS" {
			rss = kb << 10
		} else {
			peak = kb << 10
		}
	}
	return rss, peak, sc.Err()
}

// TestBinaryHostileRSS runs the real binary on the demo data (serve --demo,
// default limits) and sends it the hostile suite — every request once,
// checked, then four clients sending all of them and the heaviest allowed
// query for a few seconds — while sampling its resident memory from /proc:
// the peak (VmHWM) must stay under 300 MB, and the log must hold none of
// the secrets the requests carry.
func TestBinaryHostileRSS(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc: resident memory is read from /proc/PID/status")
	}
	bin := buildGateway(t)
	srv := startServe(t, bin, append(os.Environ(), "GATEWAY_JWT_SECRET=hostile-test-secret-hostile-test-secret"),
		"--data", filepath.Join(t.TempDir(), "store"), "--demo")
	base, logs := srv.base, srv.logs
	_, startPeak, err := procRSS(srv.pid)
	if err != nil {
		t.Fatal(err)
	}

	var sampled atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			if rss, _, err := procRSS(srv.pid); err == nil && rss > sampled.Load() {
				sampled.Store(rss)
			}
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()

	env := hostile.Env{UserID: "4", Username: "u1", Password: seed.DefaultPassword, Token: register(t, base, "hostile_poster")}
	cases := hostile.Cases(env)
	client := &http.Client{Timeout: 30 * time.Second}
	for _, c := range cases {
		for range max(c.Repeat, 1) {
			r, err := c.Send(client, base, env)
			if err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
			if r.Took > time.Second {
				t.Errorf("%s: answered in %v", c.Name, r.Took)
			}
			if c.Repeat <= 1 {
				if err := c.Check(r); err != nil {
					t.Errorf("%s: %v", c.Name, err)
				}
			}
		}
	}

	// Four clients at once, each through every case and the heaviest
	// allowed query, for 5 s.
	heavy := hostile.Case{Name: "heaviest allowed", Body: mustJSON(map[string]any{"query": hostile.HeaviestAllowed(env.UserID, server.DefaultMaxQueryNodes)})}
	all := append([]hostile.Case{heavy}, cases...)
	end := time.Now().Add(5 * time.Second)
	var sent atomic.Int64
	var cwg sync.WaitGroup
	for i := range 4 {
		cwg.Add(1)
		go func() {
			defer cwg.Done()
			for j := i; time.Now().Before(end); j++ {
				if _, err := all[j%len(all)].Send(client, base, env); err == nil {
					sent.Add(1)
				}
			}
		}()
	}
	cwg.Wait()
	close(stop)
	wg.Wait()

	_, peak, err := procRSS(srv.pid)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("gateway RSS: %d MiB after start (demo import), %d MiB sampled peak during the suite, VmHWM %d MiB; %d concurrent hostile requests",
		startPeak>>20, sampled.Load()>>20, peak>>20, sent.Load())
	if peak >= rssBound {
		t.Errorf("resident memory peaked at %d MiB, over %d MiB", peak>>20, rssBound>>20)
	}
	for _, secret := range []string{"hunter2-secret", env.Token} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("the log holds %q", secret)
		}
	}
}

func register(t *testing.T, base, name string) string {
	t.Helper()
	return gatewaytest.Register(t, base, name).Token
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// syncBuffer is syncbuf.Buffer (an io.Writer safe for concurrent use).
type syncBuffer = syncbuf.Buffer
