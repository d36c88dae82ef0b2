package server_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/server"
)

func TestParseCORSOrigins(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
		err  string
	}{
		{in: "", want: nil},
		{in: " , ", want: nil},
		{in: "http://localhost:*,http://127.0.0.1:*", want: []string{"http://localhost:*", "http://127.0.0.1:*"}},
		{in: " https://App.Example.com , http://localhost:3000,", want: []string{"https://app.example.com", "http://localhost:3000"}},
		{in: "*", want: []string{"*"}},
		{in: "https://*.example.com", want: []string{"https://*.example.com"}},
		{in: "localhost:3000", err: "want scheme://host[:port]"},
		{in: "http://", err: "want scheme://host[:port]"},
		{in: "http://localhost:3000/", err: "no path"},
		{in: "http://user@localhost", err: "no path"},
		{in: "http://*.example.*", err: "at most one *"},
	} {
		got, err := server.ParseCORSOrigins(c.in)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("ParseCORSOrigins(%q) error = %v, want one saying %q", c.in, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("ParseCORSOrigins(%q): %v", c.in, err)
		case c.err == "" && !reflect.DeepEqual(got, c.want):
			t.Errorf("ParseCORSOrigins(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// corsOrigins are the allowed origins of the CORS tests' gateway.
var corsOrigins = []string{"http://localhost:*", "https://app.example.com"}

// TestCORS sends preflights and POSTs with Origin headers, as a browser
// would, to a gateway allowing corsOrigins and to one with the default (no
// other origin): allowed origins get the Access-Control-Allow-* headers,
// others (and every origin by default) get none. A refused origin's POST is
// still answered (CORS is the browser's to enforce) but its page cannot
// read the answer.
func TestCORS(t *testing.T) {
	st := testenv.Embedded(t)
	allowing := startGatewayWith(t, st, func(c *server.Config) { c.CORSOrigins = corsOrigins })
	def := startGateway(t, st)
	const query = `{"query":"{ __typename }"}`
	type want struct {
		status      int
		allowOrigin bool              // Access-Control-Allow-Origin is the request's Origin, with -Credentials: true
		headers     map[string]string // further response headers
	}
	preflight := map[string]string{"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization,content-type,x-request-id"}
	allowed := want{status: http.StatusNoContent, allowOrigin: true, headers: map[string]string{
		"Access-Control-Allow-Methods": "POST", "Access-Control-Allow-Headers": "authorization,content-type,x-request-id", "Access-Control-Max-Age": "600",
	}}
	for _, c := range []struct {
		name    string
		g       *gw
		method  string
		origin  string
		headers map[string]string
		want    want
	}{
		{"preflight, localhost on any port", allowing, http.MethodOptions, "http://localhost:5173", preflight, allowed},
		{"preflight, exact origin", allowing, http.MethodOptions, "https://app.example.com", preflight, allowed},
		{"preflight, other origin", allowing, http.MethodOptions, "http://localhost.evil.example", preflight, want{status: http.StatusNoContent}},
		{"preflight, other scheme", allowing, http.MethodOptions, "http://app.example.com", preflight, want{status: http.StatusNoContent}},
		{"preflight, header not allowed", allowing, http.MethodOptions, "http://localhost:5173",
			map[string]string{"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "x-not-allowed"}, want{status: http.StatusNoContent}},
		{"preflight, method not allowed", allowing, http.MethodOptions, "http://localhost:5173",
			map[string]string{"Access-Control-Request-Method": "DELETE"}, want{status: http.StatusNoContent}},
		{"POST, allowed origin", allowing, http.MethodPost, "http://localhost:5173", nil,
			want{status: http.StatusOK, allowOrigin: true, headers: map[string]string{"Access-Control-Expose-Headers": "X-Request-Id", "Vary": "Origin"}}},
		{"POST, other origin", allowing, http.MethodPost, "http://127.0.0.1:5173", nil, want{status: http.StatusOK, headers: map[string]string{"Vary": "Origin"}}},
		{"POST, no origin", allowing, http.MethodPost, "", nil, want{status: http.StatusOK}},
		{"default: preflight", def, http.MethodOptions, "http://localhost:5173", preflight, want{status: http.StatusOK}},
		{"default: POST", def, http.MethodPost, "http://localhost:5173", nil, want{status: http.StatusOK}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var body *bytes.Reader
			if c.method == http.MethodPost {
				body = bytes.NewReader([]byte(query))
			} else {
				body = bytes.NewReader(nil)
			}
			req, _ := http.NewRequest(c.method, c.g.url+"/graphql", body)
			if c.method == http.MethodPost {
				req.Header.Set("Content-Type", "application/json")
			}
			if c.origin != "" {
				req.Header.Set("Origin", c.origin)
			}
			for k, v := range c.headers {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var out struct {
				Data struct {
					Typename string `json:"__typename"`
				} `json:"data"`
			}
			_ = json.NewDecoder(resp.Body).Decode(&out)
			resp.Body.Close()
			if resp.StatusCode != c.want.status {
				t.Errorf("status %d, want %d", resp.StatusCode, c.want.status)
			}
			if c.method == http.MethodPost && out.Data.Typename != "Query" {
				t.Errorf("POST not answered: data %+v", out.Data)
			}
			acao, acac := resp.Header.Get("Access-Control-Allow-Origin"), resp.Header.Get("Access-Control-Allow-Credentials")
			if c.want.allowOrigin {
				if acao != c.origin || acac != "true" {
					t.Errorf("Access-Control-Allow-Origin %q, -Credentials %q; want %q, true", acao, acac, c.origin)
				}
			} else if acao != "" || acac != "" || resp.Header.Get("Access-Control-Allow-Headers") != "" {
				t.Errorf("CORS headers for a refused origin: %v", resp.Header)
			}
			for k, v := range c.want.headers {
				got := strings.Join(resp.Header.Values(k), ", ")
				if k == "Vary" {
					// Other middleware (gzip) adds its own: Origin must be among them.
					if !slices.Contains(strings.Split(got, ", "), v) {
						t.Errorf("%s: %q, want %q among them", k, got, v)
					}
					continue
				}
				if got != v {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
		})
	}
}

// in returns g for use in subtest t (its helpers fail t, not the parent).
func (g *gw) in(t testing.TB) *gw { c := *g; c.t = t; return &c }

// wsDial opens a graphql-transport-ws WebSocket to the gateway with header
// on the upgrade request, closed when g's test ends.
func (g *gw) wsDial(header http.Header) (*websocket.Conn, *http.Response, error) {
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, HandshakeTimeout: 10 * time.Second}
	conn, resp, err := d.Dial("ws"+strings.TrimPrefix(g.url, "http")+"/graphql", header)
	if conn != nil {
		g.t.Cleanup(func() { conn.Close() })
	}
	return conn, resp, err
}

// TestWebsocketOrigin: a WebSocket upgrade is accepted without Origin (not
// a browser), from the gateway's own origin and from the allowed origins,
// and refused with 403 from any other origin; by default only the own
// origin is allowed.
func TestWebsocketOrigin(t *testing.T) {
	st := testenv.Embedded(t)
	allowing := startGatewayWith(t, st, func(c *server.Config) { c.CORSOrigins = corsOrigins })
	def := startGateway(t, st)
	for _, c := range []struct {
		name   string
		g      *gw
		origin string // "self": the gateway's own
		ok     bool
	}{
		{"no origin", allowing, "", true},
		{"same origin", allowing, "self", true},
		{"localhost on any port", allowing, "http://localhost:5173", true},
		{"exact origin", allowing, "https://app.example.com", true},
		{"other origin", allowing, "http://evil.example", false},
		{"other port of the gateway's host", allowing, "http://127.0.0.1:1", false},
		{"default: no origin", def, "", true},
		{"default: same origin", def, "self", true},
		{"default: localhost", def, "http://localhost:5173", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := c.g.in(t)
			h := http.Header{}
			switch c.origin {
			case "":
			case "self":
				h.Set("Origin", g.url)
			default:
				h.Set("Origin", c.origin)
			}
			conn, resp, err := g.wsDial(h)
			if c.ok {
				if err != nil {
					t.Fatalf("upgrade refused: %v (response %v)", err, resp)
				}
				// The connection works: connection_init is acknowledged.
				if err := conn.WriteJSON(map[string]any{"type": "connection_init"}); err != nil {
					t.Fatal(err)
				}
				if m := g.read(conn); m.Type != "connection_ack" {
					t.Fatalf("want connection_ack, got %+v", m)
				}
				return
			}
			if err == nil {
				t.Fatal("upgrade accepted")
			}
			if !errors.Is(err, websocket.ErrBadHandshake) || resp == nil || resp.StatusCode != http.StatusForbidden {
				t.Fatalf("want HTTP 403, got %v (response %v)", err, resp)
			}
			var body gqlResponse
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || len(body.Errors) != 1 || body.Errors[0].Extensions["code"] != "FORBIDDEN" {
				t.Fatalf("want one FORBIDDEN error, got %+v (%v)", body, err)
			}
		})
	}
}

// TestWebsocketToken: the graphql-ws connection's viewer comes from the
// connection_init payload's Authorization, from its headers.Authorization
// (as Apollo and Hasura users send it), or from the upgrade request's
// Authorization header; "Bearer " may be left out in the payload, and the
// payload wins over the header. A valid token is proved by the viewer's
// own new post arriving on homeTimelineUpdates; a bad token, wherever it
// came from, makes the subscription fail with UNAUTHENTICATED.
func TestWebsocketToken(t *testing.T) {
	st := testenv.Embedded(t)
	g := startGateway(t, st)
	a := g.register(uniqueName("ws"))
	const bad = "Bearer not.a.token"
	for _, c := range []struct {
		name    string
		payload map[string]any
		header  string // the upgrade request's Authorization
		ok      bool
	}{
		{"payload Authorization", map[string]any{"Authorization": "Bearer " + a.token}, "", true},
		{"payload authorization without Bearer", map[string]any{"authorization": a.token}, "", true},
		{"payload headers.Authorization", map[string]any{"headers": map[string]any{"Authorization": "Bearer " + a.token}}, "", true},
		{"payload headers.authorization without Bearer", map[string]any{"headers": map[string]any{"authorization": a.token}}, "", true},
		{"upgrade header", nil, "Bearer " + a.token, true},
		{"payload wins over upgrade header", map[string]any{"headers": map[string]any{"Authorization": "Bearer " + a.token}}, bad, true},
		{"bad payload Authorization", map[string]any{"Authorization": bad}, "", false},
		{"bad payload headers.Authorization", map[string]any{"headers": map[string]any{"Authorization": bad}}, "", false},
		{"bad bare payload token", map[string]any{"Authorization": "garbage"}, "", false},
		{"bad upgrade header", nil, bad, false},
		{"no token", map[string]any{}, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := g.in(t)
			h := http.Header{}
			if c.header != "" {
				h.Set("Authorization", c.header)
			}
			conn, resp, err := g.wsDial(h)
			if err != nil {
				t.Fatalf("dial: %v (response %v)", err, resp)
			}
			init := map[string]any{"type": "connection_init"}
			if c.payload != nil {
				init["payload"] = c.payload
			}
			if err := conn.WriteJSON(init); err != nil {
				t.Fatal(err)
			}
			if m := g.read(conn); m.Type != "connection_ack" {
				t.Fatalf("want connection_ack, got %+v", m)
			}
			if err := conn.WriteJSON(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{
				"query": `subscription { homeTimelineUpdates { id content author { id } } }`}}); err != nil {
				t.Fatal(err)
			}
			if !c.ok {
				m := g.read(conn)
				if (m.Type != "error" && m.Type != "next") || !strings.Contains(string(m.Payload), `"code":"UNAUTHENTICATED"`) {
					t.Fatalf("want UNAUTHENTICATED, got %s %s", m.Type, m.Payload)
				}
				return
			}
			g.awaitOwnPost(conn, a)
		})
	}
}

// awaitOwnPost publishes posts as a until one of them arrives on conn's
// subscription "1" to homeTimelineUpdates (a post published before the
// server registered the subscription does not arrive, hence the retries);
// it fails if anything else arrives.
func (g *gw) awaitOwnPost(conn *websocket.Conn, a account) {
	g.t.Helper()
	got := make(chan wsMessage, 1)
	go func() {
		for {
			_ = conn.SetReadDeadline(time.Now().Add(60 * time.Second))
			var m wsMessage
			if err := conn.ReadJSON(&m); err != nil {
				got <- wsMessage{Type: "read error", Payload: json.RawMessage(fmt.Sprintf("%q", err.Error()))}
				return
			}
			if m.Type != "ping" && m.Type != "pong" && m.Type != "ka" {
				got <- m
				return
			}
		}
	}()
	for i := 0; ; i++ {
		p := g.publish(a.token, fmt.Sprintf("over the socket %d", i))
		select {
		case m := <-got:
			var e struct {
				Data struct {
					HomeTimelineUpdates postNode `json:"homeTimelineUpdates"`
				} `json:"data"`
			}
			if m.Type != "next" || m.ID != "1" || json.Unmarshal(m.Payload, &e) != nil ||
				e.Data.HomeTimelineUpdates.Author.ID != a.ID || !strings.HasPrefix(e.Data.HomeTimelineUpdates.Content, "over the socket ") {
				g.t.Fatalf("want the viewer's post %s, got %s %s", p.ID, m.Type, m.Payload)
			}
			return
		case <-time.After(300 * time.Millisecond):
			if i == 100 {
				g.t.Fatal("none of the viewer's own posts arrived")
			}
		}
	}
}
