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
const (
	failedAttemptsMessage = "too many failed attempts: retry later"
	signupsMessage        = "too many sign-ups from this address: retry later"
)

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

// TestRegistrationFailuresCount: with the sign-up limit off, successful
// registrations are not failures of their address (25 from one address all
// pass, where the 21st used to be refused as a failed attempt), and failed
// ones are: taken usernames and
// invalid passwords at registration, with wrong passwords at login, make
// the address wait after its 20 free failures.
func TestRegistrationFailuresCount(t *testing.T) {
	clock := newFakeClock() // stopped: no failure is forgotten, no delay passes unless advanced
	g := startGatewayWith(t, testenv.Embedded(t), func(c *server.Config) {
		c.Now = clock.Now
		c.ClientIPHeader = "X-Forwarded-For"
		c.Signups = server.SignupLimit{Rate: -1}
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

// TestSignupLimit: successful sign-ups of one address are limited to the
// rate per window (here 5 per 5 minutes): of 30 attempts from one address
// the first 5 pass, and the 6th to the 30th are refused with the sign-up
// message, retrying after the minute one sign-up takes to refill; the
// refusals are not failures, refused usernames are not created, other
// addresses are not affected, failed registrations take no sign-up, and
// they still count as failures with the failure message.
func TestSignupLimit(t *testing.T) {
	clock := newFakeClock()
	g := startGatewayWith(t, testenv.Embedded(t), func(c *server.Config) {
		c.Now = clock.Now
		c.ClientIPHeader = "X-Forwarded-For"
		c.Signups = server.SignupLimit{Rate: 5, Window: 5 * time.Minute}
	})
	const office = "198.51.100.1"
	var names []string
	for i := range 30 {
		name := uniqueName("office") + string(rune('a'+i))
		names = append(names, name)
		a := g.authAs(office, "register", name, "correct horse")
		if i < 5 {
			if !a.ok() {
				t.Fatalf("sign-up %d of 5: %v", i+1, a)
			}
			continue
		}
		// 25 refusals, more than the 20 free failures: had they counted as
		// failures, the last would say so.
		wantRateLimited(t, "sign-up "+strconv.Itoa(i+1), a, signupsMessage, 60)
	}
	if a := g.authAs("198.51.100.2", "register", uniqueName("neighbour"), "correct horse"); !a.ok() {
		t.Fatalf("a sign-up from another address: %v", a)
	}
	clock.advance(time.Minute) // one sign-up back
	if a := g.authAs(office, "register", names[5], "correct horse"); !a.ok() {
		t.Fatalf("a refused username, a minute later: %v", a)
	}
	wantRateLimited(t, "the next sign-up", g.authAs(office, "register", names[6], "correct horse"), signupsMessage, 60)
	clock.advance(30 * time.Second)
	wantRateLimited(t, "half a minute later", g.authAs(office, "register", names[6], "correct horse"), signupsMessage, 30)

	// Failed registrations from another address take none of its 5
	// sign-ups, and count as failures: 20 are free, then it waits.
	const prober = "198.51.100.3"
	for i := range 20 {
		var a authAnswer
		if i%2 == 0 {
			a = g.authAs(prober, "register", strings.ToLower(names[i%5]), "correct horse") // taken
		} else {
			a = g.authAs(prober, "register", uniqueName("short")+string(rune('a'+i)), "short")
		}
		if a.code() != "BAD_USER_INPUT" {
			t.Fatalf("failed registration %d: %v", i+1, a)
		}
	}
	wantRateLimited(t, "a sign-up after 20 failures", g.authAs(prober, "register", uniqueName("prober"), "correct horse"), failedAttemptsMessage, 1)
	for i := range 5 {
		clock.advance(time.Second) // the failure throttle's wait after each attempt
		if a := g.authAs(prober, "register", uniqueName("prober")+string(rune('a'+i)), "correct horse"); !a.ok() {
			t.Fatalf("sign-up %d of 5 after the failures: %v", i+1, a)
		}
	}
	clock.advance(time.Second)
	wantRateLimited(t, "the 6th sign-up after the failures", g.authAs(prober, "register", uniqueName("prober"), "correct horse"), signupsMessage, 55)
}
