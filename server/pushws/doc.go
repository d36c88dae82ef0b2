// Package pushws serves the graphql-transport-ws protocol (the graphql-ws
// npm client's, GraphiQL's) as a gqlgen graphql.Transport with nothing
// waiting per idle connection: after the handshake the connection leaves
// net/http for nbio's pollers (epoll), its messages are handled as they
// arrive (in order, on nbio's goroutine pool), and a subscription's events
// are written by the goroutine of the source that produced them
// (live.Sink). An idle subscription so holds no goroutine of the
// transport's, no read or write buffer, and no request-scoped state: each
// response is resolved in a context the server makes fresh for it (Scope).
//
// The legacy graphql-ws protocol (subscriptions-transport-ws) is left to
// gqlgen's transport.Websocket: Supports refuses a handshake that offers
// it first.
//
// A client that reads slower than its subscriptions produce is held back:
// once more than 256 KiB of its messages wait for its socket, the source's
// goroutine waits, the source's bounded queue fills, and the subscription
// ends the source's way (the gateway's SLOW_CONSUMER), as it would over a
// blocking write.
//
// What one client may hold is bounded by the server's options: at most
// MaxOperations operations at once on a connection (a subscribe over the
// bound gets an "error" for its id, the connection stays open; one whose
// refusals wait unread, more than 256 KiB of them, is closed with 1008),
// and an
// AdmitFunc that may refuse an upgrade (the server's connections per user
// and per address) and learns of the connection's close; the running
// operations are counted on an OperationGauge.
//
// The package's files by role: codec.go, the protocol's messages, close
// codes and frame sizes; session.go, a connection's state machine;
// gqlgen.go, the graphql.Transport running gqlgen's executor for each
// operation; nbio.go, the poller engine and the upgrade; options.go, what
// the server configures (Origin check, connection_init, error presenter,
// message size, Scope, the bounds and the gauge).
package pushws
