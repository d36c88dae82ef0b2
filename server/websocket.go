package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// gorillaWebsocket accepts gqlgen's WebSocket connections with
// gorilla/websocket, as gqlgen's transport.Websocket itself did before it
// took WebSocket implementations as adapters (its default is now
// coder/websocket): the gateway's WebSocket upgrades, frames, close
// messages and Origin check (upgrader.CheckOrigin) stay what they were.
type gorillaWebsocket struct {
	upgrader websocket.Upgrader
}

// Accept implements transport.WebsocketImplementation: it upgrades the
// request with the upgrader, offering gqlgen's subprotocols after the
// upgrader's own.
func (g gorillaWebsocket) Accept(w http.ResponseWriter, r *http.Request, opts transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	u := g.upgrader
	u.Subprotocols = slices.Clone(u.Subprotocols)
	for _, p := range opts.Subprotocols {
		if !slices.Contains(u.Subprotocols, p) {
			u.Subprotocols = append(u.Subprotocols, p)
		}
	}
	c, err := u.Upgrade(w, r, opts.ResponseHeader)
	if err != nil {
		return nil, err
	}
	return &gorillaConn{Conn: c, ops: opLimitOf(r.Context())}, nil
}

// wsWriteBuffers are the write buffers of the WebSocket connections
// (Upgrader.WriteBufferPool), taken for a message and given back after.
var wsWriteBuffers sync.Pool

// gorillaConn is a gorilla connection as gqlgen's transport uses one
// (transport.WebsocketConn, and through *websocket.Conn's own methods
// transport.WebsocketReadLimiter and transport.WebsocketReadDeadliner).
// With an opLimit it keeps the connection's operations to its bound: it
// reads each message whole, answers a start over the bound itself, and
// learns of each operation's end from the "complete" or "error" gqlgen
// writes.
type gorillaConn struct {
	*websocket.Conn
	ops *opLimit // nil: the operations are neither bounded nor counted

	wmu   sync.Mutex // the writes: gqlgen's, and the refusals of the reading goroutine
	acked bool       // connection_ack was written: starts count (wmu)
}

// NextReader returns the next message's reader; transport.ErrWebsocketClosed
// when the peer closed the connection normally (close code 1000, or none).
// A start over the connection's bound is answered and skipped.
func (c *gorillaConn) NextReader() (int, io.Reader, error) {
	for {
		t, r, err := c.Conn.NextReader()
		if websocket.IsCloseError(err, websocket.CloseNormalClosure, websocket.CloseNoStatusReceived) {
			return t, nil, transport.ErrWebsocketClosed
		}
		if err != nil || c.ops == nil {
			return t, r, err
		}
		b, err := io.ReadAll(r)
		if err != nil {
			return t, nil, err
		}
		if c.take(b) {
			return t, bytes.NewReader(b), nil
		}
	}
}

// wsHead is what gorillaConn reads of a message: its type and id.
type wsHead struct {
	ID   string `json:"id"`
	Type string `json:"type"`
}

// take tells whether message b goes on to gqlgen: all but a start (or
// graphql-transport-ws's subscribe) over the bound, or with the id of a
// running operation, which it answers with an "error" for that id.
func (c *gorillaConn) take(b []byte) bool {
	var h wsHead
	if json.Unmarshal(b, &h) != nil || h.Type != "start" && h.Type != "subscribe" {
		return true
	}
	c.wmu.Lock()
	acked := c.acked
	c.wmu.Unlock()
	if !acked {
		return true // gqlgen refuses it
	}
	refusal := c.ops.start(h.ID)
	if refusal == nil {
		return true
	}
	b, _ = json.Marshal(struct {
		ID      string        `json:"id"`
		Type    string        `json:"type"`
		Payload gqlerror.List `json:"payload"`
	}{h.ID, "error", gqlerror.List{refusal}})
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.Conn.WriteMessage(websocket.TextMessage, b) // a failed write ends the next read
	return false
}

// WriteJSON writes v, gqlgen's message; a "complete" or "error" ends its
// operation (before it is written: the client may start another on
// reading it).
func (c *gorillaConn) WriteJSON(v any) error {
	if c.ops == nil {
		return c.Conn.WriteJSON(v)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var h wsHead
	end := bytes.Contains(b, []byte(`"type":"complete"`)) || bytes.Contains(b, []byte(`"type":"error"`)) ||
		bytes.Contains(b, []byte(`"type":"connection_ack"`))
	if end && json.Unmarshal(b, &h) == nil {
		switch h.Type {
		case "complete", "error":
			c.ops.end(h.ID)
		case "connection_ack":
			c.wmu.Lock()
			c.acked = true
			c.wmu.Unlock()
		}
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.Conn.WriteMessage(websocket.TextMessage, b)
}

// WriteClose sends a close message with code and text.
func (c *gorillaConn) WriteClose(code int, text string) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(code, text))
}

// legacyWebsocket is gqlgen's WebSocket transport (the graphql-ws
// protocol) behind the connection gate, with each connection's operations
// bounded to maxOps (0 or less: no bound) and counted in
// gateway_websocket_subscriptions{transport="graphql-ws"}.
type legacyWebsocket struct {
	transport.Websocket
	gate   *wsGate
	maxOps int
}

// Do implements graphql.Transport: the gate's admission, then gqlgen's
// transport, which returns when the connection has closed.
func (t legacyWebsocket) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	ctx, release, ok := t.gate.admit(transportLegacyWS)(w, r)
	if !ok {
		return
	}
	defer release()
	ops := &opLimit{max: t.maxOps, open: map[string]struct{}{}, gauge: WebSocketOperations.WithLabelValues(transportLegacyWS)}
	defer ops.close()
	t.Websocket.Do(w, r.WithContext(context.WithValue(ctx, opLimitKey{}, ops)), wholeExec{exec})
}

// opLimit is the running operations of one connection of gqlgen's
// transport, by id.
type opLimit struct {
	max   int
	gauge prometheus.Gauge

	mu     sync.Mutex
	open   map[string]struct{}
	closed bool
}

type opLimitKey struct{}

// opLimitOf returns the opLimit of ctx's connection; nil outside one.
func opLimitOf(ctx context.Context) *opLimit {
	l, _ := ctx.Value(opLimitKey{}).(*opLimit)
	return l
}

// start takes a place for operation id; the error that refuses it when
// the connection runs its bound already, or an operation of that id.
func (l *opLimit) start(id string) *gqlerror.Error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.open[id]; ok {
		return errorResponse(CodeBadRequest, "an operation with this id is running: complete it, or use another id").Errors[0]
	}
	if l.max > 0 && len(l.open) >= l.max {
		return tooManyOperations(l.max)
	}
	if !l.closed {
		l.open[id] = struct{}{}
		l.gauge.Inc()
	}
	return nil
}

// end frees operation id's place; nothing when it has none.
func (l *opLimit) end(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.open[id]; ok {
		delete(l.open, id)
		l.gauge.Dec()
	}
}

// close takes the connection's operations off the gauge: they end with it.
func (l *opLimit) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	l.gauge.Sub(float64(len(l.open)))
	clear(l.open)
}
