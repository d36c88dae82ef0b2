package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/rs/cors"

	"github.com/weibohbase/gateway/auth"
	"github.com/weibohbase/gateway/weibo"
)

// corsAllowedHeaders are the request headers a page on an allowed origin may
// send: the token, the body's type, a request id of its own, the headers
// Apollo Client and urql add, and W3C trace context.
var corsAllowedHeaders = []string{
	"Accept", "Authorization", "Content-Type", "X-Request-Id",
	"Apollo-Require-Preflight", "X-Apollo-Operation-Name",
	"Apollographql-Client-Name", "Apollographql-Client-Version",
	"Traceparent", "Tracestate",
}

// corsMaxAge is how long, in seconds, a browser may keep a preflight's
// answer (Chromium keeps it at most 2 hours).
const corsMaxAge = 600

// originPolicy decides which pages may call the gateway: those of its own
// origin always, those of the configured origins (Config.CORSOrigins)
// through CORS over HTTP and through the Origin check of WebSocket upgrades.
type originPolicy struct {
	cors *cors.Cors // nil: no other origin is allowed
}

// newOriginPolicy returns the policy allowing origins (patterns as
// ParseCORSOrigins accepts them); none allows only same-origin pages.
func newOriginPolicy(origins []string) originPolicy {
	if len(origins) == 0 {
		return originPolicy{}
	}
	return originPolicy{cors: cors.New(cors.Options{
		AllowedOrigins:   origins,
		AllowedMethods:   []string{http.MethodGet, http.MethodPost},
		AllowedHeaders:   corsAllowedHeaders,
		ExposedHeaders:   []string{middleware.RequestIDHeader}, // X-Request-Id
		AllowCredentials: true,
		MaxAge:           corsMaxAge,
	})}
}

// middleware answers preflight requests (OPTIONS with
// Access-Control-Request-Method: 204, with the Access-Control-Allow-*
// headers when the origin, method and headers are allowed) and adds
// Access-Control-Allow-Origin, -Credentials and -Expose-Headers to the
// responses of allowed origins; without allowed origins it adds nothing.
// It refuses a WebSocket upgrade that checkWebSocket refuses with HTTP 403
// and a GraphQL error FORBIDDEN, before it reaches gqlgen (whose Upgrader
// checks again, but logs each refusal).
func (p originPolicy) middleware(next http.Handler) http.Handler {
	h := next
	if p.cors != nil {
		h = p.cors.Handler(next)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") && !p.checkWebSocket(r) {
			w.Header().Set("Content-Type", mediaJSON+"; charset=utf-8")
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write(forbiddenOrigin)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// forbiddenOrigin is the body of a refused WebSocket upgrade.
var forbiddenOrigin, _ = json.Marshal(wireResponse{Errors: errorResponse(weibo.CodeForbidden,
	"this page's origin may not open a WebSocket to the gateway (see --cors-origins)").Errors})

// checkWebSocket is the Origin check of a WebSocket upgrade: true for a
// request without Origin (not from a browser), for a same-origin page (the
// Origin's host:port is the request's Host, ignoring case) and for the
// allowed origins; the upgrade of any other is refused with HTTP 403.
func (p originPolicy) checkWebSocket(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	if u, err := url.Parse(origin); err == nil && strings.EqualFold(u.Host, r.Host) {
		return true
	}
	return p.cors != nil && p.cors.OriginAllowed(r)
}

// ParseCORSOrigins parses a comma-separated list of allowed origins (the
// value of --cors-origins): each is "*" (any origin) or
// scheme://host[:port], in which one "*" may stand for any characters, as
// in http://localhost:* (any port) or https://*.example.com. Spaces around
// entries and empty entries are ignored; "" allows no other origin. An
// entry with a path, a query or more than one "*" is an error.
func ParseCORSOrigins(list string) ([]string, error) {
	var origins []string
	for _, o := range strings.Split(list, ",") {
		o = strings.TrimSpace(o)
		if o == "" {
			continue
		}
		if o != "*" {
			scheme, rest, ok := strings.Cut(o, "://")
			switch {
			case !ok || scheme == "" || rest == "":
				return nil, fmt.Errorf("CORS origin %q: want scheme://host[:port], e.g. http://localhost:3000 or http://localhost:*", o)
			case strings.ContainsAny(rest, "/?#@"):
				return nil, fmt.Errorf("CORS origin %q: an origin has no path, query or user, only scheme://host[:port]", o)
			case strings.Count(o, "*") > 1:
				return nil, fmt.Errorf("CORS origin %q: at most one * per origin", o)
			}
		}
		origins = append(origins, strings.ToLower(o))
	}
	return origins, nil
}

// wsInit is the graphql-ws InitFunc: the connection's viewer is the token
// of the connection_init payload's "Authorization" (any case), else of its
// "headers" object's "Authorization" (as Apollo Client and Hasura users
// send it), else the upgrade request's Authorization header, which the auth
// middleware has put into ctx already. In the payload the "Bearer " prefix
// may be left out. An invalid token does not refuse the connection: the
// operations needing a viewer fail with UNAUTHENTICATED saying why. The
// connection counts against the viewer's connections from then on
// (initUser): over that limit it is refused with close code 4429.
func wsInit(tokens *auth.Issuer) transport.WebsocketInitFunc {
	return func(ctx context.Context, p transport.InitPayload) (context.Context, *transport.InitPayload, error) {
		if h := payloadAuthorization(p); h != "" {
			ctx = tokens.WithAuthorization(ctx, h)
		}
		ctx, err := initUser(ctx)
		return ctx, nil, err
	}
}

// payloadAuthorization returns the Authorization value of a connection_init
// payload ("" when it has none), with "Bearer " put before a bare token.
func payloadAuthorization(p transport.InitPayload) string {
	h := stringField(p, "Authorization")
	if h == "" {
		if headers, ok := p["headers"].(map[string]any); ok {
			h = stringField(headers, "Authorization")
		}
	}
	h = strings.TrimSpace(h)
	if h != "" && !strings.Contains(h, " ") {
		h = "Bearer " + h
	}
	return h
}

// stringField returns the string value of m's key, matched ignoring case;
// "" when there is none.
func stringField(m map[string]any, key string) string {
	if s, ok := m[key].(string); ok && s != "" {
		return s
	}
	for k, v := range m {
		if s, ok := v.(string); ok && s != "" && strings.EqualFold(k, key) {
			return s
		}
	}
	return ""
}
