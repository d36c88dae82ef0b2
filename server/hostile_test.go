package server_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weibohbase/gateway/internal/gatewaytest"
	"github.com/weibohbase/gateway/internal/hostile"
	"github.com/weibohbase/gateway/internal/syncbuf"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/seed"
	"github.com/weibohbase/gateway/server"
)

// The required bounds: every hostile request is answered within a
// second, and the gateway's memory stays bounded (heapGrowth over what the
// seeded store and the test process hold before the suite; the binary's
// resident memory is tested in cmd/gateway).
const (
	answerBound = time.Second
	heapGrowth  = 150 << 20
)

// heapSampler records the most heap in use while it runs.
type heapSampler struct {
	peak atomic.Uint64
	stop chan struct{}
	done sync.WaitGroup
}

func heapInUse() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func sampleHeap() *heapSampler {
	h := &heapSampler{stop: make(chan struct{})}
	h.done.Add(1)
	go func() {
		defer h.done.Done()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			if v := heapInUse(); v > h.peak.Load() {
				h.peak.Store(v)
			}
			select {
			case <-h.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return h
}

func (h *heapSampler) Stop() uint64 {
	close(h.stop)
	h.done.Wait()
	return h.peak.Load()
}

// hostileEnv seeds the demo data into an embedded store, serves it with
// configure's changes, and returns the gateway and the cases' environment.
func hostileEnv(t testing.TB, configure func(*server.Config)) (*gw, hostile.Env) {
	t.Helper()
	g, _ := seededGatewayWith(t, testenv.Embedded(t), configure)
	poster := g.register(uniqueName("poster"))
	return g, hostile.Env{UserID: "4", Username: "u1", Password: seed.DefaultPassword, Token: poster.token}
}

// TestHostileRequests sends every hostile request (hostile.Cases) to a
// gateway serving the demo data with its default limits: each is refused
// (or answered) with its code and status within a second, before any store
// call when it is refused as too big, and the heap stays bounded
// throughout.
func TestHostileRequests(t *testing.T) {
	g, env := hostileEnv(t, nil)
	runtime.GC()
	base := heapInUse()
	h := sampleHeap()
	for _, c := range hostile.Cases(env) {
		t.Run(c.Name, func(t *testing.T) {
			m := g.meter()
			var r hostile.Result
			for range max(c.Repeat, 1) {
				var err error
				if r, err = c.Send(m.Client(), g.url, env); err != nil {
					t.Fatal(err)
				}
				if r.Took > answerBound {
					t.Errorf("answered in %v, over %v", r.Took, answerBound)
				}
			}
			if err := c.Check(r); err != nil {
				t.Fatal(err)
			}
			if len(r.Message) > 400 {
				t.Errorf("error message of %d bytes", len(r.Message))
			}
			calls, err := m.StoreCalls()
			if err != nil {
				t.Fatal(err)
			}
			if (r.Code == server.CodeQueryTooComplex || r.Code == server.CodeQueryTooDeep || r.Status >= 400 && r.Status != 429) && calls != 0 {
				t.Errorf("refused with %s after %v store calls", r.Code, calls)
			}
		})
	}
	if peak := h.Stop(); peak > base+heapGrowth {
		t.Errorf("heap peaked at %d MiB, %d MiB over the %d MiB before the suite", peak>>20, (peak-base)>>20, base>>20)
	} else {
		t.Logf("heap: %d MiB before the suite, peak %d MiB", base>>20, peak>>20)
	}
}

// TestRefusalsCarryCostAndLimit: a refused query says which measure was
// over, by how much, and the limit; an accepted one reports its cost.
func TestRefusalsCarryCostAndLimit(t *testing.T) {
	g, env := hostileEnv(t, nil)
	r := g.post("", hostile.Nested(env.UserID, 3, 100), nil)
	ext := r.Errors[0].Extensions
	if ext["code"] != server.CodeQueryTooComplex || ext["measure"] != "nodes" || ext["cost"] != float64(1_020_202) || ext["limit"] != float64(server.DefaultMaxQueryNodes) {
		t.Errorf("refusal extensions %v", ext)
	}
	r = g.post("", hostile.Nested(env.UserID, 10, 1), nil)
	ext = r.Errors[0].Extensions
	if ext["code"] != server.CodeQueryTooDeep || ext["cost"] != float64(32) || ext["limit"] != float64(server.DefaultMaxQueryDepth) {
		t.Errorf("depth refusal extensions %v", ext)
	}
	var out struct {
		Extensions struct {
			Cost server.CostReport `json:"cost"`
		} `json:"extensions"`
	}
	raw := g.raw(http.MethodPost, "", `{"query": "{ user(id: \"4\") { follows(first: 10) { edges { node { username } } } } }"}`)
	if err := jsonUnmarshal(raw.body, &out); err != nil {
		t.Fatal(err)
	}
	if c := out.Extensions.Cost; c.Nodes != 12 || c.Depth != 5 || c.MaxNodes != server.DefaultMaxQueryNodes || c.Budget == nil || c.Budget.PerMinute != server.DefaultRateLimit {
		t.Errorf("extensions.cost %+v", c)
	}
}

// TestCachedQueryMeasuredPerRequest: a query gqlgen has parsed and cached
// is measured again on every request, with that request's variables (the
// limiter reads the cached document instead of parsing the query again).
func TestCachedQueryMeasuredPerRequest(t *testing.T) {
	g, env := hostileEnv(t, nil)
	const q = `query($n: Int) { user(id: "4") { follows(first: $n) { edges { node {
		follows(first: $n) { edges { node { follows(first: $n) { edges { node { username } } } } } } } } } } }`
	small := map[string]any{"n": 2}
	for i := range 3 {
		r := g.post(env.Token, q, small)
		if len(r.Errors) > 0 {
			t.Fatalf("request %d with n=2: %+v", i, r.Errors)
		}
		e := g.fails(env.Token, server.CodeQueryTooComplex, q, map[string]any{"n": 100})
		if e.Extensions["measure"] != "nodes" {
			t.Errorf("request %d with n=100: extensions %v", i, e.Extensions)
		}
	}
}

// TestIntrospectionSwitch: introspection is counted and allowed by
// default, and refused when disabled; __typename stays.
func TestIntrospectionSwitch(t *testing.T) {
	st := testenv.Embedded(t)
	on := startGateway(t, st)
	on.ok("", introspectionQuery, nil, nil)
	off := startGatewayWith(t, testenv.Embedded(t), func(c *server.Config) { c.DisableIntrospection = true })
	e := off.fails("", server.CodeValidationFailed, introspectionQuery, nil)
	if e.Extensions["reason"] != "INTROSPECTION_DISABLED" {
		t.Errorf("extensions %v", e.Extensions)
	}
	off.fails("", server.CodeValidationFailed, `{ __type(name: "User") { name } }`, nil)
	off.ok("", `{ __typename me { __typename } }`, nil, nil)
}

// TestReadmeQueriesUnderLimits: the README's queries and GraphiQL's
// introspection query cost well under the default limits (at most a fifth
// of the node limit).
func TestReadmeQueriesUnderLimits(t *testing.T) {
	g := startGateway(t, testenv.Embedded(t))
	admin := `{
  me { username roles { role { name } priority } department { name } }
  topDepartments { edges { node { id name children { edges { node { id name
    children { edges { node { name } } } } } } } } }
  xiaohong: userByUsername(username: "xiaohong") {
    id roles { role { id name } priority } department { name ancestors { name } } }
  roles { edges { node { id name memberCount members { edges { priority node { username } } } } } }
}`
	timeline := `{
  me { username followCount fanCount }
  homeTimeline(first: 5) {
    edges { cursor node { id content createdAt author { id username } } }
    pageInfo { hasNextPage endCursor }
  }
}`
	for name, q := range map[string]string{"admin": admin, "timeline": timeline, "introspection": introspectionQuery} {
		raw := g.raw(http.MethodPost, "", mustJSON(map[string]any{"query": q}))
		var out struct {
			Extensions struct {
				Cost server.CostReport `json:"cost"`
			} `json:"extensions"`
		}
		if err := jsonUnmarshal(raw.body, &out); err != nil {
			t.Fatal(err)
		}
		c := out.Extensions.Cost
		t.Logf("%s: %d nodes, depth %d", name, c.Nodes, c.Depth)
		if c.Nodes == 0 || c.Nodes > server.DefaultMaxQueryNodes/5 || c.Depth > server.DefaultMaxQueryDepth-2 {
			t.Errorf("%s: cost %+v, not well under the limits (%s)", name, c, raw.body[:min(len(raw.body), 300)])
		}
	}
}

// TestRateLimit: a client that spends its budget gets HTTP 429 with
// Retry-After and RATE_LIMITED; budgets are per user and per address.
func TestRateLimit(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	g := startGatewayWith(t, testenv.Embedded(t), func(c *server.Config) { c.RateLimit = 50; c.Now = clock })
	alice, bob := g.register(uniqueName("alice")), g.register(uniqueName("bob"))
	q := `{ me { follows(first: 20) { edges { node { id } } } } }` // 22 nodes
	g.ok(alice.token, q, nil, nil)
	g.ok(alice.token, q, nil, nil)
	r := g.raw(http.MethodPost, alice.token, mustJSON(map[string]any{"query": q}))
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" || !strings.Contains(string(r.body), `"RATE_LIMITED"`) {
		t.Fatalf("third query: HTTP %d Retry-After %q %s", r.status, r.header.Get("Retry-After"), r.body)
	}
	g.ok(bob.token, q, nil, nil) // another user's budget
	g.ok("", q, nil, nil)        // the address's budget
	mu.Lock()
	now = now.Add(30 * time.Second) // half a minute: 25 nodes back
	mu.Unlock()
	g.ok(alice.token, q, nil, nil)
	// Bodies cost a node per KiB, charged before they are read.
	big := mustJSON(map[string]any{"query": "{ __typename }", "variables": map[string]any{"pad": strings.Repeat("x", 60<<10)}})
	if r := g.raw(http.MethodPost, bob.token, big); r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" ||
		!strings.Contains(string(r.body), `"RATE_LIMITED"`) {
		t.Errorf("a 60 KiB body on a 50-node budget: HTTP %d %s", r.status, r.body)
	}
}

// TestLoginThrottle: after the free failures, logins of a username wait
// 1 s, 2 s, …; a good password after the wait works; the address throttle
// catches one client trying many usernames.
func TestLoginThrottle(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	g := startGatewayWith(t, testenv.Embedded(t), func(c *server.Config) {
		c.Now = clock
		c.Logins = server.LoginThrottle{UserFailures: 3, AddressFailures: 10}
	})
	victim := g.register(uniqueName("victim"))
	login := func(user, pw string) rawResponse {
		return g.raw(http.MethodPost, "", mustJSON(map[string]any{
			"query": `mutation($u: String!, $p: String!) { login(username: $u, password: $p) { token } }`, "variables": map[string]any{"u": user, "p": pw}}))
	}
	for i := range 3 {
		if r := login(victim.Username, "wrong horse"); !strings.Contains(string(r.body), "UNAUTHENTICATED") {
			t.Fatalf("failure %d: %s", i, r.body)
		}
	}
	r := login(victim.Username, "correct horse")
	if r.status != 429 || r.header.Get("Retry-After") != "1" {
		t.Fatalf("fourth attempt: HTTP %d, Retry-After %q, %s", r.status, r.header.Get("Retry-After"), r.body)
	}
	advance(time.Second)
	login(victim.Username, "wrong again") // the fourth failure: the next waits 2 s
	advance(time.Second)
	if r := login(strings.ToUpper(victim.Username), "correct horse"); r.status != 429 || r.header.Get("Retry-After") != "1" {
		t.Fatalf("within the 2 s: HTTP %d, Retry-After %q", r.status, r.header.Get("Retry-After"))
	}
	advance(time.Second)
	if r := login(victim.Username, "correct horse"); r.status != 200 || !strings.Contains(string(r.body), `"token"`) {
		t.Fatalf("after the wait: HTTP %d %s", r.status, r.body)
	}
	// The success reset the username: failures are free again.
	if r := login(victim.Username, "wrong horse"); !strings.Contains(string(r.body), "UNAUTHENTICATED") {
		t.Fatalf("after a success: %s", r.body)
	}
	// One address, many usernames: 10 failures in all are free (5 spent
	// above; the registration and the successful login are not failures),
	// then it waits.
	var last rawResponse
	for i := range 8 {
		last = login(uniqueName("nobody")+string(rune('a'+i)), "whatever1")
	}
	if last.status != 429 {
		t.Fatalf("many usernames from one address: HTTP %d %s", last.status, last.body)
	}
}

// TestLogsHoldNoSecrets sends passwords and tokens inside bad and good
// requests and checks that nothing of them reaches the log, at any level.
func TestLogsHoldNoSecrets(t *testing.T) {
	var buf syncBuffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	g, env := hostileEnv(t, func(c *server.Config) { c.Logger = logger })
	const pw, tok = "hunter2-PASSWORD-xyzzy", "eyJhbGciOiJIUzI1NiJ9.SECRET-TOKEN.zzz"
	bodies := []string{
		`{"query": "mutation { login(username: \"u1\", password: \"` + pw + `\") { token } }"`,  // malformed JSON
		`{"query": "mutation { login(username: \"u1\", password: \"` + pw + `\") { token } }"}`, // wrong password
		`{"query": "mutation($p: String!) { register(username: \"x\", password: $p) { token } }", "variables": {"p": "` + pw + `"}}`,
		`{"query": "mutation { login(username: \"u1\", password: \"` + pw + `\" ) { token }", "variables": {}}`, // parse error
		`{"query": 5, "password": "` + pw + `"}`,
		"{\"query\": \"" + pw + "\xff\"}",
		`{"query": "{ me { id } }", "variables": {"p": "` + pw + strings.Repeat("x", 2<<20) + `"}}`, // too large
		`[{"query": "{ me { id } }"}, "` + pw + `"]`,
	}
	for _, b := range bodies {
		for _, auth := range []string{"", tok, env.Token} {
			req, _ := http.NewRequest(http.MethodPost, g.url+"/graphql", strings.NewReader(b))
			req.Header.Set("Content-Type", "application/json")
			if auth != "" {
				req.Header.Set("Authorization", "Bearer "+auth)
			}
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}
	}
	req, _ := http.NewRequest(http.MethodGet, g.url+"/graphql?query=%7Bme%7Bid%7D%7D&variables=%7B%22p%22%3A%22"+pw+"%22%7D", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
	logs := buf.String()
	if !strings.Contains(logs, "msg=http") {
		t.Fatalf("nothing was logged: %q", logs)
	}
	for _, secret := range []string{pw, "SECRET-TOKEN", env.Token, "hunter2"} {
		if strings.Contains(logs, secret) {
			t.Errorf("the log holds %q:\n%s", secret, logs)
		}
	}
	for _, line := range strings.Split(logs, "\n") {
		if len(line) > 2000 {
			t.Errorf("a log line of %d bytes", len(line))
		}
	}
}

// TestLightQueryFastUnderAttack: while 4 clients send hostile requests —
// the heaviest refused and the heaviest allowed queries — in a loop, a
// logged-in reader's timeline page stays fast: p95 under a second, a
// generous bound for a 2-core machine shared with other jobs (the p99
// measured on a quiet machine is in docs/benchmarks.md).
func TestLightQueryFastUnderAttack(t *testing.T) {
	if testing.Short() {
		t.Skip("a few seconds of load")
	}
	g, env := hostileEnv(t, nil)
	reader := g.login("u4", seed.DefaultPassword)
	lat := lightUnderLoad(t, g.url, env, reader, 4, 4*time.Second)
	p95 := lat[len(lat)*95/100]
	t.Logf("light query under attack: %d samples, p50 %v, p95 %v, max %v", len(lat), lat[len(lat)/2], p95, lat[len(lat)-1])
	if p95 > time.Second {
		t.Errorf("light query p95 %v under attack", p95)
	}
}

// lightQuery is the light query of the load test and the benchmark.
const lightQuery = `{"query": "{ homeTimeline(first: 20) { edges { node { id content createdAt author { username } } } } }"}`

// lightUnderLoad runs clients hostile clients against base for d, each
// sending in turn the heaviest refused requests and the heaviest allowed
// query, and returns the sorted latencies of the light query sent in a
// loop meanwhile with token.
func lightUnderLoad(t testing.TB, base string, env hostile.Env, token string, clients int, d time.Duration) []time.Duration {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	attacks := []hostile.Case{{Name: "heaviest allowed", Body: mustJSONBytes(map[string]any{"query": hostile.HeaviestAllowed(env.UserID, server.DefaultMaxQueryNodes)})}}
	for _, c := range hostile.Cases(env) {
		if c.Code == server.CodeQueryTooComplex || c.Code == server.CodeQueryTooDeep || c.Status == 413 {
			attacks = append(attacks, c)
		}
	}
	var wg sync.WaitGroup
	client := &http.Client{}
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := i; ctx.Err() == nil; j++ {
				_, _ = attacks[j%len(attacks)].Send(client, base, env)
			}
		}()
	}
	var lat []time.Duration
	light := hostile.Case{Body: []byte(lightQuery), Auth: true}
	lenv := env
	lenv.Token = token
	for ctx.Err() == nil {
		r, err := light.Send(client, base, lenv)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != 200 || r.Code != "" {
			t.Fatalf("light query: HTTP %d %s", r.Status, r.Body)
		}
		lat = append(lat, r.Took)
		time.Sleep(5 * time.Millisecond)
	}
	wg.Wait()
	slices.Sort(lat)
	return lat
}

// syncBuffer is syncbuf.Buffer (an io.Writer safe for concurrent use).
type syncBuffer = syncbuf.Buffer

// settledStoreCalls returns the store calls of m's requests once they
// stop moving (no call for 300 ms); it fails when work goes on for 5 s.
func settledStoreCalls(t *testing.T, m *gatewaytest.Meter) int {
	t.Helper()
	n, err := m.SettledStoreCalls(300*time.Millisecond, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestDeadlineStopsWork: a query that outlives the request timeout is
// answered with TIMEOUT (HTTP 504) at the deadline, and its resolvers stop
// making store calls.
func TestDeadlineStopsWork(t *testing.T) {
	st := testenv.Embedded(t)
	g, _ := seededGatewayWith(t, st, func(c *server.Config) { c.RequestTimeout = 30 * time.Millisecond; c.RateLimit = -1 })
	env := hostile.Env{UserID: "4"}
	heavy := hostile.Case{Body: mustJSONBytes(map[string]any{"query": hostile.HeaviestAllowed(env.UserID, server.DefaultMaxQueryNodes)})}
	// The same query on the same store without a deadline makes this many
	// store calls.
	full := startGatewayWith(t, st, func(c *server.Config) { c.RateLimit = -1 })
	fm := full.meter()
	if r, err := heavy.Send(fm.Client(), full.url, env); err != nil || r.Code != "" {
		t.Fatalf("without a deadline: %v %.300s", err, r.Body)
	}
	whole := settledStoreCalls(t, fm)

	m := g.meter()
	r, err := heavy.Send(m.Client(), g.url, env)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != http.StatusGatewayTimeout || r.Code != server.CodeTimeout {
		t.Fatalf("HTTP %d code %q, want 504 TIMEOUT: %.300s", r.Status, r.Code, r.Body)
	}
	if r.Took > answerBound {
		t.Errorf("answered in %v", r.Took)
	}
	if made := settledStoreCalls(t, m); made >= whole/2 {
		t.Errorf("%v store calls after a 30 ms deadline, %v for the whole query", made, whole)
	} else {
		t.Logf("%v store calls within the deadline, %v for the whole query", made, whole)
	}
}

// TestDisconnectStopsWork: when the client goes away, the query's
// resolvers stop making store calls.
func TestDisconnectStopsWork(t *testing.T) {
	g, env := hostileEnv(t, func(c *server.Config) { c.RateLimit = -1 })
	heavy := mustJSONBytes(map[string]any{"query": hostile.HeaviestAllowed(env.UserID, server.DefaultMaxQueryNodes)})
	fm := g.meter()
	if resp, err := fm.Client().Post(g.url+"/graphql", "application/json", bytes.NewReader(heavy)); err == nil {
		resp.Body.Close()
	}
	whole := settledStoreCalls(t, fm)

	m := g.meter()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, g.url+"/graphql", bytes.NewReader(heavy))
	req.Header.Set("Content-Type", "application/json")
	if resp, err := m.Client().Do(req); err == nil {
		resp.Body.Close()
		t.Fatal("the query finished within 30 ms: nothing to cancel")
	}
	if made := settledStoreCalls(t, m); made >= whole/2 {
		t.Errorf("%v store calls after the client left at 30 ms, %v for the whole query", made, whole)
	} else {
		t.Logf("%v store calls before the client left, %v for the whole query", made, whole)
	}
}

// TestSubscriptionIsNotALightOperation: an open subscription, which waits
// for its next event inside the operation, does not make heavy operations
// give way to it: the heaviest allowed query still finishes well within
// its deadline.
func TestSubscriptionIsNotALightOperation(t *testing.T) {
	g, env := hostileEnv(t, func(c *server.Config) { c.RequestTimeout = 10 * time.Second; c.RateLimit = -1 })
	conn := g.subscribe(env.Token, `subscription { homeTimelineUpdates { id } }`)
	defer conn.Close()
	time.Sleep(100 * time.Millisecond) // the subscription is executing
	heavy := hostile.Case{Body: mustJSONBytes(map[string]any{"query": hostile.HeaviestAllowed(env.UserID, server.DefaultMaxQueryNodes)})}
	r, err := heavy.Send(http.DefaultClient, g.url, env)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != 200 || r.Code != "" {
		t.Fatalf("heaviest allowed query beside a subscription: HTTP %d %q %.300s", r.Status, r.Code, r.Body)
	}
	t.Logf("answered in %v", r.Took)
}
