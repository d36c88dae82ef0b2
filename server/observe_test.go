package server_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/server"
)

// scrape returns the samples of /metrics whose line starts with prefix:
// the rest of the name and labels -> value.
func (g *gw) scrape(prefix string) map[string]float64 {
	g.t.Helper()
	resp, err := http.Get(g.url + "/metrics")
	if err != nil {
		g.t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			g.t.Fatalf("metric line %q: %v", line, err)
		}
		out[line[len(prefix):i]] = v
	}
	return out
}

// TestMetricsGraphQL checks over HTTP that a query, a validation error and
// an UNAUTHENTICATED error show in gateway_graphql_request_duration_seconds
// by operation name and type, and in gateway_graphql_errors_total by code.
func TestMetricsGraphQL(t *testing.T) {
	g := startGateway(t, testenv.Embedded(t))
	const hist, errs = "gateway_graphql_request_duration_seconds_count", "gateway_graphql_errors_total"
	beforeH, beforeE := g.scrape(hist), g.scrape(errs)

	alice := g.register(uniqueName("alice"))
	g.ok(alice.token, `query MetricsTimeline { homeTimeline(first: 5) { edges { cursor } } }`, nil, nil)
	g.ok(alice.token, `query MetricsTimeline { homeTimeline(first: 5) { edges { cursor } } }`, nil, nil)
	g.fails("", "GRAPHQL_VALIDATION_FAILED", `query MetricsInvalid { homeTimeline(first: 5) { noSuchField } }`, nil)
	g.fails("", "UNAUTHENTICATED", `query MetricsNoToken { homeTimeline(first: 5) { edges { cursor } } }`, nil)
	g.fails("", "GRAPHQL_PARSE_FAILED", `query MetricsBroken {`, nil)
	// Over WebSocket: a subscription without a token.
	conn := g.subscribe("", `subscription MetricsSub { homeTimelineUpdates { id } }`)
	if m := g.read(conn); (m.Type != "error" && m.Type != "next") || !strings.Contains(string(m.Payload), "UNAUTHENTICATED") {
		t.Fatalf("subscription without a token: %s %s", m.Type, m.Payload)
	}
	conn.Close()

	afterH, afterE := g.scrape(hist), g.scrape(errs)
	for _, c := range []struct {
		labels string
		want   float64
	}{
		{`{operation_name="MetricsTimeline",operation_type="query"}`, 2},
		{`{operation_name="",operation_type="mutation"}`, 1}, // register: unnamed
		{`{operation_name="MetricsNoToken",operation_type="query"}`, 1},
		{`{operation_name="MetricsSub",operation_type="subscription"}`, 1},
		// Failed before execution: named as the document states.
		{`{operation_name="MetricsInvalid",operation_type="query"}`, 1},
		{`{operation_name="MetricsBroken",operation_type="query"}`, 1},
	} {
		if got := afterH[c.labels] - beforeH[c.labels]; got != c.want {
			t.Errorf("%s%s grew by %v, want %v\n%v", hist, c.labels, got, c.want, afterH)
		}
	}
	for _, c := range []struct {
		code string
		want float64
	}{
		{"GRAPHQL_VALIDATION_FAILED", 1},
		{"UNAUTHENTICATED", 2}, // HTTP and WebSocket
		{"GRAPHQL_PARSE_FAILED", 1},
	} {
		l := `{code="` + c.code + `"}`
		if got := afterE[l] - beforeE[l]; got != c.want {
			t.Errorf("%s%s grew by %v, want %v\n%v", errs, l, got, c.want, afterE)
		}
	}
	// Buckets are there too.
	if b := g.scrape(`gateway_graphql_request_duration_seconds_bucket{operation_name="MetricsTimeline",operation_type="query",le="+Inf"}`); len(b) != 1 {
		t.Errorf("no +Inf bucket for MetricsTimeline: %v", b)
	}
}

// TestMetricsOperationNameCap checks that hostile operation names do not
// grow the label set: names past the first MaxOperationNames, and names
// over MaxLabelLength bytes, are recorded as "other".
func TestMetricsOperationNameCap(t *testing.T) {
	g := startGateway(t, testenv.Embedded(t))
	const hist = "gateway_graphql_request_duration_seconds_count"
	for i := range server.MaxOperationNames + 20 {
		g.post("", `query Flood`+strconv.Itoa(i)+` { __typename }`, nil)
	}
	long := "L" + strings.Repeat("o", server.MaxLabelLength)
	g.post("", `query `+long+` { __typename }`, nil)
	labels := g.scrape(hist)
	names := map[string]bool{}
	for l := range labels {
		name, _, _ := strings.Cut(strings.TrimPrefix(l, `{operation_name="`), `"`)
		names[name] = true
	}
	if len(names) > server.MaxOperationNames+2 { // + "" and "other"
		t.Errorf("%d operation names after a flood of names, want at most %d", len(names), server.MaxOperationNames+2)
	}
	if labels[`{operation_name="other",operation_type="query"}`] < 21 {
		t.Errorf(`operation_name="other" counted %v, want >= 21 (20 over the cap and one too long)`, labels[`{operation_name="other",operation_type="query"}`])
	}
	for l := range labels {
		if strings.Contains(l, long) {
			t.Errorf("a name over %d bytes is a label: %s", server.MaxLabelLength, l)
		}
	}
}

// TestLogNoSecrets runs register, login and the account mutations
// (changePassword, updateProfile, logout) over HTTP with a logger in each
// format and checks that every access log line carries the request id and
// the operation name, and that neither the passwords nor the tokens nor
// the variables reach the log.
func TestLogNoSecrets(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			var buf syncBuffer
			var h slog.Handler = slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})
			if format == "json" {
				h = slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})
			}
			g := startGatewayWith(t, testenv.Embedded(t), func(c *server.Config) { c.Logger = slog.New(h) })
			name, password := uniqueName("logger"), "Sup3r-Secret-Passw0rd"
			var reg struct{ Register struct{ Token string } }
			g.ok("", `mutation LogRegister($u: String!, $p: String!) { register(username: $u, password: $p) { token } }`,
				map[string]any{"u": name, "p": password}, &reg)
			var login struct{ Login struct{ Token string } }
			g.ok("", `mutation LogLogin($u: String!, $p: String!) { login(username: $u, password: $p) { token } }`,
				map[string]any{"u": name, "p": password}, &login)
			g.fails("", "UNAUTHENTICATED", `mutation LogLogin($u: String!, $p: String!) { login(username: $u, password: $p) { token } }`,
				map[string]any{"u": name, "p": password + "-wrong"})
			g.ok(login.Login.Token, `query LogTimeline { homeTimeline(first: 1) { edges { cursor } } }`, nil, nil)
			// The account mutations: a wrong and a right current password, a
			// profile text, logout.
			newPassword, bio := "N3w-Secret-Passw0rd", "Private-Bio-Text"
			changePw := `mutation LogChangePassword($c: String!, $n: String!) { changePassword(currentPassword: $c, newPassword: $n) { token } }`
			g.fails(login.Login.Token, "UNAUTHENTICATED", changePw, map[string]any{"c": password + "-wrong", "n": newPassword})
			var changed struct{ ChangePassword struct{ Token string } }
			g.ok(login.Login.Token, changePw, map[string]any{"c": password, "n": newPassword}, &changed)
			g.fails(changed.ChangePassword.Token, "BAD_USER_INPUT", changePw, map[string]any{"c": newPassword, "n": "short"})
			g.ok(changed.ChangePassword.Token, `mutation LogProfile($b: String) { updateProfile(bio: $b) { id } }`, map[string]any{"b": bio}, nil)
			g.ok(changed.ChangePassword.Token, `mutation LogLogout { logout }`, nil, nil)
			g.fails(changed.ChangePassword.Token, "UNAUTHENTICATED", `mutation LogLogout { logout }`, nil)
			if reg.Register.Token == "" || login.Login.Token == "" || changed.ChangePassword.Token == "" {
				t.Fatal("no token")
			}
			out := buf.String()
			for _, secret := range []string{password, reg.Register.Token, login.Login.Token, "Bearer",
				newPassword, changed.ChangePassword.Token, bio} {
				if strings.Contains(out, secret) {
					t.Errorf("the log holds a secret %q:\n%s", secret, out)
				}
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			ops := map[string]int{}
			for _, line := range lines {
				var rec map[string]any
				if format == "json" {
					if err := json.Unmarshal([]byte(line), &rec); err != nil {
						t.Fatalf("not a JSON line: %q: %v", line, err)
					}
				} else {
					rec = parseLogfmt(t, line)
				}
				if rec["msg"] != "http" || rec["path"] != "/graphql" {
					continue
				}
				if id, _ := rec["request_id"].(string); len(id) < 8 {
					t.Errorf("access log line without request_id: %s", line)
				}
				op, ok := rec["operation"].(string)
				if !ok {
					t.Errorf("access log line without operation: %s", line)
				}
				ops[op]++
			}
			if ops["LogRegister"] != 1 || ops["LogLogin"] != 2 || ops["LogTimeline"] != 1 || ops["LogChangePassword"] != 3 || ops["LogLogout"] != 2 {
				t.Errorf("access log operations %v, want LogRegister 1, LogLogin 2, LogTimeline 1, LogChangePassword 3, LogLogout 2\n%s", ops, out)
			}
		})
	}
}

// parseLogfmt reads a line of slog's text handler (key=value, values
// quoted when they need it).
func parseLogfmt(t *testing.T, line string) map[string]any {
	t.Helper()
	rec := map[string]any{}
	for s := line; s != ""; {
		s = strings.TrimLeft(s, " ")
		k, rest, ok := strings.Cut(s, "=")
		if !ok {
			t.Fatalf("not a text log line: %q", line)
		}
		var v string
		if strings.HasPrefix(rest, `"`) {
			q, err := strconv.QuotedPrefix(rest)
			if err != nil {
				t.Fatalf("bad quoting in %q: %v", line, err)
			}
			v, _ = strconv.Unquote(q)
			rest = rest[len(q):]
		} else {
			v, rest, _ = strings.Cut(rest, " ")
		}
		rec[k] = v
		s = rest
	}
	return rec
}

// TestRequestID checks X-Request-Id on every response: a sane incoming id
// is kept, anything else replaced by a generated one, and the id is the
// one the access log line carries.
func TestRequestID(t *testing.T) {
	var buf syncBuffer
	g := startGatewayWith(t, testenv.Embedded(t), func(c *server.Config) {
		c.Logger = slog.New(slog.NewJSONHandler(&buf, nil))
	})
	for _, c := range []struct {
		name, path, in string
		keep           bool
	}{
		{"none", "/graphql?query=%7B__typename%7D", "", false},
		{"sane", "/graphql?query=%7B__typename%7D", "abc-DEF_123.xyz", true},
		{"probe", "/healthz", "probe-1", true},
		{"metrics", "/metrics", "", false},
		{"not found", "/nowhere", "", false},
		{"too long", "/healthz", strings.Repeat("a", 65), false},
		{"bad chars", "/healthz", "a b\"c<script>", false},
		{"longest", "/healthz", strings.Repeat("b", 64), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, g.url+c.path, nil)
			if c.in != "" {
				req.Header.Set("X-Request-Id", c.in)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			id := resp.Header.Get("X-Request-Id")
			switch {
			case c.keep && id != c.in:
				t.Errorf("X-Request-Id %q, want the incoming %q", id, c.in)
			case !c.keep && (id == "" || id == c.in || len(id) > server.MaxRequestIDLength):
				t.Errorf("X-Request-Id %q (incoming %q), want a generated one", id, c.in)
			}
			if !strings.Contains(buf.String(), `"request_id":"`+id+`"`) {
				t.Errorf("no log line with request_id %q:\n%s", id, buf.String())
			}
		})
	}
}

// TestGzip checks that a GraphQL response to a client that accepts gzip
// comes compressed and decompresses to valid JSON, and that one to a
// client that does not comes plain.
func TestGzip(t *testing.T) {
	g := startGateway(t, testenv.Embedded(t))
	alice := g.register(uniqueName("alice"))
	for range 5 {
		g.publish(alice.token, strings.Repeat("compress me ", 20))
	}
	g.flush()
	body := mustJSON(map[string]any{"query": `query { homeTimeline(first: 20) { edges { node { id content } } } }`})
	for _, enc := range []string{"gzip", ""} {
		req, _ := http.NewRequest(http.MethodPost, g.url+"/graphql", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+alice.token)
		if enc != "" {
			req.Header.Set("Accept-Encoding", enc)
		}
		tr := &http.Transport{DisableCompression: true} // see the bytes as sent
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got := resp.Header.Get("Content-Encoding"); got != enc {
			t.Fatalf("Accept-Encoding %q: Content-Encoding %q", enc, got)
		}
		if enc == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(raw))
			if err != nil {
				t.Fatalf("not gzip: %v", err)
			}
			plain, err := io.ReadAll(zr)
			if err != nil {
				t.Fatalf("gunzip: %v", err)
			}
			if len(raw) >= len(plain) {
				t.Errorf("gzip made %d bytes of %d", len(raw), len(plain))
			}
			raw = plain
		}
		var out struct {
			Data struct {
				HomeTimeline struct{ Edges []any }
			}
		}
		if err := json.Unmarshal(raw, &out); err != nil || len(out.Data.HomeTimeline.Edges) != 5 {
			t.Fatalf("Accept-Encoding %q: body %q (%v)", enc, raw, err)
		}
		if got := resp.Header.Get("X-Request-Id"); got == "" {
			t.Error("no X-Request-Id")
		}
	}
}

// TestGzipPages checks that GraphiQL's page is compressed, and that
// /metrics (which promhttp compresses itself) is compressed once.
func TestGzipPages(t *testing.T) {
	g := startGateway(t, testenv.Embedded(t))
	for _, c := range []struct{ path, want string }{
		{"/", "<html"},
		{"/metrics", "gateway_store_calls_total"},
	} {
		req, _ := http.NewRequest(http.MethodGet, g.url+c.path, nil)
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.Header.Get("Content-Encoding") != "gzip" {
			t.Errorf("%s: Content-Encoding %q", c.path, resp.Header.Get("Content-Encoding"))
			continue
		}
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("%s: not gzip: %v", c.path, err)
		}
		plain, err := io.ReadAll(zr)
		if err != nil || !strings.Contains(strings.ToLower(string(plain)), strings.ToLower(c.want)) {
			t.Errorf("%s: after gunzip (%v), no %q in %.200q", c.path, err, c.want, plain)
		}
	}
}

// TestTraceSpans checks with an in-memory exporter that a GraphQL query
// makes an operation span whose children are the spans of its store calls.
func TestTraceSpans(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := trace.NewTracerProvider(trace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
	st := hbase.Trace(testenv.Embedded(t), tp)
	g := startGatewayWith(t, st, func(c *server.Config) { c.TracerProvider = tp })
	alice := g.register(uniqueName("alice"))
	exp.Reset()
	g.ok(alice.token, `query TraceMe($id: ID!) { user(id: $id) { id username followCount } }`, map[string]any{"id": alice.ID}, nil)

	spans := exp.GetSpans()
	var op *tracetest.SpanStub
	for i := range spans {
		if spans[i].Name == "query TraceMe" {
			op = &spans[i]
		}
	}
	if op == nil {
		t.Fatalf("no span %q among %d: %v", "query TraceMe", len(spans), spanNames(spans))
	}
	attrs := map[string]string{}
	for _, a := range op.Attributes {
		attrs[string(a.Key)] = a.Value.Emit()
	}
	if attrs["graphql.operation.type"] != "query" || attrs["graphql.operation.name"] != "TraceMe" || attrs["gateway.request_id"] == "" {
		t.Errorf("operation span attributes %v", attrs)
	}
	children := 0
	for _, s := range spans {
		if s.Parent.SpanID() != op.SpanContext.SpanID() {
			continue
		}
		if !strings.HasPrefix(s.Name, "hbase.") || s.SpanContext.TraceID() != op.SpanContext.TraceID() {
			t.Errorf("unexpected child span %q", s.Name)
			continue
		}
		for _, a := range s.Attributes {
			if a.Key == "db.system.name" && a.Value.AsString() != hbase.BackendEmbedded {
				t.Errorf("span %q: db.system.name %q", s.Name, a.Value.AsString())
			}
		}
		children++
	}
	if children == 0 {
		t.Fatalf("the operation span has no store-call children: %v", spanNames(spans))
	}
	if op.EndTime.IsZero() || op.EndTime.Before(op.StartTime) {
		t.Errorf("operation span not ended properly: %v..%v", op.StartTime, op.EndTime)
	}
}

func spanNames(spans tracetest.SpanStubs) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}
