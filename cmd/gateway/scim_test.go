package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weibohbase/gateway/weibo/provision/clients"
)

// TestScimTokens drives `gateway scim token create|list|revoke` on the
// embedded store and the token against the real server: good for
// /scim/v2, refused at /graphql, refused at /scim/v2 once revoked.
func TestScimTokens(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	bin := buildGateway(t)
	data := filepath.Join(t.TempDir(), "store")
	run(t, bin, "migrate", "--data", data)
	token := scimToken(t, bin, "create", "--name", "okta", "--data", data)
	if !strings.HasPrefix(token, clients.TokenPrefix) {
		t.Fatalf("create printed %q, want a token", token)
	}
	scimToken(t, bin, "create", "--name", "entra", "--rank", "300", "--data", data)
	if out, err := exec.Command(bin, "scim", "token", "create", "--name", "okta", "--data", data).CombinedOutput(); err == nil {
		t.Fatalf("a second client named okta was created:\n%s", out)
	}
	list := scimToken(t, bin, "list", "--data", data)
	if !strings.Contains(list, "entra") || !strings.Contains(list, "okta") || !strings.Contains(list, "300") || strings.Contains(list, token) {
		t.Fatalf("list:\n%s", list)
	}

	env := append(os.Environ(), "GATEWAY_DATA="+data)
	srv := startServe(t, bin, env)
	if code := scimStatus(t, srv.base, token); code != http.StatusOK {
		t.Fatalf("/scim/v2 with the client's token: %d", code)
	}
	if code := scimStatus(t, srv.base, ""); code != http.StatusUnauthorized {
		t.Fatalf("/scim/v2 without a token: %d", code)
	}
	req, _ := http.NewRequest(http.MethodPost, srv.base+"/graphql", strings.NewReader(`{"query":"{ viewer { id } }"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Errors []struct {
			Extensions struct{ Code string }
		}
	}
	err = json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if err != nil || len(body.Errors) == 0 || body.Errors[0].Extensions.Code != "UNAUTHENTICATED" {
		t.Fatalf("/graphql with a SCIM token: %d %+v %v", resp.StatusCode, body, err)
	}
	srv.stop()

	scimToken(t, bin, "revoke", "--name", "okta", "--data", data)
	if out, err := exec.Command(bin, "scim", "token", "revoke", "--name", "okta", "--data", data).CombinedOutput(); err == nil {
		t.Fatalf("revoking a revoked client succeeded:\n%s", out)
	}
	srv = startServe(t, bin, env)
	if code := scimStatus(t, srv.base, token); code != http.StatusUnauthorized {
		t.Fatalf("/scim/v2 with a revoked token: %d", code)
	}
}

// scimToken runs `gateway scim token args...` and returns its standard
// output, trimmed.
func scimToken(t *testing.T, bin string, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command(bin, append([]string{"scim", "token"}, args...)...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("gateway scim token %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return strings.TrimSpace(out.String())
}

// scimStatus returns the status of GET /scim/v2/Users
// with token ("" for none).
func scimStatus(t *testing.T, base, token string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/scim/v2/Users", nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
