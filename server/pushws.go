package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/lesismal/nbio"
	"github.com/lesismal/nbio/logging"
	"github.com/lesismal/nbio/nbhttp"
	"github.com/lesismal/nbio/nbhttp/websocket"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"go.opentelemetry.io/otel"

	"github.com/weibohbase/gateway/live"
	"github.com/weibohbase/gateway/loaders"
	"github.com/weibohbase/gateway/weibo/domain"
)

// pushWS serves the graphql-transport-ws protocol (the graphql-ws npm
// client's, GraphiQL's) with nothing waiting per idle connection: after
// the handshake the connection leaves net/http for nbio's pollers (epoll),
// its messages are handled as they arrive (in order, on nbio's goroutine
// pool), and a subscription's events are written by the goroutine of the
// source that produced them (live.Sink). An idle subscription so holds no
// goroutine of the transport's, no read or write buffer, and no
// request-scoped dataloaders: each event is resolved with fresh ones.
//
// The legacy graphql-ws protocol (subscriptions-transport-ws) stays with
// gqlgen's transport.Websocket, which Supports leaves it to.
//
// A client that reads slower than its subscriptions produce is held back:
// once more than maxPending bytes wait for its socket, the source's
// goroutine waits, the source's bounded queue fills, and the subscription
// ends with SLOW_CONSUMER, as it would over a blocking write.
type pushWS struct {
	svc         *domain.Domain
	checkOrigin func(*http.Request) bool
	init        transport.WebsocketInitFunc
	present     graphql.ErrorPresenterFunc // as the executor's: a subscription's end is an error like any other
	maxMessage  int
}

// graphqlTransportWS is the protocol pushWS serves.
const graphqlTransportWS = "graphql-transport-ws"

// Close codes of graphql-transport-ws.
const (
	closeBadMessage   = 4400
	closeUnauthorized = 4401
	closeForbidden    = 4403 // a refused connection_init
	closeInitTimeout  = 4408
	closeDuplicateID  = 4409
	closeTooManyInits = 4429
)

const (
	// maxPending is how many bytes of a connection's messages may wait for
	// its socket before the subscription writing more waits.
	maxPending = 256 << 10
	// initTimeout is how long a connection may go without connection_init.
	initTimeout = 30 * time.Second
)

var _ graphql.Transport = (*pushWS)(nil)

// newPushWS returns the transport of cfg.
func newPushWS(cfg Config) *pushWS {
	return &pushWS{svc: cfg.Svc, checkOrigin: newOriginPolicy(cfg.CORSOrigins).checkWebSocket, init: wsInit(cfg.Tokens),
		present: errorPresenter(cfg.Logger), maxMessage: int(cfg.MaxBodyBytes)}
}

// Supports implements graphql.Transport: WebSocket handshakes whose first
// GraphQL subprotocol offered is graphql-transport-ws.
func (t *pushWS) Supports(r *http.Request) bool {
	if !isWebSocketUpgrade(r) {
		return false
	}
	for _, v := range r.Header.Values("Sec-Websocket-Protocol") {
		for p := range strings.SplitSeq(v, ",") {
			switch strings.TrimSpace(p) {
			case graphqlTransportWS:
				return true
			case "graphql-ws":
				return false // gqlgen's transport picks the first offered too
			}
		}
	}
	return false
}

// pushEngine is the process's nbio engine: its pollers serve the
// connections of every pushWS (started on first use, never stopped).
var pushEngine = sync.OnceValues(func() (*nbhttp.Engine, error) {
	logging.SetLogger(nbioLog{})
	e := nbhttp.NewEngine(nbhttp.Config{Name: "gateway-ws", NPoller: 1, ReleaseWebsocketPayload: true})
	e.OnWrittenSize(func(c *nbio.Conn, _ []byte, n int) {
		if wc, ok := c.Session().(*websocket.Conn); ok {
			if s, ok := wc.Session().(*wsSession); ok {
				s.written(n)
			}
		}
	})
	return e, e.Start()
})

// nbioLog sends nbio's warnings and errors to the process's slog logger
// (its own would print them to standard output); its debug and info lines
// are dropped.
type nbioLog struct{}

func (nbioLog) Debug(string, ...any) {}
func (nbioLog) Info(string, ...any)  {}
func (nbioLog) Warn(format string, v ...any) {
	slog.Warn("websocket poller: " + fmt.Sprintf(format, v...))
}
func (nbioLog) Error(format string, v ...any) {
	slog.Error("websocket poller: " + fmt.Sprintf(format, v...))
}

// Do implements graphql.Transport: it upgrades the connection, hands it to
// the pollers and returns; the session lives on in the connection.
func (t *pushWS) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	engine, err := pushEngine()
	if err != nil {
		http.Error(w, "WebSocket unavailable", http.StatusServiceUnavailable)
		return
	}
	// Of the request's headers the session keeps the trace context's
	// (tracing reads them), not the rest.
	s := &wsSession{t: t, exec: exec, headers: traceHeaders(r.Header)}
	// The request's values (viewer, request id, client address) without
	// its end: net/http cancels it when Do returns.
	s.ctx, s.cancel = context.WithCancel(context.WithoutCancel(r.Context()))
	s.done = s.ctx.Done()
	s.initTimer = time.AfterFunc(initTimeout, func() {
		if !s.acked.Load() {
			s.close(closeInitTimeout, "Connection initialisation timeout")
		}
	})
	u := websocket.NewUpgrader() // one per connection: its handlers know s
	u.Engine = engine
	u.Subprotocols = []string{graphqlTransportWS}
	u.CheckOrigin = t.checkOrigin
	u.MessageLengthLimit = t.maxMessage
	// A message may come before Upgrade returns: each handler learns the
	// connection from its argument.
	u.OnMessage(func(c *websocket.Conn, _ websocket.MessageType, data []byte) {
		s.attach(c)
		s.receive(data)
	})
	u.OnClose(func(*websocket.Conn, error) { s.closed() })
	conn, err := u.UpgradeAndTransferConnToPoller(w, r, nil)
	if err != nil {
		s.initTimer.Stop()
		s.cancel()
		return // the upgrader answered
	}
	s.attach(conn)
}

// traceHeaders returns the headers of h that carry a trace context (those
// of the text-map propagator); nil when there are none.
func traceHeaders(h http.Header) http.Header {
	var out http.Header
	for _, k := range otel.GetTextMapPropagator().Fields() {
		if v := h.Values(k); len(v) > 0 {
			if out == nil {
				out = http.Header{}
			}
			out[http.CanonicalHeaderKey(k)] = v
		}
	}
	return out
}

// attach sets the session's connection and makes it the connection's
// session (for the written-bytes callback).
func (s *wsSession) attach(c *websocket.Conn) {
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

// wsSession is one connection.
type wsSession struct {
	t       *pushWS
	exec    graphql.GraphExecutor
	headers http.Header
	ctx     context.Context // the connection's, with connection_init's values: the message handler's alone
	done    <-chan struct{} // closed when the connection has closed
	cancel  context.CancelFunc

	initTimer *time.Timer
	acked     atomic.Bool

	mu      sync.Mutex
	conn    *websocket.Conn
	ops     []*wsOp // a slice: a connection runs an operation or a few
	ended   bool
	pending int64         // bytes written but not yet taken by the socket
	drained chan struct{} // closed when pending falls to maxPending or below
}

// wsMessage is a graphql-transport-ws message.
type wsMessage struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// receive handles one message from the client.
func (s *wsSession) receive(data []byte) {
	start := graphql.Now()
	var m wsMessage
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
			s.close(closeForbidden, "Forbidden")
			return
		}
		s.ctx = ctx // read by this goroutine only (messages are handled in order)
		s.send(wsMessage{Type: "connection_ack"})
	case "ping":
		s.send(wsMessage{Type: "pong", Payload: m.Payload})
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

// op returns the running operation id; nil when there is none.
func (s *wsSession) op(id string) *wsOp {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.ops {
		if o.id == id {
			return o
		}
	}
	return nil
}

// subscribe starts operation m: a subscription whose source takes the
// live.Sink delivers its own events; any other operation (and a
// subscription that failed) is pulled by a goroutine of its own until it
// ends.
func (s *wsSession) subscribe(m wsMessage, start time.Time) {
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
	// The operation's loaders serve its setup (and a query's execution);
	// a subscription's events get fresh ones each (step).
	ctx, release := loaders.Scoped(s.ctx, s.t.svc)
	defer release()
	ctx = graphql.StartOperationTrace(ctx)
	params := &graphql.RawParams{}
	dec := json.NewDecoder(bytes.NewReader(m.Payload))
	dec.UseNumber()
	if err := dec.Decode(params); err != nil {
		s.sendErrors(m.ID, &gqlerror.Error{Message: "invalid json"})
		return
	}
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	params.Headers = s.headers
	rc, errs := s.exec.CreateOperationContext(ctx, params)
	if errs != nil {
		resp := s.exec.DispatchError(graphql.WithOperationContext(ctx, rc), errs)
		if errcode.GetErrorKind(errs) == errcode.KindProtocol {
			s.sendErrors(m.ID, resp.Errors...)
		} else {
			s.sendNext(m.ID, &graphql.Response{Errors: errs})
			s.send(wsMessage{ID: m.ID, Type: "complete"})
		}
		return
	}
	ctx = graphql.WithOperationContext(ctx, rc)
	ctx, cancel := context.WithCancel(ctx)
	op := &wsOp{s: s, id: m.ID, cancel: cancel, root: rootField(rc.Operation)}
	op.ready.Add(1)
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		cancel()
		return
	}
	s.ops = append(s.ops, op)
	s.mu.Unlock()
	if rc.Operation.Operation == ast.Subscription {
		ctx = live.WithSink(ctx, op)
	}
	func() {
		defer func() {
			if p := recover(); p != nil {
				op.next = graphql.OneShot(&graphql.Response{Errors: gqlerror.List{s.t.present(ctx, rc.Recover(ctx, p))}})
				op.ctx = ctx
			}
		}()
		op.next, op.ctx = s.exec.DispatchOperation(ctx, rc)
	}()
	op.ready.Done()
	if !op.taken.Load() {
		go op.pull()
	}
}

// rootField is the response key of op's first root field: a
// subscription's only one (the path of the errors that end it).
func rootField(op *ast.OperationDefinition) string {
	for _, sel := range op.SelectionSet {
		if f, ok := sel.(*ast.Field); ok {
			return f.Alias
		}
	}
	return ""
}

// wsOp is one operation of a session; as a live.Sink its source drives
// it.
type wsOp struct {
	s      *wsSession
	id     string
	root   string // the response key of the root field
	cancel context.CancelFunc
	ready  sync.WaitGroup // done once next and ctx are set
	next   graphql.ResponseHandler
	ctx    context.Context
	taken  atomic.Bool

	mu     sync.Mutex
	failed []error
	done   bool
}

// Take implements live.Sink.
func (o *wsOp) Take() { o.taken.Store(true) }

// Fail implements live.Sink.
func (o *wsOp) Fail(err error) {
	o.mu.Lock()
	o.failed = append(o.failed, err)
	o.mu.Unlock()
}

// End implements live.Sink.
func (o *wsOp) End(err error) {
	o.Fail(err)
	o.cancel()
}

// Emit implements live.Sink: it receives the source's value, writes it,
// and waits while the client is too far behind.
func (o *wsOp) Emit() {
	o.ready.Wait()
	if !o.step() {
		return
	}
	o.s.waitDrained(o.ctx)
}

// pull runs an operation no source drives: its responses until the end.
func (o *wsOp) pull() {
	for o.step() {
	}
}

// step takes the operation's next response and sends it; false when the
// operation has ended (then it has sent its end).
func (o *wsOp) step() (more bool) {
	defer func() {
		if p := recover(); p != nil {
			o.Fail(graphql.GetOperationContext(o.ctx).Recover(o.ctx, p))
			o.finish()
			more = false
		}
	}()
	resp := o.next(loaders.Fresh(o.ctx, o.s.t.svc))
	if resp == nil {
		o.finish()
		return false
	}
	o.s.sendNext(o.id, resp)
	return true
}

// finish ends the operation once: an "error" message with the errors its
// source failed with, else "complete"; nothing when the connection has
// closed.
func (o *wsOp) finish() {
	o.mu.Lock()
	if o.done {
		o.mu.Unlock()
		return
	}
	o.done = true
	failed := o.failed
	o.mu.Unlock()
	o.cancel()
	s := o.s
	s.mu.Lock()
	s.ops = slices.DeleteFunc(s.ops, func(x *wsOp) bool { return x == o })
	s.mu.Unlock()
	if len(failed) > 0 {
		ctx := o.ctx
		if o.root != "" {
			ctx = graphql.WithPathContext(ctx, graphql.NewPathWithField(o.root))
		}
		errs := make([]*gqlerror.Error, len(failed))
		for i, err := range failed {
			errs[i] = s.t.present(ctx, err)
		}
		s.sendErrors(o.id, errs...)
	} else {
		s.send(wsMessage{ID: o.id, Type: "complete"})
	}
}

// sendNext sends resp as a "next" message of operation id.
func (s *wsSession) sendNext(id string, resp *graphql.Response) {
	b, err := json.Marshal(resp)
	if err != nil {
		panic(err) // a response always marshals
	}
	s.send(wsMessage{ID: id, Type: "next", Payload: b})
}

// sendErrors sends an "error" message: operation id failed with errs.
func (s *wsSession) sendErrors(id string, errs ...*gqlerror.Error) {
	b, err := json.Marshal(errs)
	if err != nil {
		panic(err)
	}
	s.send(wsMessage{ID: id, Type: "error", Payload: b})
}

// send writes m; a connection that has closed takes nothing.
func (s *wsSession) send(m wsMessage) {
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

// frameBytes is what a server writes for a message of n bytes cut into
// frames of at most max: each frame's header (2, 4 or 10 bytes; no mask)
// and payload.
func frameBytes(n, max int) int64 {
	total := int64(0)
	for first := true; first || n > 0; first = false {
		f := min(n, max)
		total += int64(f) + 2
		switch {
		case f > 65535:
			total += 8
		case f > 125:
			total += 2
		}
		n -= f
	}
	return total
}

// written records n bytes taken by the socket.
func (s *wsSession) written(n int) {
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
func (s *wsSession) waitDrained(ctx context.Context) {
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
func (s *wsSession) close(code int, reason string) {
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
func (s *wsSession) closed() {
	s.mu.Lock()
	s.ended = true
	if s.drained != nil {
		close(s.drained)
		s.drained = nil
	}
	s.mu.Unlock()
	if s.initTimer != nil {
		s.initTimer.Stop()
	}
	s.cancel()
}
