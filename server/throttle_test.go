package server

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"
)

func TestFailuresDelays(t *testing.T) {
	f := newFailures(2, time.Second, 8*time.Second, 15*time.Minute)
	t0 := time.Unix(1000, 0)
	waits := []time.Duration{}
	now := t0
	for range 7 {
		w := f.wait("k", now)
		waits = append(waits, w)
		now = now.Add(w)
		f.add("k", now, 1)
	}
	want := []time.Duration{0, 0, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second}
	for i := range want {
		if waits[i] != want[i] {
			t.Fatalf("waits %v, want %v", waits, want)
		}
	}
	if w := f.wait("k", now.Add(16*time.Minute)); w != 0 {
		t.Errorf("after 16 quiet minutes: wait %v", w)
	}
	if w := f.wait("other", now); w != 0 {
		t.Errorf("another key waits %v", w)
	}
	f.reset("k")
	if w := f.wait("k", now); w != 0 {
		t.Errorf("after a reset: wait %v", w)
	}
}

func TestLoginsConcurrentAttemptsCount(t *testing.T) {
	l := newLogins(LoginThrottle{UserFailures: 2, AddressFailures: 100, MaxDelay: time.Minute})
	now := time.Unix(1000, 0)
	// Three attempts begin before any ends: the third must wait.
	if l.begin("Bob", "a", now) != 0 || l.begin("bob", "b", now) != 0 {
		t.Fatal("the free attempts were refused")
	}
	if w := l.begin("BOB", "c", now); w != time.Second {
		t.Fatalf("third concurrent attempt waits %v, want 1s", w)
	}
	l.end("bob", "a", attemptVoid, now) // refused before the password check: not a failure
	if w := l.begin("bob", "a", now); w != 0 {
		t.Fatalf("after a void attempt: wait %v", w)
	}
	l.end("bob", "a", attemptSucceeded, now)
	if w := l.begin("bob", "d", now); w != 0 {
		t.Fatalf("after a success: wait %v", w)
	}
}

// TestSignupsClaims: a registration running holds a claim on a sign-up,
// so concurrent ones cannot all pass on the last; one that fails gives
// it back even when it ended later than it began (as real ones do); one
// that succeeds takes it; the wait is what the missing sign-up takes to
// refill; addresses are apart, and at most maxThrottled are remembered.
func TestSignupsClaims(t *testing.T) {
	s := newSignups(SignupLimit{Rate: 2, Window: time.Minute}) // 2 at once, one back every 30 s
	t0 := time.Unix(1000, 0)
	b1, w1 := s.begin("a", t0)
	b2, w2 := s.begin("a", t0)
	if b1 == nil || b2 == nil || w1 != 0 || w2 != 0 {
		t.Fatalf("the first two: waits %v, %v", w1, w2)
	}
	if b, w := s.begin("a", t0); b != nil || w != 30*time.Second {
		t.Fatalf("a third while two run: wait %v, want 30s", w)
	}
	later := t0.Add(200 * time.Millisecond)
	s.end(b1, false, later) // failed, 200 ms after it began
	b3, w3 := s.begin("a", later)
	if b3 == nil || w3 != 0 {
		t.Fatalf("after a failed one: wait %v", w3)
	}
	s.end(b2, true, later)
	s.end(b3, true, later)
	if b, w := s.begin("a", later); b != nil || w != 30*time.Second {
		t.Fatalf("after two successes: wait %v, want 30s", w)
	}
	if b, w := s.begin("b", later); b == nil || w != 0 {
		t.Fatalf("another address: wait %v", w)
	}
	if b, w := s.begin("a", later.Add(30*time.Second)); b == nil || w != 0 {
		t.Fatalf("30 s later: wait %v", w)
	}
	for i := range maxThrottled + 10 {
		s.begin(strconv.Itoa(i), t0)
	}
	if n := s.addrs.Len(); n != maxThrottled {
		t.Errorf("%d addresses remembered, want %d", n, maxThrottled)
	}
	if newSignups(SignupLimit{Rate: -1, Window: time.Minute}) != nil {
		t.Error("a negative rate is not off")
	}
	var off *signups
	if b, w := off.begin("a", t0); b != nil || w != 0 {
		t.Errorf("off: wait %v", w)
	}
	off.end(nil, true, t0)
}

func TestBudget(t *testing.T) {
	b := newBudget(600) // 10 a second
	now := time.Unix(1000, 0)
	if w, left := b.take("a", 500, now); w != 0 || left != 100 {
		t.Fatalf("take 500: wait %v, left %d", w, left)
	}
	if w, _ := b.take("a", 200, now); w != 10*time.Second {
		t.Fatalf("take 200 of 100: wait %v, want 10s", w)
	}
	if w, left := b.take("a", 100, now); w != 0 || left != 0 {
		t.Fatalf("a refused take spent tokens: wait %v, left %d", w, left)
	}
	if w, _ := b.take("b", 600, now); w != 0 {
		t.Fatalf("another client: wait %v", w)
	}
	if w, _ := b.take("c", 5000, now); w != 0 {
		t.Fatalf("a cost over a minute's worth on a full budget: wait %v", w)
	}
	if w, _ := b.take("a", 0, now.Add(time.Second)); w != 0 {
		t.Fatalf("cost 0 after refill: wait %v", w)
	}
}

func TestParseAddr(t *testing.T) {
	tests := []struct{ in, want string }{
		{"192.0.2.1:5000", "192.0.2.1"},
		{"192.0.2.1", "192.0.2.1"},
		{"[2001:db8:1:2:3:4:5:6]:80", "2001:db8:1:2::/64"},
		{"2001:db8:1:2:ffff::1", "2001:db8:1:2::/64"},
		{"[::ffff:192.0.2.1]:1", "192.0.2.1"},
		{"[fe80::1%eth0]:1", "fe80::/64"},
		{"nonsense", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := parseAddr(tt.in); got != tt.want {
			t.Errorf("parseAddr(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestClientAddress(t *testing.T) {
	var got string
	h := func(header string) http.Handler {
		return clientAddress(header)(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = clientAddr(r.Context()) }))
	}
	req, _ := http.NewRequest("GET", "/", nil)
	req.RemoteAddr = "10.0.0.1:1234"
	req.Header.Set("X-Forwarded-For", "6.6.6.6, 203.0.113.9")
	h("").ServeHTTP(nil, req)
	if got != "10.0.0.1" {
		t.Errorf("no header configured: %q", got)
	}
	h("X-Forwarded-For").ServeHTTP(nil, req)
	if got != "203.0.113.9" {
		t.Errorf("X-Forwarded-For: %q, want the last entry", got)
	}
	req.Header.Set("X-Forwarded-For", "garbage")
	h("X-Forwarded-For").ServeHTTP(nil, req)
	if got != "10.0.0.1" {
		t.Errorf("malformed header: %q, want the remote address", got)
	}
}

func TestNegotiate(t *testing.T) {
	tests := []struct {
		accept []string
		want   string
		ok     bool
	}{
		{nil, mediaJSON, true},
		{[]string{""}, mediaJSON, true},
		{[]string{"application/json"}, mediaJSON, true},
		{[]string{"application/graphql-response+json"}, mediaGraphQLResponse, true},
		{[]string{"application/graphql-response+json, application/json;q=0.9"}, mediaGraphQLResponse, true},
		{[]string{"application/json, application/graphql-response+json"}, mediaGraphQLResponse, true},
		{[]string{"application/json", "application/graphql-response+json;q=0.1"}, mediaJSON, true},
		{[]string{"text/html,application/xhtml+xml,*/*;q=0.8"}, mediaJSON, true},
		{[]string{"text/html"}, "", false},
		{[]string{"application/json;q=0"}, "", false},
	}
	for _, tt := range tests {
		got, ok := negotiate(tt.accept)
		if got != tt.want || ok != tt.ok {
			t.Errorf("negotiate(%q) = %q, %v; want %q, %v", tt.accept, got, ok, tt.want, tt.ok)
		}
	}
}

func TestDefaultsTwice(t *testing.T) {
	c := Config{RateLimit: -1, Limits: QueryLimits{MaxNodes: -1}, Logins: LoginThrottle{UserFailures: -1}, Signups: SignupLimit{Rate: -1}}
	c2 := c.withDefaults().withDefaults()
	if c2.RateLimit != -1 || c2.Limits.MaxNodes != -1 || c2.Logins.UserFailures != -1 || c2.Limits.MaxDepth != DefaultMaxQueryDepth ||
		c2.Signups.Rate != -1 || c2.Signups.Window != DefaultSignupWindow {
		t.Errorf("defaults applied twice: %+v", c2)
	}
	if d := (Config{}).withDefaults().Signups; d.Rate != DefaultSignupRate || d.Window != DefaultSignupWindow {
		t.Errorf("sign-up defaults: %+v", d)
	}
}

func TestShorten(t *testing.T) {
	long := ""
	for range 200 {
		long += "微"
	}
	s := shorten(long)
	if len(s) > maxMessage+len("…") || s[len(s)-3:] != "…" {
		t.Errorf("shorten: %d bytes %q", len(s), s)
	}
	if shorten("short") != "short" {
		t.Error("short message changed")
	}
}

// TestGuardStopsResolvers: once the request's context is done, no resolver
// runs.
func TestGuardStopsResolvers(t *testing.T) {
	g := guard{lanes: &lanes{}, now: time.Now}
	ctx, cancel := context.WithCancel(context.Background())
	ran := false
	next := func(context.Context) (any, error) { ran = true; return 1, nil }
	if _, err := g.InterceptField(ctx, next); err != nil || !ran {
		t.Fatalf("live context: ran %v, err %v", ran, err)
	}
	cancel()
	ran = false
	if _, err := g.InterceptField(ctx, next); !errors.Is(err, context.Canceled) || ran {
		t.Fatalf("cancelled context: ran %v, err %v", ran, err)
	}
}

// TestLanesYield: a heavy operation's resolver waits while a light
// operation executes, and goes on when it ends (or after maxYield).
func TestLanesYield(t *testing.T) {
	l := &lanes{}
	heavy := context.WithValue(context.Background(), heavyKey{}, true)
	start := time.Now()
	l.yield(heavy) // nothing light: no wait
	l.enterLight()
	done := make(chan struct{})
	t0 := time.Now()
	go func() { l.yield(heavy); close(done) }()
	select {
	case <-done:
		if time.Since(t0) < maxYield {
			t.Fatal("the heavy resolver did not wait for the light operation")
		}
	case <-time.After(5 * time.Millisecond):
	}
	l.leaveLight()
	<-done
	l.enterLight()
	l.yield(context.Background()) // a light operation's resolver never waits
	l.yield(heavy)                // waits maxYield at most
	l.leaveLight()
	if time.Since(start) > 10*time.Second {
		t.Fatal("yield hung")
	}
}
