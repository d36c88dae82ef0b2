package clients_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/weibohbase/gateway/internal/gatewaytest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/server"
	"github.com/weibohbase/gateway/weibo/documents"
)

// TestRelayPersisted compiles relay/persisted with relay-compiler's
// persistConfig (algorithm SHA256) against the gateway's schema,
// registers the persisted file as `gateway documents add` does, and runs
// the artifact (which holds only the id) with relay-runtime against a
// gateway serving --documents=allowlist (relay/persisted.test.js).
func TestRelayPersisted(t *testing.T) {
	node, npm := requireTools(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	npmInstall(t, ctx, npm)
	dir := t.TempDir()
	schema, err := os.Create(filepath.Join(dir, "schema.graphql"))
	if err != nil {
		t.Fatal(err)
	}
	if err := server.WriteSchema(schema); err != nil {
		t.Fatal(err)
	}
	if err := schema.Close(); err != nil {
		t.Fatal(err)
	}
	src, err := filepath.Abs(filepath.Join("relay", "persisted"))
	if err != nil {
		t.Fatal(err)
	}
	persisted, gen := filepath.Join(dir, "persisted.json"), filepath.Join(dir, "__generated__")
	// relay-compiler wants the persisted file to exist.
	if err := os.WriteFile(persisted, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(gen, 0o755); err != nil {
		t.Fatal(err)
	}
	conf, _ := json.Marshal(map[string]any{"src": src, "schema": schema.Name(), "artifactDirectory": gen, "language": "javascript",
		"eagerEsModules": false, "persistConfig": map[string]any{"file": persisted, "algorithm": "SHA256"}})
	confPath := filepath.Join(dir, "relay.config.json")
	if err := os.WriteFile(confPath, conf, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Logf("relay-compiler:\n%s", command(t, ctx, ".", nil, node, filepath.Join("node_modules", "relay-compiler", "cli.js"), confPath))

	g := gatewaytest.Start(t, testenv.Embedded(t), gatewaytest.WithConfig(func(c *server.Config) { c.Documents = server.DocumentsAllowlist }))
	raw, err := os.ReadFile(persisted)
	if err != nil {
		t.Fatal(err)
	}
	docs, err := documents.ParseManifest(raw)
	if err != nil || len(docs) != 1 {
		t.Fatalf("the persisted file: %d documents, %v\n%s", len(docs), err, raw)
	}
	if docs[0].Names, err = server.ValidateDocument(docs[0].Text); err != nil {
		t.Fatal(err)
	}
	if _, err := documents.New(g.Svc.Store(), nil).Add(ctx, "persisted.json", docs); err != nil {
		t.Fatal(err)
	}
	ann, err := g.Svc.Accounts.Register(ctx, "relay_ann", "correct horse")
	if err != nil {
		t.Fatal(err)
	}
	env, _ := json.Marshal(map[string]string{"url": g.URL, "artifacts": gen, "token": g.Issue(ann), "username": ann.Username})
	out := command(t, ctx, ".", []string{"GATEWAY_RELAY_PERSISTED_TEST=" + string(env)}, node, "--test", "--test-reporter=spec", filepath.Join("relay", "persisted.test.js"))
	t.Logf("node --test:\n%s", out)
	if !regexp.MustCompile(`(?m)^. pass 1$`).MatchString(out) || !regexp.MustCompile(`(?m)^. fail 0$`).MatchString(out) {
		t.Error("want 1 passed Relay persisted test and none failed")
	}
}
