package scim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/server/scim"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/provision/clients"
	"github.com/weibohbase/gateway/weibo/tables"
)

// env is a /scim/v2 handler under test over one backend: a domain over
// the store, a provisioning client and its token.
type env struct {
	t      *testing.T
	url    string
	d      *domain.Domain
	st     hbase.Store
	cl     *clients.Service
	token  string // the client's bearer token
	client string // the client's name
	tag    string // makes this test's names unique on the shared HBase
}

// forBackends runs f as a subtest on each backend.
func forBackends(t *testing.T, f func(t *testing.T, b testenv.Backend)) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) { f(t, b) })
	}
}

// start serves the handler over b's store until the test ends; configure,
// when not nil, changes its Config.
func start(t *testing.T, b testenv.Backend, configure func(*scim.Config)) *env {
	t.Helper()
	return startOn(t, b.Open(t), configure)
}

// startOwn is start on a store of the test's own (testenv's OpenOwn): for
// tests whose lists scan every managed user, which the shared HBase holds
// other tests' of.
func startOwn(t *testing.T, b testenv.Backend, configure func(*scim.Config)) *env {
	t.Helper()
	return startOn(t, b.OpenOwn(t, tables.Namespace, "scim"), configure)
}

// startOn is start over st.
func startOn(t *testing.T, st hbase.StoreAdmin, configure func(*scim.Config)) *env {
	t.Helper()
	ctx := t.Context()
	if err := tables.Migrate(ctx, st); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	d := domain.New(st, domain.WithLogger(log), domain.WithBcryptCost(4), domain.WithOutboxSweep(0))
	if err := d.Start(ctx); err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { _ = d.Close(context.WithoutCancel(ctx)) })
	cl := clients.New(st, nil)
	tag := fmt.Sprintf("%x%03d", time.Now().UnixNano()%0xffffffff, rand.IntN(1000))
	name := "okta-" + tag
	token, _, err := cl.Create(ctx, name, clients.DefaultRank)
	if err != nil {
		t.Fatalf("create client: %v", err)
	}
	cfg := scim.Config{Provision: d.Provision, Clients: cl, Logger: log}
	if configure != nil {
		configure(&cfg)
	}
	r := chi.NewRouter()
	r.Mount(scim.Prefix, scim.Handler(cfg))
	ts := httptest.NewServer(r)
	t.Cleanup(ts.Close)
	return &env{t: t, url: ts.URL, d: d, st: st, cl: cl, token: token, client: name, tag: tag}
}

// response is one answer of the handler.
type response struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

// str returns the string at a dotted path of the body ("meta.version").
func (r response) str(path string) string {
	v := r.get(path)
	s, _ := v.(string)
	return s
}

// ext returns attribute key of extension uri in the body.
func (r response) ext(uri, key string) any {
	m, _ := r.body[uri].(map[string]any)
	return m[key]
}

// get returns the value at a dotted path of the body.
func (r response) get(path string) any {
	var v any = r.body
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// list returns the array at key of the body.
func (r response) list(key string) []map[string]any {
	var out []map[string]any
	arr, _ := r.body[key].([]any)
	for _, x := range arr {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// call sends a request with token (the client's when "default") and
// headers given as name, value pairs.
func (e *env) call(method, path, token, body string, headers ...string) response {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(e.t.Context(), method, e.url+scim.Prefix+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/scim+json")
	}
	if token == "default" {
		token = e.token
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := response{status: resp.StatusCode, header: resp.Header, raw: string(raw)}
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, &r.body); err != nil {
			e.t.Fatalf("%s %s: %d, body not JSON: %s", method, path, resp.StatusCode, raw)
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/scim+json") {
			e.t.Errorf("%s %s: Content-Type %q", method, path, ct)
		}
	}
	return r
}

// do is call with the client's token.
func (e *env) do(method, path, body string, headers ...string) response {
	e.t.Helper()
	return e.call(method, path, "default", body, headers...)
}

// want fails the test unless r's status is status.
func (e *env) want(r response, status int, what string) response {
	e.t.Helper()
	if r.status != status {
		e.t.Fatalf("%s: status %d, want %d; body %s", what, r.status, status, r.raw)
	}
	return r
}

// wantError fails the test unless r is a SCIM error of status and
// scimType ("" for none).
func (e *env) wantError(r response, status int, scimType, what string) {
	e.t.Helper()
	e.want(r, status, what)
	if got := r.str("scimType"); got != scimType {
		e.t.Errorf("%s: scimType %q, want %q; body %s", what, got, scimType, r.raw)
	}
	if r.str("status") != fmt.Sprint(status) {
		e.t.Errorf("%s: body status %q, want %q", what, r.str("status"), fmt.Sprint(status))
	}
	if s, _ := r.body["schemas"].([]any); len(s) != 1 || s[0] != "urn:ietf:params:scim:api:messages:2.0:Error" {
		e.t.Errorf("%s: schemas %v", what, r.body["schemas"])
	}
}

// name is a unique name for this test: prefix + tag.
func (e *env) name(prefix string) string { return prefix + e.tag }

// body fills a JSON template: each {{k}} becomes vars[k].
func body(tmpl string, vars ...string) string {
	for i := 0; i+1 < len(vars); i += 2 {
		tmpl = strings.ReplaceAll(tmpl, "{{"+vars[i]+"}}", vars[i+1])
	}
	return tmpl
}
