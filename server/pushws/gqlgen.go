package pushws

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"go.opentelemetry.io/otel"

	"github.com/weibohbase/gateway/live"
)

// Transport is the graphql.Transport of graphql-transport-ws: add it to a
// gqlgen handler (handler.Server.AddTransport) before gqlgen's own
// transport.Websocket, which then serves the legacy graphql-ws protocol.
// It runs each operation as gqlgen's WebSocket transport does, with the
// handler's executor. The Transports of a process share one nbio engine
// (one poller), started by the first Do.
type Transport struct {
	checkOrigin func(*http.Request) bool
	init        transport.WebsocketInitFunc
	present     graphql.ErrorPresenterFunc // as the executor's: a subscription's end is an error like any other
	maxMessage  int
	scope       Scope
	initTimeout time.Duration
	maxOps      int // operations a connection may run at once; 0 or less: no bound
	refuseOp    func(context.Context) *gqlerror.Error
	admit       AdmitFunc // nil: every upgrade
	opGauge     Gauge
}

// nopGauge is the Gauge of a Transport without one.
type nopGauge struct{}

func (nopGauge) Add(float64) {}

var _ graphql.Transport = (*Transport)(nil)

// New returns a Transport configured by opts.
func New(opts ...Option) *Transport {
	t := &Transport{
		init: func(ctx context.Context, _ transport.InitPayload) (context.Context, *transport.InitPayload, error) {
			return ctx, nil, nil
		},
		present:     graphql.DefaultErrorPresenter,
		scope:       noScope{},
		initTimeout: initTimeout,
		opGauge:     nopGauge{},
	}
	for _, o := range opts {
		o(t)
	}
	return t
}

// Supports implements graphql.Transport: WebSocket handshakes whose first
// GraphQL subprotocol offered is graphql-transport-ws.
func (t *Transport) Supports(r *http.Request) bool {
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

// isWebSocketUpgrade tells a well-formed WebSocket handshake from
// everything else (as the gateway's HTTP transport tells them apart).
func isWebSocketUpgrade(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.EqualFold(r.Header.Get("Upgrade"), "websocket") &&
		headerHasToken(r.Header, "Connection", "upgrade") &&
		r.Header.Get("Sec-Websocket-Key") != "" && r.Header.Get("Sec-Websocket-Version") == "13"
}

// headerHasToken tells whether h's comma-separated values of name hold
// token, ignoring case.
func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// Do implements graphql.Transport: it asks the AdmitFunc, upgrades the
// connection, hands it to the pollers and returns; the session lives on in
// the connection. When the pollers cannot start it answers HTTP 503.
func (t *Transport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	e, err := engine()
	if err != nil {
		http.Error(w, "WebSocket unavailable", http.StatusServiceUnavailable)
		return
	}
	ctx, release := r.Context(), func() {}
	if t.admit != nil {
		var ok bool
		if ctx, release, ok = t.admit(w, r); !ok {
			return
		}
	}
	s := newSession(ctx, t, exec, r.Header)
	s.release = release
	if err := upgrade(e, w, r, s); err != nil {
		s.initTimer.Stop()
		s.cancel()
		s.releaseOnce.Do(release)
	}
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

// run starts operation m with the session's executor as gqlgen's
// wsConnection.subscribe does: StartOperationTrace, CreateOperationContext
// and on its errors DispatchError (an "error" message for a protocol-kind
// error, else "next" with the errors and "complete"), then
// DispatchOperation, whose panic goes through the operation context's
// Recover and the error presenter. A subscription whose source takes the
// live.Sink then delivers its own events; any other operation (and a
// subscription that failed) is pulled by a goroutine of its own until its
// response handler returns nil, as gqlgen's.
func (s *session) run(m message, start time.Time) {
	// The operation's scope serves its setup (and a query's execution);
	// a subscription's events get fresh ones each (step).
	ctx, release := s.t.scope.Scoped(s.ctx)
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
			s.send(message{ID: m.ID, Type: "complete"})
		}
		return
	}
	ctx = graphql.WithOperationContext(ctx, rc)
	ctx, cancel := context.WithCancel(ctx)
	op := &operation{s: s, id: m.ID, cancel: cancel, root: rootField(rc.Operation)}
	op.ready.Add(1)
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		cancel()
		return
	}
	s.ops = append(s.ops, op)
	s.mu.Unlock()
	s.t.opGauge.Add(1)
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

// operation is one operation of a session; as a live.Sink its source
// drives it.
type operation struct {
	s      *session
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

var _ live.Sink = (*operation)(nil)

// Take implements live.Sink.
func (o *operation) Take() { o.taken.Store(true) }

// Fail implements live.Sink.
func (o *operation) Fail(err error) {
	o.mu.Lock()
	o.failed = append(o.failed, err)
	o.mu.Unlock()
}

// End implements live.Sink.
func (o *operation) End(err error) {
	o.Fail(err)
	o.cancel()
}

// Emit implements live.Sink: it receives the source's value, writes it,
// and waits while the client is too far behind.
func (o *operation) Emit() {
	o.ready.Wait()
	if !o.step() {
		return
	}
	o.s.waitDrained(o.ctx)
}

// pull runs an operation no source drives: its responses until the end.
func (o *operation) pull() {
	for o.step() {
	}
}

// step takes the operation's next response, in a fresh context of the
// scope, and sends it; false when the operation has ended (then it has
// sent its end).
func (o *operation) step() (more bool) {
	defer func() {
		if p := recover(); p != nil {
			o.Fail(graphql.GetOperationContext(o.ctx).Recover(o.ctx, p))
			o.finish()
			more = false
		}
	}()
	resp := o.next(o.s.t.scope.Fresh(o.ctx))
	if resp == nil {
		o.finish()
		return false
	}
	o.s.sendNext(o.id, resp)
	return true
}

// finish ends the operation once: an "error" message with the errors its
// source failed with, presented with the root field as their path, else
// "complete"; nothing when the connection has closed.
func (o *operation) finish() {
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
	n := len(s.ops)
	s.ops = slices.DeleteFunc(s.ops, func(x *operation) bool { return x == o })
	removed := len(s.ops) < n // not when the connection's close took it
	s.mu.Unlock()
	if removed {
		s.t.opGauge.Add(-1)
	}
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
		s.send(message{ID: o.id, Type: "complete"})
	}
}
