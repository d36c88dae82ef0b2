package pushws

import (
	"context"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Scope makes the contexts an operation runs in, carrying the server's
// request-scoped state (dataloaders, per-request caches) so that none of
// it outlives the work it serves: a subscription lives on, its setup's
// state must not.
type Scope interface {
	// Scoped returns ctx carrying state for an operation's setup (parsing,
	// validation, the subscription's resolver) until release is called;
	// after it, what ctx gives must be made anew on each use.
	Scoped(ctx context.Context) (_ context.Context, release func())
	// Fresh returns ctx carrying new state, for one response of an
	// operation (a query's result, a subscription's event).
	Fresh(ctx context.Context) context.Context
}

// noScope is the Scope of a Transport without one: contexts as given.
type noScope struct{}

func (noScope) Scoped(ctx context.Context) (context.Context, func()) { return ctx, func() {} }
func (noScope) Fresh(ctx context.Context) context.Context            { return ctx }

// Option configures a Transport (New).
type Option func(*Transport)

// CheckOrigin sets the Origin check of an upgrade: a handshake it returns
// false for is refused with HTTP 403. Without it only same-origin
// handshakes (Origin's host is Host) and those without Origin are
// accepted.
func CheckOrigin(f func(*http.Request) bool) Option {
	return func(t *Transport) { t.checkOrigin = f }
}

// InitFunc sets what a connection_init does: f gets the connection's
// context (the upgrade request's values) and the message's payload (nil
// when it has none), and returns the context the connection's operations
// run in; an error refuses the connection (close code 4403). Its returned
// payload is not sent: connection_ack carries none. Without it the
// connection's context stays the request's.
func InitFunc(f transport.WebsocketInitFunc) Option {
	return func(t *Transport) { t.init = f }
}

// ErrorPresenter sets how the errors a subscription ends with (live.Sink's
// Fail and End) and a recovered panic of an operation's setup become
// GraphQL errors; it should be the executor's own, so that they read like
// any other. Default: graphql.DefaultErrorPresenter.
func ErrorPresenter(f graphql.ErrorPresenterFunc) Option {
	return func(t *Transport) { t.present = f }
}

// MaxMessageBytes bounds a client's message in bytes; a longer one closes
// the connection. Zero or less (the default): no bound.
func MaxMessageBytes(n int) Option {
	return func(t *Transport) { t.maxMessage = n }
}

// OperationScope sets the Scope of the transport's operations. Without
// one operations run in the connection's context as it is.
func OperationScope(s Scope) Option {
	return func(t *Transport) { t.scope = s }
}

// MaxOperations bounds the operations running at once on a connection to
// n: a subscribe over the bound is answered by an "error" message for its
// id carrying the one error refuse returns (given the connection's
// context; nil: a message without extensions), and the connection stays
// open. An operation's end frees its place before its "complete" or
// "error" is sent. Zero or less (the default): no bound.
func MaxOperations(n int, refuse func(ctx context.Context) *gqlerror.Error) Option {
	if refuse == nil {
		refuse = func(context.Context) *gqlerror.Error {
			return &gqlerror.Error{Message: "too many operations on this connection"}
		}
	}
	return func(t *Transport) { t.maxOps, t.refuseOp = n, refuse }
}

// AdmitFunc decides on a WebSocket upgrade before it happens. To refuse
// it, it answers w itself and returns ok false. To admit it, it returns
// ok true, the context the connection runs in (r's, or one made from it:
// its values reach InitFunc and the operations) and release, which the
// Transport calls once when the connection has closed or its upgrade
// failed.
type AdmitFunc func(w http.ResponseWriter, r *http.Request) (ctx context.Context, release func(), ok bool)

// Admit sets the check of each upgrade (AdmitFunc). Without it every
// upgrade that passes the Origin check is accepted.
func Admit(f AdmitFunc) Option {
	return func(t *Transport) { t.admit = f }
}

// Gauge is what a Transport reports a count's changes to
// (prometheus.Gauge is one).
type Gauge interface {
	// Add adds delta (negative: subtracts) to the count.
	Add(delta float64)
}

// OperationGauge sets the gauge of the Transport's running operations:
// one more when an operation has started (its document accepted), one
// less when it has ended or its connection has closed.
func OperationGauge(g Gauge) Option {
	return func(t *Transport) { t.opGauge = g }
}

// CloseError is an error of InitFunc that closes the connection with a
// close code and reason of its own (4400 to 4999, and a reason of at most
// 123 bytes) instead of 4403 Forbidden.
type CloseError struct {
	Code   int
	Reason string
}

// Error implements error: the reason.
func (e *CloseError) Error() string { return e.Reason }
