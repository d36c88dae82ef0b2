package server_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/gorilla/websocket"

	"github.com/weibohbase/gateway/auth"
	"github.com/weibohbase/gateway/bus"
	"github.com/weibohbase/gateway/bus/natsbus"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/gatewaytest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/server"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/tables"
)

// The account mutations over GraphQL/HTTP on both backends: changePassword,
// logout and logoutEverywhere end tokens — on the instance that ended them
// at once, on another instance within its recheck window (moved by a
// settable clock rather than waited for) —, open subscriptions of ended
// tokens are closed, and a logged-out token's record expires with it.

// testSecret is the secret of every test gateway (startGatewayWith's).
const testSecret = gatewaytest.Secret

// testClock is a settable clock for an instance's Issuer.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// startInstanceWithClock starts another gateway instance over st whose
// Issuer (same secret) runs on clk.
func startInstanceWithClock(t *testing.T, st hbase.StoreAdmin, clk *testClock, opts ...domain.Option) *gw {
	t.Helper()
	return startGatewayWith(t, st, func(c *server.Config) {
		c.Tokens = auth.NewIssuer([]byte(testSecret), time.Hour, auth.WithClock(clk.Now))
	}, opts...)
}

const (
	changePasswordMutation = `mutation($c: String!, $n: String!) { changePassword(currentPassword: $c, newPassword: $n) { token user { id username } } }`
	meQuery                = `{ me { id username } }`
)

// works checks that token is accepted (me is its user).
func (g *gw) works(token, uid, what string) {
	g.t.Helper()
	var d struct{ Me *struct{ ID string } }
	g.ok(token, meQuery, nil, &d)
	if d.Me == nil || d.Me.ID != uid {
		g.t.Fatalf("%s: me = %+v, want user %s", what, d.Me, uid)
	}
}

// refused checks that token is UNAUTHENTICATED for a query, a mutation and
// a field of the viewer, saying it was ended.
func (g *gw) refused(token, what string) {
	g.t.Helper()
	for _, q := range []string{
		`{ homeTimeline(first: 1) { edges { cursor } } }`,
		`mutation { publishPost(content: "from an ended token") { id } }`,
		`mutation { logout }`,
	} {
		if e := g.fails(token, weibo.CodeUnauthenticated, q, nil); !strings.Contains(e.Message, "ended") {
			g.t.Fatalf("%s: %q: message %q does not say the token was ended", what, q, e.Message)
		}
	}
}

// TestChangePasswordEndsTokens: two tokens of one user; changePassword
// with the first refuses both at once on this instance, on another
// instance that had not seen them at once, and on another instance that
// had found them good within its recheck window once that window has
// passed; the new token works everywhere; the old password no longer logs
// in and the new one does; the change wrote nothing else.
func TestChangePasswordEndsTokens(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := b.Open(t)
			g := startGateway(t, st)
			clk := &testClock{now: time.Now()}
			other := startInstanceWithClock(t, st, clk)
			fresh := startGateway(t, st) // sees the tokens only after the change

			alice := g.register(uniqueName("alice"))
			first := g.login(alice.Username, "correct horse")
			second := g.login(alice.Username, "correct horse")
			for _, tok := range []string{alice.token, first, second} {
				g.works(tok, alice.ID, "before")
				other.works(tok, alice.ID, "before, on the other instance")
			}
			var d struct {
				ChangePassword struct {
					Token string
					User  userData
				}
			}
			g.ok(first, changePasswordMutation, map[string]any{"c": "correct horse", "n": "battery staple"}, &d)
			newToken := d.ChangePassword.Token
			if d.ChangePassword.User.ID != alice.ID || newToken == "" {
				t.Fatalf("changePassword = %+v", d.ChangePassword)
			}
			for _, tok := range []string{alice.token, first, second} {
				g.refused(tok, "on the instance that changed it")
				fresh.refused(tok, "on an instance that had not seen the token")
			}
			g.works(newToken, alice.ID, "the new token")
			fresh.works(newToken, alice.ID, "the new token on another instance")
			other.works(newToken, alice.ID, "the new token on the instance with the window")
			// Within its window the other instance still accepts what it
			// found good (the documented delay); once it has passed, it
			// reads the row and refuses.
			other.works(second, alice.ID, "within the window on the other instance")
			clk.Add(auth.DefaultRecheckAfter)
			for _, tok := range []string{alice.token, first, second} {
				other.refused(tok, "after the window on the other instance")
			}
			g.fails("", weibo.CodeUnauthenticated, `mutation($u: String!, $p: String!) { login(username: $u, password: $p) { token } }`,
				map[string]any{"u": alice.Username, "p": "correct horse"})
			g.works(g.login(alice.Username, "battery staple"), alice.ID, "a login with the new password")
			if got := g.user("", alice.ID); got.PostCount != 0 {
				t.Errorf("the refused publishes wrote: %+v", got)
			}
		})
	}
}

// TestLogout: logout ends only the token that calls it, at once on this
// instance and within the window on another; logoutEverywhere ends every
// token of the viewer (and no other user's).
func TestLogout(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := b.Open(t)
			g := startGateway(t, st)
			clk := &testClock{now: time.Now()}
			other := startInstanceWithClock(t, st, clk)
			bob := g.register(uniqueName("bob"))
			carol := g.register(uniqueName("carol"))
			one, two, three := bob.token, g.login(bob.Username, "correct horse"), g.login(bob.Username, "correct horse")
			for _, tok := range []string{one, two, three} {
				other.works(tok, bob.ID, "before")
			}

			var d struct{ Logout bool }
			g.ok(one, `mutation { logout }`, nil, &d)
			if !d.Logout {
				t.Fatal("logout returned false")
			}
			g.refused(one, "the logged-out token")
			g.works(two, bob.ID, "another token of the user")
			other.works(one, bob.ID, "within the window on the other instance")
			clk.Add(auth.DefaultRecheckAfter)
			other.refused(one, "after the window on the other instance")
			other.works(two, bob.ID, "another token on the other instance")

			// logoutEverywhere through the other instance: refused there at
			// once, here once this instance reads the row.
			var e struct{ LogoutEverywhere bool }
			other.ok(three, `mutation { logoutEverywhere }`, nil, &e)
			if !e.LogoutEverywhere {
				t.Fatal("logoutEverywhere returned false")
			}
			for _, tok := range []string{two, three} {
				other.refused(tok, "after logoutEverywhere, on its instance")
				fresh := startGateway(t, st)
				fresh.refused(tok, "after logoutEverywhere, on a fresh instance")
			}
			g.works(carol.token, carol.ID, "another user's token")
			g.works(g.login(bob.Username, "correct horse"), bob.ID, "a new login after logoutEverywhere")
			g.fails("", weibo.CodeUnauthenticated, `mutation { logout }`, nil)
		})
	}
}

// TestEndedTokenSubscriptionCloses: an open subscription (graphql-ws over
// WebSocket) whose token is ended is closed with an error whose
// extensions.code is UNAUTHENTICATED — at once on the instance that ended
// it and on another sharing its bus, within the window (and a recheck's
// tick) on one whose bus is away.
func TestEndedTokenSubscriptionCloses(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := b.Open(t)
			first, err := natsbus.Open(natsbus.Config{Listen: "127.0.0.1:0"})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = first.Close() })
			second, err := natsbus.Open(natsbus.Config{URL: first.ClientURL()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = second.Close() })
			away := bus.NewLocal()
			_ = away.Close()
			g := startGateway(t, st, domain.WithBus(first))
			clk := &testClock{now: time.Now()}
			other := startInstanceWithClock(t, st, clk, domain.WithBus(second))
			lone := startInstanceWithClock(t, st, clk, domain.WithBus(away))
			dora := g.register(uniqueName("dora"))
			secondTok := g.login(dora.Username, "correct horse")
			const sub = `subscription { homeTimelineUpdates { id } }`
			wantClosed := func(g *gw, conn *websocket.Conn, what string, within time.Duration) {
				t.Helper()
				start := time.Now()
				m := g.read(conn)
				for m.Type == "next" { // a ping that arrived late
					m = g.read(conn)
				}
				if m.Type != "error" || m.ID != "1" || !strings.Contains(string(m.Payload), `"code":"UNAUTHENTICATED"`) {
					t.Fatalf("%s: %s %s, want an error with code UNAUTHENTICATED", what, m.Type, m.Payload)
				}
				if d := time.Since(start); d > within {
					t.Errorf("%s: closed after %v, want within %v", what, d, within)
				}
			}

			// Logout through the same instance: closed at once.
			here := g.subscribeLive(dora.token)
			g.ok(dora.token, `mutation { logout }`, nil, nil)
			wantClosed(g, here, "logout on the same instance", time.Second)
			// A new subscription of the ended token is refused.
			again := g.subscribe(dora.token, sub)
			if m := g.read(again); !strings.Contains(string(m.Payload), `"code":"UNAUTHENTICATED"`) {
				t.Fatalf("subscribing with the ended token: %s %s", m.Type, m.Payload)
			}

			// logoutEverywhere through another instance sharing the bus:
			// this one's subscription closes at once, its token still
			// within the window (the clock does not move).
			there := other.subscribeLive(secondTok)
			g.ok(secondTok, `mutation { logoutEverywhere }`, nil, nil)
			wantClosed(other, there, "logoutEverywhere on another instance sharing the bus", time.Second)

			// An instance whose bus is away hears no ending: its
			// subscription closes once the window has passed, at its next
			// recheck (every 2 s).
			third := g.login(dora.Username, "correct horse")
			alone := lone.subscribeLive(third)
			g.ok(third, `mutation { logoutEverywhere }`, nil, nil)
			clk.Add(auth.DefaultRecheckAfter)
			wantClosed(lone, alone, "logoutEverywhere, the bus away", 6*time.Second)
		})
	}
}

// subscribeLive subscribes to token's home timeline and returns once the
// subscription delivers: it publishes pings as token's user until one
// comes back.
func (g *gw) subscribeLive(token string) *websocket.Conn {
	g.t.Helper()
	conn := g.subscribe(token, `subscription { homeTimelineUpdates { id } }`)
	got := make(chan wsMessage, 1)
	go func() {
		var m wsMessage
		for {
			m = wsMessage{}
			_ = conn.SetReadDeadline(time.Now().Add(15 * time.Second))
			if err := conn.ReadJSON(&m); err != nil || m.Type != "ping" && m.Type != "pong" && m.Type != "ka" {
				break
			}
			if m.Type == "ping" {
				_ = conn.WriteJSON(map[string]any{"type": "pong"})
			}
		}
		got <- m
	}()
	for i := 0; ; i++ {
		g.publish(token, fmt.Sprintf("ping %d", i))
		select {
		case m := <-got:
			if m.Type != "next" {
				g.t.Fatalf("subscription: %s %s", m.Type, m.Payload)
			}
			return conn
		case <-time.After(300 * time.Millisecond):
			if i > 30 {
				g.t.Fatal("the subscription delivers nothing")
			}
		}
	}
}

// TestLoggedOutTokenRecordExpires: the record of a logged-out token lives
// in the users row's family t until the token's expiry, and the family's
// TTL removes it then (gateways with tokens of 2 s).
func TestLoggedOutTokenRecordExpires(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := b.Open(t)
			g := startGatewayWith(t, st, func(c *server.Config) {
				c.Tokens = auth.NewIssuer([]byte(testSecret), 2*time.Second)
			})
			erin := g.register(uniqueName("erin"))
			tok, err := auth.NewIssuer([]byte(testSecret), time.Hour).Verify(erin.token)
			if err != nil {
				t.Fatal(err)
			}
			g.ok(erin.token, `mutation { logout }`, nil, nil)
			g.refused(erin.token, "after logout")
			uid, _ := weibo.ParseUserID(erin.ID)
			records := func() []weibo.TokenID {
				t.Helper()
				r, err := g.svc.Store().Get(t.Context(), &hbase.Get{Table: tables.Users, Row: tables.UserKey(uid), Families: []string{tables.FamEndedTokens}})
				if err != nil {
					t.Fatal(err)
				}
				return tables.EndedTokens(r)
			}
			if got := records(); len(got) != 1 || got[0] != tok.ID {
				t.Fatalf("records after logout = %x, want the token's id %x", got, tok.ID)
			}
			time.Sleep(time.Until(tok.Expires) + 300*time.Millisecond)
			if got := records(); len(got) != 0 {
				t.Fatalf("records after the token's expiry = %x, want none", got)
			}
			if e := g.fails(erin.token, weibo.CodeUnauthenticated, meQuery, nil); !strings.Contains(e.Message, "expired") {
				t.Errorf("the expired token: %q", e.Message)
			}
		})
	}
}

// TestTokensWithoutIDRefused: a validly signed token of the format before
// jti and gen (sub, ct, iss, exp) is refused with a message to log in again.
func TestTokensWithoutIDRefused(t *testing.T) {
	g := startGateway(t, testenv.Embedded(t))
	frank := g.register(uniqueName("frank"))
	tok, err := auth.NewIssuer([]byte(testSecret), time.Hour).Verify(frank.token)
	if err != nil {
		t.Fatal(err)
	}
	old, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"sub": frank.ID, "ct": tok.Created, "iss": "weibo-gateway", "iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix(),
	}).SignedString([]byte(testSecret))
	if err != nil {
		t.Fatal(err)
	}
	if e := g.fails(old, weibo.CodeUnauthenticated, meQuery, nil); !strings.Contains(e.Message, "log in again") {
		t.Errorf("a token without jti: %q", e.Message)
	}
	g.works(frank.token, frank.ID, "a token with jti and gen")
}

// TestAccountBadInput: bad arguments of the account mutations, table by
// table: the code, the argument named, and nothing written (the password
// and the tokens still work).
func TestAccountBadInput(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startGatewayWith(t, b.Open(t), func(c *server.Config) { c.Logins.UserFailures = -1; c.Logins.AddressFailures = -1 })
			gus := g.register(uniqueName("gus"))
			for _, c := range []struct {
				name, current, next, code, field string
			}{
				{"a wrong current password", "wrong horse", "battery staple", weibo.CodeUnauthenticated, "currentPassword"},
				{"a short new password", "correct horse", "short", weibo.CodeBadUserInput, "newPassword"},
				{"a new password over 72 bytes", "correct horse", strings.Repeat("p", 73), weibo.CodeBadUserInput, "newPassword"},
				{"a current password over 72 bytes", strings.Repeat("p", 73), "battery staple", weibo.CodeBadUserInput, "currentPassword"},
			} {
				e := g.fails(gus.token, c.code, changePasswordMutation, map[string]any{"c": c.current, "n": c.next})
				if e.Extensions["field"] != c.field {
					t.Errorf("%s: field %v, want %s", c.name, e.Extensions["field"], c.field)
				}
				if strings.Contains(e.Message, c.current) || strings.Contains(e.Message, c.next) {
					t.Errorf("%s: the message quotes a password: %q", c.name, e.Message)
				}
			}
			g.works(gus.token, gus.ID, "the token after the refused changes")
			g.works(g.login(gus.Username, "correct horse"), gus.ID, "the password after the refused changes")
			for _, q := range []string{`mutation { logout }`, `mutation { logoutEverywhere }`,
				`mutation { changePassword(currentPassword: "correct horse", newPassword: "battery staple") { token } }`,
				`mutation { updateProfile(bio: "hi") { id } }`} {
				g.fails("", weibo.CodeUnauthenticated, q, nil)
			}
		})
	}
}

// TestChangePasswordThrottled: a wrong current password counts as a failed
// login of the account: past the free failures changePassword is
// RATE_LIMITED, and so is a login of the same username.
func TestChangePasswordThrottled(t *testing.T) {
	g := startGatewayWith(t, testenv.Embedded(t), func(c *server.Config) {
		c.Logins = server.LoginThrottle{UserFailures: 2, AddressFailures: -1}
	})
	hal := g.register(uniqueName("hal"))
	vars := map[string]any{"c": "wrong horse", "n": "battery staple"}
	for range 2 {
		g.fails(hal.token, weibo.CodeUnauthenticated, changePasswordMutation, vars)
	}
	g.fails(hal.token, "RATE_LIMITED", changePasswordMutation, vars)
	g.fails("", "RATE_LIMITED", `mutation($u: String!, $p: String!) { login(username: $u, password: $p) { token } }`,
		map[string]any{"u": strings.ToUpper(hal.Username), "p": "correct horse"})
	g.works(hal.token, hal.ID, "the token of a throttled account")
}
