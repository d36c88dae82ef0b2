package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/gatewaytest"
	"github.com/weibohbase/gateway/server"
	"github.com/weibohbase/gateway/weibo/domain"
)

// gw is a gateway under test (gatewaytest.Gateway) as the server tests
// use it.
type gw struct {
	t   testing.TB
	url string
	svc *domain.Domain
	h   http.Handler // the handler ts serves, for in-process benchmarks
	gt  *gatewaytest.Gateway
}

// startGateway serves the gateway over st (migrated) until the test ends;
// opts are added to the service's test options.
func startGateway(t testing.TB, st hbase.StoreAdmin, opts ...domain.Option) *gw {
	t.Helper()
	return startGatewayWith(t, st, nil, opts...)
}

// startGatewayWith is startGateway with configure, when not nil, changing
// the server's Config (limits, logger) before it starts. Each gateway has
// its embedded NATS server, on no port, as `serve` runs by default; an
// option WithBus given by the test replaces it.
func startGatewayWith(t testing.TB, st hbase.StoreAdmin, configure func(*server.Config), opts ...domain.Option) *gw {
	t.Helper()
	o := []gatewaytest.Option{gatewaytest.WithNATS(), gatewaytest.WithDomain(opts...)}
	if configure != nil {
		o = append(o, gatewaytest.WithConfig(configure))
	}
	g := gatewaytest.Start(t, st, o...)
	return &gw{t: t, url: g.URL, svc: g.Svc, h: g.Handler, gt: g}
}

type gqlError = gatewaytest.Error

type gqlResponse struct {
	Data   json.RawMessage `json:"data"`
	Errors []gqlError      `json:"errors"`
	status int
	calls  float64 // the request's store calls
}

// post sends one GraphQL request with an optional bearer token.
func (g *gw) post(token, query string, vars map[string]any) gqlResponse {
	g.t.Helper()
	r := g.gt.In(g.t).Post(token, query, vars)
	return gqlResponse{Data: r.Data, Errors: r.Errors, status: r.Status, calls: float64(r.StoreCalls)}
}

// ok runs a query that must succeed and decodes its data into v.
func (g *gw) ok(token, query string, vars map[string]any, v any) {
	g.t.Helper()
	g.gt.In(g.t).OK(token, query, vars, v)
}

// okCalls is ok returning the store calls of the request.
func (g *gw) okCalls(token, query string, vars map[string]any, v any) float64 {
	g.t.Helper()
	return float64(g.gt.In(g.t).OK(token, query, vars, v).StoreCalls)
}

// fails runs a query that must fail with extensions.code == code.
func (g *gw) fails(token, code, query string, vars map[string]any) gqlError {
	g.t.Helper()
	return g.gt.In(g.t).Fails(token, code, query, vars)
}

// failsCalls is fails returning the store calls of the request too.
func (g *gw) failsCalls(token, code, query string, vars map[string]any) (gqlError, float64) {
	g.t.Helper()
	e, n := g.gt.In(g.t).FailsCounted(token, code, query, vars)
	return e, float64(n)
}

// meter counts the store calls of the requests sent with its client.
func (g *gw) meter() *gatewaytest.Meter { return g.gt.Meter() }

// storeCalls returns the sum of gateway_store_calls_total over all label
// sets: the whole process's store calls, background work included. Tests of
// one request's cost count its own calls (okCalls, meter) instead.
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
