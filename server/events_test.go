package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/weibohbase/gateway/bus/natsbus"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo/domain"
)

// timelineEventsQuery selects every field of homeTimelineEvents.
const timelineEventsQuery = `subscription($after: String) { homeTimelineEvents(after: $after) {
  __typename
  ... on PostAdded { cursor post { id content author { id username } } }
  ... on PostDeleted { postId } } }`

// timelineEvent is one homeTimelineEvents event as the client gets it.
type timelineEvent struct {
	Typename string   `json:"__typename"`
	Cursor   string   `json:"cursor"`
	Post     postNode `json:"post"`
	PostID   string   `json:"postId"`
}

// eventSub is an open homeTimelineEvents subscription: events yields its
// events as the client reads them (unbuffered: while the test does not
// take one, the client reads nothing more), end the message that ended it
// ("error" or "complete").
type eventSub struct {
	conn   *websocket.Conn
	events chan timelineEvent
	end    chan wsMessage
}

// timelineEvents subscribes to homeTimelineEvents as token's user, with
// after when not nil.
func (g *gw) timelineEvents(token string, after *string) *eventSub {
	g.t.Helper()
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, HandshakeTimeout: 10 * time.Second}
	conn, _, err := d.Dial("ws"+strings.TrimPrefix(g.url, "http")+"/graphql", http.Header{})
	if err != nil {
		g.t.Fatalf("dial: %v", err)
	}
	g.t.Cleanup(func() { conn.Close() })
	if err := conn.WriteJSON(map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer " + token}}); err != nil {
		g.t.Fatal(err)
	}
	for m := g.read(conn); m.Type != "connection_ack"; m = g.read(conn) {
		g.t.Fatalf("want connection_ack, got %+v", m)
	}
	vars := map[string]any{}
	if after != nil {
		vars["after"] = *after
	}
	if err := conn.WriteJSON(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": timelineEventsQuery, "variables": vars}}); err != nil {
		g.t.Fatal(err)
	}
	s := &eventSub{conn: conn, events: make(chan timelineEvent), end: make(chan wsMessage, 1)}
	go readEvents(conn, "homeTimelineEvents", s.events, s.end)
	return s
}

// readEvents reads a graphql-transport-ws subscription's messages: each
// "next" has its data's field decoded into a T sent on events; the
// message that ends it ("error", "complete", or a "next" with errors) is
// sent on end. It answers pings, and closes events when it returns (also
// when the connection closes).
func readEvents[T any](conn *websocket.Conn, field string, events chan<- T, end chan<- wsMessage) {
	defer close(events)
	for {
		var m wsMessage
		_ = conn.SetReadDeadline(time.Now().Add(60 * time.Second))
		if err := conn.ReadJSON(&m); err != nil {
			return // closed
		}
		switch m.Type {
		case "ping":
			_ = conn.WriteJSON(map[string]any{"type": "pong"})
		case "next":
			var e struct {
				Data   map[string]json.RawMessage `json:"data"`
				Errors []gqlError                 `json:"errors"`
			}
			var v T
			if err := json.Unmarshal(m.Payload, &e); err != nil || len(e.Errors) > 0 || json.Unmarshal(e.Data[field], &v) != nil {
				end <- m
				return
			}
			events <- v
		case "error", "complete":
			end <- m
			return
		}
	}
}

// next returns the next event that is not one of the viewer's pings,
// failing after 15 s.
func (s *eventSub) next(t *testing.T) timelineEvent {
	t.Helper()
	for {
		select {
		case e, ok := <-s.events:
			if !ok {
				select {
				case m := <-s.end:
					t.Fatalf("subscription ended: %s %s", m.Type, m.Payload)
				default:
				}
				t.Fatal("subscription closed")
			}
			if e.Typename == "PostAdded" && strings.HasPrefix(e.Post.Content, "ping ") {
				continue
			}
			return e
		case m := <-s.end:
			t.Fatalf("subscription ended: %s %s", m.Type, m.Payload)
		case <-time.After(15 * time.Second):
			t.Fatal("no event in 15 s")
		}
	}
}

// none checks that no event but pings comes within d.
func (s *eventSub) none(t *testing.T, d time.Duration) {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case e := <-s.events:
			if e.Typename == "PostAdded" && strings.HasPrefix(e.Post.Content, "ping ") {
				continue
			}
			t.Fatalf("unexpected event %+v", e)
		case <-deadline:
			return
		}
	}
}

// awaitLive returns once the subscription delivers: it publishes pings as
// a through pub until one comes back.
func (s *eventSub) awaitLive(t *testing.T, pub *gw, a account) {
	t.Helper()
	for i := 0; ; i++ {
		pub.publish(a.token, fmt.Sprintf("ping %d", i))
		select {
		case e := <-s.events:
			if e.Typename != "PostAdded" || e.Post.Author.ID != a.ID {
				t.Fatalf("first event = %+v, want a ping of %s", e, a.ID)
			}
			return
		case m := <-s.end:
			t.Fatalf("subscription ended: %s %s", m.Type, m.Payload)
		case <-time.After(300 * time.Millisecond):
			if i > 30 {
				t.Fatal("no event for the viewer's own posts")
			}
		}
	}
}

// TestHomeTimelineEvents: over graphql-ws, a followee's post reaches the
// viewer as PostAdded with its timeline cursor, its delete as
// PostDeleted; a subscription resumed with after first gets the posts it
// missed from the inbox, oldest first, then live ones, none twice.
func TestHomeTimelineEvents(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startGateway(t, b.Open(t))
			alice, bob := g.register(uniqueName("alice")), g.register(uniqueName("bob"))
			g.follow(alice.token, bob.ID)
			sub := g.timelineEvents(alice.token, nil)
			sub.awaitLive(t, g, alice)

			p := g.publish(bob.token, "live from bob 直播")
			e := sub.next(t)
			if e.Typename != "PostAdded" || e.Post.ID != p.ID || e.Post.Content != p.Content || e.Post.Author.Username != bob.Username || e.Cursor == "" {
				t.Fatalf("event = %+v, want PostAdded of %s", e, p.ID)
			}
			var page struct {
				HomeTimeline struct {
					Edges []struct {
						Cursor string
						Node   struct{ ID string }
					}
				}
			}
			g.ok(alice.token, `{ homeTimeline(first: 1) { edges { cursor node { id } } } }`, nil, &page)
			if len(page.HomeTimeline.Edges) != 1 || page.HomeTimeline.Edges[0].Node.ID != p.ID || page.HomeTimeline.Edges[0].Cursor != e.Cursor {
				t.Fatalf("homeTimeline's first edge %+v, want %s with cursor %s", page.HomeTimeline.Edges, p.ID, e.Cursor)
			}
			g.flush()
			g.ok(bob.token, `mutation($id: ID!) { deletePost(id: $id) }`, map[string]any{"id": p.ID}, nil)
			if e := sub.next(t); e.Typename != "PostDeleted" || e.PostID != p.ID {
				t.Fatalf("event = %+v, want PostDeleted %s", e, p.ID)
			}
			g.flush()
			sub.none(t, 300*time.Millisecond) // the retraction tells nobody twice
			sub.conn.Close()

			// Missed while away: p2 and p3; p4 is published while the
			// resumed subscription sets up (inbox or live: once either way).
			p2, p3 := g.publish(bob.token, "missed 1"), g.publish(bob.token, "missed 2")
			g.flush()
			resumed := g.timelineEvents(alice.token, &e.Cursor)
			p4 := g.publish(bob.token, "while resuming")
			for _, want := range []postNode{p2, p3, p4} {
				if e := resumed.next(t); e.Typename != "PostAdded" || e.Post.ID != want.ID {
					t.Fatalf("resumed event = %+v, want %s %q", e, want.ID, want.Content)
				}
			}
			p5 := g.publish(bob.token, "live again")
			if e := resumed.next(t); e.Post.ID != p5.ID {
				t.Fatalf("event = %+v, want %s", e, p5.ID)
			}
			g.flush()
			resumed.none(t, 300*time.Millisecond)

			// The cost limiter measures the subscription's selection.
			heavy := g.subscribe(alice.token, `subscription { homeTimelineEvents { ... on PostAdded { post {
			  likes(first: 100) { edges { node { fans(first: 100) { edges { node { follows(first: 100) { edges { node { id } } } } } } } } } } } } }`)
			if m := g.read(heavy); !strings.Contains(string(m.Payload), `"code":"QUERY_TOO_COMPLEX"`) {
				t.Fatalf("a subscription of a million nodes: %s %s", m.Type, m.Payload)
			}

			bad := "not a cursor"
			m := <-g.timelineEvents(alice.token, &bad).end
			if !strings.Contains(string(m.Payload), `"code":"BAD_USER_INPUT"`) {
				t.Fatalf("a malformed after: %s %s", m.Type, m.Payload)
			}
		})
	}
}

// TestTimelineEventsSlowConsumer: a client that stops reading while events
// keep coming is told SLOW_CONSUMER and its subscription ends, its queue
// (2 events here) never growing.
func TestTimelineEventsSlowConsumer(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			eventBus, err := natsbus.Open(natsbus.Config{})
			if err != nil {
				t.Fatal(err)
			}
			defer eventBus.Close()
			g := startGateway(t, b.Open(t), domain.WithBus(eventBus), domain.WithEventQueue(2))
			alice := g.register(uniqueName("alice"))
			sub := g.timelineEvents(alice.token, nil)
			sub.awaitLive(t, g, alice)
			// Events come on the bus as the write path publishes them.
			publish := func(i int, content string) {
				ev := fmt.Sprintf(`{"k":"a","p":"%s_%d","n":"x","c":"%s"}`, alice.ID, 1_000_000+i, content)
				if err := eventBus.Publish("weibo.home."+alice.ID, []byte(ev)); err != nil {
					t.Error(err)
				}
			}
			// A client that reads keeps up with a steady flow.
			for i := range 40 {
				publish(i, "steady")
				if e := sub.next(t); e.Post.Content != "steady" {
					t.Fatalf("event %d = %+v", i, e)
				}
				time.Sleep(5 * time.Millisecond)
			}
			// The test now takes no event (the client reads at most one
			// more message) while big events keep coming, 1 a millisecond.
			stop := make(chan struct{})
			done := make(chan struct{})
			go func() {
				defer close(done)
				big := strings.Repeat("长", 3000)
				for i := 100; i < 30_000; i++ {
					select {
					case <-stop:
						return
					case <-time.After(time.Millisecond):
					}
					publish(i, big)
				}
			}()
			defer func() { close(stop); <-done }()
			time.Sleep(3 * time.Second)
			for {
				select {
				case _, ok := <-sub.events:
					if !ok {
						sub.events = nil // ended: end holds the last message
					}
					continue
				case m := <-sub.end:
					if !strings.Contains(string(m.Payload), `"code":"SLOW_CONSUMER"`) {
						t.Fatalf("end: %s %s", m.Type, m.Payload)
					}
					if got := metricValue(t, g, `gateway_live_subscriptions_ended_total{reason="slow_consumer"}`); got < 1 {
						t.Errorf("gateway_live_subscriptions_ended_total{reason=\"slow_consumer\"} = %v", got)
					}
				case <-time.After(30 * time.Second):
					t.Fatal("no SLOW_CONSUMER in 30 s")
				}
				break
			}
		})
	}
}

// TestTimelineEventsAcrossInstances: two gateway instances on one store
// share a NATS bus (the first's embedded server listens on 127.0.0.1, the
// second connects by URL): posts published through one reach subscribers
// of the other, idle subscriptions read nothing from the store, and when
// the bus goes away the subscriptions end with UNAVAILABLE.
func TestTimelineEventsAcrossInstances(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := b.Open(t)
			first, err := natsbus.Open(natsbus.Config{Listen: "127.0.0.1:0"})
			if err != nil {
				t.Fatal(err)
			}
			defer first.Close()
			second, err := natsbus.Open(natsbus.Config{URL: first.ClientURL()})
			if err != nil {
				t.Fatal(err)
			}
			defer second.Close()
			g1 := startGateway(t, st, domain.WithBus(first))
			g2 := startGateway(t, st, domain.WithBus(second))
			alice, bob := g1.register(uniqueName("alice")), g1.register(uniqueName("bob"))
			g1.follow(alice.token, bob.ID)
			var subs []*eventSub
			for range 3 {
				s := g2.timelineEvents(alice.token, nil)
				s.awaitLive(t, g1, alice)
				subs = append(subs, s)
			}
			g1.flush()
			for _, s := range subs {
				s.none(t, 100*time.Millisecond)
			}

			// Idle: no store call over 3 s (storeCalls counts the process's,
			// both instances').
			before := g2.storeCalls()
			time.Sleep(3 * time.Second)
			if after := g2.storeCalls(); after != before {
				t.Errorf("idle subscriptions made %v store calls in 3 s", after-before)
			}

			p := g1.publish(bob.token, "from the first instance")
			for _, s := range subs {
				if e := s.next(t); e.Typename != "PostAdded" || e.Post.ID != p.ID {
					t.Fatalf("event on the second instance = %+v, want %s", e, p.ID)
				}
			}

			// The bus goes away (the first instance's NATS server stops):
			// the second instance's subscriptions end, to be resumed.
			_ = first.Close()
			for _, s := range subs {
				select {
				case m := <-s.end:
					if !strings.Contains(string(m.Payload), `"code":"UNAVAILABLE"`) || !strings.Contains(string(m.Payload), `"reason":"EVENTS_INTERRUPTED"`) {
						t.Fatalf("end: %s %s", m.Type, m.Payload)
					}
				case <-time.After(15 * time.Second):
					t.Fatal("subscription not ended when the bus went away")
				}
			}
		})
	}
}

// metricValue returns the value of the /metrics line that starts with
// series (0 when absent).
func metricValue(t *testing.T, g *gw, series string) float64 {
	t.Helper()
	resp, err := http.Get(g.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return 0
}
