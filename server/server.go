// Package server assembles the gateway's HTTP handler: a chi router with the
// middleware stack (request id, structured access log, panic recovery,
// request timeout, body limit, JWT auth, per-request dataloaders), the gqlgen
// GraphQL handler at /graphql, GraphiQL at /, Prometheus metrics at
// /metrics, and the /healthz and /readyz probes.
package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/99designs/gqlgen/graphql/playground"
	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/weibohbase/gateway/auth"
	"github.com/weibohbase/gateway/graph"
	"github.com/weibohbase/gateway/loaders"
	"github.com/weibohbase/gateway/resolvers"
	"github.com/weibohbase/gateway/weibo"
)

// Config is what the handler needs.
type Config struct {
	// Svc is the domain service.
	Svc *weibo.Service
	// Tokens issues and verifies bearer tokens.
	Tokens *auth.Issuer
	// Logger receives access logs and internal errors (default slog.Default()).
	Logger *slog.Logger
	// RequestTimeout bounds each request (default 30 s).
	RequestTimeout time.Duration
	// MaxBodyBytes bounds a request body (default 1 MiB).
	MaxBodyBytes int64
	// ComplexityLimit bounds a query's complexity (default 5000).
	ComplexityLimit int
}

// New returns the gateway's HTTP handler.
func New(cfg Config) http.Handler {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = 30 * time.Second
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	if cfg.ComplexityLimit == 0 {
		cfg.ComplexityLimit = 5000
	}
	r := chi.NewRouter()
	r.Use(middleware.RequestID)
	r.Use(accessLog(cfg.Logger))
	r.Use(middleware.Recoverer)
	r.Use(timeout(cfg.RequestTimeout))
	r.Use(middleware.RequestSize(cfg.MaxBodyBytes))

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
	r.Handle("/", playground.Handler("Weibo GraphQL gateway", "/graphql"))
	r.Group(func(r chi.Router) {
		r.Use(cfg.Tokens.Middleware)
		r.Use(loaders.Middleware(cfg.Svc))
		r.Use(unavailable)
		r.Handle("/graphql", GraphQL(cfg))
	})
	return r
}

// GraphQL returns the gqlgen handler: POST, GET and WebSocket (subscriptions;
// the token may come in the connection_init payload) transports, automatic
// persisted queries, a complexity limit, introspection, and an error
// presenter that gives every error an extensions.code.
func GraphQL(cfg Config) http.Handler {
	srv := handler.New(graph.NewExecutableSchema(graph.Config{
		Resolvers:  &resolvers.Resolver{Svc: cfg.Svc, Tokens: cfg.Tokens},
		Directives: graph.DirectiveRoot{HasRole: resolvers.HasRole(cfg.Svc)},
	}))
	srv.AddTransport(transport.Websocket{
		KeepAlivePingInterval: 10 * time.Second,
		InitFunc: func(ctx context.Context, p transport.InitPayload) (context.Context, *transport.InitPayload, error) {
			return cfg.Tokens.WithAuthorization(ctx, p.Authorization()), nil, nil
		},
	})
	srv.AddTransport(transport.Options{})
	srv.AddTransport(transport.GET{})
	srv.AddTransport(transport.POST{})
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	srv.Use(extension.Introspection{})
	srv.Use(extension.AutomaticPersistedQuery{Cache: lru.New[string](100)})
	srv.Use(extension.FixedComplexityLimit(cfg.ComplexityLimit))
	srv.SetErrorPresenter(errorPresenter(cfg.Logger))
	srv.SetRecoverFunc(func(ctx context.Context, p any) error {
		cfg.Logger.ErrorContext(ctx, "panic in resolver", "panic", p, "request_id", middleware.GetReqID(ctx))
		return errors.New("internal error")
	})
	return srv
}

// CodeInternal is the extensions.code of errors the caller cannot fix.
const CodeInternal = "INTERNAL_SERVER_ERROR"

func errorPresenter(log *slog.Logger) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
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
			return gerr
		}
		if _, ok := gerr.Extensions["code"]; ok {
			return gerr // parse and validation errors from gqlgen
		}
		var gq *gqlerror.Error
		if errors.As(err, &gq) && gq.Rule != "" {
			return gerr
		}
		if presentUnavailable(ctx, gerr, err) {
			return gerr
		}
		if errors.Is(err, context.DeadlineExceeded) {
			gerr.Message = "the request timed out"
		} else {
			log.ErrorContext(ctx, "internal error", "err", err, "path", gerr.Path.String(), "request_id", middleware.GetReqID(ctx))
			gerr.Message = "internal error"
		}
		gerr.Extensions = map[string]any{"code": CodeInternal}
		if id := middleware.GetReqID(ctx); id != "" {
			gerr.Extensions["requestId"] = id
		}
		return gerr
	}
}

// timeout bounds every request by d (chi's Timeout), except WebSocket
// upgrades: a subscription lives as long as its client keeps it.
func timeout(d time.Duration) func(http.Handler) http.Handler {
	bounded := middleware.Timeout(d)
	return func(next http.Handler) http.Handler {
		b := bounded(next)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
				next.ServeHTTP(w, r)
				return
			}
			b.ServeHTTP(w, r)
		})
	}
}

// accessLog logs one structured line per request.
func accessLog(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
			start := time.Now()
			next.ServeHTTP(ww, r)
			log.LogAttrs(r.Context(), slog.LevelInfo, "http",
				slog.String("method", r.Method), slog.String("path", r.URL.Path),
				slog.Int("status", ww.Status()), slog.Int("bytes", ww.BytesWritten()),
				slog.Duration("duration", time.Since(start)),
				slog.String("request_id", middleware.GetReqID(r.Context())))
		})
	}
}
