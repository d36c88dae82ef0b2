package gatewaytest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Error is one entry of a GraphQL response's errors.
type Error struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}

// Response is a GraphQL response over HTTP.
type Response struct {
	Data   json.RawMessage `json:"data"`
	Errors []Error         `json:"errors"`
	// Status is the HTTP status.
	Status int `json:"-"`
	// StoreCalls is the number of store round trips the request made
	// (hbase.Instrument's count), from its arrival until its handler
	// returned: the gateway's other work (fan-out, repairs, other
	// requests) is not in it.
	StoreCalls int `json:"-"`
}

// Post sends one GraphQL request, with a bearer token unless token is "",
// and returns the response; a transport error, an undecodable body or an
// HTTP status of 500 or more fails the test.
func (g *Gateway) Post(token, query string, vars map[string]any) Response {
	g.t.Helper()
	r, raw, err := g.post(g.t.Context(), token, query, vars)
	if err != nil {
		g.t.Fatal(err)
	}
	if r.Status >= 500 {
		g.t.Fatalf("HTTP %d: %s", r.Status, raw)
	}
	return r
}

// OK runs a query that must succeed and decodes its data into v (unless nil).
func (g *Gateway) OK(token, query string, vars map[string]any, v any) Response {
	g.t.Helper()
	r := g.Post(token, query, vars)
	if len(r.Errors) > 0 {
		g.t.Fatalf("unexpected errors: %+v\nquery: %s", r.Errors, query)
	}
	if v != nil {
		if err := json.Unmarshal(r.Data, v); err != nil {
			g.t.Fatalf("decode data: %v: %s", err, r.Data)
		}
	}
	return r
}

// Fails runs a query that must fail with extensions.code == code and
// returns its first error.
func (g *Gateway) Fails(token, code, query string, vars map[string]any) Error {
	g.t.Helper()
	e, _ := g.FailsCounted(token, code, query, vars)
	return e
}

// FailsCounted is Fails that also returns the store calls of the request.
func (g *Gateway) FailsCounted(token, code, query string, vars map[string]any) (Error, int) {
	g.t.Helper()
	r := g.Post(token, query, vars)
	if len(r.Errors) == 0 {
		g.t.Fatalf("want error %s, got data %s\nquery: %s", code, r.Data, query)
	}
	if got := r.Errors[0].Extensions["code"]; got != code {
		g.t.Fatalf("want code %s, got %v (%s)\nquery: %s", code, got, r.Errors[0].Message, query)
	}
	return r.Errors[0], r.StoreCalls
}

// Try runs a query and decodes its data into out (unless nil); it returns
// the transport or decoding error, or the first GraphQL error, instead of
// failing the test.
func (g *Gateway) Try(ctx context.Context, token, query string, vars map[string]any, out any) error {
	r, _, err := g.post(ctx, token, query, vars)
	if err != nil {
		return err
	}
	if len(r.Errors) > 0 {
		return fmt.Errorf("%s: %s %v", strings.Fields(query)[0], r.Errors[0].Message, r.Errors[0].Extensions)
	}
	if out != nil {
		return json.Unmarshal(r.Data, out)
	}
	return nil
}

// post sends the request through a Meter of its own, and waits for the
// request's store-call count.
func (g *Gateway) post(ctx context.Context, token, query string, vars map[string]any) (Response, []byte, error) {
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		return Response{}, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.URL+"/graphql", bytes.NewReader(body))
	if err != nil {
		return Response{}, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	m := g.Meter()
	resp, err := m.Client().Do(req)
	if err != nil {
		return Response{}, nil, fmt.Errorf("POST /graphql: %w", err)
	}
	raw, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return Response{}, nil, fmt.Errorf("POST /graphql: read the body: %w", err)
	}
	var out Response
	if err := json.Unmarshal(raw, &out); err != nil {
		return Response{}, raw, fmt.Errorf("decode response (%d): %v: %s", resp.StatusCode, err, raw)
	}
	out.Status = resp.StatusCode
	if out.StoreCalls, err = m.StoreCalls(); err != nil {
		return Response{}, raw, err
	}
	return out, raw, nil
}
