package server_test

import (
	"errors"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/weibohbase/gateway/auth"
	"github.com/weibohbase/gateway/bus/natsbus"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo/domain"
)

// dialTransportWS opens a bare graphql-transport-ws connection.
func (g *gw) dialTransportWS() *websocket.Conn {
	g.t.Helper()
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, HandshakeTimeout: 10 * time.Second}
	conn, resp, err := d.Dial("ws"+strings.TrimPrefix(g.url, "http")+"/graphql", http.Header{})
	if err != nil {
		g.t.Fatalf("dial: %v", err)
	}
	if got := resp.Header.Get("Sec-Websocket-Protocol"); got != "graphql-transport-ws" {
		g.t.Fatalf("subprotocol %q", got)
	}
	g.t.Cleanup(func() { conn.Close() })
	return conn
}

// closedWith reads until conn closes and returns the close code and text.
func closedWith(t *testing.T, conn *websocket.Conn) (int, string) {
	t.Helper()
	for {
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, _, err := conn.ReadMessage(); err != nil {
			var ce *websocket.CloseError
			if !errors.As(err, &ce) {
				t.Fatalf("read %v, want a close message", err)
			}
			// The server closes the TCP connection after its close
			// message: the client closes only then (the test's cleanup),
			// as a client that answers the close handshake does.
			_ = conn.UnderlyingConn().SetReadDeadline(time.Now().Add(10 * time.Second))
			var ne net.Error
			if _, err := io.Copy(io.Discard, conn.UnderlyingConn()); errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("after the close message: %v, want the connection closed", err)
			}
			return ce.Code, ce.Text
		}
	}
}

// TestTransportWSProtocol: the graphql-transport-ws protocol's rules, as
// the gateway's own transport (pushWS) keeps them: the close codes of
// misbehaving clients, ping and pong, a query over the socket, and a
// subscription the client completes.
func TestTransportWSProtocol(t *testing.T) {
	g := startGateway(t, testenv.Embedded(t))
	alice := g.register(uniqueName("alice"))
	init := map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer " + alice.token}}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	acked := func(conn *websocket.Conn) {
		must(conn.WriteJSON(init))
		if m := g.read(conn); m.Type != "connection_ack" {
			t.Fatalf("want connection_ack, got %+v", m)
		}
	}
	for _, tc := range []struct {
		name string
		run  func(conn *websocket.Conn)
		code int
		text string
	}{
		{"subscribe before connection_init", func(conn *websocket.Conn) {
			must(conn.WriteJSON(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": "{ me { id } }"}}))
		}, 4401, "Unauthorized"},
		{"two connection_init", func(conn *websocket.Conn) {
			acked(conn)
			must(conn.WriteJSON(init))
		}, 4429, "Too many initialisation requests"},
		{"not JSON", func(conn *websocket.Conn) {
			must(conn.WriteMessage(websocket.TextMessage, []byte("{nope")))
		}, 4400, "Invalid message received"},
		{"unknown type", func(conn *websocket.Conn) {
			acked(conn)
			must(conn.WriteJSON(map[string]any{"type": "start"}))
		}, 4400, "Invalid message received"},
		{"an id in use", func(conn *websocket.Conn) {
			acked(conn)
			sub := map[string]any{"id": "s", "type": "subscribe", "payload": map[string]any{"query": "subscription { homeTimelineEvents { __typename } }"}}
			must(conn.WriteJSON(sub))
			must(conn.WriteJSON(sub))
		}, 4409, "Subscriber for s already exists"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn := g.dialTransportWS()
			tc.run(conn)
			if code, text := closedWith(t, conn); code != tc.code || text != tc.text {
				t.Fatalf("closed with %d %q, want %d %q", code, text, tc.code, tc.text)
			}
		})
	}

	t.Run("ping, query, complete", func(t *testing.T) {
		conn := g.dialTransportWS()
		acked(conn)
		must(conn.WriteJSON(map[string]any{"type": "ping", "payload": map[string]any{"n": 1}}))
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		var pong wsMessage
		must(conn.ReadJSON(&pong))
		if pong.Type != "pong" || string(pong.Payload) != `{"n":1}` {
			t.Fatalf("want pong {\"n\":1}, got %+v", pong)
		}
		must(conn.WriteJSON(map[string]any{"id": "q", "type": "subscribe", "payload": map[string]any{"query": "{ me { username } }"}}))
		if m := g.read(conn); m.Type != "next" || m.ID != "q" || !strings.Contains(string(m.Payload), alice.Username) {
			t.Fatalf("want next with the viewer, got %+v", m)
		}
		if m := g.read(conn); m.Type != "complete" || m.ID != "q" {
			t.Fatalf("want complete, got %+v", m)
		}
		// A response of many frames (the transport cuts messages at 32 KiB).
		must(conn.WriteJSON(map[string]any{"id": "big", "type": "subscribe", "payload": map[string]any{"query": "{ __schema { types { name description fields { name description args { name description } type { name kind ofType { name kind } } } } } }"}}))
		if m := g.read(conn); m.Type != "next" || len(m.Payload) < 40<<10 || !strings.Contains(string(m.Payload), `"name":"Query"`) {
			t.Fatalf("want the schema in one message over 40 KiB, got %s of %d bytes: %.300s", m.Type, len(m.Payload), m.Payload)
		}
		if m := g.read(conn); m.Type != "complete" || m.ID != "big" {
			t.Fatalf("want complete, got %+v", m)
		}
		// A document that does not validate ends with "error" (which ends
		// the operation: no "complete").
		must(conn.WriteJSON(map[string]any{"id": "bad", "type": "subscribe", "payload": map[string]any{"query": "{ nope }"}}))
		if m := g.read(conn); m.Type != "error" || m.ID != "bad" || !strings.Contains(string(m.Payload), "GRAPHQL_VALIDATION_FAILED") {
			t.Fatalf("want the validation error, got %s %s %s", m.ID, m.Type, m.Payload)
		}
		// A subscription the client completes ends: the id is free again.
		sub := map[string]any{"id": "s", "type": "subscribe", "payload": map[string]any{"query": "subscription { homeTimelineEvents { __typename } }"}}
		live := metricValue(t, g, "gateway_live_subscriptions")
		for range 2 {
			must(conn.WriteJSON(sub))
			waitFor(t, "the subscription live", func() bool { return metricValue(t, g, "gateway_live_subscriptions") == live+1 })
			must(conn.WriteJSON(map[string]any{"id": "s", "type": "complete"}))
			if m := g.read(conn); m.Type != "complete" || m.ID != "s" {
				t.Fatalf("want complete, got %+v", m)
			}
			waitFor(t, "the subscription ended", func() bool { return metricValue(t, g, "gateway_live_subscriptions") == live })
		}
	})
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("no %s in 10 s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestIdleSubscriptionGoroutines: an idle subscription — homeTimelineEvents,
// notificationAdded, homeTimelineUpdates — holds one goroutine of the
// gateway's (its source's), none of the transport's, while the bus carries
// token endings: 200 subscriptions on 200 connections add fewer than 300
// goroutines (gqlgen's transport held five a subscription).
func TestIdleSubscriptionGoroutines(t *testing.T) {
	eventBus, err := natsbus.Open(natsbus.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer eventBus.Close()
	g := startGateway(t, testenv.Embedded(t), domain.WithBus(eventBus))
	alice := g.register(uniqueName("alice"))
	for _, query := range []string{
		"subscription { homeTimelineEvents { __typename } }",
		"subscription { notificationAdded { id } }",
		"subscription { homeTimelineUpdates { id } }",
	} {
		t.Run(strings.Fields(query)[2], func(t *testing.T) {
			const n = 200
			runtime.GC()
			before := runtime.NumGoroutine()
			conns := make([]*websocket.Conn, n)
			for i := range conns {
				conns[i] = g.subscribe(alice.token, query)
				// Messages are handled in order: the pong comes after
				// the subscription has started.
				awaitPong(t, conns[i])
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
			waitFor(t, "the goroutines gone", func() bool { return runtime.NumGoroutine() < before+n/10 })
		})
	}
}

// awaitPong pings over conn and reads until the pong; any other message
// fails the test.
func awaitPong(t *testing.T, conn *websocket.Conn) {
	t.Helper()
	if err := conn.WriteJSON(map[string]any{"type": "ping"}); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	var m wsMessage
	if err := conn.ReadJSON(&m); err != nil || m.Type != "pong" {
		t.Fatalf("want pong, got %+v %v", m, err)
	}
}

// TestEndedTokenUpdatesBusGoneAway: a homeTimelineUpdates subscription,
// watched without a goroutine of its own while the bus carries token
// endings, still closes with UNAUTHENTICATED when its token is ended while
// the bus is away: the watcher's polls check the token (once the recheck
// window has passed).
func TestEndedTokenUpdatesBusGoneAway(t *testing.T) {
	st := testenv.Embedded(t)
	server, err := natsbus.Open(natsbus.Config{Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = server.Close() })
	client, err := natsbus.Open(natsbus.Config{URL: server.ClientURL()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	clk := &testClock{now: time.Now()}
	x := startInstanceWithClock(t, st, clk, domain.WithBus(client))
	g := startGateway(t, st) // its endings reach x only through the store
	dora := g.register(uniqueName("dora"))
	conn := x.subscribeLive(dora.token)
	_ = server.Close() // x's bus is away from now on
	g.ok(dora.token, `mutation { logoutEverywhere }`, nil, nil)
	clk.Add(auth.DefaultRecheckAfter)
	m := x.read(conn)
	for m.Type == "next" { // a ping that arrived late
		m = x.read(conn)
	}
	if m.Type != "error" || !strings.Contains(string(m.Payload), `"code":"UNAUTHENTICATED"`) {
		t.Fatalf("%s %s, want an error with code UNAUTHENTICATED", m.Type, m.Payload)
	}
}
