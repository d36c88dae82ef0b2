package main

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weibohbase/gateway/weibo/documents"
)

// TestDocumentsCommand drives `gateway documents add|list` on the embedded
// store with an Apollo manifest and a Relay output: a manifest with one
// document that does not validate adds nothing; then serve
// --documents=allowlist (from GATEWAY_DOCUMENTS) runs the registered
// documents by id and refuses other text (the register run as text and
// then by id proves the refused one did not run: the name was free).
func TestDocumentsCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	bin := buildGateway(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "store")
	run(t, bin, "migrate", "--data", data)
	register := `mutation Register($u: String!, $p: String!) { register(username: $u, password: $p) { token } }`
	me := `query Me { me { username } }`
	write := func(name string, v any) string {
		t.Helper()
		b, _ := json.Marshal(v)
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	op := func(name, typ, body string) map[string]string {
		return map[string]string{"id": strings.TrimPrefix(documents.IDOf(body), documents.IDPrefix), "name": name, "type": typ, "body": body}
	}
	manifest := func(ops ...map[string]string) map[string]any {
		return map[string]any{"format": documents.ApolloFormat, "version": 1, "operations": ops}
	}
	apollo := write("persisted-query-manifest.json", manifest(op("Register", "mutation", register), op("Me", "query", me)))
	if out := run(t, bin, "documents", "add", apollo, "--data", data); !strings.Contains(out, "2 documents, 2 new") {
		t.Fatalf("add:\n%s", out)
	}
	if out := run(t, bin, "documents", "add", "--data", data, apollo); !strings.Contains(out, "2 documents, 0 new") {
		t.Fatalf("add again:\n%s", out)
	}
	fresh := `query Fresh { me { id } }`
	bad := `query Bad { me { nosuchfield } }`
	badFile := write("bad.json", manifest(op("Fresh", "query", fresh), op("Bad", "query", bad)))
	out, err := exec.Command(bin, "documents", "add", badFile, "--data", data).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "nothing was added") || !strings.Contains(string(out), documents.IDOf(bad)) || !strings.Contains(string(out), "nosuchfield") {
		t.Fatalf("add of an invalid document: %v\n%s", err, out)
	}
	relay := write("relay.json", map[string]string{strings.TrimPrefix(documents.IDOf(fresh), documents.IDPrefix): fresh})
	list := run(t, bin, "documents", "list", "--data", data)
	if strings.Contains(list, documents.IDOf(fresh)) {
		t.Fatalf("the invalid manifest's valid document was added:\n%s", list)
	}
	run(t, bin, "documents", "add", relay, "--data", data)
	list = run(t, bin, "documents", "list", "--data", data)
	for _, want := range []string{documents.IDOf(register) + "  Register", documents.IDOf(me) + "  Me", documents.IDOf(fresh) + "  Fresh", "persisted-query-manifest.json", "relay.json"} {
		if !strings.Contains(list, want) {
			t.Errorf("list lacks %q:\n%s", want, list)
		}
	}

	env := append(os.Environ(), "GATEWAY_DATA="+data, "GATEWAY_DOCUMENTS=allowlist")
	srv := startServe(t, bin, env)
	post := func(token string, body map[string]any) (int, string, json.RawMessage) {
		t.Helper()
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(http.MethodPost, srv.base+"/graphql", strings.NewReader(string(b)))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var r struct {
			Data   json.RawMessage
			Errors []struct{ Extensions struct{ Code string } }
		}
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
			t.Fatal(err)
		}
		code := ""
		if len(r.Errors) > 0 {
			code = r.Errors[0].Extensions.Code
		}
		return resp.StatusCode, code, r.Data
	}
	// Text of no registered document (the registered register reformatted).
	if status, code, _ := post("", map[string]any{"query": register + "\n", "variables": map[string]any{"u": "ann", "p": "correct horse"}}); status != http.StatusBadRequest || code != "PERSISTED_DOCUMENT_REQUIRED" {
		t.Fatalf("text under allowlist: %d %s", status, code)
	}
	status, code, d := post("", map[string]any{"documentId": documents.IDOf(register), "variables": map[string]any{"u": "ann", "p": "correct horse"}})
	var reg struct{ Register struct{ Token string } }
	if err := json.Unmarshal(d, &reg); err != nil || status != http.StatusOK || code != "" || reg.Register.Token == "" {
		t.Fatalf("register by documentId: %d %s %s", status, code, d)
	}
	if status, code, d := post(reg.Register.Token, map[string]any{"documentId": documents.IDOf(me)}); status != http.StatusOK || code != "" || !strings.Contains(string(d), `"ann"`) {
		t.Fatalf("me by documentId: %d %s %s", status, code, d)
	}
	srv.stop()
	if out, err := exec.Command(bin, "serve", "--data", data, "--documents", "closed").CombinedOutput(); err == nil || !strings.Contains(string(out), "open or allowlist") {
		t.Fatalf("serve --documents closed: %v\n%s", err, out)
	}
}
