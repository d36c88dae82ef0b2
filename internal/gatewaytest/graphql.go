package gatewaytest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
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
	// Header is the HTTP response's header.
	Header http.Header `json:"-"`
	// Body is the response's body as it came.
	Body []byte `json:"-"`
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
	if err := r.Err(query); err != nil {
		return err
	}
	if out != nil {
		return json.Unmarshal(r.Data, out)
	}
	return nil
}

// post sends the request through a Meter of its own, and waits for the
// request's store-call count.
func (g *Gateway) post(ctx context.Context, token, query string, vars map[string]any) (Response, []byte, error) {
	m := g.Meter()
	r, err := Do(ctx, m.Client(), g.URL, token, query, vars)
	if err != nil {
		return Response{}, r.Body, err
	}
	if r.StoreCalls, err = m.StoreCalls(); err != nil {
		return Response{}, r.Body, err
	}
	return r, r.Body, nil
}

// Do sends one GraphQL request (query and vars, with a bearer token unless
// token is "") to the gateway at base (http://host:port: a test gateway or
// a `gateway serve` process) with client, http.DefaultClient when nil, and
// decodes the answer whatever its HTTP status. The error is the transport's
// (the Response is then zero), or a body that is no GraphQL response (the
// Response then has Status, Header and Body).
func Do(ctx context.Context, client *http.Client, base, token, query string, vars map[string]any) (Response, error) {
	if client == nil {
		client = http.DefaultClient
	}
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		return Response{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/graphql", bytes.NewReader(body))
	if err != nil {
		return Response{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return Response{}, fmt.Errorf("POST /graphql: %w", err)
	}
	raw, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return Response{}, fmt.Errorf("POST /graphql: read the body: %w", err)
	}
	out := Response{Status: resp.StatusCode, Header: resp.Header, Body: raw}
	if err := json.Unmarshal(raw, &out); err != nil {
		return Response{Status: resp.StatusCode, Header: resp.Header, Body: raw}, fmt.Errorf("decode response (HTTP %d): %v: %s", resp.StatusCode, err, raw)
	}
	return out, nil
}

// Err returns r's first GraphQL error as an error naming the operation's
// first word of query, or nil without errors.
func (r Response) Err(query string) error {
	if len(r.Errors) == 0 {
		return nil
	}
	op := "query"
	if f := strings.Fields(query); len(f) > 0 {
		op = f[0]
	}
	return fmt.Errorf("%s: %s %v", op, r.Errors[0].Message, r.Errors[0].Extensions)
}

// Call runs query against the gateway at base (Do with
// http.DefaultClient) and decodes its data into out (unless nil); a
// transport error, an undecodable answer or a GraphQL error fails t.
func Call(t testing.TB, base, token, query string, vars map[string]any, out any) {
	t.Helper()
	r, err := Do(t.Context(), nil, base, token, query, vars)
	if err == nil {
		err = r.Err(query)
	}
	if err == nil && out != nil {
		err = json.Unmarshal(r.Data, out)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// Login logs username in at the gateway at base and returns the token.
func Login(t testing.TB, base, username, password string) string {
	t.Helper()
	var d struct{ Login struct{ Token string } }
	Call(t, base, "", `mutation($u: String!, $p: String!) { login(username: $u, password: $p) { token } }`,
		map[string]any{"u": username, "p": password}, &d)
	if d.Login.Token == "" {
		t.Fatalf("login as %s: no token", username)
	}
	return d.Login.Token
}

// Register registers username with Password at the gateway at base.
func Register(t testing.TB, base, username string) Account {
	t.Helper()
	var d struct {
		Register struct {
			Token string
			User  struct{ ID, Username string }
		}
	}
	Call(t, base, "", `mutation($u: String!, $p: String!) { register(username: $u, password: $p) { token user { id username } } }`,
		map[string]any{"u": username, "p": Password}, &d)
	if d.Register.Token == "" {
		t.Fatalf("register %s: no token", username)
	}
	return Account{ID: d.Register.User.ID, Username: d.Register.User.Username, Token: d.Register.Token}
}
