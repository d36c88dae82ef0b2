package pushws

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/gorilla/websocket"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/weibohbase/gateway/live"
)

// testSchema is the schema the tests' executor serves.
const testSchema = `
type Query { hello: String! big: String! boom: String! }
type Subscription { ticks: Int! pulled: Int! }
`

// fixture is a gqlgen handler with only the Transport under test, over an
// executable schema written by hand: hello answers the scope of the
// response's context, big a 100 KiB string, boom panics; ticks is a
// subscription whose source delivers through the live.Sink (live.Out),
// pulled one whose source does not.
type fixture struct {
	url   string
	scope *countingScope
	// feed takes the values the running subscription's source sends.
	feed chan int
	// end closes the running subscription's source with an error (nil:
	// without one).
	end chan error
	// setup receives the scope of each subscription resolver's context.
	setup chan string
	// stopped receives when a subscription's source has stopped.
	stopped chan struct{}
}

// startFixture starts the fixture's server with a Transport of opts and
// the fixture's scope.
func startFixture(t *testing.T, opts ...Option) *fixture {
	t.Helper()
	f := &fixture{scope: &countingScope{}, feed: make(chan int), end: make(chan error),
		setup: make(chan string, 16), stopped: make(chan struct{}, 16)}
	schema := gqlparser.MustLoadSchema(&ast.Source{Input: testSchema})
	srv := handler.New(&graphql.ExecutableSchemaMock{
		SchemaFunc: func() *ast.Schema { return schema },
		ExecFunc:   f.exec,
	})
	srv.AddTransport(New(append([]Option{OperationScope(f.scope)}, opts...)...))
	srv.Use(refuseNamed{})
	srv.SetRecoverFunc(func(_ context.Context, p any) error { return fmt.Errorf("panic: %v", p) })
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	f.url = "ws" + strings.TrimPrefix(hs.URL, "http")
	return f
}

// exec is the schema's Exec: the operation's only root field.
func (f *fixture) exec(ctx context.Context) graphql.ResponseHandler {
	op := graphql.GetOperationContext(ctx).Operation
	field := op.SelectionSet[0].(*ast.Field)
	if op.Operation == ast.Subscription {
		f.setup <- scopeOf(ctx)
		if field.Name == "pulled" {
			c := make(chan int)
			go f.source(ctx, c, func(error) { close(c) }, func() {})
			return subscriptionResponses(field.Alias, c)
		}
		out := live.NewOut[int](ctx)
		go f.source(ctx, out.C, out.Close, out.Sent)
		return subscriptionResponses(field.Alias, out.C)
	}
	ran := false
	return func(ctx context.Context) *graphql.Response {
		if ran {
			return nil
		}
		ran = true
		var v string
		switch field.Name {
		case "hello":
			v = scopeOf(ctx)
		case "big":
			v = strings.Repeat("x", 100<<10)
		case "boom":
			panic("boom")
		}
		b, _ := json.Marshal(map[string]string{field.Alias: v})
		return &graphql.Response{Data: b}
	}
}

// source sends the values of f.feed on c (sent after each) until f.end
// or ctx's end, then closes c (closeWith).
func (f *fixture) source(ctx context.Context, c chan<- int, closeWith func(error), sent func()) {
	defer func() { f.stopped <- struct{}{} }()
	for {
		select {
		case v := <-f.feed:
			c <- v
			sent()
		case err := <-f.end:
			closeWith(err)
			return
		case <-ctx.Done():
			closeWith(nil)
			return
		}
	}
}

// subscriptionResponses is the response handler of a subscription on c:
// each value as {key: value, "scope": the response context's scope}.
func subscriptionResponses(key string, c <-chan int) graphql.ResponseHandler {
	return func(ctx context.Context) *graphql.Response {
		v, ok := <-c
		if !ok {
			return nil
		}
		return &graphql.Response{Data: fmt.Appendf(nil, `{%q:%d,"scope":%q}`, key, v, scopeOf(ctx))}
	}
}

// refuseNamed refuses an operation named "Refused" once it has been
// validated, with an error of no code (a user error, as the gateway's
// query limits give).
type refuseNamed struct{}

func (refuseNamed) ExtensionName() string                   { return "refuseNamed" }
func (refuseNamed) Validate(graphql.ExecutableSchema) error { return nil }
func (refuseNamed) MutateOperationContext(_ context.Context, rc *graphql.OperationContext) *gqlerror.Error {
	if rc.Operation.Name == "Refused" {
		return &gqlerror.Error{Message: "refused"}
	}
	return nil
}

// countingScope is a Scope whose contexts say which call made them:
// "scoped-N" for the Nth Scoped, "fresh-N" for the Nth Fresh.
type countingScope struct {
	scoped, fresh, released atomic.Int32
}

type scopeKey struct{}

func (c *countingScope) Scoped(ctx context.Context) (context.Context, func()) {
	n := c.scoped.Add(1)
	return context.WithValue(ctx, scopeKey{}, fmt.Sprintf("scoped-%d", n)), func() { c.released.Add(1) }
}

func (c *countingScope) Fresh(ctx context.Context) context.Context {
	return context.WithValue(ctx, scopeKey{}, fmt.Sprintf("fresh-%d", c.fresh.Add(1)))
}

// within fails t unless op is done within 10 s.
func within(t *testing.T, what string, op func(timeout <-chan time.Time) bool) {
	t.Helper()
	if !op(time.After(10 * time.Second)) {
		t.Fatalf("no %s in 10 s", what)
	}
}

// send has the running subscription's source send v.
func (f *fixture) send(t *testing.T, v int) {
	t.Helper()
	within(t, "source taking a value", func(timeout <-chan time.Time) bool {
		select {
		case f.feed <- v:
			return true
		case <-timeout:
			return false
		}
	})
}

// endWith has the running subscription's source close with err.
func (f *fixture) endWith(t *testing.T, err error) {
	t.Helper()
	within(t, "source taking its end", func(timeout <-chan time.Time) bool {
		select {
		case f.end <- err:
			return true
		case <-timeout:
			return false
		}
	})
}

// awaitSetup returns the scope of the next subscription resolver's context.
func (f *fixture) awaitSetup(t *testing.T) (scope string) {
	t.Helper()
	within(t, "subscription resolver", func(timeout <-chan time.Time) bool {
		select {
		case scope = <-f.setup:
			return true
		case <-timeout:
			return false
		}
	})
	return scope
}

// awaitStopped waits for a subscription's source to stop.
func (f *fixture) awaitStopped(t *testing.T) {
	t.Helper()
	within(t, "source stopping", func(timeout <-chan time.Time) bool {
		select {
		case <-f.stopped:
			return true
		case <-timeout:
			return false
		}
	})
}

// scopesReleased waits up to 10 s for n scopes made and released: an
// operation's scope is released once its setup is done, which may be
// after its first response.
func (f *fixture) scopesReleased(t *testing.T, n int32) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); f.scope.released.Load() != n; {
		if time.Now().After(deadline) {
			t.Fatalf("%d scopes released, want %d", f.scope.released.Load(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if s := f.scope.scoped.Load(); s != n {
		t.Fatalf("%d scopes made, want %d", s, n)
	}
}

// scopeOf returns the scope ctx was made in; "" when none.
func scopeOf(ctx context.Context) string {
	s, _ := ctx.Value(scopeKey{}).(string)
	return s
}

// dial opens a graphql-transport-ws connection to f.
func (f *fixture) dial(t *testing.T) *websocket.Conn {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{graphqlTransportWS}, HandshakeTimeout: 10 * time.Second}
	conn, resp, err := d.Dial(f.url, nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	if got := resp.Header.Get("Sec-Websocket-Protocol"); got != graphqlTransportWS {
		t.Fatalf("subprotocol %q", got)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// dialAcked opens a connection and initialises it.
func (f *fixture) dialAcked(t *testing.T) *websocket.Conn {
	t.Helper()
	conn := f.dial(t)
	write(t, conn, map[string]any{"type": "connection_init"})
	if m := read(t, conn); m.Type != "connection_ack" {
		t.Fatalf("want connection_ack, got %+v", m)
	}
	return conn
}

// write sends v as JSON.
func write(t *testing.T, conn *websocket.Conn, v any) {
	t.Helper()
	if err := conn.WriteJSON(v); err != nil {
		t.Fatal(err)
	}
}

// read reads the next message, within 10 s.
func read(t *testing.T, conn *websocket.Conn) message {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	var m message
	if err := conn.ReadJSON(&m); err != nil {
		t.Fatalf("read: %v", err)
	}
	return m
}

// subscribe sends a subscribe message of id with query.
func subscribe(t *testing.T, conn *websocket.Conn, id, query string) {
	t.Helper()
	write(t, conn, map[string]any{"id": id, "type": "subscribe", "payload": map[string]any{"query": query}})
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

// upgradeRequest is a well-formed WebSocket handshake offering protocols.
func upgradeRequest(protocols ...string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/graphql", nil)
	r.Header.Set("Upgrade", "websocket")
	r.Header.Set("Connection", "keep-alive, Upgrade")
	r.Header.Set("Sec-Websocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	r.Header.Set("Sec-Websocket-Version", "13")
	for _, p := range protocols {
		r.Header.Add("Sec-Websocket-Protocol", p)
	}
	return r
}
