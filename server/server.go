// Package server assembles the gateway's HTTP handler: a chi router with the
// middleware stack (request id, also sent as X-Request-Id; structured access
// log; panic recovery; CORS; gzip; client address; request timeout; JWT
// auth; per-request dataloaders), the gqlgen GraphQL handler at /graphql
// with its limits (query cost before execution, bounded execution,
// per-client budget, login throttling, sign-up limit; see README
// "Limits"), its metrics and OpenTelemetry spans per operation (metrics.go,
// trace.go), GraphiQL at /, the admin console at /admin, Prometheus metrics
// at /metrics, and the /healthz and /readyz probes.
package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"go.opentelemetry.io/otel/trace"

	"github.com/weibohbase/gateway/auth"
	"github.com/weibohbase/gateway/graph"
	"github.com/weibohbase/gateway/loaders"
	"github.com/weibohbase/gateway/resolvers"
	"github.com/weibohbase/gateway/server/admin"
	"github.com/weibohbase/gateway/server/graphiql"
	"github.com/weibohbase/gateway/server/scim"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/media/process"
	"github.com/weibohbase/gateway/weibo/provision/clients"
)

// Config is what the handler needs. Every limit's zero value means its
// default; README "Limits" lists them with their flags.
type Config struct {
	// Svc is the domain service.
	Svc *domain.Domain
	// Tokens issues and verifies bearer tokens.
	Tokens *auth.Issuer
	// Logger receives access logs and internal errors (default
	// slog.Default()); request bodies, passwords and tokens never reach it.
	Logger *slog.Logger
	// RequestTimeout bounds each request (default 30 s): when it passes,
	// resolvers stop and the response says TIMEOUT (HTTP 504).
	RequestTimeout time.Duration
	// MaxBodyBytes bounds a request body (default 1 MiB; HTTP 413).
	MaxBodyBytes int64
	// MaxUploadBytes bounds a multipart/form-data request body, the files
	// of an upload with its operations (default DefaultMaxUploadBytes;
	// PAYLOAD_TOO_LARGE, HTTP 413); MaxBodyBytes bounds its operations part.
	MaxUploadBytes int64
	// MaxResponseBytes bounds a response's data (default 8 MiB;
	// RESPONSE_TOO_LARGE).
	MaxResponseBytes int64
	// MaxBatch bounds the operations of a JSON array batch (default 10;
	// negative: batches are refused).
	MaxBatch int
	// Limits bound each operation before it runs.
	Limits QueryLimits
	// DisableIntrospection refuses __schema and __type.
	DisableIntrospection bool
	// Documents is which operations run: DocumentsOpen (the default: any,
	// as text or as a registered document's id) or DocumentsAllowlist
	// (registered documents only, except for viewers holding
	// RUN_ANY_OPERATION; see trustedDocuments).
	Documents DocumentsMode
	// RateLimit is each client's budget in query nodes per minute (default
	// DefaultRateLimit; negative: no budget). A client is its token's user,
	// else its address. Request bodies cost a node per KiB too.
	RateLimit int64
	// ClientIPHeader, when set, names the header a reverse proxy puts the
	// client's address in (e.g. X-Forwarded-For; its last entry is used);
	// by default the connection's remote address is the client's.
	ClientIPHeader string
	// HeavyQueries is how many operations of HeavyQueryNodes nodes or more
	// execute at once; others wait (default: half the cores, at least 1;
	// negative: no bound).
	HeavyQueries int
	// Logins throttles failed logins and registrations.
	Logins LoginThrottle
	// Signups limits successful registrations per client address.
	Signups SignupLimit
	// CORSOrigins are the origins of browser pages on other origins that
	// may call the gateway, as ParseCORSOrigins returns them ("*", or
	// scheme://host[:port] with at most one "*" wildcard, lower case):
	// preflights are answered, responses carry Access-Control-Allow-Origin
	// and -Credentials and expose X-Request-Id, and their WebSocket upgrades
	// are accepted. Same-origin pages are always allowed; by default (none)
	// no other origin is, and no CORS headers are sent.
	CORSOrigins []string
	// MaxWebSocketOperations bounds the operations (subscriptions, and
	// queries while they run) one WebSocket connection runs at once
	// (default DefaultMaxWebSocketOperations; negative: no bound), on both
	// protocols: one more gets an error message of code
	// TOO_MANY_OPERATIONS for its id, and the connection stays open.
	MaxWebSocketOperations int
	// MaxWebSocketsPerUser bounds the WebSocket connections of one user
	// open at once (default DefaultMaxWebSocketsPerUser; negative: no
	// bound), the user of the upgrade's Authorization header or of the
	// connection_init payload's token: one more is refused at the upgrade
	// (HTTP 429, TOO_MANY_CONNECTIONS) or at connection_init (close code
	// 4429).
	MaxWebSocketsPerUser int
	// MaxWebSocketsPerAddress bounds the WebSocket connections of one
	// client address (as ClientIPHeader makes it) open at once (default
	// DefaultMaxWebSocketsPerAddress; negative: no bound): one more is
	// refused at the upgrade (HTTP 429, TOO_MANY_CONNECTIONS).
	MaxWebSocketsPerAddress int
	// Media is the pictures: the GraphQL fields' (uploadMedia,
	// Post.media, ...) and GET and HEAD /media/<id>/<variant>'s
	// (mediaHandler). Unset, it is the domain's (NewMedia over Svc.Media
	// and Svc.Feed, files bounded by MaxUploadBytes).
	Media Media
	// MediaCacheBytes bounds the memory of the media handler's cache of hot
	// variants (default DefaultMediaCacheBytes; negative: no cache).
	MediaCacheBytes int64
	// MediaCacheTTL is how long a cached variant is served without reading
	// the store (default DefaultMediaCacheTTL).
	MediaCacheTTL time.Duration
	// Now replaces time.Now for the throttles (tests).
	Now func() time.Time
	// TracerProvider receives a span per GraphQL operation (default: the
	// global one, otel.GetTracerProvider, which records nothing unless set).
	TracerProvider trace.TracerProvider
}

// Defaults of Config.
const (
	DefaultRequestTimeout   = 30 * time.Second
	DefaultMaxBodyBytes     = 1 << 20
	DefaultMaxResponseBytes = 8 << 20
	// DefaultMaxUploadBytes is a picture of 20 MB with its form.
	DefaultMaxUploadBytes = 20 << 20
	DefaultMaxBatch       = 10
	// DefaultRateLimit is four of the largest queries a minute, or about
	// 3,200 light ones (a timeline page of 20 with authors is 62 nodes).
	DefaultRateLimit            = 4 * DefaultMaxQueryNodes
	DefaultLoginUserFailures    = 5
	DefaultLoginAddressFailures = 20
	DefaultLoginMaxDelay        = 5 * time.Minute
	// DefaultSignupRate sign-ups per DefaultSignupWindow per address, as
	// Mastodon allows.
	DefaultSignupRate   = 25
	DefaultSignupWindow = 5 * time.Minute
	// DefaultMaxWebSocketOperations is the operations a WebSocket
	// connection may run at once: an app subscribes a few.
	DefaultMaxWebSocketOperations = 100
	// DefaultMaxWebSocketsPerUser is a user's WebSocket connections: a tab
	// or a device each.
	DefaultMaxWebSocketsPerUser = 20
	// DefaultMaxWebSocketsPerAddress is one address's WebSocket
	// connections: many users may share an address (NAT).
	DefaultMaxWebSocketsPerAddress = 100
)

func (cfg Config) withDefaults() Config {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	cfg.Logger = slog.New(LogHandler(cfg.Logger.Handler()))
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.RequestTimeout = orDefault(cfg.RequestTimeout, DefaultRequestTimeout)
	cfg.MaxBodyBytes = orDefault(cfg.MaxBodyBytes, DefaultMaxBodyBytes)
	cfg.MaxResponseBytes = orDefault(cfg.MaxResponseBytes, DefaultMaxResponseBytes)
	cfg.MaxUploadBytes = orDefault(cfg.MaxUploadBytes, DefaultMaxUploadBytes)
	if cfg.Media == nil && cfg.Svc != nil && cfg.Svc.Media != nil {
		cfg.Media = NewMedia(cfg.Svc.Media, cfg.Svc.Feed, process.Limits{MaxBytes: cfg.MaxUploadBytes})
	}
	cfg.MediaCacheBytes = orDefault(cfg.MediaCacheBytes, DefaultMediaCacheBytes)
	if cfg.MediaCacheTTL <= 0 {
		cfg.MediaCacheTTL = DefaultMediaCacheTTL
	}
	cfg.MaxBatch = orDefault(cfg.MaxBatch, DefaultMaxBatch)
	cfg.Limits = cfg.Limits.withDefaults()
	cfg.RateLimit = orDefault(cfg.RateLimit, DefaultRateLimit)
	cfg.HeavyQueries = orDefault(cfg.HeavyQueries, max(1, runtime.GOMAXPROCS(0)/2))
	cfg.Logins.UserFailures = orDefault(cfg.Logins.UserFailures, DefaultLoginUserFailures)
	cfg.Logins.AddressFailures = orDefault(cfg.Logins.AddressFailures, DefaultLoginAddressFailures)
	cfg.Logins.MaxDelay = orDefault(cfg.Logins.MaxDelay, DefaultLoginMaxDelay)
	cfg.Signups.Rate = orDefault(cfg.Signups.Rate, DefaultSignupRate)
	if cfg.Signups.Window <= 0 {
		cfg.Signups.Window = DefaultSignupWindow
	}
	cfg.MaxWebSocketOperations = orDefault(cfg.MaxWebSocketOperations, DefaultMaxWebSocketOperations)
	cfg.MaxWebSocketsPerUser = orDefault(cfg.MaxWebSocketsPerUser, DefaultMaxWebSocketsPerUser)
	cfg.MaxWebSocketsPerAddress = orDefault(cfg.MaxWebSocketsPerAddress, DefaultMaxWebSocketsPerAddress)
	return cfg
}

// New returns the gateway's HTTP handler.
func New(cfg Config) http.Handler {
	cfg = cfg.withDefaults()
	r := chi.NewRouter()
	r.Use(requestID)
	r.Use(accessLog(cfg.Logger))
	r.Use(middleware.Recoverer)
	r.Use(newOriginPolicy(cfg.CORSOrigins).middleware)
	r.Use(compress)
	r.Use(clientAddress(cfg.ClientIPHeader))
	r.Use(timeout(cfg.RequestTimeout))

	r.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	r.Get("/readyz", func(w http.ResponseWriter, req *http.Request) {
		ctx, cancel := context.WithTimeout(req.Context(), 3*time.Second)
		defer cancel()
		if err := ready(ctx, cfg.Svc.Store()); err != nil {
			http.Error(w, "store not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	r.Handle("/metrics", promhttp.Handler())
	gi := graphiql.Handler()
	r.Handle("/", gi)
	r.Handle("/"+graphiql.AssetsPrefix+"*", gi)
	if cfg.Media != nil {
		mh := &mediaHandler{src: cfg.Media, cache: newMediaCache(cfg.MediaCacheBytes, cfg.MediaCacheTTL, cfg.Now), log: cfg.Logger}
		r.Get("/media/{id}/{variant}", mh.ServeHTTP)
		r.Head("/media/{id}/{variant}", mh.ServeHTTP)
	}
	r.Handle(admin.Path, admin.Handler())
	r.Handle(admin.Path+"/*", admin.Handler())
	if cfg.Svc != nil && cfg.Svc.Provision != nil {
		r.Mount(scim.Prefix, scim.Handler(scim.Config{Provision: cfg.Svc.Provision, Clients: clients.New(cfg.Svc.Store(), nil), Logger: cfg.Logger, Now: cfg.Now}))
	}
	r.Group(func(r chi.Router) {
		r.Use(withRequestState)
		r.Use(cfg.Tokens.Middleware)
		r.Use(loaders.Middleware(cfg.Svc))
		r.Use(unavailable)
		r.Handle("/graphql", GraphQL(cfg))
	})
	return r
}

// GraphQL returns the gqlgen handler: the HTTP transport (GET and POST per
// the GraphQL-over-HTTP spec, httpTransport), WebSocket (subscriptions,
// from same-origin pages and Config.CORSOrigins; the token may come in the
// connection_init payload, see wsInit; a connection's operations and the
// connections of a user and of an address bounded, see wslimits.go),
// trusted documents (registered documents by id; --documents=allowlist
// refuses other text, see trustedDocuments), field usage metrics,
// automatic persisted queries, the query limits and budget (queryLimits),
// bounded execution and login throttling and the sign-up limit (guard),
// introspection unless disabled, and an error presenter that gives every
// error an extensions.code.
func GraphQL(cfg Config) http.Handler {
	cfg = cfg.withDefaults()
	endings := listenTokenEndings(cfg)
	refuseSuspended(cfg)
	svc := servicesOf(cfg.Svc)
	if cfg.Media != nil {
		svc.Media = cfg.Media
	}
	srv := handler.New(graph.NewExecutableSchema(graph.Config{
		Schema: servedSchema(), // @stream declared: see incremental.go
		Resolvers: &resolvers.Resolver{Svc: svc, Tokens: cfg.Tokens, EndingsOverBus: endings,
			Uploads: resolvers.NewUploadLimiter(resolvers.UploadRate, resolvers.UploadWindow, cfg.Now)},
		Directives: graph.DirectiveRoot{Authenticated: resolvers.Authenticated, HasRole: resolvers.HasRole(cfg.Svc.Org.Authz), HasPermission: resolvers.HasPermission},
	}))
	var bud *budget
	if cfg.RateLimit > 0 {
		bud = newBudget(cfg.RateLimit)
	}
	srv.AddTransport(httpTransport{maxBody: cfg.MaxBodyBytes, maxUpload: cfg.MaxUploadBytes, maxResponse: cfg.MaxResponseBytes, maxBatch: cfg.MaxBatch,
		readTimeout: cfg.RequestTimeout, budget: bud, now: cfg.Now})
	// graphql-transport-ws with nothing waiting per idle connection
	// (package pushws); the legacy graphql-ws protocol with gqlgen's
	// transport. Both count their connections in one gate.
	gate := newWSGate(limit(cfg.MaxWebSocketsPerUser), limit(cfg.MaxWebSocketsPerAddress))
	srv.AddTransport(incrementalTransport{newPushWS(cfg, gate)})
	srv.AddTransport(legacyWebsocket{Websocket: transport.Websocket{
		Implementation: gorillaWebsocket{upgrader: websocket.Upgrader{
			CheckOrigin: newOriginPolicy(cfg.CORSOrigins).checkWebSocket,
			// A connection holds a write buffer only while it writes: an
			// idle subscription keeps none (without a pool it would keep
			// the hijacked connection's 4 KiB).
			WriteBufferPool: &wsWriteBuffers}},
		KeepAlivePingInterval: 10 * time.Second,
		InitFunc:              wsInit(cfg.Tokens),
		// Messages of any size, as gorilla reads them: no read limit of
		// gqlgen's (its default is 1 MB a message).
		PayloadReadLimit: &noReadLimit,
	}, gate: gate, maxOps: limit(cfg.MaxWebSocketOperations)})
	srv.AddTransport(transport.Options{})
	srv.Use(observe{names: operationNames})
	srv.Use(tracing{tracer: tracer(cfg.TracerProvider)})
	srv.Use(newTrustedDocuments(cfg))
	srv.Use(usage{})
	markDeprecated()
	srv.SetParserTokenLimit(limit(cfg.Limits.MaxTokens))
	srv.SetValidationRulesFn(validationRules) // @defer and @stream on queries only
	// Parsed and validated documents, and persisted queries, are cached by
	// count and by total size: 1 MiB of query text each at most.
	// queryLimits measures the cost of a query found there without parsing
	// it again.
	docs := newSizedCache(1000, 1<<20, 16<<10, func(q string, _ *ast.QueryDocument) int { return len(q) })
	srv.SetQueryCache(docs)
	if !cfg.DisableIntrospection {
		srv.Use(extension.Introspection{})
	}
	srv.Use(extension.AutomaticPersistedQuery{Cache: newSizedCache(1000, 1<<20, 64<<10, func(k, q string) int { return len(k) + len(q) })})
	ln := &lanes{}
	if cfg.HeavyQueries > 0 {
		ln.heavy = make(chan struct{}, cfg.HeavyQueries)
	}
	srv.Use(&queryLimits{limits: cfg.Limits, introspection: !cfg.DisableIntrospection, budget: bud, lanes: ln, now: cfg.Now, docs: docs})
	srv.Use(guard{logins: newLogins(cfg.Logins), signups: newSignups(cfg.Signups), lanes: ln, now: cfg.Now})
	srv.SetErrorPresenter(errorPresenter(cfg.Logger))
	srv.SetRecoverFunc(func(ctx context.Context, p any) error {
		cfg.Logger.ErrorContext(ctx, "panic in resolver", "panic", p, "request_id", middleware.GetReqID(ctx))
		return errors.New("internal error")
	})
	return srv
}

// noReadLimit is transport.Websocket.PayloadReadLimit's "no limit".
var noReadLimit int64 = -1

// maxMessage bounds an error message in bytes: messages may quote input
// (gqlparser quotes the token it stumbled on), never more than this.
const maxMessage = 300

func errorPresenter(log *slog.Logger) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		gerr := present(ctx, log, err)
		gerr.Message = shorten(gerr.Message)
		return gerr
	}
}

func present(ctx context.Context, log *slog.Logger, err error) *gqlerror.Error {
	gerr := graphql.DefaultErrorPresenter(ctx, err)
	var derr *weibo.Error
	if errors.As(err, &derr) {
		gerr.Message = derr.Message
		gerr.Extensions = map[string]any{"code": derr.Code}
		if derr.Field != "" {
			gerr.Extensions["field"] = derr.Field
		}
		if derr.Reason != "" {
			gerr.Extensions["reason"] = derr.Reason
		}
		for k, v := range derr.Extensions {
			gerr.Extensions[k] = v
		}
		return gerr
	}
	if _, ok := gerr.Extensions["code"]; ok {
		return gerr // the server's own refusals; parse and validation errors from gqlgen
	}
	var gq *gqlerror.Error
	if errors.As(err, &gq) && gq.Rule != "" {
		gerr.Extensions = map[string]any{"code": CodeValidationFailed}
		return gerr
	}
	if presentUnavailable(ctx, gerr, err) {
		return gerr
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		gerr.Message = "the request ran out of time; nothing more was read"
		gerr.Extensions = map[string]any{"code": CodeTimeout}
		return gerr
	case errors.Is(err, context.Canceled):
		gerr.Message = "the request was canceled"
		gerr.Extensions = map[string]any{"code": CodeTimeout}
		return gerr
	}
	log.ErrorContext(ctx, "internal error", "err", err, "path", gerr.Path.String(), "request_id", middleware.GetReqID(ctx))
	gerr.Message = "internal error"
	gerr.Extensions = map[string]any{"code": CodeInternal}
	if id := middleware.GetReqID(ctx); id != "" {
		gerr.Extensions["requestId"] = id
	}
	return gerr
}

// shorten cuts msg to at most maxMessage bytes, on a character boundary.
func shorten(msg string) string {
	if len(msg) <= maxMessage {
		return msg
	}
	cut := maxMessage
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return strings.ToValidUTF8(msg[:cut], "") + "…"
}

// timeout bounds every request by d: its context ends then, which stops
// resolvers and store calls (guard); the transport answers TIMEOUT. A
// WebSocket upgrade is not bounded: a subscription lives as long as its
// client keeps it.
func timeout(d time.Duration) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if d <= 0 || strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
				next.ServeHTTP(w, r)
				return
			}
			ctx, cancel := context.WithTimeout(r.Context(), d)
			defer cancel()
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}
