package pushws

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/lesismal/nbio/nbhttp/websocket"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

const (
	// maxPending is how many bytes of a connection's messages may wait for
	// its socket before the subscription writing more waits.
	maxPending = 256 << 10
	// initTimeout is how long a connection may go without connection_init.
	initTimeout = 30 * time.Second
)

// session is one connection: before connection_init only that (or ping
// and pong) is taken; after it, subscribe starts operations, complete ends
// them; the connection's close ends them all.
type session struct {
	t       *Transport
	exec    graphql.GraphExecutor
	headers http.Header
	ctx     context.Context // the connection's, with connection_init's values: the message handler's alone
	done    <-chan struct{} // closed when the connection has closed
	cancel  context.CancelFunc

	initTimer   *time.Timer
	acked       atomic.Bool
	release     func() // the AdmitFunc's, called once (releaseOnce) when the connection has closed
	releaseOnce sync.Once

	mu      sync.Mutex
	conn    *websocket.Conn
	ops     []*operation // a slice: a connection runs an operation or a few
	ended   bool
	pending int64         // bytes written but not yet taken by the socket
	drained chan struct{} // closed when pending falls to maxPending or below
}

// newSession returns the session of a connection upgraded from a request
// with ctx and header, its operations run by exec; it closes the
// connection unless connection_init comes within the transport's init
// timeout.
func newSession(ctx context.Context, t *Transport, exec graphql.GraphExecutor, header http.Header) *session {
	// Of the request's headers the session keeps the trace context's
	// (tracing reads them), not the rest.
	s := &session{t: t, exec: exec, headers: traceHeaders(header)}
	// The request's values (viewer, request id, client address) without
	// its end: net/http cancels it when Do returns.
	s.ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	s.done = s.ctx.Done()
	s.initTimer = time.AfterFunc(t.initTimeout, func() {
		if !s.acked.Load() {
			s.close(closeInitTimeout, "Connection initialisation timeout")
		}
	})
	return s
}

// attach sets the session's connection and makes it the connection's
// session (for the written-bytes callback).
func (s *session) attach(c *websocket.Conn) {
	s.mu.Lock()
	first := s.conn == nil
	if first {
		s.conn = c
	}
	s.mu.Unlock()
	if first {
		c.SetSession(s)
	}
}

// receive handles one message from the client.
func (s *session) receive(data []byte) {
	start := graphql.Now()
	var m message
	if err := json.Unmarshal(data, &m); err != nil {
		s.close(closeBadMessage, "Invalid message received")
		return
	}
	switch m.Type {
	case "connection_init":
		if !s.acked.CompareAndSwap(false, true) {
			s.close(closeTooManyInits, "Too many initialisation requests")
			return
		}
		s.initTimer.Stop()
		var payload transport.InitPayload
		if len(m.Payload) > 0 && !bytes.Equal(m.Payload, []byte("null")) {
			if err := json.Unmarshal(m.Payload, &payload); err != nil {
				s.close(closeBadMessage, "Invalid connection_init payload")
				return
			}
		}
		ctx, _, err := s.t.init(s.ctx, payload)
		if err != nil {
			var ce *CloseError
			if errors.As(err, &ce) {
				s.close(ce.Code, ce.Reason)
			} else {
				s.close(closeForbidden, "Forbidden")
			}
			return
		}
		s.ctx = ctx // read by this goroutine only (messages are handled in order)
		s.send(message{Type: "connection_ack"})
	case "ping":
		s.send(message{Type: "pong", Payload: m.Payload})
	case "pong":
	case "subscribe":
		s.subscribe(m, start)
	case "complete":
		if op := s.op(m.ID); op != nil {
			op.cancel() // its source ends, and with it the operation
		}
	default:
		s.close(closeBadMessage, "Invalid message received")
	}
}

// subscribe starts operation m (Transport.run), once the connection is
// initialised and m has an id of its own.
func (s *session) subscribe(m message, start time.Time) {
	if !s.acked.Load() {
		s.close(closeUnauthorized, "Unauthorized")
		return
	}
	if m.ID == "" {
		s.close(closeBadMessage, "Invalid message received")
		return
	}
	if s.op(m.ID) != nil {
		s.close(closeDuplicateID, "Subscriber for "+m.ID+" already exists")
		return
	}
	switch full, backlog := s.full(); {
	case full && backlog:
		s.close(closeUnread, "Too many operations, refusals unread")
	case full:
		s.sendErrors(m.ID, s.t.refuseOp(s.ctx))
	default:
		s.run(m, start)
	}
}

// full tells whether the connection runs as many operations as the
// transport allows, and backlog whether more than maxPending bytes of its
// messages wait for its socket. An operation enters s.ops before the next
// message is handled (run), so that no subscribe slips past the bound.
func (s *session) full() (full, backlog bool) {
	if s.t.maxOps <= 0 {
		return false, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.ops) >= s.t.maxOps, s.pending > maxPending
}

// op returns the running operation id; nil when there is none.
func (s *session) op(id string) *operation {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.ops {
		if o.id == id {
			return o
		}
	}
	return nil
}

// sendNext sends resp as a "next" message of operation id.
func (s *session) sendNext(id string, resp *graphql.Response) {
	s.send(nextMessage(id, resp))
}

// sendErrors sends an "error" message: operation id failed with errs.
func (s *session) sendErrors(id string, errs ...*gqlerror.Error) {
	s.send(errorMessage(id, errs...))
}

// send writes m; a connection that has closed takes nothing.
func (s *session) send(m message) {
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	s.mu.Lock()
	conn := s.conn
	if s.ended || conn == nil {
		s.mu.Unlock()
		return
	}
	s.pending += frameBytes(len(b), int(conn.Engine.MaxWebsocketFramePayloadSize))
	s.mu.Unlock()
	_ = conn.WriteMessage(websocket.TextMessage, b) // a failed write closes the connection
}

// written records n bytes taken by the socket.
func (s *session) written(n int) {
	s.mu.Lock()
	s.pending = max(0, s.pending-int64(n))
	if s.drained != nil && s.pending <= maxPending {
		close(s.drained)
		s.drained = nil
	}
	s.mu.Unlock()
}

// waitDrained waits while more than maxPending bytes wait for the socket,
// until ctx ends or the connection closes.
func (s *session) waitDrained(ctx context.Context) {
	s.mu.Lock()
	if s.pending <= maxPending || s.ended {
		s.mu.Unlock()
		return
	}
	if s.drained == nil {
		s.drained = make(chan struct{})
	}
	ch := s.drained
	s.mu.Unlock()
	select {
	case <-ch:
	case <-ctx.Done():
	case <-s.done:
	}
}

// close sends a close message with code and reason and closes the
// connection.
func (s *session) close(code int, reason string) {
	s.mu.Lock()
	conn := s.conn
	s.mu.Unlock()
	if conn == nil {
		return
	}
	_ = conn.WriteClose(code, reason)
	_ = conn.Close()
}

// closed ends the session when its connection has closed: every operation
// ends, and nothing more is sent.
func (s *session) closed() {
	s.mu.Lock()
	s.ended = true
	if s.drained != nil {
		close(s.drained)
		s.drained = nil
	}
	running := len(s.ops)
	s.ops = nil // they end with the context, none counted any more
	s.mu.Unlock()
	if running > 0 {
		s.t.opGauge.Add(-float64(running))
	}
	if s.initTimer != nil {
		s.initTimer.Stop()
	}
	s.cancel()
	if s.release != nil {
		s.releaseOnce.Do(s.release)
	}
}
