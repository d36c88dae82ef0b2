// Package gatewaytest starts a gateway for tests, on a real HTTP server on
// 127.0.0.1 over a store, and talks GraphQL to it: register, log in, run a
// query, and count the store calls of one request. The server, cmd, clients
// and browser tests share it.
package gatewaytest

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/weibohbase/gateway/auth"
	"github.com/weibohbase/gateway/bus/natsbus"
	"github.com/weibohbase/gateway/dataset"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/seed"
	"github.com/weibohbase/gateway/server"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Secret is the key the test gateway signs its bearer tokens with.
const Secret = "test-secret-test-secret-test-secret"

// Password is the password Register gives its users.
const Password = "correct horse"

// Gateway is a gateway under test: a real HTTP server on 127.0.0.1 over a
// store, closed with its service at the end of the test.
type Gateway struct {
	// URL is the server's base URL (http://127.0.0.1:port).
	URL string
	// Svc is the gateway's domain service.
	Svc *domain.Domain
	// Tokens issues and checks the gateway's bearer tokens.
	Tokens *auth.Issuer
	// Handler is the handler the server serves (server.New's), for
	// in-process benchmarks; it does not count store calls per request.
	Handler http.Handler

	t     testing.TB
	calls *callLog
}

// Option changes how Start builds the gateway.
type Option func(*settings)

type settings struct {
	configure []func(*server.Config)
	domain    []domain.Option
	seed      []func(context.Context, *domain.Domain) error
	datasets  []*dataset.Dataset
	nats      bool
}

// WithConfig changes the server's Config (limits, logger, CORS origins)
// before the server starts.
func WithConfig(f func(*server.Config)) Option {
	return func(s *settings) { s.configure = append(s.configure, f) }
}

// WithDomain adds opts to the service's options, after the test defaults
// (discarded logs, bcrypt cost 4, no outbox sweep), so they win.
func WithDomain(opts ...domain.Option) Option {
	return func(s *settings) { s.domain = append(s.domain, opts...) }
}

// WithNATS gives the service an embedded NATS server on no port as its
// event bus, as `serve` runs by default (a WithDomain(domain.WithBus(...))
// given after it replaces it).
func WithNATS() Option { return func(s *settings) { s.nats = true } }

// WithSeed runs f on the started service before the server starts serving
// (seed.OrgDemo, a few users); its error fails the test.
func WithSeed(f func(context.Context, *domain.Domain) error) Option {
	return func(s *settings) { s.seed = append(s.seed, f) }
}

// WithDataset imports ds into the store (seed.Import, every user's
// password seed.DefaultPassword, bcrypt cost 4) before the service starts;
// an import error fails the test.
func WithDataset(ds *dataset.Dataset) Option {
	return func(s *settings) { s.datasets = append(s.datasets, ds) }
}

// Start migrates st, imports the WithDataset data sets, starts a service
// over it and serves the gateway on 127.0.0.1 until the test ends. The store is instrumented (hbase.Instrument),
// so that Response.StoreCalls counts each request's store calls. The
// WebSocket connection limits (per user, per address) are off unless a
// WithConfig sets them.
func Start(t testing.TB, st hbase.StoreAdmin, opts ...Option) *Gateway {
	t.Helper()
	var s settings
	for _, o := range opts {
		o(&s)
	}
	ctx := t.Context()
	st = hbase.Instrument(st)
	if err := tables.Migrate(ctx, st); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	for _, ds := range s.datasets {
		if _, err := seed.Import(ctx, st, ds, seed.Options{BcryptCost: 4}); err != nil {
			t.Fatalf("import: %v", err)
		}
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	dopts := []domain.Option{domain.WithLogger(log), domain.WithBcryptCost(4), domain.WithOutboxSweep(0)}
	if s.nats {
		eventBus, err := natsbus.Open(natsbus.Config{Logger: log})
		if err != nil {
			t.Fatalf("event bus: %v", err)
		}
		t.Cleanup(func() { _ = eventBus.Close() })
		dopts = append(dopts, domain.WithBus(eventBus))
	}
	svc := domain.New(st, append(dopts, s.domain...)...)
	if err := svc.Start(ctx); err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { _ = svc.Close(context.WithoutCancel(ctx)) })
	for _, f := range s.seed {
		if err := f(ctx, svc); err != nil {
			t.Fatalf("seed: %v", err)
		}
	}
	tokens := auth.NewIssuer([]byte(Secret), time.Hour)
	// Every test client is 127.0.0.1, and a test may hold hundreds of
	// WebSocket connections of one user: the connection limits are off
	// unless the test sets them (WithConfig).
	cfg := server.Config{Svc: svc, Tokens: tokens, Logger: log, MaxWebSocketsPerUser: -1, MaxWebSocketsPerAddress: -1}
	for _, f := range s.configure {
		f(&cfg)
	}
	h := server.New(cfg)
	calls := &callLog{reqs: map[string]*request{}}
	ts := httptest.NewServer(calls.wrap(h))
	t.Cleanup(ts.Close)
	return &Gateway{URL: ts.URL, Svc: svc, Tokens: tokens, Handler: h, t: t, calls: calls}
}

// In returns a copy of g whose helpers report to t (a subtest's).
func (g *Gateway) In(t testing.TB) *Gateway {
	c := *g
	c.t = t
	return &c
}

// T returns the test g's helpers report to.
func (g *Gateway) T() testing.TB { return g.t }

// Flush waits until the fan-out queued so far is written.
func (g *Gateway) Flush() {
	g.t.Helper()
	if err := g.Svc.FlushFanout(g.t.Context()); err != nil {
		g.t.Fatalf("flush fan-out: %v", err)
	}
}

// Account is a registered user and a bearer token of it.
type Account struct {
	ID       string
	Username string
	Token    string
}

// Register registers username with Password through the register mutation.
func (g *Gateway) Register(username string) Account {
	g.t.Helper()
	return Register(g.t, g.URL, username)
}

// Login logs username in through the login mutation and returns the token.
func (g *Gateway) Login(username, password string) string {
	g.t.Helper()
	return Login(g.t, g.URL, username, password)
}

// Issue returns a bearer token of u, issued as login does.
func (g *Gateway) Issue(u *weibo.User) string {
	g.t.Helper()
	tok, err := g.Tokens.Issue(u.ID, u.CreatedAt, u.TokenGeneration)
	if err != nil {
		g.t.Fatalf("issue a token of %s: %v", u.Username, err)
	}
	return tok
}
