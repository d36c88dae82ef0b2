package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/weibohbase/gateway/internal/gatewaytest"
)

func TestTakeLogFormat(t *testing.T) {
	for _, c := range []struct {
		name, def string
		args      []string
		want      string
		rest      []string
		err       bool
	}{
		{"default", "text", []string{"--addr", ":1"}, "text", []string{"--addr", ":1"}, false},
		{"env json", "json", nil, "json", nil, false},
		{"flag wins", "text", []string{"--addr", ":1", "--log-format", "json"}, "json", []string{"--addr", ":1"}, false},
		{"single dash and =", "json", []string{"-log-format=text", "--demo"}, "text", []string{"--demo"}, false},
		{"after --", "text", []string{"--", "--log-format", "json"}, "text", []string{"--", "--log-format", "json"}, false},
		{"positional kept", "text", []string{"grant", "alice", "--log-format=json"}, "json", []string{"grant", "alice"}, false},
		{"missing value", "text", []string{"--log-format"}, "", nil, true},
		{"bad value", "text", []string{"--log-format", "xml"}, "", nil, true},
		{"bad env", "yaml", nil, "", nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, rest, err := takeLogFormat(c.def, c.args)
			if (err != nil) != c.err {
				t.Fatalf("err %v, want error %v", err, c.err)
			}
			if c.err {
				return
			}
			if got != c.want || !slices.Equal(rest, c.rest) {
				t.Errorf("takeLogFormat(%q, %q) = %q, %q; want %q, %q", c.def, c.args, got, rest, c.want, c.rest)
			}
		})
	}
}

// startServeArgs starts `gateway serve` on a fresh embedded store with
// args and env added, and waits until it is ready.
func startServeArgs(t *testing.T, bin string, env []string, args ...string) *serveProc {
	t.Helper()
	env = append(append(os.Environ(), "GATEWAY_JWT_SECRET=obs-test-secret-obs-test-secret-obs"), env...)
	return startServe(t, bin, env, append([]string{"--data", t.TempDir()}, args...)...)
}

// post sends a GraphQL request with variables and returns the raw body.
func (g *serveProc) post(t *testing.T, query string, vars map[string]any) []byte {
	t.Helper()
	r, err := gatewaytest.Do(t.Context(), nil, g.base, "", query, vars)
	if err != nil && r.Status == 0 {
		t.Fatal(err)
	}
	return r.Body
}

// TestLogFormat runs the binary with --log-format json (flag) and text
// (GATEWAY_LOG_FORMAT), registers and logs in with a password, and checks
// that every line is in the format asked for, that the access log lines of
// /graphql carry request_id and operation, and that the password and the
// tokens are nowhere in the output.
func TestLogFormat(t *testing.T) {
	bin := buildGateway(t)
	for _, c := range []struct {
		format string
		env    []string
		args   []string
	}{
		{"json", nil, []string{"--log-format", "json"}},
		{"text", []string{"GATEWAY_LOG_FORMAT=text"}, nil},
	} {
		t.Run(c.format, func(t *testing.T) {
			g := startServeArgs(t, bin, c.env, c.args...)
			password := "Hunter2-Very-Secret"
			reg := g.post(t, `mutation BinRegister($u: String!, $p: String!) { register(username: $u, password: $p) { token } }`,
				map[string]any{"u": "logcheck", "p": password})
			login := g.post(t, `mutation BinLogin($u: String!, $p: String!) { login(username: $u, password: $p) { token } }`,
				map[string]any{"u": "logcheck", "p": password})
			var tokens []string
			for _, b := range [][]byte{reg, login} {
				var out struct {
					Data map[string]struct{ Token string }
				}
				if err := json.Unmarshal(b, &out); err != nil {
					t.Fatalf("%s: %v", b, err)
				}
				for _, v := range out.Data {
					tokens = append(tokens, v.Token)
				}
			}
			if len(tokens) != 2 || tokens[0] == "" || tokens[1] == "" {
				t.Fatalf("no tokens: %s %s", reg, login)
			}
			g.stop()
			out := g.logs.String()
			for _, secret := range append(tokens, password) {
				if strings.Contains(out, secret) {
					t.Errorf("the log holds a secret %q:\n%s", secret, out)
				}
			}
			access := 0
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				isJSON := json.Valid([]byte(line))
				if isJSON != (c.format == "json") || (c.format == "text" && !strings.HasPrefix(line, "time=")) {
					t.Errorf("not a %s line: %q", c.format, line)
					continue
				}
				if !strings.Contains(line, `"path":"/graphql"`) && !strings.Contains(line, " path=/graphql ") {
					continue
				}
				access++
				for _, want := range [][2]string{{"json", `"request_id":"`}, {"json", `"operation":"Bin`}, {"text", ` request_id=`}, {"text", ` operation=Bin`}} {
					if want[0] == c.format && !strings.Contains(line, want[1]) {
						t.Errorf("access log line without %s: %s", want[1], line)
					}
				}
			}
			if access != 2 {
				t.Errorf("%d access log lines of /graphql, want 2:\n%s", access, out)
			}
		})
	}
}

// TestTracingOTLP runs the binary with --otlp-endpoint pointing at a
// collector in the test and checks that a named mutation arrives as an
// operation span of service weibo-gateway with store-call spans as its
// children.
func TestTracingOTLP(t *testing.T) {
	var (
		mu    sync.Mutex
		reqs  []*collectortrace.ExportTraceServiceRequest
		paths []string
	)
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req collectortrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		reqs, paths = append(reqs, &req), append(paths, r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		_, _ = w.Write(out)
	}))
	defer collector.Close()

	g := startServeArgs(t, buildGateway(t), []string{"OTEL_BSP_SCHEDULE_DELAY=50", "OTEL_EXPORTER_OTLP_ENDPOINT=", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="},
		"--otlp-endpoint", collector.URL)
	if b := g.post(t, `mutation TraceRegister($u: String!, $p: String!) { register(username: $u, password: $p) { token } }`,
		map[string]any{"u": "tracecheck", "p": "some password"}); !bytes.Contains(b, []byte(`"token"`)) {
		t.Fatalf("register: %s", b)
	}
	g.stop() // flushes the spans

	mu.Lock()
	defer mu.Unlock()
	type span struct {
		name           string
		trace, id, pid string
		serviceName    string
	}
	var spans []span
	for _, r := range reqs {
		for _, rs := range r.ResourceSpans {
			svc := ""
			for _, a := range rs.GetResource().GetAttributes() {
				if a.Key == "service.name" {
					svc = a.GetValue().GetStringValue()
				}
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					spans = append(spans, span{s.Name, string(s.TraceId), string(s.SpanId), string(s.ParentSpanId), svc})
				}
			}
		}
	}
	for _, p := range paths {
		if p != "/v1/traces" {
			t.Errorf("exported to %q, want /v1/traces", p)
		}
	}
	var op *span
	for i := range spans {
		if spans[i].name == "mutation TraceRegister" {
			op = &spans[i]
		}
	}
	if op == nil {
		t.Fatalf("no span \"mutation TraceRegister\" among %d spans: %+v\n%s", len(spans), spans, g.logs.String())
	}
	if op.serviceName != "weibo-gateway" {
		t.Errorf("service.name %q", op.serviceName)
	}
	children := 0
	for _, s := range spans {
		if s.pid == op.id && s.trace == op.trace && strings.HasPrefix(s.name, "hbase.") {
			children++
		}
	}
	if children == 0 {
		t.Errorf("no store-call span under the operation span: %+v", spans)
	}
}
