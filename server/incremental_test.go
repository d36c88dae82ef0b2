package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/server"
)

// payload is one payload of incremental delivery: the initial one (data,
// errors) or a subsequent one (incremental), each with hasNext.
type payload struct {
	Data        json.RawMessage `json:"data"`
	Errors      []gqlError      `json:"errors"`
	HasNext     *bool           `json:"hasNext"`
	Incremental []struct {
		Data   json.RawMessage   `json:"data"`
		Items  []json.RawMessage `json:"items"`
		Path   []any             `json:"path"`
		Label  string            `json:"label"`
		Errors []gqlError        `json:"errors"`
	} `json:"incremental"`
}

// multipartAccept is the Accept header Apollo Client sends.
const multipartAccept = "multipart/mixed;deferSpec=20220824,application/json"

// incremental posts query as Apollo Client does (Accept: multipartAccept)
// with client (nil: http.DefaultClient) and returns the payloads of the
// multipart/mixed response, parsed by mime/multipart; it fails the test
// unless the response is multipart/mixed with deferSpec=20220824 and
// every payload but the last says hasNext: true, the last false.
func (g *gw) incremental(client *http.Client, token, query string, vars map[string]any) []payload {
	g.t.Helper()
	if client == nil {
		client = http.DefaultClient
	}
	req, _ := http.NewRequest("POST", g.url+"/graphql", strings.NewReader(mustJSON(map[string]any{"query": query, "variables": vars})))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", multipartAccept)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		g.t.Fatalf("POST /graphql: %v", err)
	}
	defer resp.Body.Close()
	media, params, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || media != "multipart/mixed" || params["deferspec"] != "20220824" || params["boundary"] == "" || resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		g.t.Fatalf("HTTP %d, Content-Type %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	r := multipart.NewReader(resp.Body, params["boundary"])
	var out []payload
	for {
		part, err := r.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			g.t.Fatalf("part %d: %v", len(out), err)
		}
		if ct := part.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			g.t.Fatalf("part %d: Content-Type %q", len(out), ct)
		}
		b, _ := io.ReadAll(part)
		var p payload
		if err := json.Unmarshal(b, &p); err != nil {
			g.t.Fatalf("part %d %s: %v", len(out), b, err)
		}
		out = append(out, p)
	}
	checkHasNext(g.t, out)
	return out
}

// checkHasNext fails t unless every payload says hasNext, true for all but
// the last.
func checkHasNext(t testing.TB, ps []payload) {
	t.Helper()
	if len(ps) == 0 {
		t.Fatal("no payload")
	}
	for i, p := range ps {
		if p.HasNext == nil || *p.HasNext != (i < len(ps)-1) {
			t.Fatalf("payload %d of %d: hasNext %v; payloads %s", i, len(ps), p.HasNext, mustJSON(ps))
		}
	}
}

// merge applies the subsequent payloads to the initial one's data as a
// client does: a deferred fragment's data merged into the object at its
// path, a streamed list's items at the index its path ends with.
func merge(t testing.TB, ps []payload) map[string]any {
	t.Helper()
	var data map[string]any
	if err := json.Unmarshal(ps[0].Data, &data); err != nil {
		t.Fatalf("initial data %s: %v", ps[0].Data, err)
	}
	at := func(path []any) (any, any) {
		var parent, cur any = nil, data
		for _, k := range path {
			parent = cur
			switch k := k.(type) {
			case string:
				cur = cur.(map[string]any)[k]
			case float64:
				cur = cur.([]any)[int(k)]
			}
		}
		return parent, cur
	}
	for _, p := range ps[1:] {
		for _, inc := range p.Incremental {
			if inc.Items != nil {
				parent, _ := at(inc.Path[:len(inc.Path)-1])
				key := inc.Path[len(inc.Path)-2].(string)
				obj := parent.(map[string]any)
				list := obj[key].([]any)
				if idx := int(inc.Path[len(inc.Path)-1].(float64)); idx != len(list) {
					t.Fatalf("items at %v, list has %d", inc.Path, len(list))
				}
				for _, it := range inc.Items {
					var v any
					_ = json.Unmarshal(it, &v)
					list = append(list, v)
				}
				obj[key] = list
				continue
			}
			var add map[string]any
			_ = json.Unmarshal(inc.Data, &add)
			_, obj := at(inc.Path)
			for k, v := range add {
				obj.(map[string]any)[k] = v
			}
		}
	}
	return data
}

// whole runs query as a plain JSON request and returns its data.
func (g *gw) whole(token, query string, vars map[string]any) map[string]any {
	g.t.Helper()
	var d map[string]any
	g.ok(token, query, vars, &d)
	return d
}

// TestDefer checks @defer over HTTP: a multipart/mixed response whose
// initial payload lacks the deferred fields and whose subsequent payload
// brings them with their path and label; the same operation without
// multipart/mixed in Accept answered whole in one JSON response;
// @defer(if: false) not deferred; @defer and @stream refused in a
// mutation and @stream on a field that is not a list; introspection
// declaring both.
func TestDefer(t *testing.T) {
	g := startGateway(t, testenv.Embedded(t))
	a := g.register(uniqueName("deferrer"))
	vars := map[string]any{"id": a.ID}

	for _, q := range []string{
		`query($id: ID!) { user(id: $id) { id ... @defer(label: "more") { username postCount } } }`,
		`query($id: ID!) { user(id: $id) { id ...More @defer(label: "more") } } fragment More on User { username postCount }`,
	} {
		ps := g.incremental(nil, a.token, q, vars)
		if len(ps) != 2 || string(ps[0].Data) != fmt.Sprintf(`{"user":{"id":%q}}`, a.ID) || len(ps[1].Incremental) != 1 {
			t.Fatalf("%s: payloads %s", q, mustJSON(ps))
		}
		inc := ps[1].Incremental[0]
		var more map[string]any
		_ = json.Unmarshal(inc.Data, &more)
		if inc.Label != "more" || !reflect.DeepEqual(inc.Path, []any{"user"}) ||
			!reflect.DeepEqual(more, map[string]any{"username": a.Username, "postCount": float64(0)}) {
			t.Errorf("%s: subsequent payload %s", q, mustJSON(ps[1]))
		}
		if got, want := merge(t, ps), g.whole(a.token, q, vars); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: merged %v, whole %v", q, got, want)
		}
		// Executed whole for the JSON request, the cached document still
		// has its @defer.
		if again := g.incremental(nil, a.token, q, vars); len(again) != 2 {
			t.Errorf("%s after a JSON request: payloads %s", q, mustJSON(again))
		}
	}

	t.Run("on the query's root", func(t *testing.T) {
		q := `query($id: ID!) { me { id } ... @defer(label: "root") { user(id: $id) { username postCount } } }`
		ps := g.in(t).incremental(nil, a.token, q, vars)
		if len(ps) != 2 || string(ps[0].Data) != fmt.Sprintf(`{"me":{"id":%q}}`, a.ID) || len(ps[1].Incremental) != 1 ||
			ps[1].Incremental[0].Label != "root" || ps[1].Incremental[0].Path == nil || len(ps[1].Incremental[0].Path) != 0 {
			t.Fatalf("payloads %s", mustJSON(ps))
		}
		if got, want := merge(t, ps), g.whole(a.token, q, vars); !reflect.DeepEqual(got, want) {
			t.Errorf("merged %v, whole %v", got, want)
		}
	})

	t.Run("no multipart/mixed in Accept", func(t *testing.T) {
		r := g.raw("POST", a.token, mustJSON(map[string]any{"query": `query($id: ID!) { user(id: $id) { id ... @defer { username } } }`, "variables": vars}))
		var body struct{ Data json.RawMessage }
		if err := json.Unmarshal(r.body, &body); err != nil || r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") ||
			string(body.Data) != fmt.Sprintf(`{"user":{"id":%q,"username":%q}}`, a.ID, a.Username) {
			t.Errorf("HTTP %d %s: %s", r.status, r.header.Get("Content-Type"), r.body)
		}
	})

	t.Run("@defer(if: false)", func(t *testing.T) {
		ps := g.in(t).incremental(nil, a.token, `query($id: ID!, $d: Boolean!) { user(id: $id) { id ... @defer(if: $d) { username } } }`, map[string]any{"id": a.ID, "d": false})
		if len(ps) != 1 || string(ps[0].Data) != fmt.Sprintf(`{"user":{"id":%q,"username":%q}}`, a.ID, a.Username) {
			t.Errorf("payloads %s", mustJSON(ps))
		}
	})

	refused := []struct{ name, query, message string }{
		{"@defer in a mutation", `mutation { updateProfile(bio: "x") { id ... @defer { username } } }`, "@defer is served on queries only"},
		{"@stream on a field that is not a list", `query($id: ID!) { user(id: $id) { posts(first: 2) @stream { totalCount } } }`, `@stream on "posts", which is not a list`},
		{"negative initialCount", `query($id: ID!) { user(id: $id) { posts(first: 2) { edges @stream(initialCount: -1) { cursor } } } }`, "initialCount is 0 or more"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			e := g.in(t).fails(a.token, "GRAPHQL_VALIDATION_FAILED", tc.query, vars)
			if !strings.Contains(e.Message, tc.message) {
				t.Errorf("error: %+v", e)
			}
		})
	}

	t.Run("introspection", func(t *testing.T) {
		var d struct {
			Schema struct {
				Directives []struct {
					Name      string
					Locations []string
					Args      []struct{ Name string }
				} `json:"directives"`
			} `json:"__schema"`
		}
		g.in(t).ok("", `{ __schema { directives { name locations args { name } } } }`, nil, &d)
		got := map[string]string{}
		for _, dir := range d.Schema.Directives {
			var args []string
			for _, a := range dir.Args {
				args = append(args, a.Name)
			}
			got[dir.Name] = strings.Join(dir.Locations, ",") + " " + strings.Join(args, ",")
		}
		if got["defer"] != "FRAGMENT_SPREAD,INLINE_FRAGMENT if,label" || got["stream"] != "FIELD if,label,initialCount" || got["include"] == "" {
			t.Errorf("directives: %v", got)
		}
	})
}

// TestStream checks @stream over HTTP on a connection's edges and on a
// plain list: the initial payload holds initialCount items, each further
// item comes in a payload of its own whose path ends with its index, and
// the merged result is the whole one.
func TestStream(t *testing.T) {
	g := startGateway(t, testenv.Embedded(t))
	a := g.register(uniqueName("streamer"))
	var names []string
	for i := range 3 {
		names = append(names, g.register(uniqueName(fmt.Sprintf("m%d", i))).Username)
	}
	for i := range 4 {
		g.publish(a.token, fmt.Sprintf("post %d @%s @%s @%s", i, names[0], names[1], names[2]))
	}
	vars := map[string]any{"id": a.ID}

	t.Run("edges", func(t *testing.T) {
		q := `query($id: ID!) { user(id: $id) { posts(first: 4) { edges @stream(initialCount: 1, label: "e") { cursor node { id content } } pageInfo { hasNextPage } } } }`
		ps := g.in(t).incremental(nil, a.token, q, vars)
		if len(ps) != 4 {
			t.Fatalf("want 4 payloads (1 edge, then 3), got %s", mustJSON(ps))
		}
		var first struct {
			User struct {
				Posts struct{ Edges []any } `json:"posts"`
			} `json:"user"`
		}
		if err := json.Unmarshal(ps[0].Data, &first); err != nil || len(first.User.Posts.Edges) != 1 {
			t.Fatalf("initial payload %s", ps[0].Data)
		}
		for i, p := range ps[1:] {
			if len(p.Incremental) != 1 || len(p.Incremental[0].Items) != 1 || p.Incremental[0].Label != "e" ||
				!reflect.DeepEqual(p.Incremental[0].Path, []any{"user", "posts", "edges", float64(i + 1)}) {
				t.Errorf("payload %d: %s", i+1, mustJSON(p))
			}
		}
		if got, want := merge(t, ps), g.whole(a.token, q, vars); !reflect.DeepEqual(got, want) {
			t.Errorf("merged %v, whole %v", got, want)
		}
	})

	t.Run("plain list in a list", func(t *testing.T) {
		q := `query($id: ID!) { user(id: $id) { posts(first: 2) { edges { node { mentions @stream(initialCount: 2) { username } } } } } }`
		ps := g.in(t).incremental(nil, a.token, q, vars)
		// Two posts of three mentions: two of each in the initial payload,
		// then the third of each.
		if len(ps) != 3 {
			t.Fatalf("payloads %s", mustJSON(ps))
		}
		for i, p := range ps[1:] {
			want := []any{"user", "posts", "edges", float64(i), "node", "mentions", float64(2)}
			if len(p.Incremental) != 1 || !reflect.DeepEqual(p.Incremental[0].Path, want) || string(p.Incremental[0].Items[0]) != fmt.Sprintf(`{"username":%q}`, names[2]) {
				t.Errorf("payload %d: %s", i+1, mustJSON(p))
			}
		}
		if got, want := merge(t, ps), g.whole(a.token, q, vars); !reflect.DeepEqual(got, want) {
			t.Errorf("merged %v, whole %v", got, want)
		}
	})

	t.Run("initialCount over the length, and if: false", func(t *testing.T) {
		for _, q := range []string{
			`query($id: ID!) { user(id: $id) { posts(first: 2) { edges @stream(initialCount: 5) { cursor } } } }`,
			`query($id: ID!) { user(id: $id) { posts(first: 2) { edges @stream(if: false) { cursor } } } }`,
		} {
			ps := g.in(t).incremental(nil, a.token, q, vars)
			if len(ps) != 1 || !reflect.DeepEqual(merge(t, ps), g.whole(a.token, q, vars)) {
				t.Errorf("%s: payloads %s", q, mustJSON(ps))
			}
		}
	})

	t.Run("@stream with @defer", func(t *testing.T) {
		q := `query($id: ID!) { user(id: $id) { id posts(first: 3) { edges @stream(initialCount: 1) { node { id } } } ... @defer { username } } }`
		ps := g.in(t).incremental(nil, a.token, q, vars)
		if len(ps) != 4 {
			t.Fatalf("payloads %s", mustJSON(ps))
		}
		if got, want := merge(t, ps), g.whole(a.token, q, vars); !reflect.DeepEqual(got, want) {
			t.Errorf("merged %v, whole %v", got, want)
		}
	})
}

// TestDeferErrors checks that an error of a deferred field reaches the
// client in the subsequent payload of its fragment, with its path and
// extensions.code, and not in the initial payload; and an error in a
// streamed item in the payload of that item.
func TestDeferErrors(t *testing.T) {
	g := startGateway(t, testenv.Embedded(t))
	a := g.register(uniqueName("deferr"))
	ps := g.incremental(nil, "", `query($id: ID!) { user(id: $id) { id ... @defer(label: "dept") { department { id } } } }`, map[string]any{"id": a.ID})
	if len(ps) != 2 || len(ps[0].Errors) != 0 || string(ps[0].Data) != fmt.Sprintf(`{"user":{"id":%q}}`, a.ID) || len(ps[1].Incremental) != 1 {
		t.Fatalf("payloads %s", mustJSON(ps))
	}
	inc := ps[1].Incremental[0]
	if len(inc.Errors) != 1 || inc.Errors[0].Extensions["code"] != "UNAUTHENTICATED" ||
		!reflect.DeepEqual(inc.Errors[0].Path, []any{"user", "department"}) || string(inc.Data) != `{"department":null}` {
		t.Errorf("subsequent payload %s", mustJSON(ps[1]))
	}

	// An error in a streamed item comes with the item.
	g.publish(a.token, "one")
	g.publish(a.token, "two")
	ps = g.incremental(nil, "", `query($id: ID!) { user(id: $id) { posts(first: 2) { edges @stream(initialCount: 1) { node { content author { department { id } } } } } } }`, map[string]any{"id": a.ID})
	if len(ps) != 2 || len(ps[0].Errors) != 1 || len(ps[1].Incremental) != 1 {
		t.Fatalf("stream payloads %s", mustJSON(ps))
	}
	inc = ps[1].Incremental[0]
	if len(inc.Errors) != 1 || inc.Errors[0].Extensions["code"] != "UNAUTHENTICATED" ||
		!reflect.DeepEqual(inc.Errors[0].Path, []any{"user", "posts", "edges", float64(1), "node", "author", "department"}) ||
		!reflect.DeepEqual(ps[0].Errors[0].Path, []any{"user", "posts", "edges", float64(0), "node", "author", "department"}) {
		t.Errorf("stream payloads %s", mustJSON(ps))
	}
}

// TestIncrementalCost checks that the query limits count the deferred
// and streamed parts before anything runs: an operation over MaxNodes
// only through a deferred fragment is refused with the cost of the whole
// operation and no store call, and the reported cost of a streamed list
// is the cost of the list.
func TestIncrementalCost(t *testing.T) {
	g := startGatewayWith(t, testenv.Embedded(t), func(c *server.Config) { c.Limits.MaxNodes = 40 })
	a := g.register(uniqueName("coster"))
	vars := map[string]any{"id": a.ID}
	deferred := `query($id: ID!) { user(id: $id) { id ... @defer { posts(first: 50) { edges { node { id } } } } } }`
	whole := `query($id: ID!) { user(id: $id) { id ... { posts(first: 50) { edges { node { id } } } } } }`
	streamed := `query($id: ID!) { user(id: $id) { id posts(first: 50) { edges @stream(initialCount: 1) { node { id } } } } }`
	m := g.meter()
	var costs []any
	for _, q := range []string{deferred, whole, streamed} {
		req, _ := http.NewRequest("POST", g.url+"/graphql", strings.NewReader(mustJSON(map[string]any{"query": q, "variables": vars})))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", multipartAccept)
		resp, err := m.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var body struct{ Errors []gqlError }
		if err := json.Unmarshal(b, &body); err != nil || len(body.Errors) != 1 || body.Errors[0].Extensions["code"] != server.CodeQueryTooComplex {
			t.Fatalf("%s: HTTP %d %s", q, resp.StatusCode, b)
		}
		costs = append(costs, body.Errors[0].Extensions["cost"])
	}
	if costs[0] != costs[1] || costs[1] != costs[2] {
		t.Errorf("costs deferred, whole, streamed: %v", costs)
	}
	if n, err := m.StoreCalls(); err != nil || n != 0 {
		t.Errorf("refused operations made %d store calls (%v)", n, err)
	}
}

// TestDeferStoreCalls checks that a page with its posts' authors, likes
// and mentions deferred makes the store calls of the same page without
// @defer: the dataloaders still batch the deferred fields of all the
// page's posts; and so does the page with its edges streamed.
func TestDeferStoreCalls(t *testing.T) {
	g := startGateway(t, testenv.Embedded(t))
	a := g.register(uniqueName("batcher"))
	for i := range 6 {
		b := g.register(uniqueName(fmt.Sprintf("author%d", i)))
		g.follow(a.token, b.ID)
		g.publish(b.token, fmt.Sprintf("post %d @%s", i, a.Username))
	}
	g.flush()
	const page = `query { homeTimeline(first: 6) { edges { node { id content %s } } } }`
	const fields = `author { id username postCount } likeCount likedByViewer mentions { id username }`
	plain := fmt.Sprintf(page, fields)
	deferred := fmt.Sprintf(page, "... @defer { "+fields+" }")
	calls := func(q string, multipart bool) int {
		t.Helper()
		m := g.meter()
		if multipart {
			ps := g.incremental(m.Client(), a.token, q, nil)
			if len(ps) < 2 {
				t.Fatalf("not deferred: %s", mustJSON(ps))
			}
			if got, want := merge(t, ps), g.whole(a.token, plain, nil); !reflect.DeepEqual(got, want) {
				t.Fatalf("merged %v, whole %v", got, want)
			}
		} else {
			req, _ := http.NewRequest("POST", g.url+"/graphql", bytes.NewReader(mustJSONBytes(map[string]any{"query": q})))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+a.token)
			resp, err := m.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		n, err := m.StoreCalls()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	// Warm what a first request warms (token checks, caches) alike for
	// both.
	calls(plain, false)
	calls(deferred, true)
	streamed := fmt.Sprintf(`query { homeTimeline(first: 6) { edges @stream(initialCount: 2) { node { id content %s } } } }`, fields)
	p, d, s := calls(plain, false), calls(deferred, true), calls(streamed, true)
	if d > p || s > p {
		t.Errorf("store calls: %d with @defer, %d with @stream, %d without", d, s, p)
	}
	t.Logf("store calls of the page: %d without @defer, %d with, %d with @stream", p, d, s)
}

// TestIncrementalWebSocket checks @defer and @stream over
// graphql-transport-ws: the initial payload and each subsequent one a
// "next" message of the operation, then "complete".
func TestIncrementalWebSocket(t *testing.T) {
	g := startGateway(t, testenv.Embedded(t))
	a := g.register(uniqueName("wsdefer"))
	for i := range 3 {
		g.publish(a.token, fmt.Sprintf("ws post %d", i))
	}
	q := fmt.Sprintf(`query { user(id: %q) { id posts(first: 3) { edges @stream(initialCount: 1) { node { content } } } ... @defer(label: "d") { username department { id } } } }`, a.ID)
	conn := g.subscribe("", q)
	var ps []payload
	for {
		m := g.read(conn)
		if m.Type == "complete" {
			break
		}
		var p payload
		if m.Type != "next" || json.Unmarshal(m.Payload, &p) != nil {
			t.Fatalf("message %+v", m)
		}
		ps = append(ps, p)
	}
	checkHasNext(t, ps)
	if len(ps) != 4 {
		t.Fatalf("payloads %s", mustJSON(ps))
	}
	last := ps[3].Incremental
	if len(last) != 1 || last[0].Label != "d" || len(last[0].Errors) != 1 || last[0].Errors[0].Extensions["code"] != "UNAUTHENTICATED" {
		t.Errorf("deferred payload %s", mustJSON(ps[3]))
	}
	got := merge(t, ps)
	delete(got["user"].(map[string]any), "department")
	if want := g.whole("", strings.Replace(q, " department { id }", "", 1), nil); !reflect.DeepEqual(got, want) {
		t.Errorf("merged %v, whole %v", got, want)
	}
}

// gatedStore is a store whose scans, once armed, wait until released:
// the reads of a deferred fragment held back while the test reads what
// came before them. A scan gives up waiting when its context ends, unless
// the store is stubborn: then it waits for release whatever its context
// says (a deferred fragment that outlives its request).
type gatedStore struct {
	hbase.StoreAdmin
	stubborn bool
	armed    atomic.Bool
	entered  chan struct{} // closed by the first scan that waits
	once     sync.Once
	release  chan struct{}
}

// Scan implements hbase.Store.
func (s *gatedStore) Scan(ctx context.Context, sc *hbase.Scan, fn func(*hbase.Result) error) error {
	if s.armed.Load() {
		s.once.Do(func() { close(s.entered) })
		if s.stubborn {
			<-s.release
		} else {
			select {
			case <-s.release:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return s.StoreAdmin.Scan(ctx, sc, fn)
}

// TestDeferDelivery checks that the initial payload reaches the client
// while a deferred fragment is still being resolved: the deferred
// fragment's scan waits until the test has read the initial payload.
func TestDeferDelivery(t *testing.T) {
	st := &gatedStore{StoreAdmin: testenv.Embedded(t), entered: make(chan struct{}), release: make(chan struct{})}
	g := startGateway(t, st)
	a := g.register(uniqueName("deliver"))
	g.publish(a.token, "deferred post")
	st.armed.Store(true)
	released := false
	defer func() {
		if !released {
			close(st.release)
		}
	}()

	body := mustJSON(map[string]any{"query": `query($id: ID!) { user(id: $id) { id ... @defer(label: "posts") { posts(first: 3) { edges { node { content } } } } } }`, "variables": map[string]any{"id": a.ID}})
	req, _ := http.NewRequest("POST", g.url+"/graphql", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", multipartAccept)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, params, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	r := multipart.NewReader(resp.Body, params["boundary"])
	read := func() (payload, error) {
		part, err := r.NextPart()
		if err != nil {
			return payload{}, err
		}
		var p payload
		err = json.NewDecoder(part).Decode(&p)
		return p, err
	}
	type got struct {
		p   payload
		err error
	}
	first := make(chan got, 1)
	go func() { p, err := read(); first <- got{p, err} }()
	var initial got
	select {
	case initial = <-first:
	case <-time.After(time.Minute): // a bound on a hang, not a measure
		t.Fatal("no initial payload while the deferred fragment's scan waits")
	}
	// The deferred fragment's scan is what waits (it may start after the
	// initial payload went out).
	select {
	case <-st.entered:
	case <-time.After(time.Minute):
		t.Fatal("the deferred fragment made no scan: nothing was held back")
	}
	if initial.err != nil || string(initial.p.Data) != fmt.Sprintf(`{"user":{"id":%q}}`, a.ID) || initial.p.HasNext == nil || !*initial.p.HasNext {
		t.Fatalf("initial payload %s (%v)", mustJSON(initial.p), initial.err)
	}
	released = true
	close(st.release)
	p, err := read()
	if err != nil || len(p.Incremental) != 1 || p.Incremental[0].Label != "posts" ||
		!strings.Contains(string(p.Incremental[0].Data), "deferred post") || p.HasNext == nil || *p.HasNext {
		t.Fatalf("deferred payload %s (%v)", mustJSON(p), err)
	}
}

// TestIncrementalLegacyWebSocket checks that the legacy graphql-ws
// protocol, whose clients do not merge payloads, answers an operation
// with @defer and @stream whole, in one "data" message.
func TestIncrementalLegacyWebSocket(t *testing.T) {
	g := startGateway(t, testenv.Embedded(t))
	a := g.register(uniqueName("legacy"))
	g.publish(a.token, "legacy one")
	g.publish(a.token, "legacy two")
	q := fmt.Sprintf(`query { user(id: %q) { id posts(first: 2) { edges @stream { node { content } } } ... @defer { username } } }`, a.ID)
	d := websocket.Dialer{Subprotocols: []string{"graphql-ws"}, HandshakeTimeout: 10 * time.Second}
	conn, _, err := d.Dial("ws"+strings.TrimPrefix(g.url, "http")+"/graphql", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if conn.Subprotocol() != "graphql-ws" {
		t.Fatalf("subprotocol %q", conn.Subprotocol())
	}
	for _, m := range []map[string]any{{"type": "connection_init", "payload": map[string]any{}}, {"id": "1", "type": "start", "payload": map[string]any{"query": q}}} {
		if err := conn.WriteJSON(m); err != nil {
			t.Fatal(err)
		}
	}
	var msgs []wsMessage
	for m := g.read(conn); m.Type != "complete"; m = g.read(conn) {
		if m.Type != "connection_ack" {
			msgs = append(msgs, m)
		}
	}
	if len(msgs) != 1 || msgs[0].Type != "data" {
		t.Fatalf("messages %+v", msgs)
	}
	var p struct {
		Data    map[string]any  `json:"data"`
		HasNext json.RawMessage `json:"hasNext"`
	}
	if err := json.Unmarshal(msgs[0].Payload, &p); err != nil || p.HasNext != nil {
		t.Fatalf("payload %s", msgs[0].Payload)
	}
	if want := g.whole("", q, nil); !reflect.DeepEqual(p.Data, want) {
		t.Errorf("data %v, want %v", p.Data, want)
	}
}

// TestIncrementalResponseLimit checks that --max-response-bytes bounds
// the payloads of an incremental response together: once they add up to
// more, a RESPONSE_TOO_LARGE error with hasNext: false ends it.
func TestIncrementalResponseLimit(t *testing.T) {
	g := startGatewayWith(t, testenv.Embedded(t), func(c *server.Config) { c.MaxResponseBytes = 2000 })
	a := g.register(uniqueName("bigstream"))
	for i := range 8 {
		g.publish(a.token, fmt.Sprintf("%d %s", i, strings.Repeat("x", 300)))
	}
	ps := g.incremental(nil, a.token, `query($id: ID!) { user(id: $id) { posts(first: 8) { edges @stream(initialCount: 1) { node { content } } } } }`, map[string]any{"id": a.ID})
	last := ps[len(ps)-1]
	if len(ps) < 3 || len(ps) > 8 || len(last.Errors) != 1 || last.Errors[0].Extensions["code"] != server.CodeResponseTooLarge ||
		last.Errors[0].Extensions["limit"] != float64(2000) {
		t.Errorf("payloads %s", mustJSON(ps))
	}
}

// TestDeferTimeout checks that a deferred fragment still resolving when
// the request's time runs out ends the response with a TIMEOUT error
// (hasNext: false), after the initial payload.
func TestDeferTimeout(t *testing.T) {
	st := &gatedStore{StoreAdmin: testenv.Embedded(t), entered: make(chan struct{}), release: make(chan struct{})}
	t.Cleanup(func() { close(st.release) })
	// Long enough for the initial payload on a busy machine; the deferred
	// scan waits past it.
	g := startGatewayWith(t, st, func(c *server.Config) { c.RequestTimeout = 10 * time.Second })
	a := g.register(uniqueName("late"))
	st.armed.Store(true)
	ps := g.incremental(nil, "", `query($id: ID!) { user(id: $id) { id ... @defer { posts(first: 3) { edges { node { content } } } } } }`, map[string]any{"id": a.ID})
	if len(ps) < 2 || string(ps[0].Data) != fmt.Sprintf(`{"user":{"id":%q}}`, a.ID) {
		t.Fatalf("payloads %s", mustJSON(ps))
	}
	var codes []any
	for _, p := range ps[1:] {
		for _, e := range p.Errors {
			codes = append(codes, e.Extensions["code"])
		}
		for _, inc := range p.Incremental {
			for _, e := range inc.Errors {
				codes = append(codes, e.Extensions["code"])
			}
		}
	}
	t.Logf("after the initial payload: %s", mustJSON(ps[1:]))
	if len(codes) == 0 || !reflect.DeepEqual(codes, slices.Repeat([]any{"TIMEOUT"}, len(codes))) {
		t.Errorf("error codes after the initial payload: %v; payloads %s", codes, mustJSON(ps))
	}
}
