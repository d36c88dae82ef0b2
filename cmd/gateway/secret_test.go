package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/gatewaytest"
)

// TestJWTSecret: the configured secret wins; on the embedded store with a
// data directory a secret is generated once into <data>/jwt-secret (mode
// 0600) and read back on later starts, without a warning; with nowhere to
// keep one (in-memory store, HBase) the secret is per process, with a
// warning; a kept secret that is too short is an error.
func TestJWTSecret(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name       string
		configured string
		sf         storeFlags
		prepare    func(t *testing.T, data string)
		wantErr    bool
		wantWarn   bool
		wantFile   bool // kept in <data>/jwt-secret
		wantStable bool // a second start gets the same secret
	}{
		{name: "configured", configured: "configured-secret-configured-secret", sf: storeFlags{kind: hbase.BackendEmbedded, data: filepath.Join(dir, "configured")}, wantStable: true},
		{name: "embedded data dir", sf: storeFlags{kind: hbase.BackendEmbedded, data: filepath.Join(dir, "embedded")}, wantFile: true, wantStable: true},
		{name: "in-memory embedded", sf: storeFlags{kind: hbase.BackendEmbedded, data: ""}, wantWarn: true},
		{name: "hbase", sf: storeFlags{kind: hbase.BackendHBase, data: filepath.Join(dir, "hbase")}, wantWarn: true},
		{name: "kept secret too short", sf: storeFlags{kind: hbase.BackendEmbedded, data: filepath.Join(dir, "short")},
			prepare: func(t *testing.T, data string) {
				if err := os.WriteFile(filepath.Join(data, jwtSecretFile), []byte("short\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.sf.data != "" {
				if err := os.MkdirAll(tc.sf.data, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if tc.prepare != nil {
				tc.prepare(t, tc.sf.data)
			}
			var logs bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logs, nil))
			first, err := jwtSecret(log, tc.configured, tc.sf)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("no error; secret %q", first)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(first) < 32 {
				t.Fatalf("secret of %d bytes", len(first))
			}
			second, err := jwtSecret(log, tc.configured, tc.sf)
			if err != nil {
				t.Fatal(err)
			}
			if stable := bytes.Equal(first, second); stable != tc.wantStable {
				t.Errorf("same secret on the second start: %v, want %v", stable, tc.wantStable)
			}
			if warned := strings.Contains(logs.String(), "level=WARN"); warned != tc.wantWarn {
				t.Errorf("warned: %v, want %v; logs:\n%s", warned, tc.wantWarn, logs.String())
			}
			if tc.sf.data == "" {
				return
			}
			path := filepath.Join(tc.sf.data, jwtSecretFile)
			fi, err := os.Stat(path)
			if kept := err == nil; kept != tc.wantFile {
				t.Fatalf("secret file kept: %v, want %v", kept, tc.wantFile)
			}
			if !tc.wantFile {
				return
			}
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("mode %v, want 0600", fi.Mode().Perm())
			}
			b, _ := os.ReadFile(path)
			if !regexp.MustCompile(`^[0-9a-f]{64}\n$`).Match(b) || string(first) != strings.TrimSpace(string(b)) {
				t.Errorf("file holds %q; secret %q", b, first)
			}
			if strings.Contains(logs.String(), string(first)) {
				t.Errorf("the secret is in the logs")
			}
		})
	}
}

// TestTokenSurvivesRestart drives the binary on one data directory without
// GATEWAY_JWT_SECRET: a token issued before a restart still authenticates
// after it; once the kept secret is deleted, a restart generates another and
// the old token is refused.
func TestTokenSurvivesRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	bin := buildGateway(t)
	data := filepath.Join(t.TempDir(), "store")
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GATEWAY_") {
			env = append(env, kv)
		}
	}

	g := startServe(t, bin, env, "--data", data)
	var reg struct {
		Register struct{ Token string }
	}
	graphql(t, g.base, "", `mutation { register(username: "restart_user", password: "correct horse") { token } }`, &reg, nil)
	token := reg.Register.Token
	if token == "" {
		t.Fatal("no token from register")
	}
	g.stop()
	fi, err := os.Stat(filepath.Join(data, jwtSecretFile))
	if err != nil {
		t.Fatalf("no secret kept in the data directory: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("secret file mode %v, want 0600", fi.Mode().Perm())
	}

	g = startServe(t, bin, env, "--data", data)
	var me struct{ Me struct{ Username string } }
	graphql(t, g.base, token, `{ me { username } }`, &me, nil)
	if me.Me.Username != "restart_user" {
		t.Fatalf("after a restart, the old token gives me = %+v", me)
	}
	g.stop()

	if err := os.Remove(filepath.Join(data, jwtSecretFile)); err != nil {
		t.Fatal(err)
	}
	g = startServe(t, bin, env, "--data", data)
	var codes []string
	graphql(t, g.base, token, `{ me { username } }`, nil, &codes)
	if len(codes) != 1 || codes[0] != "UNAUTHENTICATED" {
		t.Fatalf("with a new secret, the old token gives errors %q, want UNAUTHENTICATED", codes)
	}
}

// graphql posts query with an optional bearer token and decodes data into
// v. With codes nil, errors fail the test; otherwise their extensions.code
// values are appended to *codes.
func graphql(t *testing.T, base, token, query string, v any, codes *[]string) {
	t.Helper()
	r, err := gatewaytest.Do(t.Context(), nil, base, token, query, nil)
	if err != nil {
		t.Fatal(err)
	}
	if codes == nil && len(r.Errors) > 0 {
		t.Fatalf("%s: %+v", query, r.Errors)
	}
	for _, e := range r.Errors {
		if codes != nil {
			c, _ := e.Extensions["code"].(string)
			*codes = append(*codes, c)
		}
	}
	if v != nil {
		if err := json.Unmarshal(r.Data, v); err != nil {
			t.Fatalf("decode data %s: %v", r.Data, err)
		}
	}
}
