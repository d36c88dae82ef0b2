package server_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/server"
)

// Messages of the throttles, as clients see them.
const failedAttemptsMessage = "too many failed attempts: retry later"

// fakeClock is a settable clock for Config.Now.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1_700_000_000, 0)} }

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *fakeClock) advance(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// authAnswer is a register or login answer as these tests read it.
type authAnswer struct {
	status     int
	retryAfter string // the Retry-After header
	data       struct {
		Register *struct{ Token string }
		Login    *struct{ Token string }
	}
	errors []gqlError
}

// ok reports whether the mutation returned a token.
func (a authAnswer) ok() bool {
	return len(a.errors) == 0 && (a.data.Register != nil && a.data.Register.Token != "" || a.data.Login != nil && a.data.Login.Token != "")
}

// code is the first error's extensions.code, "" when none.
func (a authAnswer) code() string {
	if len(a.errors) == 0 {
		return ""
	}
	c, _ := a.errors[0].Extensions["code"].(string)
	return c
}

func (a authAnswer) String() string {
	if len(a.errors) == 0 {
		return "HTTP " + http.StatusText(a.status) + " no error"
	}
	return "HTTP " + http.StatusText(a.status) + " Retry-After " + a.retryAfter + ": " + a.errors[0].Message + " " + mustJSON(a.errors[0].Extensions)
}

// authAs sends register or login (mutation) with username and password as
// the client at addr (X-Forwarded-For; the gateway must use that header).
func (g *gw) authAs(addr, mutation, username, password string) authAnswer {
	g.t.Helper()
	r := g.raw(http.MethodPost, "", mustJSON(map[string]any{
		"query":     `mutation($u: String!, $p: String!) { ` + mutation + `(username: $u, password: $p) { token } }`,
		"variables": map[string]any{"u": username, "p": password},
	}), "X-Forwarded-For", addr)
	var body struct {
		Data   json.RawMessage `json:"data"`
		Errors []gqlError
	}
	a := authAnswer{status: r.status, retryAfter: r.header.Get("Retry-After")}
	if err := jsonUnmarshal(r.body, &body); err != nil {
		g.t.Fatalf("%s: HTTP %d, %v: %s", mutation, r.status, err, r.body)
	}
	if len(body.Data) > 0 && string(body.Data) != "null" {
		if err := jsonUnmarshal(body.Data, &a.data); err != nil {
			g.t.Fatalf("%s: %v: %s", mutation, err, r.body)
		}
	}
	a.errors = body.Errors
	return a
}

// wantRateLimited fails the test unless a is a RATE_LIMITED refusal with
// message, retrying after retryAfter seconds (extensions.retryAfter and
// the Retry-After header agreeing, HTTP 429).
func wantRateLimited(t *testing.T, what string, a authAnswer, message string, retryAfter int) {
	t.Helper()
	if a.ok() || len(a.errors) != 1 || a.code() != "RATE_LIMITED" || a.errors[0].Message != message {
		t.Fatalf("%s: %v; want RATE_LIMITED %q", what, a, message)
	}
	if ra, _ := a.errors[0].Extensions["retryAfter"].(float64); int(ra) != retryAfter || a.retryAfter != strconv.Itoa(retryAfter) ||
		a.status != http.StatusTooManyRequests {
		t.Fatalf("%s: %v; want HTTP 429 and retryAfter %d", what, a, retryAfter)
	}
}

// TestRegistrationFailuresCount: successful registrations are not failures
// of their address (25 from one address all pass, where the 21st used to
// be refused as a failed attempt), and failed ones are: taken usernames and
// invalid passwords at registration, with wrong passwords at login, make
// the address wait after its 20 free failures.
func TestRegistrationFailuresCount(t *testing.T) {
	clock := newFakeClock() // stopped: no failure is forgotten, no delay passes unless advanced
	g := startGatewayWith(t, testenv.Embedded(t), func(c *server.Config) {
		c.Now = clock.Now
		c.ClientIPHeader = "X-Forwarded-For"
	})
	const office, prober = "198.51.100.1", "198.51.100.2"
	var names []string
	for i := range 25 {
		name := uniqueName("office") + string(rune('a'+i))
		if a := g.authAs(office, "register", name, "correct horse"); !a.ok() {
			t.Fatalf("sign-up %d of 25 from one address: %v", i+1, a)
		}
		names = append(names, name)
	}

	// 20 failures from another address, of every kind: all answered as
	// such, and all counted.
	for i := range 20 {
		var a authAnswer
		want := "BAD_USER_INPUT"
		switch i % 3 {
		case 0: // a taken username, in another case
			a = g.authAs(prober, "register", strings.ToUpper(names[i]), "correct horse")
		case 1: // a password too short
			a = g.authAs(prober, "register", uniqueName("short")+string(rune('a'+i)), "short")
		case 2: // a wrong password, each for another user (clear of the per-username throttle)
			a = g.authAs(prober, "login", names[i], "wrong horse")
			want = "UNAUTHENTICATED"
		}
		if a.ok() || a.code() != want {
			t.Fatalf("failure %d: %v; want %s", i+1, a, want)
		}
	}
	fresh := uniqueName("fresh")
	wantRateLimited(t, "a sign-up after 20 failures", g.authAs(prober, "register", fresh, "correct horse"), failedAttemptsMessage, 1)
	clock.advance(time.Second)
	if a := g.authAs(prober, "register", fresh, "correct horse"); !a.ok() {
		t.Fatalf("the sign-up after the wait: %v", a)
	}
}
