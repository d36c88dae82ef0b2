// Package clients_test runs the npm client libraries of this directory
// against a real gateway served on 127.0.0.1:
//   - relay-compiler compiles the sample operations of relay/src against the
//     schema `gateway schema` prints, and relay-runtime runs the artifacts
//     (relay/relay.test.js, node's test runner) against the gateway, over
//     each backend (an embedded store, and a namespace of its own on the
//     test HBase) (TestRelay);
//   - graphql-http's GraphQL-over-HTTP audit (audit/audit.mjs) (TestAudit);
//   - Apollo Client 3: BatchHttpLink, errors, relayStylePagination
//     (apollo/apollo.test.js) (TestApollo), and a @defer'red fragment
//     rendered after the rest (apollo/defer.test.js) (TestApolloDefer);
//   - relay-runtime consuming a @stream_connection, the multipart/mixed
//     response parsed with meros (relay/stream.test.js) (TestRelayStream);
//   - trusted documents under --documents=allowlist: Apollo Client's
//     persisted-queries link with a manifest built by
//     @apollo/generate-persisted-query-manifest (apollo/persisted.test.js,
//     TestApolloPersisted), and relay-compiler's persistConfig output run
//     by documentId (relay/persisted.test.js, TestRelayPersisted).
//
// The npm packages are pinned in package.json and package-lock.json; the
// tests run `npm ci` when node_modules is missing or stale. Without node
// or npm they skip, except in CI (CI=true), where they fail.
package clients_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weibohbase/gateway/dataset"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/gatewaytest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/seed"
	"github.com/weibohbase/gateway/server"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/tables"
)

// requireTools returns the paths of node and npm: a skip without them,
// a failure in CI.
func requireTools(t *testing.T) (node, npm string) {
	t.Helper()
	var missing []string
	node, err := exec.LookPath("node")
	if err != nil {
		missing = append(missing, "node")
	}
	npm, err = exec.LookPath("npm")
	if err != nil {
		missing = append(missing, "npm")
	}
	if len(missing) > 0 {
		msg := strings.Join(missing, " and ") + " not found: the client library tests need Node.js (Debian: apt-get install nodejs npm)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return node, npm
}

// command runs name in dir, failing the test with its output on error.
func command(t *testing.T, ctx context.Context, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// npmInstall runs `npm ci` when node_modules is missing or does not hold
// every devDependency of package.json at its pinned version (a checkout
// whose package.json changed since the last install).
func npmInstall(t *testing.T, ctx context.Context, npm string) {
	t.Helper()
	stale, err := staleModules()
	if err != nil {
		t.Fatal(err)
	}
	if stale == "" {
		return
	}
	t.Logf("node_modules: %s: npm ci", stale)
	command(t, ctx, ".", nil, npm, "ci", "--no-audit", "--no-fund")
}

// staleModules says why node_modules does not match package.json (a
// missing package or another version), or "" when it does.
func staleModules() (string, error) {
	var pkg struct {
		DevDependencies map[string]string `json:"devDependencies"`
	}
	b, err := os.ReadFile("package.json")
	if err != nil {
		return "", err
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		return "", fmt.Errorf("package.json: %w", err)
	}
	for name, want := range pkg.DevDependencies {
		var got struct {
			Version string `json:"version"`
		}
		b, err := os.ReadFile(filepath.Join("node_modules", name, "package.json"))
		if errors.Is(err, os.ErrNotExist) {
			return name + " missing", nil
		} else if err != nil {
			return "", err
		}
		if err := json.Unmarshal(b, &got); err != nil || got.Version != want {
			return fmt.Sprintf("%s is %q, package.json pins %q", name, got.Version, want), nil
		}
	}
	return "", nil
}

// compileRelay writes the gateway's schema and compiles relay/src with
// relay-compiler into relay/.build/__generated__ (emptied first).
func compileRelay(t *testing.T, ctx context.Context, node string) {
	t.Helper()
	build := filepath.Join("relay", ".build")
	gen := filepath.Join(build, "__generated__")
	if err := os.RemoveAll(gen); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(gen, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(build, "schema.graphql"))
	if err != nil {
		t.Fatal(err)
	}
	if err := server.WriteSchema(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	out := command(t, ctx, ".", nil, node, filepath.Join("node_modules", "relay-compiler", "cli.js"))
	t.Logf("relay-compiler:\n%s", out)
}

// The tiny data set of the test: users 1, 2, 3 (1 and 2 follow each other,
// 3 follows 1); user 1 writes two posts, user 2 one.
const (
	testEdges = "1 2\n2 1\n3 1\n"
	testPosts = "date,userid,text\n" +
		"2020-03-01,500,hello relay\n" +
		"2020-03-01,40,from user two\n" +
		"2020-03-01,500,second post\n"
)

// relayConfig is what relay.test.js reads from GATEWAY_RELAY_TEST.
type relayConfig struct {
	URL            string `json:"url"`
	AdminToken     string `json:"adminToken"`
	UserToken      string `json:"userToken"`
	User           string `json:"user"`
	Username       string `json:"username"`
	Role           string `json:"role"`
	RoleName       string `json:"roleName"`
	Department     string `json:"department"`
	DepartmentName string `json:"departmentName"`
	Post           string `json:"post"`
	PostContent    string `json:"postContent"`
}

// freshStore returns a store of backend b with no weibo tables yet: a new
// embedded store, or on HBase the weibo tables in a namespace of their own
// (dropped at the end), so that the id sequences start at 1.
func freshStore(t *testing.T, b testenv.Backend) hbase.StoreAdmin {
	t.Helper()
	st := b.Open(t)
	if b.Name == hbase.BackendEmbedded {
		return st
	}
	ns := fmt.Sprintf("gwrelay_%d_%x", time.Now().Unix(), rand.Uint32())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := st.DropNamespace(ctx, ns); err != nil {
			t.Errorf("drop namespace %s: %v", ns, err)
		}
	})
	return hbase.WithNamespace(st, tables.Namespace, ns)
}

// startGateway serves a gateway on 127.0.0.1 over st (fresh) holding the
// tiny data set and the seed's roles and departments (seed.OrgDemo), and
// returns what the Relay tests need: user 1, role 1 and department 1 (the
// same number), one of user 1's posts, and tokens.
func startGateway(t *testing.T, ctx context.Context, st hbase.StoreAdmin) relayConfig {
	t.Helper()
	ds, err := dataset.Read(strings.NewReader(testEdges), strings.NewReader(testPosts))
	if err != nil {
		t.Fatal(err)
	}
	g := gatewaytest.Start(t, st, gatewaytest.WithDataset(ds), gatewaytest.WithSeed(seed.OrgDemo))
	svc := g.Svc

	admin, err := svc.Accounts.UserByUsername(ctx, seed.DemoAdminUsername)
	if err != nil || admin == nil {
		t.Fatalf("demo admin: %v, %v", admin, err)
	}
	users, err := svc.Accounts.GetUsers(ctx, []weibo.UserID{1})
	if err != nil || users[0] == nil {
		t.Fatalf("user 1: %v, %v", users, err)
	}
	roles, err := svc.Org.Roles.Get(ctx, []weibo.RoleID{1})
	if err != nil || roles[0] == nil {
		t.Fatalf("role 1: %v, %v", roles, err)
	}
	depts, err := svc.Org.Departments.Get(ctx, []weibo.DeptID{1})
	if err != nil || depts[0] == nil {
		t.Fatalf("department 1: %v, %v", depts, err)
	}
	posts, err := svc.Feed.UserPosts(ctx, 1, weibo.Page{First: new(1)})
	if err != nil || len(posts.Edges) != 1 {
		t.Fatalf("user 1's posts: %+v, %v", posts, err)
	}
	return relayConfig{
		URL: g.URL, AdminToken: g.Issue(admin), UserToken: g.Issue(users[0]),
		User: users[0].ID.String(), Username: users[0].Username,
		Role: roles[0].ID.String(), RoleName: roles[0].Name,
		Department: depts[0].ID.String(), DepartmentName: depts[0].Name,
		Post: posts.Edges[0].Post.ID.String(), PostContent: posts.Edges[0].Post.Content,
	}
}

// TestRelay compiles the sample operations with relay-compiler and runs
// them with relay-runtime against the gateway (relay/relay.test.js): a
// User, a Role and a Department with the same number in one environment
// without store collisions, node and nodes, @refetchable fragments of every
// Node type refetched through node(id:), and a home timeline connection
// paged backward (the posts newer than the first page) by Relay's
// connection handler.
func TestRelay(t *testing.T) {
	node, npm := requireTools(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	npmInstall(t, ctx, npm)
	compileRelay(t, ctx, node)
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			cfg := startGateway(t, ctx, freshStore(t, b))
			if cfg.User != "1" || cfg.Role != "role:1" || cfg.Department != "department:1" {
				t.Fatalf("want user 1, role 1 and department 1: %+v", cfg)
			}
			env, err := json.Marshal(cfg)
			if err != nil {
				t.Fatal(err)
			}
			out := command(t, ctx, ".", []string{"GATEWAY_RELAY_TEST=" + string(env)}, node, "--test", "--test-reporter=spec", filepath.Join("relay", "relay.test.js"))
			t.Logf("node --test:\n%s", out)
			// node exits non-zero when a test fails; make sure they all ran.
			pass := regexp.MustCompile(`(?m)^. pass (\d+)$`).FindStringSubmatch(out)
			if pass == nil || pass[1] != strconv.Itoa(relayTests) || !regexp.MustCompile(`(?m)^. fail 0$`).MatchString(out) {
				t.Errorf("want %d passed Relay tests and none failed", relayTests)
			}
		})
	}
}

// relayTests is the number of tests in relay/relay.test.js.
const relayTests = 4

// TestRelayStream runs relay/stream.test.js: relay-compiler's
// @stream_connection over user 1's posts (four: the tiny data set's two
// and two published here), through a network layer that parses the
// multipart/mixed response with meros; the first edge comes in the
// initial payload, each other one in a payload of its own, and Relay's
// store ends with all of them in order.
func TestRelayStream(t *testing.T) {
	node, npm := requireTools(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	npmInstall(t, ctx, npm)
	compileRelay(t, ctx, node)
	cfg := startGateway(t, ctx, testenv.Embedded(t))
	for _, c := range []string{"streamed three", "streamed four"} {
		publish(t, cfg, c)
	}
	var posts []struct {
		ID      string `json:"id"`
		Content string `json:"content"`
	}
	var d struct {
		User struct {
			Posts struct {
				Edges []struct {
					Node struct {
						ID      string `json:"id"`
						Content string `json:"content"`
					} `json:"node"`
				} `json:"edges"`
			} `json:"posts"`
		} `json:"user"`
	}
	gqlPost(t, cfg.URL, cfg.UserToken, `query($id: ID!) { user(id: $id) { posts(first: 10) { edges { node { id content } } } } }`, map[string]any{"id": cfg.User}, &d)
	for _, e := range d.User.Posts.Edges {
		posts = append(posts, struct {
			ID      string `json:"id"`
			Content string `json:"content"`
		}{e.Node.ID, e.Node.Content})
	}
	env, err := json.Marshal(struct {
		relayConfig
		Posts any `json:"posts"`
	}{cfg, posts})
	if err != nil {
		t.Fatal(err)
	}
	out := command(t, ctx, ".", []string{"GATEWAY_RELAY_TEST=" + string(env)}, node, "--test", "--test-reporter=spec", filepath.Join("relay", "stream.test.js"))
	t.Logf("node --test:\n%s", out)
	if !regexp.MustCompile(`(?m)^. pass 1$`).MatchString(out) || !regexp.MustCompile(`(?m)^. fail 0$`).MatchString(out) {
		t.Error("want 1 passed Relay stream test and none failed")
	}
}

// publish publishes a post of content as cfg's user 1.
func publish(t *testing.T, cfg relayConfig, content string) {
	t.Helper()
	gqlPost(t, cfg.URL, cfg.UserToken, `mutation($c: String!) { publishPost(content: $c) { id } }`, map[string]any{"c": content}, nil)
}

// gqlPost posts query with token and decodes its data into v; it fails
// the test on any error.
func gqlPost(t *testing.T, url, token, query string, vars map[string]any, v any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, url+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Data   json.RawMessage `json:"data"`
		Errors []any           `json:"errors"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || len(r.Errors) > 0 {
		t.Fatalf("%s: %v %v", query, r.Errors, err)
	}
	if v != nil {
		if err := json.Unmarshal(r.Data, v); err != nil {
			t.Fatal(err)
		}
	}
}
