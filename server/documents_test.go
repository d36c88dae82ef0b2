package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/server"
	"github.com/weibohbase/gateway/weibo/documents"
)

// docResponse is a GraphQL response with its HTTP status.
type docResponse struct {
	Data   json.RawMessage `json:"data"`
	Errors []gqlError      `json:"errors"`
	status int
}

// code returns the first error's extensions.code, "" when none.
func (r docResponse) code() string {
	if len(r.Errors) == 0 {
		return ""
	}
	c, _ := r.Errors[0].Extensions["code"].(string)
	return c
}

// sendDoc posts body (JSON-encoded) to /graphql with token (none when "")
// and Accept: application/json, under which only PERSISTED_DOCUMENT_REQUIRED
// of the errors before execution is HTTP 400.
func (g *gw) sendDoc(token string, body any) docResponse {
	g.t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		g.t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(g.t.Context(), http.MethodPost, g.url+"/graphql", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	return g.doDoc(token, req)
}

// getDoc sends a GET /graphql with the URL query q.
func (g *gw) getDoc(token string, q url.Values) docResponse {
	g.t.Helper()
	req, _ := http.NewRequestWithContext(g.t.Context(), http.MethodGet, g.url+"/graphql?"+q.Encode(), nil)
	req.Header.Set("Accept", "application/json")
	return g.doDoc(token, req)
}

func (g *gw) doDoc(token string, req *http.Request) docResponse {
	g.t.Helper()
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		g.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var r docResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		g.t.Fatalf("HTTP %d, body %q: %v", resp.StatusCode, raw, err)
	}
	r.status = resp.StatusCode
	return r
}

// addDocuments validates texts against the schema, as `gateway documents
// add` does, and registers them; it returns their ids.
func (g *gw) addDocuments(texts ...string) []string {
	g.t.Helper()
	var docs []documents.Document
	for _, text := range texts {
		names, err := server.ValidateDocument(text)
		if err != nil {
			g.t.Fatalf("ValidateDocument(%q): %v", text, err)
		}
		docs = append(docs, documents.Document{ID: documents.IDOf(text), Text: text, Names: names})
	}
	n, err := documents.New(g.svc.Store(), nil).Add(g.t.Context(), "test.json", docs)
	if err != nil || n != len(docs) {
		g.t.Fatalf("Add = %d, %v; want %d new", n, err, len(docs))
	}
	ids := make([]string, len(docs))
	for i, d := range docs {
		ids[i] = d.ID
	}
	return ids
}

// apq is Apollo's extensions.persistedQuery of a document id.
func apq(id string) map[string]any {
	return map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": strings.TrimPrefix(id, documents.IDPrefix)}}
}

// wantRefused checks that r is an error of code with HTTP status.
func wantRefused(t *testing.T, what string, r docResponse, code string, status int) {
	t.Helper()
	if r.code() != code || r.status != status || r.Data != nil && string(r.Data) != "null" {
		t.Errorf("%s: HTTP %d, errors %+v, data %s; want HTTP %d, %s and no data", what, r.status, r.Errors, r.Data, status, code)
	}
}

// TestTrustedDocumentsAllowlist drives --documents=allowlist over HTTP on
// both backends: registered documents run by documentId (POST and GET)
// and by Apollo's persistedQuery hash, for anyone; text and APQ
// registrations of anonymous and ordinary tokens are refused with
// PERSISTED_DOCUMENT_REQUIRED (HTTP 400) and nothing runs; unknown ids
// are PERSISTED_QUERY_NOT_FOUND; an administrator and a holder of
// RUN_ANY_OPERATION send text and register APQ.
func TestTrustedDocumentsAllowlist(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startGatewayWith(t, b.Open(t), func(c *server.Config) { c.Documents = server.DocumentsAllowlist })
			// Operation names unique to the run: the HBase store is shared,
			// and a document's row is its text's hash.
			sfx := uniqueName("d")
			ids := g.addDocuments(
				`mutation Register_`+sfx+`($u: String!, $p: String!) { register(username: $u, password: $p) { token user { id username } } }`,
				`query Me_`+sfx+` { me { username } }`,
			)
			register, me := ids[0], ids[1]

			// Text from an anonymous client: refused, and not executed.
			taken := uniqueName("notrun")
			r := g.sendDoc("", map[string]any{"query": `mutation($u: String!) { register(username: $u, password: "correct horse") { token } }`, "variables": map[string]any{"u": taken}})
			wantRefused(t, "anonymous text", r, server.CodePersistedDocumentRequired, http.StatusBadRequest)

			// Registered documents, by documentId.
			signup := func(name string) (token, id string) {
				t.Helper()
				r := g.sendDoc("", map[string]any{"documentId": register, "variables": map[string]any{"u": name, "p": "correct horse"}})
				var d struct {
					Register struct {
						Token string
						User  struct{ ID string }
					}
				}
				if err := json.Unmarshal(r.Data, &d); err != nil || len(r.Errors) > 0 || d.Register.Token == "" {
					t.Fatalf("register %s by documentId: HTTP %d, %+v, %s", name, r.status, r.Errors, r.Data)
				}
				return d.Register.Token, d.Register.User.ID
			}
			// The refused register did not run: its name is free.
			signup(taken)
			annName := uniqueName("ann")
			ann, _ := signup(annName)
			meIs := func(what string, r docResponse, want string) {
				t.Helper()
				var d struct{ Me struct{ Username string } }
				if err := json.Unmarshal(r.Data, &d); err != nil || len(r.Errors) > 0 || r.status != http.StatusOK || d.Me.Username != want {
					t.Fatalf("%s: HTTP %d, %+v, %s; want me %s", what, r.status, r.Errors, r.Data, want)
				}
			}
			meIs("documentId", g.sendDoc(ann, map[string]any{"documentId": me}), annName)
			meIs("GET documentId", g.getDoc(ann, url.Values{"documentId": {me}}), annName)
			meIs("Apollo hash", g.sendDoc(ann, map[string]any{"extensions": apq(me)}), annName)
			meIs("documentId in extensions", g.sendDoc(ann, map[string]any{"extensions": map[string]any{"documentId": me}}), annName)

			// An ordinary token: text refused, APQ registration refused.
			text := `query { me { id } }`
			wantRefused(t, "ordinary text", g.sendDoc(ann, map[string]any{"query": text}), server.CodePersistedDocumentRequired, http.StatusBadRequest)
			wantRefused(t, "ordinary text over GET", g.getDoc(ann, url.Values{"query": {text}}), server.CodePersistedDocumentRequired, http.StatusBadRequest)
			wantRefused(t, "APQ registration", g.sendDoc(ann, map[string]any{"query": text, "extensions": apq(documents.IDOf(text))}), server.CodePersistedDocumentRequired, http.StatusBadRequest)
			wantRefused(t, "APQ not registered", g.sendDoc(ann, map[string]any{"extensions": apq(documents.IDOf(text))}), server.CodePersistedQueryNotFound, http.StatusOK)
			wantRefused(t, "unknown documentId", g.sendDoc(ann, map[string]any{"documentId": documents.IDOf(text)}), server.CodePersistedQueryNotFound, http.StatusOK)
			wantRefused(t, "malformed documentId", g.sendDoc(ann, map[string]any{"documentId": "sha256:zz"}), server.CodeBadRequest, http.StatusOK)
			wantRefused(t, "documentId and query", g.sendDoc(ann, map[string]any{"documentId": me, "query": text}), server.CodeBadRequest, http.StatusOK)

			// An administrator: text and APQ registration run.
			adaName := uniqueName("ada")
			ada, _ := signup(adaName)
			g.makeAdmin(account{userData: userData{Username: adaName}})
			meIs("administrator text", g.sendDoc(ada, map[string]any{"query": `{ me { username } }`}), adaName)
			adminText := `query AdminOnly { me { username } }`
			meIs("administrator APQ registration", g.sendDoc(ada, map[string]any{"query": adminText, "extensions": apq(documents.IDOf(adminText))}), adaName)
			meIs("administrator APQ", g.sendDoc(ada, map[string]any{"extensions": apq(documents.IDOf(adminText))}), adaName)
			// What an administrator registered is not registered for others.
			wantRefused(t, "another's APQ", g.sendDoc(ann, map[string]any{"extensions": apq(documents.IDOf(adminText))}), server.CodePersistedQueryNotFound, http.StatusOK)

			// RUN_ANY_OPERATION alone is enough.
			var role struct{ CreateRole struct{ ID string } }
			if err := json.Unmarshal(g.sendDoc(ada, map[string]any{"query": `mutation($n: String!) { createRole(name: $n, permissions: [RUN_ANY_OPERATION]) { id } }`,
				"variables": map[string]any{"n": uniqueName("scripts")}}).Data, &role); err != nil || role.CreateRole.ID == "" {
				t.Fatalf("createRole: %v %+v", err, role)
			}
			bobName := uniqueName("bob")
			bob, bobID := signup(bobName)
			wantRefused(t, "bob before the role", g.sendDoc(bob, map[string]any{"query": `{ me { username } }`}), server.CodePersistedDocumentRequired, http.StatusBadRequest)
			if r := g.sendDoc(ada, map[string]any{"query": assignQ, "variables": map[string]any{"u": bobID, "r": role.CreateRole.ID, "p": 1}}); len(r.Errors) > 0 {
				t.Fatalf("assignRole: %+v", r.Errors)
			}
			meIs("RUN_ANY_OPERATION text", g.sendDoc(bob, map[string]any{"query": `{ me { username } }`}), bobName)
		})
	}
}

// TestTrustedDocumentsOpen checks that --documents=open (the default)
// runs text as before, and registered documents by id too.
func TestTrustedDocumentsOpen(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startGateway(t, b.Open(t))
			sfx := uniqueName("o")
			me := g.addDocuments(`query Me_` + sfx + ` { me { username } }`)[0]
			annName := uniqueName("ann")
			ann := g.register(annName)
			for what, body := range map[string]map[string]any{
				"documentId":  {"documentId": me},
				"Apollo hash": {"extensions": apq(me)},
				"text":        {"query": `{ me { username } }`},
			} {
				r := g.sendDoc(ann.token, body)
				var d struct{ Me struct{ Username string } }
				if err := json.Unmarshal(r.Data, &d); err != nil || len(r.Errors) > 0 || d.Me.Username != annName {
					t.Errorf("%s: HTTP %d, %+v, %s", what, r.status, r.Errors, r.Data)
				}
			}
			// APQ: registered by anyone, then sent by hash.
			text := `query Apq_` + sfx + ` { me { username } }`
			wantRefused(t, "APQ before registration", g.sendDoc(ann.token, map[string]any{"extensions": apq(documents.IDOf(text))}), server.CodePersistedQueryNotFound, http.StatusOK)
			if r := g.sendDoc(ann.token, map[string]any{"query": text, "extensions": apq(documents.IDOf(text))}); len(r.Errors) > 0 {
				t.Fatalf("APQ registration: %+v", r.Errors)
			}
			if r := g.sendDoc(ann.token, map[string]any{"extensions": apq(documents.IDOf(text))}); len(r.Errors) > 0 || !strings.Contains(string(r.Data), annName) {
				t.Fatalf("APQ by hash: %+v %s", r.Errors, r.Data)
			}
			wantRefused(t, "unknown documentId", g.sendDoc(ann.token, map[string]any{"documentId": documents.IDOf(text + " ")}), server.CodePersistedQueryNotFound, http.StatusOK)
		})
	}
}

// TestFieldUsageMetrics checks the field usage and document counters
// through /metrics: each executed operation counts each field its
// document selects once (fragments expanded, __typename left out), by
// the registered document it ran or "none"; a refused request counts
// nothing; deprecated fields are listed in
// gateway_graphql_field_deprecated.
func TestFieldUsageMetrics(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startGateway(t, b.Open(t))
			sfx := uniqueName("u")
			doc := g.addDocuments(`query Usage_` + sfx + ` { me { username ...F } } fragment F on User { id __typename username }`)[0]
			old := `query Old_` + sfx + `($d: ID!) { department(id: $d) { children(first: 1) { edges { cursor } } } }`
			ann := g.register(uniqueName("ann"))
			series := map[string]string{
				"doc":        `gateway_graphql_document_operations_total{document="` + doc + `"}`,
				"none":       `gateway_graphql_document_operations_total{document="none"}`,
				"me":         `gateway_graphql_field_usage_total{field="me",type="Query"}`,
				"username":   `gateway_graphql_field_usage_total{field="username",type="User"}`,
				"id":         `gateway_graphql_field_usage_total{field="id",type="User"}`,
				"typename":   `gateway_graphql_field_usage_total{field="__typename",type="User"}`,
				"children":   `gateway_graphql_field_usage_total{field="children",type="Department"}`,
				"deprecated": `gateway_graphql_field_deprecated{field="children",type="Department"}`,
			}
			before := map[string]float64{}
			for k, s := range series {
				before[k] = metricValue(t, g, s)
			}
			for range 3 {
				if r := g.sendDoc(ann.token, map[string]any{"documentId": doc}); len(r.Errors) > 0 || !strings.Contains(string(r.Data), ann.Username) {
					t.Fatalf("document: %+v %s", r.Errors, r.Data)
				}
			}
			for range 2 {
				g.ok(ann.token, `{ me { username } }`, nil, nil)
			}
			g.ok(ann.token, old, map[string]any{"d": "department:999999999"}, nil)
			// Refused before execution: counted nowhere.
			wantRefused(t, "unknown documentId", g.sendDoc(ann.token, map[string]any{"documentId": documents.IDOf(old)}), server.CodePersistedQueryNotFound, http.StatusOK)
			g.fails(ann.token, "GRAPHQL_VALIDATION_FAILED", `{ me { username nosuchfield } }`, nil)
			want := map[string]float64{"doc": 3, "none": 3, "me": 5, "username": 5, "id": 3, "typename": 0, "children": 1}
			for k, n := range want {
				if got := metricValue(t, g, series[k]) - before[k]; got != n {
					t.Errorf("%s grew by %v, want %v", series[k], got, n)
				}
			}
			if v := metricValue(t, g, series["deprecated"]); v != 1 {
				t.Errorf("%s = %v, want 1", series["deprecated"], v)
			}
		})
	}
}

// TestTrustedDocumentsWebSocket checks --documents=allowlist over
// graphql-transport-ws: a subscription sent as text is refused with
// PERSISTED_DOCUMENT_REQUIRED for its id, one sent as a registered
// document (extensions.documentId) runs and delivers the viewer's post.
func TestTrustedDocumentsWebSocket(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startGatewayWith(t, b.Open(t), func(c *server.Config) { c.Documents = server.DocumentsAllowlist })
			sfx := uniqueName("w")
			ids := g.addDocuments(
				`mutation Register_`+sfx+`($u: String!, $p: String!) { register(username: $u, password: $p) { token } }`,
				`subscription Live_`+sfx+` { homeTimelineUpdates { id } }`,
				`mutation Publish_`+sfx+`($c: String!) { publishPost(content: $c) { id } }`,
			)
			var reg struct{ Register struct{ Token string } }
			if err := json.Unmarshal(g.sendDoc("", map[string]any{"documentId": ids[0], "variables": map[string]any{"u": uniqueName("ann"), "p": "correct horse"}}).Data, &reg); err != nil || reg.Register.Token == "" {
				t.Fatalf("register: %v", err)
			}
			tk := reg.Register.Token

			conn := g.subscribe(tk, `subscription { homeTimelineUpdates { id } }`)
			m := g.read(conn)
			// Refused before it runs: the errors as a next (or error) message.
			if m.ID != "1" || (m.Type != "error" && m.Type != "next") || !strings.Contains(string(m.Payload), server.CodePersistedDocumentRequired) || strings.Contains(string(m.Payload), `"homeTimelineUpdates"`) {
				t.Fatalf("text subscription: %+v", m)
			}
			if err := conn.WriteJSON(map[string]any{"id": "2", "type": "subscribe", "payload": map[string]any{"extensions": map[string]any{"documentId": ids[1]}}}); err != nil {
				t.Fatal(err)
			}
			// The subscription is set up asynchronously: publish by
			// document until one post comes back on it.
			got := make(chan wsMessage, 1)
			go func() {
				var m wsMessage
				for {
					m = wsMessage{}
					_ = conn.SetReadDeadline(time.Now().Add(15 * time.Second))
					if err := conn.ReadJSON(&m); err != nil {
						break
					}
					if m.Type == "ping" {
						_ = conn.WriteJSON(map[string]any{"type": "pong"})
					}
					if m.ID == "2" {
						break
					}
				}
				got <- m
			}()
			published := map[string]bool{}
			for i := 0; ; i++ {
				var pub struct{ PublishPost struct{ ID string } }
				r := g.sendDoc(tk, map[string]any{"documentId": ids[2], "variables": map[string]any{"c": fmt.Sprintf("hello %d", i)}})
				if err := json.Unmarshal(r.Data, &pub); err != nil || pub.PublishPost.ID == "" {
					t.Fatalf("publish by documentId: %+v %s", r.Errors, r.Data)
				}
				published[pub.PublishPost.ID] = true
				select {
				case m := <-got:
					var next struct {
						Data struct{ HomeTimelineUpdates struct{ ID string } }
					}
					if m.Type != "next" || json.Unmarshal(m.Payload, &next) != nil || !published[next.Data.HomeTimelineUpdates.ID] {
						t.Fatalf("document subscription: %s %s", m.Type, m.Payload)
					}
					return
				case <-time.After(300 * time.Millisecond):
					if i > 30 {
						t.Fatal("the document subscription delivers nothing")
					}
				}
			}
		})
	}
}

// TestGraphiQLManifest: GraphiQL's sign-in ships as a manifest whose
// documents are the very texts its bundle sends, each valid against the
// schema, so that under --documents=allowlist `gateway documents add`
// of it lets anyone sign in through GraphiQL (and RUN_ANY_OPERATION
// holders then run any text).
func TestGraphiQLManifest(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("graphiql", "persisted-query-manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	docs, err := documents.ParseManifest(raw)
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 3 {
		t.Fatalf("%d documents, want SignIn, SignedInAs and SignOut", len(docs))
	}
	for _, f := range []string{filepath.Join("graphiql", "_web", "src", "signin.jsx"), filepath.Join("graphiql", "dist", "graphiql", "graphiql.js")} {
		code, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			if !bytes.Contains(code, []byte(d.Text)) {
				t.Errorf("%s does not send the manifest's %q", f, d.Text)
			}
			if _, err := server.ValidateDocument(d.Text); err != nil {
				t.Errorf("%q: %v", d.Text, err)
			}
		}
	}
}

// TestAdminConsoleManifest checks server/admin/persisted-query-manifest.json
// against the console's code (its sign-in's text, in the source and the
// built bundle) and that, once added, the console signs in under
// --documents=allowlist by sending that text, on both backends; the
// administrator then runs the console's other operations as text.
func TestAdminConsoleManifest(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("admin", "persisted-query-manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	docs, err := documents.ParseManifest(raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{filepath.Join("admin", "_web", "src", "App.jsx"), filepath.Join("admin", "dist", "assets", "admin.js")} {
		code, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			if !bytes.Contains(code, []byte(d.Text)) {
				t.Errorf("%s does not send the manifest's %q", f, d.Text)
			}
		}
	}
	login := docs[0].Text
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startGatewayWith(t, b.Open(t), func(c *server.Config) { c.Documents = server.DocumentsAllowlist })
			name := uniqueName("ada")
			if _, err := g.svc.Accounts.Register(t.Context(), name, "correct horse"); err != nil {
				t.Fatal(err)
			}
			g.makeAdmin(account{userData: userData{Username: name}})
			vars := map[string]any{"username": name, "password": "correct horse"}
			// Before the manifest is added (on the shared HBase store an
			// earlier run may have added it: then it runs already).
			if n, _ := documents.New(g.svc.Store(), nil).Get(t.Context(), documents.IDOf(login)); n == nil {
				wantRefused(t, "before the manifest", g.sendDoc("", map[string]any{"query": login, "variables": vars}), server.CodePersistedDocumentRequired, http.StatusBadRequest)
			}
			for i := range docs {
				if docs[i].Names, err = server.ValidateDocument(docs[i].Text); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := documents.New(g.svc.Store(), nil).Add(t.Context(), "persisted-query-manifest.json", docs); err != nil {
				t.Fatal(err)
			}
			r := g.sendDoc("", map[string]any{"query": login, "variables": vars})
			var d struct{ Login struct{ Token string } }
			if err := json.Unmarshal(r.Data, &d); err != nil || d.Login.Token == "" {
				t.Fatalf("the console's sign-in text: HTTP %d %+v %s", r.status, r.Errors, r.Data)
			}
			// The same operation reformatted is other text: refused.
			wantRefused(t, "other text", g.sendDoc("", map[string]any{"query": login + " ", "variables": vars}), server.CodePersistedDocumentRequired, http.StatusBadRequest)
			if r := g.sendDoc(d.Login.Token, map[string]any{"query": `query ConsoleViewer { me { username } }`}); len(r.Errors) > 0 || !strings.Contains(string(r.Data), name) {
				t.Fatalf("the administrator's text: %+v %s", r.Errors, r.Data)
			}
		})
	}
}
