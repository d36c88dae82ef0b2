package pushws

import (
	"context"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
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
