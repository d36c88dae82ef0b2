package clients_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weibohbase/gateway/auth"
	"github.com/weibohbase/gateway/dataset"
	"github.com/weibohbase/gateway/demo"
	"github.com/weibohbase/gateway/internal/gatewaytest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo/domain"
)

// auditResult is one audit as audit/audit.mjs prints it.
type auditResult struct {
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Status   string          `json:"status"`
	Reason   string          `json:"reason"`
	Response json.RawMessage `json:"response"`
}

// auditWant is how many audits of each level graphql-http 1.23.1 runs and
// how many of them the gateway must pass (every MUST and every SHOULD). MAY
// audits are reported, not required.
var auditWant = []struct {
	level      string
	total, min int
}{
	{"MUST", 13, 13},
	{"SHOULD", 23, 23},
	{"MAY", 25, 0},
}

// TestAudit runs graphql-http's GraphQL-over-HTTP audit (auditServer, in
// audit/audit.mjs) against a gateway served on 127.0.0.1 over an embedded
// store, and requires every MUST and SHOULD audit to pass; a failed
// audit's reason and the gateway's response are logged.
func TestAudit(t *testing.T) {
	node, npm := requireTools(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	npmInstall(t, ctx, npm)
	url := demoGateway(t).URL

	out := command(t, ctx, ".", []string{"GATEWAY_AUDIT_URL=" + url + "/graphql"}, node, filepath.Join("audit", "audit.mjs"))
	var results []auditResult
	if err := json.Unmarshal([]byte(out), &results); err != nil {
		t.Fatalf("audit output: %v\n%s", err, out)
	}
	type tally struct{ total, ok int }
	counts := map[string]*tally{}
	for _, r := range results {
		level, _, _ := strings.Cut(r.Name, " ")
		c := counts[level]
		if c == nil {
			c = &tally{}
			counts[level] = c
		}
		c.total++
		if r.Status == "ok" {
			c.ok++
			continue
		}
		t.Logf("%s %s [%s] %s: %s\n\tresponse: %s", r.ID, r.Status, level, r.Name, r.Reason, r.Response)
	}
	for _, w := range auditWant {
		c := counts[w.level]
		if c == nil {
			c = &tally{}
		}
		t.Logf("graphql-http audit %s: %d/%d", w.level, c.ok, c.total)
		if c.total != w.total {
			t.Errorf("%s: %d audits ran, want %d (another graphql-http version?)", w.level, c.total, w.total)
		}
		if c.ok < w.min {
			t.Errorf("%s: %d/%d audits passed, want at least %d", w.level, c.ok, c.total, w.min)
		}
	}
}

// demoGateway serves a gateway with default limits on 127.0.0.1 over a
// new in-memory embedded store holding the demo subset of the real data
// set (demo.Load, imported by seed.Import), and returns it.
func demoGateway(t *testing.T) demoServer {
	t.Helper()
	ds, err := demo.Load()
	if err != nil {
		t.Fatalf("demo data: %v", err)
	}
	g := gatewaytest.Start(t, testenv.Embedded(t), gatewaytest.WithDataset(ds))
	return demoServer{URL: g.URL, Svc: g.Svc, Tokens: g.Tokens, Data: ds}
}

// demoServer is a gateway demoGateway serves.
type demoServer struct {
	// URL is the server's base URL (http://127.0.0.1:port).
	URL string
	// Svc is the gateway's domain service.
	Svc *domain.Domain
	// Tokens issues the gateway's bearer tokens.
	Tokens *auth.Issuer
	// Data is the data set the store holds.
	Data *dataset.Dataset
}
