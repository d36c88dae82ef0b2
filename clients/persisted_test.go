package clients_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/weibohbase/gateway/internal/gatewaytest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/server"
	"github.com/weibohbase/gateway/weibo/documents"
	"github.com/weibohbase/gateway/weibo/org"
)

// persistedConfig is what apollo/persisted.test.js reads from
// GATEWAY_PERSISTED_TEST.
type persistedConfig struct {
	URL           string `json:"url"`
	Manifest      string `json:"manifest"`
	Token         string `json:"token"`
	Username      string `json:"username"`
	AdminToken    string `json:"adminToken"`
	AdminUsername string `json:"adminUsername"`
}

// TestApolloPersisted builds an Apollo persisted query manifest with
// @apollo/generate-persisted-query-manifest from
// apollo/persisted/*.graphql, registers it as `gateway documents
// add` does (each document validated against the schema), and runs
// Apollo Client's persisted-queries link against a gateway serving
// --documents=allowlist (apollo/persisted.test.js): the manifest's
// operations run by id for an ordinary token; an unlisted operation is
// refused for it as text and as an APQ registration
// (PERSISTED_DOCUMENT_REQUIRED), and runs for an administrator.
func TestApolloPersisted(t *testing.T) {
	node, npm := requireTools(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	npmInstall(t, ctx, npm)
	g := gatewaytest.Start(t, testenv.Embedded(t), gatewaytest.WithConfig(func(c *server.Config) { c.Documents = server.DocumentsAllowlist }))

	dir := t.TempDir()
	manifest := filepath.Join(dir, "persisted-query-manifest.json")
	conf, _ := json.Marshal(map[string]any{"documents": []string{"apollo/persisted/*.graphql"}, "output": manifest})
	confPath := filepath.Join(dir, "persisted-query-manifest.config.json")
	if err := os.WriteFile(confPath, conf, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Logf("generate-persisted-query-manifest:\n%s", command(t, ctx, ".", nil, node, filepath.Join("node_modules", ".bin", "generate-persisted-query-manifest"), "--config", confPath))
	raw, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	docs, err := documents.ParseManifest(raw)
	if err != nil || len(docs) != 2 {
		t.Fatalf("the manifest: %d documents, %v\n%s", len(docs), err, raw)
	}
	for i := range docs {
		if docs[i].Names, err = server.ValidateDocument(docs[i].Text); err != nil {
			t.Fatalf("document %s: %v", docs[i].ID, err)
		}
	}
	if _, err := documents.New(g.Svc.Store(), nil).Add(ctx, filepath.Base(manifest), docs); err != nil {
		t.Fatal(err)
	}

	ann, err := g.Svc.Accounts.Register(ctx, "persisted_ann", "correct horse")
	if err != nil {
		t.Fatal(err)
	}
	ada, err := g.Svc.Accounts.Register(ctx, "persisted_ada", "correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := g.Svc.GrantRoleByName(ctx, ada.Username, org.AdminRole, org.MaxPriority); err != nil {
		t.Fatal(err)
	}
	env, _ := json.Marshal(persistedConfig{URL: g.URL, Manifest: manifest, Token: g.Issue(ann), Username: ann.Username,
		AdminToken: g.Issue(ada), AdminUsername: ada.Username})
	out := command(t, ctx, ".", []string{"GATEWAY_PERSISTED_TEST=" + string(env)}, node, "--test", "--test-reporter=spec", filepath.Join("apollo", "persisted.test.js"))
	t.Logf("node --test:\n%s", out)
	pass := regexp.MustCompile(`(?m)^. pass (\d+)$`).FindStringSubmatch(out)
	if pass == nil || pass[1] != strconv.Itoa(persistedTests) || !regexp.MustCompile(`(?m)^. fail 0$`).MatchString(out) {
		t.Errorf("want %d passed persisted-query tests and none failed", persistedTests)
	}
}

// persistedTests is the number of tests in apollo/persisted.test.js.
const persistedTests = 3
