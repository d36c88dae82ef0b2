package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/weibohbase/gateway/bus/natsbus"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo/domain"
)

type wsMessage struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// subscribe opens a graphql-transport-ws connection with token in the
// connection_init payload and starts query as subscription "1".
func (g *gw) subscribe(token, query string) *websocket.Conn {
	g.t.Helper()
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, HandshakeTimeout: 10 * time.Second}
	conn, _, err := d.Dial("ws"+strings.TrimPrefix(g.url, "http")+"/graphql", http.Header{})
	if err != nil {
		g.t.Fatalf("dial: %v", err)
	}
	g.t.Cleanup(func() { conn.Close() })
	init := map[string]any{}
	if token != "" {
		init["Authorization"] = "Bearer " + token
	}
	must := func(err error) {
		if err != nil {
			g.t.Fatal(err)
		}
	}
	must(conn.WriteJSON(map[string]any{"type": "connection_init", "payload": init}))
	for m := g.read(conn); m.Type != "connection_ack"; m = g.read(conn) {
		if m.Type != "ka" && m.Type != "ping" {
			g.t.Fatalf("want connection_ack, got %+v", m)
		}
	}
	must(conn.WriteJSON(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": query}}))
	return conn
}

// read returns the next message that is not a keep-alive, failing after 15 s.
func (g *gw) read(conn *websocket.Conn) wsMessage {
	g.t.Helper()
	for {
		_ = conn.SetReadDeadline(time.Now().Add(15 * time.Second))
		var m wsMessage
		if err := conn.ReadJSON(&m); err != nil {
			g.t.Fatalf("read: %v", err)
		}
		if m.Type == "ping" {
			_ = conn.WriteJSON(map[string]any{"type": "pong"})
			continue
		}
		if m.Type != "ka" && m.Type != "pong" {
			return m
		}
	}
}

// TestHomeTimelineSubscription: over a WebSocket, the viewer receives a
// followee's new post once the fan-out has written it — also when another
// gateway instance wrote it — and a subscription without a token fails with
// UNAUTHENTICATED.
func TestHomeTimelineSubscription(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := b.Open(t)
			// Two instances share the bus, as the watcher reads only when
			// the bus wakes it: the first's embedded NATS listens, the
			// second connects to it.
			shared, err := natsbus.Open(natsbus.Config{Listen: "127.0.0.1:0"})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = shared.Close() })
			second, err := natsbus.Open(natsbus.Config{URL: shared.ClientURL()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = second.Close() })
			g := startGateway(t, st, domain.WithBus(shared))
			alice, bob := g.register(uniqueName("alice")), g.register(uniqueName("bob"))
			g.follow(alice.token, bob.ID)
			conn := g.subscribe(alice.token, `subscription { homeTimelineUpdates { id content author { id username } } }`)

			type event struct {
				Data struct {
					HomeTimelineUpdates postNode `json:"homeTimelineUpdates"`
				} `json:"data"`
			}
			next := func() postNode {
				t.Helper()
				m := g.read(conn)
				if m.Type != "next" || m.ID != "1" {
					t.Fatalf("want next, got %s %s", m.Type, m.Payload)
				}
				var e event
				if err := json.Unmarshal(m.Payload, &e); err != nil {
					t.Fatal(err)
				}
				return e.Data.HomeTimelineUpdates
			}
			// The subscription is live once one of Alice's own posts comes back.
			got := make(chan postNode, 1)
			go func() { got <- next() }()
			var first postNode
			for i := 0; ; i++ {
				g.publish(alice.token, fmt.Sprintf("ping %d", i))
				select {
				case first = <-got:
				case <-time.After(300 * time.Millisecond):
					if i > 30 {
						t.Fatal("no event for the viewer's own posts")
					}
					continue
				}
				break
			}
			if first.Author.ID != alice.ID || !strings.HasPrefix(first.Content, "ping ") {
				t.Fatalf("first event = %+v", first)
			}
			p := g.publish(bob.token, "live from bob 直播")
			for {
				e := next()
				if strings.HasPrefix(e.Content, "ping ") {
					continue // a later ping that arrived meanwhile
				}
				if e.ID != p.ID || e.Content != p.Content || e.Author.Username != bob.Username {
					t.Fatalf("event = %+v, want bob's post %s", e, p.ID)
				}
				break
			}

			// A post made through another gateway instance on the same store
			// arrives by the bus's wake-up (no in-process one crosses
			// instances).
			other := startGateway(t, st, domain.WithBus(second))
			p2 := other.publish(bob.token, "from the other instance")
			other.flush()
			if e := next(); e.ID != p2.ID {
				t.Fatalf("event = %+v, want %s from the other gateway", e, p2.ID)
			}

			anon := g.subscribe("", `subscription { homeTimelineUpdates { id } }`)
			m := g.read(anon)
			if (m.Type != "error" && m.Type != "next") || !strings.Contains(string(m.Payload), `"code":"UNAUTHENTICATED"`) {
				t.Fatalf("anonymous subscription: %s %s", m.Type, m.Payload)
			}
		})
	}
}
