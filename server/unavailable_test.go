package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/hbase/hbasetest"
	"github.com/weibohbase/gateway/internal/testenv"
)

// rawPost sends one GraphQL request and returns the HTTP status, the
// Retry-After header, the decoded response and how long it took; unlike
// gw.post it accepts any status.
func (g *gw) rawPost(token, query string, vars map[string]any) (int, string, gqlResponse, time.Duration) {
	g.t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, g.url+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		g.t.Fatalf("POST /graphql: %v", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	took := time.Since(start)
	var out gqlResponse
	if err := json.Unmarshal(raw, &out); err != nil {
		g.t.Fatalf("decode response (%d): %v: %s", resp.StatusCode, err, raw)
	}
	return resp.StatusCode, resp.Header.Get("Retry-After"), out, took
}

// readyz returns /readyz's status and how long it took.
func (g *gw) readyz() (int, time.Duration) {
	g.t.Helper()
	start := time.Now()
	resp, err := http.Get(g.url + "/readyz")
	if err != nil {
		g.t.Fatalf("GET /readyz: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode, time.Since(start)
}

// TestStoreUnavailable takes the store away under a gateway with a circuit
// breaker (the embedded store behind hbasetest.Faults, whose calls then wait
// and fail as HBase's do at their call timeout): requests answer
// UNAVAILABLE with HTTP 503 and Retry-After, the first ones within the
// (simulated) call timeout and, once the breaker is open, at once; /readyz
// answers 503 from the breaker in under 100 ms; when the store is back the
// gateway serves again within 5 s.
func TestStoreUnavailable(t *testing.T) {
	faults := hbasetest.WithFaults(testenv.Embedded(t))
	faults.Hang = 300 * time.Millisecond
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	g := startGateway(t, hbase.WithBreaker(faults, hbase.BreakerLogger(quiet), hbase.BreakerHealthInterval(0)))
	a := g.register("unavail_a")
	g.publish(a.token, "before the outage")
	if code, _ := g.readyz(); code != http.StatusOK {
		t.Fatalf("/readyz = %d while up", code)
	}

	faults.SetDown(true)
	for i := range 6 {
		status, retry, r, took := g.rawPost(a.token, timelineQuery, map[string]any{"first": 10})
		if len(r.Errors) == 0 || r.Errors[0].Extensions["code"] != "UNAVAILABLE" {
			t.Fatalf("request %d while down: errors %+v, want UNAVAILABLE", i+1, r.Errors)
		}
		if status != http.StatusServiceUnavailable {
			t.Errorf("request %d while down: HTTP %d, want 503", i+1, status)
		}
		if n, err := strconv.Atoi(retry); err != nil || n < 1 {
			t.Errorf("request %d while down: Retry-After %q, want whole seconds >= 1", i+1, retry)
		}
		if ra, ok := r.Errors[0].Extensions["retryAfter"].(float64); !ok || ra < 1 {
			t.Errorf("request %d: extensions.retryAfter = %v", i+1, r.Errors[0].Extensions["retryAfter"])
		}
		if took > faults.Hang+time.Second {
			t.Errorf("request %d while down took %v, more than the call timeout (%v) + 1 s", i+1, took, faults.Hang)
		}
		t.Logf("request %d while down: HTTP %d in %v", i+1, status, took.Round(time.Millisecond))
		if i == 5 && took >= faults.Hang {
			t.Errorf("request %d took %v: the breaker should have opened after 3 failed calls", i+1, took)
		}
	}
	if code, took := g.readyz(); code != http.StatusServiceUnavailable || took > 100*time.Millisecond {
		t.Errorf("/readyz while down = %d in %v, want 503 in < 100 ms", code, took)
	}

	faults.SetDown(false)
	back := time.Now()
	for {
		status, _, r, _ := g.rawPost(a.token, timelineQuery, map[string]any{"first": 10})
		if status == http.StatusOK && len(r.Errors) == 0 {
			break
		}
		if time.Since(back) > 5*time.Second {
			t.Fatalf("still failing 5 s after the store came back: HTTP %d %+v", status, r.Errors)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("serving again %v after the store came back", time.Since(back).Round(time.Millisecond))
	if code, _ := g.readyz(); code != http.StatusOK {
		t.Errorf("/readyz after recovery = %d", code)
	}
	if got := g.timeline(a.token, 10, nil).contents(); len(got) != 1 || got[0] != "before the outage" {
		t.Errorf("timeline after recovery = %q", got)
	}
}
