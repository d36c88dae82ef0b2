package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weibohbase/gateway/auth"
	"github.com/weibohbase/gateway/bus/natsbus"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/server"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/tables"
)

// gw is a gateway under test: a real HTTP server on 127.0.0.1 over a store.
type gw struct {
	t   testing.TB
	url string
	svc *domain.Domain
	h   http.Handler // the handler ts serves, for in-process benchmarks
}

// startGateway serves the gateway over st (migrated) until the test ends;
// opts are added to the service's test options.
func startGateway(t testing.TB, st hbase.StoreAdmin, opts ...domain.Option) *gw {
	t.Helper()
	return startGatewayWith(t, st, nil, opts...)
}

// startGatewayWith is startGateway with configure, when not nil, changing
// the server's Config (limits, logger) before it starts.
func startGatewayWith(t testing.TB, st hbase.StoreAdmin, configure func(*server.Config), opts ...domain.Option) *gw {
	t.Helper()
	st = hbase.Instrument(st)
	ctx := t.Context()
	if err := tables.Migrate(ctx, st); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	// Each gateway has its embedded NATS server, on no port, as `serve`
	// runs by default; an option WithBus given by the test replaces it.
	eventBus, err := natsbus.Open(natsbus.Config{Logger: log})
	if err != nil {
		t.Fatalf("event bus: %v", err)
	}
	t.Cleanup(func() { _ = eventBus.Close() })
	svc := domain.New(st, append([]domain.Option{domain.WithLogger(log), domain.WithBcryptCost(4), domain.WithOutboxSweep(0), domain.WithBus(eventBus)}, opts...)...)
	if err := svc.Start(ctx); err != nil {
		t.Fatalf("start: %v", err)
	}
	cfg := server.Config{Svc: svc, Tokens: auth.NewIssuer([]byte("test-secret-test-secret-test-secret"), time.Hour), Logger: log}
	if configure != nil {
		configure(&cfg)
	}
	h := server.New(cfg)
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		ts.Close()
		_ = svc.Close(t.Context())
	})
	return &gw{t: t, url: ts.URL, svc: svc, h: h}
}

type gqlError struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}

type gqlResponse struct {
	Data   json.RawMessage `json:"data"`
	Errors []gqlError      `json:"errors"`
	status int
}

// post sends one GraphQL request with an optional bearer token.
func (g *gw) post(token, query string, vars map[string]any) gqlResponse {
	g.t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, g.url+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		g.t.Fatalf("POST /graphql: %v", err)
	}
	defer resp.Body.Close()
	var out gqlResponse
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, &out); err != nil {
		g.t.Fatalf("decode response (%d): %v: %s", resp.StatusCode, err, raw)
	}
	out.status = resp.StatusCode
	if resp.StatusCode >= 500 {
		g.t.Fatalf("HTTP %d: %s", resp.StatusCode, raw)
	}
	return out
}

// ok runs a query that must succeed and decodes its data into v.
func (g *gw) ok(token, query string, vars map[string]any, v any) {
	g.t.Helper()
	r := g.post(token, query, vars)
	if len(r.Errors) > 0 {
		g.t.Fatalf("unexpected errors: %+v\nquery: %s", r.Errors, query)
	}
	if v != nil {
		if err := json.Unmarshal(r.Data, v); err != nil {
			g.t.Fatalf("decode data: %v: %s", err, r.Data)
		}
	}
}

// fails runs a query that must fail with extensions.code == code.
func (g *gw) fails(token, code, query string, vars map[string]any) gqlError {
	g.t.Helper()
	r := g.post(token, query, vars)
	if len(r.Errors) == 0 {
		g.t.Fatalf("want error %s, got data %s\nquery: %s", code, r.Data, query)
	}
	if got := r.Errors[0].Extensions["code"]; got != code {
		g.t.Fatalf("want code %s, got %v (%s)\nquery: %s", code, got, r.Errors[0].Message, query)
	}
	return r.Errors[0]
}

// storeCalls returns the sum of gateway_store_calls_total over all label sets.
func (g *gw) storeCalls() float64 {
	g.t.Helper()
	resp, err := http.Get(g.url + "/metrics")
	if err != nil {
		g.t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var sum float64
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "gateway_store_calls_total{") {
			if v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64); err == nil {
				sum += v
			}
		}
	}
	return sum
}
