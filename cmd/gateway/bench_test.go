package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase/remote"
	"github.com/weibohbase/gateway/internal/gatewaytest"
	"github.com/weibohbase/gateway/internal/hbasezk"
	"github.com/weibohbase/gateway/internal/hostile"
	"github.com/weibohbase/gateway/seed"
	"github.com/weibohbase/gateway/server"
)

// BenchmarkHostileLoad measures the request limits' acceptance scenario on
// the real binary serving the demo data: 4 clients each send, in a loop,
// the heaviest refused request of the hostile suite (the slowest to refuse,
// measured first) and the heaviest allowed query (40,202 nodes), while a
// logged-in reader asks for its home timeline (20 posts with authors) every
// 10 ms; it reports the reader's p50, p99 and max latency, and how the
// attackers' requests were answered. Sub-benchmarks: the default limits
// (the attackers share one address and so one budget), and no budget at all
// (--rate-limit 0: only the heavy-operation slots protect the reader); and
// the reader alone ("idle"), the baseline. On the real HBase too when
// GATEWAY_TEST_HBASE_ZK is set.
//
//	BENCH=HostileLoad make bench   (or: go test ./cmd/gateway -run '^$' -bench HostileLoad -benchtime 1x)
//
// GATEWAY_BENCH_SECONDS sets how long each run lasts (default 20).
func BenchmarkHostileLoad(b *testing.B) {
	seconds := 20
	if s := os.Getenv("GATEWAY_BENCH_SECONDS"); s != "" {
		fmt.Sscan(s, &seconds)
	}
	stores := []struct {
		name string
		args func(b *testing.B) []string
	}{
		{"embedded", func(b *testing.B) []string { return []string{"--data", filepath.Join(b.TempDir(), "store")} }},
		{"hbase", func(b *testing.B) []string {
			zk := hbasezk.Addr(b)
			ns := fmt.Sprintf("bench_%d", rand.Uint32())
			b.Cleanup(func() { dropNamespace(b, zk, ns) })
			return []string{"--store", "hbase", "--hbase-zk", zk, "--migrate", "--namespace", ns}
		}},
	}
	for _, st := range stores {
		b.Run(st.name, func(b *testing.B) {
			args := st.args(b)
			bin := buildGatewayB(b)
			for _, mode := range []struct {
				name      string
				flags     []string
				attackers int
			}{{"idle", nil, 0}, {"defaults", nil, 4}, {"no_budget", []string{"--rate-limit", "0"}, 4}} {
				b.Run(mode.name, func(b *testing.B) {
					base := startServeB(b, bin, append(append([]string{"--demo"}, args...), mode.flags...))
					for b.Loop() {
						hostileLoad(b, base, mode.attackers, time.Duration(seconds)*time.Second)
					}
				})
			}
		})
	}
}

func hostileLoad(b *testing.B, base string, attackers int, d time.Duration) {
	client := &http.Client{Timeout: time.Minute}
	env := hostile.Env{UserID: "4", Username: "u1", Password: seed.DefaultPassword}
	// The slowest refusal, from a pass over every refused case (throttled
	// logins aside: they are refused by the throttle's state, not their size).
	var refused hostile.Case
	var slowest time.Duration
	for _, c := range hostile.Cases(env) {
		if c.Auth || c.Repeat > 1 || c.Code == "" || c.Code == "BAD_USER_INPUT" {
			continue
		}
		var took time.Duration
		for range 3 {
			r, err := c.Send(client, base, env)
			if err != nil {
				b.Fatal(err)
			}
			took += r.Took
		}
		if took > slowest {
			refused, slowest = c, took
		}
	}
	maxNodes := int64(server.DefaultMaxQueryNodes)
	if s := os.Getenv("GATEWAY_MAX_QUERY_NODES"); s != "" {
		fmt.Sscan(s, &maxNodes)
	}
	heavy := hostile.Case{Body: mustJSON(map[string]any{"query": hostile.HeaviestAllowed(env.UserID, maxNodes)})}
	if r, err := heavy.Send(client, base, env); err != nil || r.Code != "" && r.Code != "RATE_LIMITED" {
		b.Fatalf("heaviest allowed query: %v %s", err, r.Body)
	}
	reader := hostile.Env{Token: loginB(b, base, "u4")}
	light := hostile.Case{Body: []byte(`{"query": "{ homeTimeline(first: 20) { edges { node { id content createdAt author { username } } } } }"}`), Auth: true}

	var answered, limited, heavyDone atomic.Int64
	end := time.Now().Add(d)
	var wg sync.WaitGroup
	for i := range attackers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := i; time.Now().Before(end); j++ {
				c := refused
				if j%2 == 1 {
					c = heavy
				}
				r, err := c.Send(client, base, env)
				if err != nil {
					continue
				}
				answered.Add(1)
				switch {
				case r.Status == http.StatusTooManyRequests:
					limited.Add(1)
				case j%2 == 1 && r.Code == "":
					heavyDone.Add(1)
				}
			}
		}()
	}
	var lat []time.Duration
	for time.Now().Before(end) {
		r, err := light.Send(client, base, reader)
		if err != nil || r.Status != 200 || r.Code != "" {
			b.Fatalf("light query: %v HTTP %d %s", err, r.Status, r.Body)
		}
		lat = append(lat, r.Took)
		time.Sleep(10 * time.Millisecond)
	}
	wg.Wait()
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(lat[len(lat)/2]), "light-p50-ms")
	b.ReportMetric(ms(lat[len(lat)*99/100]), "light-p99-ms")
	b.ReportMetric(ms(lat[len(lat)-1]), "light-max-ms")
	b.ReportMetric(float64(len(lat)), "light-requests")
	b.ReportMetric(float64(answered.Load()), "attacks")
	b.ReportMetric(float64(heavyDone.Load()), "heavy-answered")
	b.ReportMetric(float64(limited.Load()), "attacks-429")
	b.Logf("heaviest refused: %q (%v to refuse)", refused.Name, slowest/3)
}

func buildGatewayB(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "gateway")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startServeB runs `gateway serve` with args until the benchmark ends and
// returns its URL once it is ready.
func startServeB(b *testing.B, bin string, args []string) string {
	b.Helper()
	l := freeAddrB(b)
	cmd := exec.Command(bin, append([]string{"serve", "--addr", l}, args...)...)
	cmd.Env = append(os.Environ(), "GATEWAY_JWT_SECRET=bench-secret-bench-secret-bench-secret")
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	base := "http://" + l
	deadline := time.Now().Add(3 * time.Minute)
	for {
		if resp, err := http.Get(base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return base
			}
		}
		if time.Now().After(deadline) {
			b.Fatalf("not ready:\n%s", logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func freeAddrB(b *testing.B) string {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func loginB(b *testing.B, base, user string) string {
	b.Helper()
	return gatewaytest.Login(b, base, user, seed.DefaultPassword)
}

// dropNamespace removes a benchmark's namespace from the shared HBase.
func dropNamespace(b *testing.B, zk, ns string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	st, err := remote.Open(ctx, zk)
	if err != nil {
		b.Logf("drop namespace %s: %v", ns, err)
		return
	}
	defer st.Close()
	if err := st.DropNamespace(ctx, ns); err != nil {
		b.Logf("drop namespace %s: %v", ns, err)
	}
}
