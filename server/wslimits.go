package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/weibohbase/gateway/auth"
	"github.com/weibohbase/gateway/server/pushws"
)

// The transport label values of the WebSocket metrics: the gateway's own
// graphql-transport-ws transport (package pushws), and gqlgen's, which
// serves the legacy graphql-ws protocol (subscriptions-transport-ws).
const (
	transportWS       = "graphql-transport-ws"
	transportLegacyWS = "graphql-ws"
)

// The limit label values of WebSocketRefused.
const (
	refusedOperations = "operations"
	refusedUser       = "user"
	refusedAddress    = "address"
)

// closeTooManyConnections is the close code of a connection refused at
// connection_init because its token's user holds too many connections:
// 4429, in the family of HTTP 429 (graphql-transport-ws clients do not
// retry it).
const closeTooManyConnections = 4429

// WebSocketOperations is the Prometheus gauge
// gateway_websocket_subscriptions{transport}: the operations running on
// the instance's WebSocket connections, by transport
// ("graphql-transport-ws", "graphql-ws") — subscriptions, and a query or
// mutation sent over a WebSocket while it runs. A connection's close takes
// its operations off.
var WebSocketOperations = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "gateway_websocket_subscriptions",
	Help: "Operations (subscriptions, and queries while they run) open on WebSocket connections, by transport (graphql-transport-ws, graphql-ws).",
}, []string{"transport"})

// WebSocketConnections is the Prometheus gauge
// gateway_websocket_connections{transport}: the WebSocket connections
// admitted and not yet closed, by transport.
var WebSocketConnections = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "gateway_websocket_connections",
	Help: "WebSocket connections open, by transport (graphql-transport-ws, graphql-ws).",
}, []string{"transport"})

// WebSocketRefused is the Prometheus counter
// gateway_websocket_refused_total{limit}: what the WebSocket limits
// refused, by limit: "operations" (a subscribe over
// Config.MaxWebSocketOperations), "user" and "address" (a connection over
// Config.MaxWebSocketsPerUser or MaxWebSocketsPerAddress).
var WebSocketRefused = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "gateway_websocket_refused_total",
	Help: "Operations and connections the WebSocket limits refused, by limit (operations, user, address).",
}, []string{"limit"})

func init() {
	prometheus.MustRegister(WebSocketOperations, WebSocketConnections, WebSocketRefused)
	for _, tr := range []string{transportWS, transportLegacyWS} {
		WebSocketOperations.WithLabelValues(tr)
		WebSocketConnections.WithLabelValues(tr)
	}
	for _, l := range []string{refusedOperations, refusedUser, refusedAddress} {
		WebSocketRefused.WithLabelValues(l)
	}
}

// tooManyOperations is the error of a subscribe over a connection's limit
// of max operations, counted as a refusal.
func tooManyOperations(max int) *gqlerror.Error {
	WebSocketRefused.WithLabelValues(refusedOperations).Inc()
	e := errorResponse(CodeTooManyOperations,
		fmt.Sprintf("this connection runs %d operations, the most it may: complete one before starting another", max)).Errors[0]
	e.Extensions["limit"] = max
	return e
}

// wsGate counts the WebSocket connections of each user and each client
// address, and refuses one over Config.MaxWebSocketsPerUser or
// MaxWebSocketsPerAddress. A connection counts against its address (the
// one clientAddress found, as the throttles use) from its upgrade to its
// close, and against its user while it has one: the user of the upgrade's
// Authorization header, replaced by that of the connection_init payload's
// token when it carries one.
type wsGate struct {
	perUser, perAddr int // 0 or less: no bound

	mu    sync.Mutex
	users map[string]int // open connections by user id
	addrs map[string]int // open connections by client address
}

func newWSGate(perUser, perAddr int) *wsGate {
	return &wsGate{perUser: perUser, perAddr: perAddr, users: map[string]int{}, addrs: map[string]int{}}
}

// wsTicket is one admitted connection's place in its gate.
type wsTicket struct {
	g    *wsGate
	addr string

	mu   sync.Mutex
	user string // "" while it has none
	done bool
}

type ticketKey struct{}

// ticketOf returns the ticket of ctx's connection; nil outside one.
func ticketOf(ctx context.Context) *wsTicket {
	t, _ := ctx.Value(ticketKey{}).(*wsTicket)
	return t
}

// viewerKey returns the user id of ctx's token, "" when it has no valid
// one. The token's signature and expiry are checked, not its users row:
// counting needs no store read.
func viewerKey(ctx context.Context) string {
	if tok, ok := auth.ViewerToken(ctx); ok {
		return tok.User.String()
	}
	return ""
}

// admit is the pushws.AdmitFunc of the transport labelled label (and
// legacyWebsocket's gate): it refuses an upgrade over a limit with HTTP
// 429 and a TOO_MANY_CONNECTIONS error, else returns r's context carrying
// the connection's ticket, and its release.
func (g *wsGate) admit(label string) pushws.AdmitFunc {
	return func(w http.ResponseWriter, r *http.Request) (context.Context, func(), bool) {
		addr, user := clientAddr(r.Context()), viewerKey(r.Context())
		g.mu.Lock()
		refused := ""
		switch {
		case g.perAddr > 0 && g.addrs[addr] >= g.perAddr:
			refused = refusedAddress
		case user != "" && g.perUser > 0 && g.users[user] >= g.perUser:
			refused = refusedUser
		default:
			g.addrs[addr]++
			if user != "" {
				g.users[user]++
			}
		}
		g.mu.Unlock()
		if refused != "" {
			writeConnectionRefusal(w, g.refusal(refused))
			return nil, nil, false
		}
		WebSocketConnections.WithLabelValues(label).Inc()
		t := &wsTicket{g: g, addr: addr, user: user}
		return context.WithValue(r.Context(), ticketKey{}, t), func() {
			t.release()
			WebSocketConnections.WithLabelValues(label).Dec()
		}, true
	}
}

// refusal is the error of a connection over the limit of kind
// (refusedUser or refusedAddress), counted as a refusal.
func (g *wsGate) refusal(kind string) *gqlerror.Error {
	WebSocketRefused.WithLabelValues(kind).Inc()
	max, whose := g.perAddr, "this address"
	if kind == refusedUser {
		max, whose = g.perUser, "this user"
	}
	e := errorResponse(CodeTooManyConnections,
		fmt.Sprintf("%s has %d WebSocket connections open, the most it may: close one before opening another", whose, max)).Errors[0]
	e.Extensions["measure"] = kind
	e.Extensions["limit"] = max
	return e
}

// writeConnectionRefusal answers a refused upgrade: HTTP 429 with a
// GraphQL response holding e.
func writeConnectionRefusal(w http.ResponseWriter, e *gqlerror.Error) {
	b, _ := json.Marshal(wireResponse{Errors: gqlerror.List{e}})
	w.Header().Set("Content-Type", mediaJSON+"; charset=utf-8")
	w.WriteHeader(http.StatusTooManyRequests)
	_, _ = w.Write(b)
}

// setUser makes user ("" for none) the user the connection counts
// against, releasing the one it counted against before; over the user's
// limit it changes nothing and returns the refusal.
func (t *wsTicket) setUser(user string) *gqlerror.Error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done || user == t.user {
		return nil
	}
	g := t.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if user != "" && g.perUser > 0 && g.users[user] >= g.perUser {
		return g.refusal(refusedUser)
	}
	if user != "" {
		g.users[user]++
	}
	g.drop(g.users, t.user)
	t.user = user
	return nil
}

// release gives the connection's places back; later calls do nothing.
func (t *wsTicket) release() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return
	}
	t.done = true
	t.g.mu.Lock()
	t.g.drop(t.g.users, t.user)
	t.g.drop(t.g.addrs, t.addr)
	t.g.mu.Unlock()
}

// drop takes one connection of key off m ("" is none); g.mu is held.
func (g *wsGate) drop(m map[string]int, key string) {
	if key == "" {
		return
	}
	if m[key] <= 1 {
		delete(m, key)
		return
	}
	m[key]--
}

// initUser is the connection_init step of the gate: the connection now
// counts against the user of ctx's token (the payload's, else the
// upgrade's). Over that user's limit it returns the error that refuses
// the connection — a *pushws.CloseError for package pushws — and the
// context gqlgen's transport closes with (the same code and reason).
func initUser(ctx context.Context) (context.Context, error) {
	t := ticketOf(ctx)
	if t == nil {
		return ctx, nil
	}
	gerr := t.setUser(viewerKey(ctx))
	if gerr == nil {
		return ctx, nil
	}
	const reason = "Too many connections for this user"
	ctx = transport.WithWebsocketCloseCode(transport.AppendCloseReason(ctx, reason), closeTooManyConnections)
	return ctx, &pushws.CloseError{Code: closeTooManyConnections, Reason: reason}
}
