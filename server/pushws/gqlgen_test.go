package pushws

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/gorilla/websocket"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// TestSupports: the transport takes WebSocket handshakes whose first
// GraphQL subprotocol is graphql-transport-ws, and leaves the legacy
// graphql-ws (offered first) to gqlgen's transport.
func TestSupports(t *testing.T) {
	tr := New()
	for _, tc := range []struct {
		name string
		r    func() *http.Request
		want bool
	}{
		{"graphql-transport-ws", func() *http.Request { return upgradeRequest("graphql-transport-ws") }, true},
		{"both, graphql-transport-ws first", func() *http.Request { return upgradeRequest("graphql-transport-ws, graphql-ws") }, true},
		{"both, graphql-ws first", func() *http.Request { return upgradeRequest("graphql-ws", "graphql-transport-ws") }, false},
		{"another first", func() *http.Request { return upgradeRequest("chat, graphql-transport-ws") }, true},
		{"graphql-ws", func() *http.Request { return upgradeRequest("graphql-ws") }, false},
		{"no subprotocol", func() *http.Request { return upgradeRequest() }, false},
		{"not an upgrade", func() *http.Request {
			r := upgradeRequest("graphql-transport-ws")
			r.Header.Del("Upgrade")
			return r
		}, false},
		{"a POST", func() *http.Request {
			r := upgradeRequest("graphql-transport-ws")
			r.Method = http.MethodPost
			return r
		}, false},
		{"version 8", func() *http.Request {
			r := upgradeRequest("graphql-transport-ws")
			r.Header.Set("Sec-Websocket-Version", "8")
			return r
		}, false},
	} {
		if got := tr.Supports(tc.r()); got != tc.want {
			t.Errorf("%s: Supports = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestOperations: ping and pong; a query answered by "next" and
// "complete", its response made in a fresh context of the scope; a
// response of many frames; the ends of operations that fail before they
// run ("error" for a payload or document that does not parse or
// validate, "next" with the errors and "complete" for a refused one),
// and of one that panics (the error presenter's "error").
func TestOperations(t *testing.T) {
	presenter := ErrorPresenter(func(ctx context.Context, err error) *gqlerror.Error {
		gerr := graphql.DefaultErrorPresenter(ctx, err)
		gerr.Extensions = map[string]any{"code": "PRESENTED"}
		return gerr
	})
	f := startFixture(t, presenter)
	conn := f.dialAcked(t)

	write(t, conn, map[string]any{"type": "ping", "payload": map[string]any{"n": 1}})
	if m := read(t, conn); m.Type != "pong" || string(m.Payload) != `{"n":1}` {
		t.Fatalf("want pong {\"n\":1}, got %+v", m)
	}
	write(t, conn, map[string]any{"type": "pong"}) // taken, unanswered

	subscribe(t, conn, "q", "{ hello }")
	m := read(t, conn)
	var hello struct{ Data struct{ Hello string } }
	if err := json.Unmarshal(m.Payload, &hello); m.Type != "next" || m.ID != "q" || err != nil || !strings.HasPrefix(hello.Data.Hello, "fresh-") {
		t.Fatalf("want next with a fresh scope, got %s %s %s", m.ID, m.Type, m.Payload)
	}
	if m := read(t, conn); m.Type != "complete" || m.ID != "q" {
		t.Fatalf("want complete, got %+v", m)
	}
	f.scopesReleased(t, 1)

	subscribe(t, conn, "big", "{ big }")
	if m := read(t, conn); m.Type != "next" || m.ID != "big" || len(m.Payload) < 100<<10 {
		t.Fatalf("want next of over 100 KiB, got %s %s of %d bytes", m.ID, m.Type, len(m.Payload))
	}
	if m := read(t, conn); m.Type != "complete" || m.ID != "big" {
		t.Fatalf("want complete, got %+v", m)
	}

	write(t, conn, map[string]any{"id": "j", "type": "subscribe", "payload": "x"})
	if m := read(t, conn); m.Type != "error" || m.ID != "j" || string(m.Payload) != `[{"message":"invalid json"}]` {
		t.Fatalf("want the invalid json error, got %s %s %s", m.ID, m.Type, m.Payload)
	}

	subscribe(t, conn, "bad", "{ nope }")
	if m := read(t, conn); m.Type != "error" || m.ID != "bad" || !strings.Contains(string(m.Payload), "GRAPHQL_VALIDATION_FAILED") {
		t.Fatalf("want the validation error, got %s %s %s", m.ID, m.Type, m.Payload)
	}
	subscribe(t, conn, "parse", "{ hello")
	if m := read(t, conn); m.Type != "error" || m.ID != "parse" || !strings.Contains(string(m.Payload), "GRAPHQL_PARSE_FAILED") {
		t.Fatalf("want the parse error, got %s %s %s", m.ID, m.Type, m.Payload)
	}

	subscribe(t, conn, "r", "query Refused { hello }")
	if m := read(t, conn); m.Type != "next" || m.ID != "r" || string(m.Payload) != `{"errors":[{"message":"refused"}],"data":null}` {
		t.Fatalf("want next with the refusal, got %s %s %s", m.ID, m.Type, m.Payload)
	}
	if m := read(t, conn); m.Type != "complete" || m.ID != "r" {
		t.Fatalf("want complete, got %+v", m)
	}

	subscribe(t, conn, "boom", "{ boom }")
	if m := read(t, conn); m.Type != "error" || m.ID != "boom" || string(m.Payload) != `[{"message":"panic: boom","extensions":{"code":"PRESENTED"}}]` {
		t.Fatalf("want the presented panic, got %s %s %s", m.ID, m.Type, m.Payload)
	}
	// The connection lives on: the id is free again.
	subscribe(t, conn, "boom", "{ hello }")
	if m := read(t, conn); m.Type != "next" || m.ID != "boom" {
		t.Fatalf("want next, got %+v", m)
	}
}

// TestSubscriptionPushed: a subscription whose source takes the live.Sink:
// its resolver runs in the operation's scope, released once it is set up;
// each event is resolved in a fresh one; the error it ends with goes
// through the error presenter with the root field (its alias) as path; a
// client's complete ends its source and is answered by complete.
func TestSubscriptionPushed(t *testing.T) {
	presenter := ErrorPresenter(func(ctx context.Context, err error) *gqlerror.Error {
		gerr := graphql.DefaultErrorPresenter(ctx, err)
		gerr.Extensions = map[string]any{"code": "PRESENTED"}
		return gerr
	})
	f := startFixture(t, presenter)
	conn := f.dialAcked(t)
	subscribe(t, conn, "s", "subscription { ticks }")
	if setup := f.awaitSetup(t); !strings.HasPrefix(setup, "scoped-") {
		t.Fatalf("resolver ran in scope %q, want the operation's", setup)
	}
	seen := map[string]bool{}
	for i := range 3 {
		f.send(t, i)
		m := read(t, conn)
		var ev struct {
			Data struct {
				Ticks int
				Scope string
			}
		}
		if err := json.Unmarshal(m.Payload, &ev); m.Type != "next" || m.ID != "s" || err != nil || ev.Data.Ticks != i {
			t.Fatalf("want next with %d, got %s %s %s", i, m.ID, m.Type, m.Payload)
		}
		if !strings.HasPrefix(ev.Data.Scope, "fresh-") || seen[ev.Data.Scope] {
			t.Fatalf("event %d resolved in scope %q, want a fresh one (seen: %v)", i, ev.Data.Scope, seen)
		}
		seen[ev.Data.Scope] = true
	}
	f.scopesReleased(t, 1)
	f.endWith(t, errors.New("gone"))
	m := read(t, conn)
	if m.Type != "error" || m.ID != "s" || string(m.Payload) != `[{"message":"gone","path":["ticks"],"extensions":{"code":"PRESENTED"}}]` {
		t.Fatalf("want the presented error, got %s %s %s", m.ID, m.Type, m.Payload)
	}
	f.awaitStopped(t)

	// The id is free again; an alias is the errors' path.
	subscribe(t, conn, "s", "subscription { t: ticks }")
	f.awaitSetup(t)
	f.send(t, 7)
	if m := read(t, conn); m.Type != "next" || !strings.Contains(string(m.Payload), `"t":7`) {
		t.Fatalf("want next with t 7, got %s %s %s", m.ID, m.Type, m.Payload)
	}
	f.endWith(t, errors.New("gone again"))
	if m := read(t, conn); m.Type != "error" || !strings.Contains(string(m.Payload), `"path":["t"]`) {
		t.Fatalf("want the error on path t, got %s %s %s", m.ID, m.Type, m.Payload)
	}
	f.awaitStopped(t)

	subscribe(t, conn, "c", "subscription { ticks }")
	f.awaitSetup(t)
	write(t, conn, map[string]any{"id": "c", "type": "complete"})
	f.awaitStopped(t)
	if m := read(t, conn); m.Type != "complete" || m.ID != "c" {
		t.Fatalf("want complete, got %+v", m)
	}
}

// TestSubscriptionPulled: a subscription whose source does not take the
// live.Sink is received from by the transport, in a fresh scope for each
// event, until it closes.
func TestSubscriptionPulled(t *testing.T) {
	f := startFixture(t)
	conn := f.dialAcked(t)
	subscribe(t, conn, "p", "subscription { pulled }")
	f.awaitSetup(t)
	f.send(t, 5)
	if m := read(t, conn); m.Type != "next" || m.ID != "p" || !strings.Contains(string(m.Payload), `"pulled":5,"scope":"fresh-`) {
		t.Fatalf("want next with 5 in a fresh scope, got %s %s %s", m.ID, m.Type, m.Payload)
	}
	f.endWith(t, nil)
	if m := read(t, conn); m.Type != "complete" || m.ID != "p" {
		t.Fatalf("want complete, got %+v", m)
	}
	f.awaitStopped(t)
}

// TestIdleGoroutines: an idle subscription whose source takes the
// live.Sink holds its source's goroutine and none of the transport's, on
// a connection of its own; closing the connections ends the sources.
func TestIdleGoroutines(t *testing.T) {
	f := startFixture(t)
	const n = 100
	runtime.GC()
	before := runtime.NumGoroutine()
	conns := make([]*websocket.Conn, n)
	for i := range conns {
		conns[i] = f.dialAcked(t)
		subscribe(t, conns[i], "s", "subscription { ticks }")
		f.awaitSetup(t)
		// Messages are handled in order: the pong comes after the
		// subscription has started.
		write(t, conns[i], map[string]any{"type": "ping"})
		if m := read(t, conns[i]); m.Type != "pong" {
			t.Fatalf("want pong, got %+v", m)
		}
	}
	time.Sleep(200 * time.Millisecond) // the setup's transient goroutines end
	if added := runtime.NumGoroutine() - before; added >= n*3/2 {
		t.Errorf("%d subscriptions added %d goroutines, want fewer than %d", n, added, n*3/2)
	} else {
		t.Logf("%d subscriptions added %d goroutines", n, added)
	}
	for _, c := range conns {
		c.Close()
	}
	for range n {
		f.awaitStopped(t)
	}
}
