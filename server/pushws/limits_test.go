package pushws

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/gorilla/websocket"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// countGauge is a Gauge tests read.
type countGauge struct{ n atomic.Int64 }

func (g *countGauge) Add(d float64) { g.n.Add(int64(d)) }

// await waits up to 10 s for the gauge to read n.
func (g *countGauge) await(t *testing.T, n int64) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); g.n.Load() != n; {
		if time.Now().After(deadline) {
			t.Fatalf("gauge %d, want %d", g.n.Load(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestMaxOperations: a connection runs at most MaxOperations operations;
// a subscribe over the bound gets an "error" for its id with refuse's
// error, the connection stays open, and an operation's end frees its
// place. The OperationGauge follows the running operations, to 0 when the
// connection closes.
func TestMaxOperations(t *testing.T) {
	const max = 3
	gauge := &countGauge{}
	refuse := func(context.Context) *gqlerror.Error {
		return &gqlerror.Error{Message: "too many", Extensions: map[string]any{"code": "TOO_MANY_OPERATIONS"}}
	}
	f := startFixture(t, MaxOperations(max, refuse), OperationGauge(gauge))
	conn := f.dialAcked(t)
	ids := []string{"a", "b", "c"}
	for _, id := range ids {
		subscribe(t, conn, id, "subscription { pulled }")
		f.awaitSetup(t)
	}
	gauge.await(t, max)
	subscribe(t, conn, "d", "subscription { pulled }")
	if m := read(t, conn); m.Type != "error" || m.ID != "d" || string(m.Payload) != `[{"message":"too many","extensions":{"code":"TOO_MANY_OPERATIONS"}}]` {
		t.Fatalf("want the refusal of d, got %s %s %s", m.ID, m.Type, m.Payload)
	}
	// A query is an operation too.
	subscribe(t, conn, "q", "{ hello }")
	if m := read(t, conn); m.Type != "error" || m.ID != "q" {
		t.Fatalf("want the refusal of q, got %s %s %s", m.ID, m.Type, m.Payload)
	}
	write(t, conn, map[string]any{"type": "ping"})
	if m := read(t, conn); m.Type != "pong" {
		t.Fatalf("want pong on the connection kept, got %+v", m)
	}
	// The client's complete frees a place: its "complete" comes after.
	write(t, conn, map[string]any{"id": "b", "type": "complete"})
	if m := read(t, conn); m.Type != "complete" || m.ID != "b" {
		t.Fatalf("want complete of b, got %+v", m)
	}
	f.awaitStopped(t)
	gauge.await(t, max-1)
	subscribe(t, conn, "d", "subscription { pulled }")
	f.awaitSetup(t)
	gauge.await(t, max)
	// The source's end frees one too.
	f.endWith(t, nil)
	if m := read(t, conn); m.Type != "complete" {
		t.Fatalf("want a complete, got %+v", m)
	}
	f.awaitStopped(t)
	subscribe(t, conn, "q", "{ hello }")
	if m := read(t, conn); m.Type != "next" || m.ID != "q" {
		t.Fatalf("want q answered, got %s %s %s", m.ID, m.Type, m.Payload)
	}
	if m := read(t, conn); m.Type != "complete" || m.ID != "q" {
		t.Fatalf("want complete of q, got %+v", m)
	}
	gauge.await(t, max-1)
	conn.Close()
	gauge.await(t, 0)
	for range max - 1 {
		f.awaitStopped(t)
	}
}

// TestAdmit: the AdmitFunc answers a refused upgrade itself; an admitted
// connection runs in the context it returns (InitFunc sees its values)
// and its release is called once, when the connection has closed. An
// InitFunc's *CloseError closes with its code and reason.
func TestAdmit(t *testing.T) {
	type key struct{}
	var open, released atomic.Int32
	admit := func(w http.ResponseWriter, r *http.Request) (context.Context, func(), bool) {
		if r.Header.Get("X-Refuse") != "" {
			http.Error(w, "no", http.StatusTooManyRequests)
			return nil, nil, false
		}
		open.Add(1)
		return context.WithValue(r.Context(), key{}, "admitted"), func() { released.Add(1) }, true
	}
	init := func(ctx context.Context, p transport.InitPayload) (context.Context, *transport.InitPayload, error) {
		if ctx.Value(key{}) != "admitted" {
			return nil, nil, errors.New("not the admitted context")
		}
		if p["refuse"] != nil {
			return nil, nil, &CloseError{Code: 4429, Reason: "Too many connections"}
		}
		return ctx, nil, nil
	}
	f := startFixture(t, Admit(admit), InitFunc(init))

	d := websocket.Dialer{Subprotocols: []string{graphqlTransportWS}, HandshakeTimeout: 10 * time.Second}
	_, resp, err := d.Dial(f.url, http.Header{"X-Refuse": {"1"}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("refused upgrade: %v %v, want HTTP 429", resp, err)
	}

	conn := f.dialAcked(t)
	subscribe(t, conn, "q", "{ hello }")
	if m := read(t, conn); m.Type != "next" {
		t.Fatalf("want next, got %+v", m)
	}
	if released.Load() != 0 {
		t.Fatal("released while open")
	}
	conn.Close()
	within(t, "the release", func(timeout <-chan time.Time) bool {
		for released.Load() != 1 {
			select {
			case <-timeout:
				return false
			case <-time.After(5 * time.Millisecond):
			}
		}
		return true
	})

	conn = f.dial(t)
	write(t, conn, map[string]any{"type": "connection_init", "payload": map[string]any{"refuse": true}})
	if code, text := closedWith(t, conn); code != 4429 || !strings.Contains(text, "Too many connections") {
		t.Fatalf("closed with %d %q, want 4429", code, text)
	}
	within(t, "the release", func(timeout <-chan time.Time) bool {
		for released.Load() != 2 {
			select {
			case <-timeout:
				return false
			case <-time.After(5 * time.Millisecond):
			}
		}
		return true
	})
	if open.Load() != 2 {
		t.Fatalf("%d admitted, want 2", open.Load())
	}
}

// TestMaxOperationsUnread: a client that keeps subscribing over the bound
// without reading the refusals is closed once more than maxPending bytes
// of them wait for its socket, so that they cannot pile up without end.
func TestMaxOperationsUnread(t *testing.T) {
	f := startFixture(t, MaxOperations(1, nil))
	// A small receive buffer of the client's (no autotuning): the
	// refusals wait in the server sooner.
	d := websocket.Dialer{Subprotocols: []string{graphqlTransportWS}, HandshakeTimeout: 10 * time.Second,
		NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetReadBuffer(64 << 10)
			}
			return c, err
		}}
	conn, _, err := d.Dial(f.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	write(t, conn, map[string]any{"type": "connection_init"})
	if m := read(t, conn); m.Type != "connection_ack" {
		t.Fatalf("want connection_ack, got %+v", m)
	}
	subscribe(t, conn, "s", "subscription { pulled }")
	f.awaitSetup(t)
	over := []byte(`{"id":"o","type":"subscribe","payload":{"query":"subscription { pulled }"}}`)
	// 2,000,000 refusals are 180 MB, beyond any socket buffers.
	_ = conn.SetWriteDeadline(time.Now().Add(60 * time.Second))
	for i := range 2000000 {
		if err := conn.WriteMessage(websocket.TextMessage, over); err != nil {
			t.Logf("closed after %d subscribes: %v", i, err)
			return
		}
	}
	t.Fatal("2,000,000 subscribes over the bound, refusals unread, and the connection still open")
}
