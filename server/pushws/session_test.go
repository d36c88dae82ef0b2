package pushws

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/gorilla/websocket"
)

// TestCloseCodes: the close codes and reasons of graphql-transport-ws for
// the clients that break its rules.
func TestCloseCodes(t *testing.T) {
	refuse := InitFunc(func(ctx context.Context, p transport.InitPayload) (context.Context, *transport.InitPayload, error) {
		if p["refuse"] == true {
			return nil, nil, errors.New("refused")
		}
		return ctx, nil, nil
	})
	f := startFixture(t, refuse)
	init := map[string]any{"type": "connection_init"}
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, conn *websocket.Conn)
		code int
		text string
	}{
		{"subscribe before connection_init", func(t *testing.T, conn *websocket.Conn) {
			subscribe(t, conn, "1", "{ hello }")
		}, 4401, "Unauthorized"},
		{"two connection_init", func(t *testing.T, conn *websocket.Conn) {
			write(t, conn, init)
			if m := read(t, conn); m.Type != "connection_ack" {
				t.Fatalf("want connection_ack, got %+v", m)
			}
			write(t, conn, init)
		}, 4429, "Too many initialisation requests"},
		{"connection_init refused", func(t *testing.T, conn *websocket.Conn) {
			write(t, conn, map[string]any{"type": "connection_init", "payload": map[string]any{"refuse": true}})
		}, 4403, "Forbidden"},
		{"connection_init payload not an object", func(t *testing.T, conn *websocket.Conn) {
			write(t, conn, map[string]any{"type": "connection_init", "payload": []int{1}})
		}, 4400, "Invalid connection_init payload"},
		{"not JSON", func(t *testing.T, conn *websocket.Conn) {
			if err := conn.WriteMessage(websocket.TextMessage, []byte("{nope")); err != nil {
				t.Fatal(err)
			}
		}, 4400, "Invalid message received"},
		{"unknown type", func(t *testing.T, conn *websocket.Conn) {
			write(t, conn, init)
			read(t, conn)
			write(t, conn, map[string]any{"type": "start"})
		}, 4400, "Invalid message received"},
		{"subscribe without id", func(t *testing.T, conn *websocket.Conn) {
			write(t, conn, init)
			read(t, conn)
			subscribe(t, conn, "", "{ hello }")
		}, 4400, "Invalid message received"},
		{"an id in use", func(t *testing.T, conn *websocket.Conn) {
			write(t, conn, init)
			read(t, conn)
			subscribe(t, conn, "s", "subscription { ticks }")
			subscribe(t, conn, "s", "subscription { ticks }")
		}, 4409, "Subscriber for s already exists"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn := f.dial(t)
			tc.run(t, conn)
			if code, text := closedWith(t, conn); code != tc.code || text != tc.text {
				t.Fatalf("closed with %d %q, want %d %q", code, text, tc.code, tc.text)
			}
		})
	}
}

// TestInitTimeout: a connection without connection_init is closed with
// 4408 once the init timeout has passed, and not before; one with it stays.
func TestInitTimeout(t *testing.T) {
	f := startFixture(t, func(tr *Transport) { tr.initTimeout = 300 * time.Millisecond })
	acked := f.dialAcked(t)
	start := time.Now()
	conn := f.dial(t)
	code, text := closedWith(t, conn)
	if code != 4408 || text != "Connection initialisation timeout" {
		t.Fatalf("closed with %d %q, want 4408", code, text)
	}
	if waited := time.Since(start); waited < 250*time.Millisecond {
		t.Fatalf("closed after %v, before the timeout", waited)
	}
	write(t, acked, map[string]any{"type": "ping"})
	if m := read(t, acked); m.Type != "pong" {
		t.Fatalf("the initialised connection: want pong, got %+v", m)
	}
}

// TestWaitDrained: a writer waits while more than maxPending bytes wait
// for the socket, until the socket takes enough of them, its context
// ends, or the connection closes.
func TestWaitDrained(t *testing.T) {
	newSess := func() *session {
		s := &session{}
		var ctx context.Context
		ctx, s.cancel = context.WithCancel(context.Background())
		s.done = ctx.Done()
		return s
	}
	waiting := func(s *session, ctx context.Context) chan struct{} {
		ch := make(chan struct{})
		go func() {
			s.waitDrained(ctx)
			close(ch)
		}()
		return ch
	}
	returns := func(t *testing.T, what string, ch chan struct{}, want bool) {
		t.Helper()
		wait := 100 * time.Millisecond
		if want {
			wait = 10 * time.Second
		}
		select {
		case <-ch:
			if !want {
				t.Fatalf("returned %s", what)
			}
		case <-time.After(wait):
			if want {
				t.Fatalf("still waiting %s", what)
			}
		}
	}

	s := newSess()
	s.pending = maxPending
	returns(t, "at maxPending", waiting(s, context.Background()), true)

	s.pending = maxPending + 100
	ch := waiting(s, context.Background())
	returns(t, "over maxPending", ch, false)
	s.written(50)
	returns(t, "still over maxPending", ch, false)
	s.written(50)
	returns(t, "once drained to maxPending", ch, true)

	s.pending = maxPending + 1
	ctx, cancel := context.WithCancel(context.Background())
	ch = waiting(s, ctx)
	returns(t, "before the context ends", ch, false)
	cancel()
	returns(t, "once the context ended", ch, true)

	ch = waiting(s, context.Background())
	returns(t, "before the close", ch, false)
	s.closed()
	returns(t, "once the connection closed", ch, true)
	returns(t, "after the close", waiting(s, context.Background()), true)
}
