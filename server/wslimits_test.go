package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/server"
)

// wsProto is a WebSocket protocol as a client speaks it: its subprotocol
// (which picks the gateway's transport), and its messages that start and
// stop an operation.
type wsProto struct{ name, start, stop string }

var wsProtos = []wsProto{
	{"graphql-transport-ws", "subscribe", "complete"},
	{"graphql-ws", "start", "stop"},
}

// opsMetric is the series of the open operations of p's transport.
func (p wsProto) opsMetric() string {
	return `gateway_websocket_subscriptions{transport="` + p.name + `"}`
}

// wsOpen opens a WebSocket of protocol p to the gateway with header on
// the upgrade, closed when g's test ends.
func (g *gw) wsOpen(p wsProto, header http.Header) (*websocket.Conn, *http.Response, error) {
	d := websocket.Dialer{Subprotocols: []string{p.name}, HandshakeTimeout: 10 * time.Second}
	conn, resp, err := d.Dial("ws"+strings.TrimPrefix(g.url, "http")+"/graphql", header)
	if conn != nil {
		g.t.Cleanup(func() { conn.Close() })
	}
	return conn, resp, err
}

// wsOpenAcked opens a connection of protocol p and initialises it with
// token in the connection_init payload.
func (g *gw) wsOpenAcked(p wsProto, token string) *websocket.Conn {
	g.t.Helper()
	conn, _, err := g.wsOpen(p, nil)
	if err != nil {
		g.t.Fatalf("dial %s: %v", p.name, err)
	}
	if err := conn.WriteJSON(map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer " + token}}); err != nil {
		g.t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(15 * time.Second))
	var m wsMessage
	if err := conn.ReadJSON(&m); err != nil || m.Type != "connection_ack" {
		g.t.Fatalf("want connection_ack, got %+v %v", m, err)
	}
	return conn
}

// wsStart sends p's start message of operation id.
func (g *gw) wsStart(p wsProto, conn *websocket.Conn, id, query string) {
	g.t.Helper()
	if err := conn.WriteJSON(map[string]any{"id": id, "type": p.start, "payload": map[string]any{"query": query}}); err != nil {
		g.t.Fatal(err)
	}
}

// wsNext returns conn's next message that is not a keep-alive, failing
// after 15 s (keep-alives do not extend it, unlike gw.read's).
func wsNext(t *testing.T, conn *websocket.Conn) wsMessage {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(15 * time.Second))
	for {
		var m wsMessage
		if err := conn.ReadJSON(&m); err != nil {
			t.Fatalf("read: %v", err)
		}
		if m.Type != "ka" && m.Type != "ping" && m.Type != "pong" {
			return m
		}
	}
}

// tooManyOperations fails the test unless m refuses operation id with
// TOO_MANY_OPERATIONS and limit max.
func tooManyOperations(t *testing.T, m wsMessage, id string, max int) {
	t.Helper()
	var errs []gqlError
	if m.Type != "error" || m.ID != id || json.Unmarshal(m.Payload, &errs) != nil || len(errs) != 1 ||
		errs[0].Extensions["code"] != server.CodeTooManyOperations || errs[0].Extensions["limit"] != float64(max) {
		t.Fatalf("want the refusal of %s (TOO_MANY_OPERATIONS, limit %d), got %s %s %s", id, max, m.ID, m.Type, m.Payload)
	}
}

// awaitNoOps waits until no WebSocket operation and no live subscription
// runs in the process: the tests before have closed their connections.
func awaitNoOps(t *testing.T, g *gw) {
	t.Helper()
	for _, series := range []string{wsProtos[0].opsMetric(), wsProtos[1].opsMetric(), "gateway_live_subscriptions"} {
		waitFor(t, "no "+series, func() bool { return metricValue(t, g, series) == 0 })
	}
}

const notificationsQuery = "subscription { notificationAdded { id } }"

// TestWebSocketOperationLimit: over each protocol a connection runs at most
// MaxWebSocketOperations operations: one more gets an "error" message for
// its id (TOO_MANY_OPERATIONS, the limit), the connection stays open, an
// operation stopped by the client frees its place for a new one, and
// gateway_websocket_subscriptions{transport} counts the open ones, back
// to 0 when the connection closes.
func TestWebSocketOperationLimit(t *testing.T) {
	const max = 5
	g := startGatewayWith(t, testenv.Embedded(t), func(c *server.Config) { c.MaxWebSocketOperations = max })
	alice := g.register(uniqueName("alice"))
	for _, p := range wsProtos {
		t.Run(p.name, func(t *testing.T) {
			g := g.in(t)
			awaitNoOps(t, g)
			conn := g.wsOpenAcked(p, alice.token)
			for i := range max {
				g.wsStart(p, conn, fmt.Sprint("s", i), notificationsQuery)
			}
			waitFor(t, "the subscriptions counted", func() bool { return metricValue(t, g, p.opsMetric()) == max })
			refusedBefore := metricValue(t, g, `gateway_websocket_refused_total{limit="operations"}`)
			g.wsStart(p, conn, "over", notificationsQuery)
			tooManyOperations(t, wsNext(t, conn), "over", max)
			if got := metricValue(t, g, `gateway_websocket_refused_total{limit="operations"}`); got != refusedBefore+1 {
				t.Errorf("gateway_websocket_refused_total{limit=\"operations\"} went from %v to %v, want one more", refusedBefore, got)
			}
			// The client stops one: its end frees the place.
			if err := conn.WriteJSON(map[string]any{"id": "s2", "type": p.stop}); err != nil {
				t.Fatal(err)
			}
			if m := wsNext(t, conn); m.Type != "complete" || m.ID != "s2" {
				t.Fatalf("want complete of s2, got %+v", m)
			}
			waitFor(t, "the stopped one uncounted", func() bool { return metricValue(t, g, p.opsMetric()) == max-1 })
			g.wsStart(p, conn, "again", notificationsQuery)
			// Messages are handled in order: the probe's refusal comes
			// after "again" was taken, and is the first message.
			g.wsStart(p, conn, "probe", notificationsQuery)
			tooManyOperations(t, wsNext(t, conn), "probe", max)
			if got := metricValue(t, g, p.opsMetric()); got != max {
				t.Errorf("%s = %v, want %d", p.opsMetric(), got, max)
			}
			if p.name == "graphql-ws" {
				// gqlgen's transport would run a second operation of a
				// running one's id, uncounted: the gateway refuses it.
				g.wsStart(p, conn, "s0", notificationsQuery)
				if m := wsNext(t, conn); m.Type != "error" || m.ID != "s0" || !strings.Contains(string(m.Payload), `"code":"BAD_REQUEST"`) {
					t.Fatalf("want s0 again refused with BAD_REQUEST, got %s %s %s", m.ID, m.Type, m.Payload)
				}
			}
			// The ones taken are live subscriptions, the others never were.
			waitFor(t, "the subscriptions live", func() bool { return metricValue(t, g, "gateway_live_subscriptions") == max })
			conn.Close()
			waitFor(t, "the connection's operations uncounted", func() bool { return metricValue(t, g, p.opsMetric()) == 0 })
		})
	}
}

// TestWebSocketSubscribeFlood: 20,000 subscribe messages on one
// connection leave at most MaxWebSocketOperations (the default, 100)
// subscriptions open, over each protocol: every other one is refused
// with TOO_MANY_OPERATIONS, and the connection stays open.
func TestWebSocketSubscribeFlood(t *testing.T) {
	const n, max = 20000, server.DefaultMaxWebSocketOperations
	g := startGateway(t, testenv.Embedded(t))
	alice := g.register(uniqueName("alice"))
	for _, p := range wsProtos {
		t.Run(p.name, func(t *testing.T) {
			g := g.in(t)
			awaitNoOps(t, g)
			conn := g.wsOpenAcked(p, alice.token)
			type tally struct {
				refused int
				other   []string
				err     error
			}
			done := make(chan tally, 1)
			go func() { // reads the refusals while the subscribes are sent
				var tl tally
				// One deadline for them all: keep-alives do not extend it.
				_ = conn.SetReadDeadline(time.Now().Add(60 * time.Second))
				for tl.refused < n-max && tl.err == nil {
					var m wsMessage
					if tl.err = conn.ReadJSON(&m); tl.err != nil {
						break
					}
					switch {
					case m.Type == "error" && strings.Contains(string(m.Payload), `"code":"TOO_MANY_OPERATIONS"`):
						tl.refused++
					case m.Type == "ka" || m.Type == "ping" || m.Type == "pong":
					default:
						tl.other = append(tl.other, m.Type+" "+m.ID)
					}
				}
				done <- tl
			}()
			start := time.Now()
			_ = conn.SetWriteDeadline(time.Now().Add(60 * time.Second))
			for i := range n {
				if err := conn.WriteJSON(map[string]any{"id": fmt.Sprint(i), "type": p.start, "payload": map[string]any{"query": notificationsQuery}}); err != nil {
					t.Fatal(err)
				}
			}
			tl := <-done
			if tl.err != nil || tl.refused != n-max || len(tl.other) > 0 {
				t.Fatalf("%d refused (want %d), other messages %q, read error %v", tl.refused, n-max, tl.other, tl.err)
			}
			if got := metricValue(t, g, p.opsMetric()); got != max {
				t.Fatalf("%s = %v after %d subscribes, want %d", p.opsMetric(), got, n, max)
			}
			t.Logf("%d subscribes answered in %v: %d open", n, time.Since(start), max)
			conn.Close()
			waitFor(t, "the connection's operations uncounted", func() bool { return metricValue(t, g, p.opsMetric()) == 0 })
		})
	}
}

// refusedUpgrade fails the test unless the upgrade was refused with HTTP
// 429 and a TOO_MANY_CONNECTIONS error of measure and limit.
func refusedUpgrade(t *testing.T, resp *http.Response, err error, measure string, limit int) {
	t.Helper()
	if err == nil || resp == nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("upgrade: %v (response %v), want HTTP 429", err, resp)
	}
	var body struct{ Errors []gqlError }
	raw, _ := io.ReadAll(resp.Body)
	if json.Unmarshal(raw, &body) != nil || len(body.Errors) != 1 {
		t.Fatalf("429 body %s, want one GraphQL error", raw)
	}
	e := body.Errors[0].Extensions
	if e["code"] != server.CodeTooManyConnections || e["measure"] != measure || e["limit"] != float64(limit) {
		t.Fatalf("429 error %s, want TOO_MANY_CONNECTIONS, measure %s, limit %d", raw, measure, limit)
	}
}

// TestWebSocketConnectionLimits: a user holds at most
// MaxWebSocketsPerUser connections and an address
// MaxWebSocketsPerAddress, over both protocols together: one more is
// refused at the upgrade with HTTP 429 (TOO_MANY_CONNECTIONS) when the
// upgrade names the user (Authorization) or comes from the address, and
// at connection_init with close code 4429 when the payload's token names
// the user; a closed connection gives its place back.
func TestWebSocketConnectionLimits(t *testing.T) {
	const perUser, perAddr = 2, 4
	g := startGatewayWith(t, testenv.Embedded(t), func(c *server.Config) {
		c.MaxWebSocketsPerUser, c.MaxWebSocketsPerAddress = perUser, perAddr
	})
	alice := g.register(uniqueName("alice"))
	asAlice := http.Header{"Authorization": {"Bearer " + alice.token}}
	transportWS, legacyWS := wsProtos[0], wsProtos[1]
	conns0 := metricValue(t, g, `gateway_websocket_connections{transport="graphql-ws"}`)
	refused0 := metricValue(t, g, `gateway_websocket_refused_total{limit="user"}`)

	// Alice's two, one on each protocol.
	a1, _, err := g.wsOpen(transportWS, asAlice)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := g.wsOpen(legacyWS, asAlice); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the graphql-ws connection counted", func() bool {
		return metricValue(t, g, `gateway_websocket_connections{transport="graphql-ws"}`) == conns0+1
	})
	for _, p := range wsProtos {
		_, resp, err := g.wsOpen(p, asAlice)
		refusedUpgrade(t, resp, err, "user", perUser)
	}
	if got := metricValue(t, g, `gateway_websocket_refused_total{limit="user"}`); got != refused0+2 {
		t.Errorf("gateway_websocket_refused_total{limit=\"user\"} went from %v to %v, want 2 more", refused0, got)
	}

	// Anonymous upgrades that name alice at connection_init.
	conn, _, err := g.wsOpen(transportWS, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.WriteJSON(map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": alice.token}}); err != nil {
		t.Fatal(err)
	}
	if code, text := closedWith(t, conn); code != 4429 || text != "Too many connections for this user" {
		t.Fatalf("closed with %d %q, want 4429", code, text)
	}
	conn, _, err = g.wsOpen(legacyWS, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.WriteJSON(map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": alice.token}}); err != nil {
		t.Fatal(err)
	}
	if m := wsNext(t, conn); m.Type != "connection_error" || !strings.Contains(string(m.Payload), "Too many connections for this user") {
		t.Fatalf("want connection_error, got %s %s", m.Type, m.Payload)
	}
	if code, _ := closedWith(t, conn); code != 4429 {
		t.Fatalf("closed with %d, want 4429", code)
	}

	// The address: two more (once the refused ones are gone), then 429.
	for i := range perAddr - perUser {
		p := wsProtos[i%2]
		waitFor(t, "an anonymous connection accepted", func() bool {
			_, resp, err := g.wsOpen(p, nil)
			if err != nil && (resp == nil || resp.StatusCode != http.StatusTooManyRequests) {
				t.Fatalf("dial: %v", err)
			}
			return err == nil
		})
	}
	for _, p := range wsProtos {
		_, resp, err := g.wsOpen(p, nil)
		refusedUpgrade(t, resp, err, "address", perAddr)
	}
	// Alice closes one: she and the address may open one more.
	a1.Close()
	waitFor(t, "alice's connection accepted again", func() bool {
		_, resp, err := g.wsOpen(legacyWS, asAlice)
		if err != nil && (resp == nil || resp.StatusCode != http.StatusTooManyRequests) {
			t.Fatalf("dial: %v", err)
		}
		return err == nil
	})
	_, resp, err := g.wsOpen(transportWS, asAlice)
	refusedUpgrade(t, resp, err, "address", perAddr)
}
