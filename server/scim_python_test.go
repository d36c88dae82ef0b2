package server_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo/provision/clients"
)

// scimPythonDir holds the Python SCIM client test: provision.py and the
// pinned requirements.txt it runs on.
const scimPythonDir = "../clients/scim-python"

// needPython fails the test in CI and skips it elsewhere, for a machine
// without what the Python client test needs.
func needPython(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// scimPython returns the interpreter of a virtualenv holding
// clients/scim-python/requirements.txt: made once per version of that file
// under the user's cache directory (pip installs the pinned packages from
// the package index), built aside and renamed into place, so concurrent
// runs never see a half-made one.
func scimPython(t *testing.T, ctx context.Context) string {
	t.Helper()
	req, err := os.ReadFile(filepath.Join(scimPythonDir, "requirements.txt"))
	if err != nil {
		t.Fatal(err)
	}
	base, err := exec.LookPath("python3")
	if err != nil {
		needPython(t, "python3 not found: the SCIM client test needs Python 3.10 or later with venv (Debian: apt-get install python3-venv)")
	}
	if out, err := exec.CommandContext(ctx, base, "-c", "import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 10))").CombinedOutput(); err != nil {
		needPython(t, "%s is not Python 3.10 or later with venv and ensurepip: %v %s", base, err, out)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	sum := sha256.Sum256(req)
	dir := filepath.Join(cache, "weibohbase-gateway", "scim-python-"+hex.EncodeToString(sum[:6]))
	py := filepath.Join(dir, "bin", "python")
	if _, err := os.Stat(filepath.Join(dir, "ready")); err == nil {
		return py
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "making-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	for _, args := range [][]string{
		{base, "-m", "venv", tmp},
		{filepath.Join(tmp, "bin", "python"), "-m", "pip", "install", "--disable-pip-version-check", "--no-input", "-q",
			"-r", filepath.Join(scimPythonDir, "requirements.txt")},
	} {
		if out, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput(); err != nil {
			needPython(t, "%s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, "ready"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another run made it meanwhile.
		if _, serr := os.Stat(filepath.Join(dir, "ready")); serr != nil {
			t.Fatalf("virtualenv %s: %v", dir, err)
		}
	}
	return py
}

// TestSCIMPythonClient provisions users and groups with a real SCIM client
// library, scim2-client from PyPI (clients/scim-python/provision.py: its
// models built from the gateway's discovery), then checks through GraphQL
// what it made: the login name and the derived username, the externalIds,
// the deactivation, the closing, the departments with their parent and
// members, the role with its priority and members, and the audit events
// under the client's name.
func TestSCIMPythonClient(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	py := scimPython(t, ctx)
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startGateway(t, b.Open(t))
			tag := strings.ToLower(rand.Text()[:8])
			admin := g.register(uniqueName("scimpy"))
			g.makeAdmin(admin)
			client := "python-" + tag
			token, _, err := clients.New(g.svc.Store(), nil).Create(ctx, client, clients.DefaultRank)
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.CommandContext(ctx, py, "provision.py", g.url+"/scim/v2", token, tag)
			cmd.Dir = scimPythonDir
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("provision.py: %v\n%s%s", err, stdout.Bytes(), stderr.Bytes())
			}
			var ids struct{ Alice, Bob, Carol, Engineering, Platform, Editors string }
			if err := json.Unmarshal(stdout.Bytes(), &ids); err != nil {
				t.Fatalf("provision.py's output %q: %v (stderr %s)", stdout.Bytes(), err, stderr.Bytes())
			}

			type prov struct {
				UserName      string
				ExternalID    *string
				ProvisionedBy string
				Closed        bool
			}
			type ref struct{ ID string }
			var d struct {
				A struct {
					Username     string
					Provisioning *prov
					Suspension   *struct{ Reason *string }
					Department   *ref
					Roles        []struct {
						Role     ref
						Priority int
					}
				}
				B struct {
					Username, DisplayName string
					Provisioning          *prov
					Department            *ref
					Roles                 []struct{ Role ref }
				}
				C struct {
					Provisioning *prov
					Suspension   *struct{ Until *string }
				}
				Eng struct {
					Name, ExternalID, ProvisionedBy string
					MemberCount                     int
				}
				Plat struct {
					MemberCount int
					Parent      *ref
				}
				Ed struct {
					Name, ExternalID, ProvisionedBy string
					MemberCount                     int
					Members                         struct {
						Edges []struct {
							Priority int
							Node     ref
						}
					}
				}
			}
			g.ok(admin.token, `query($a: ID!, $b: ID!, $c: ID!, $eng: ID!, $plat: ID!, $ed: ID!) {
				a: user(id: $a) { username provisioning { userName externalId provisionedBy closed } suspension { reason } department { id } roles { role { id } priority } }
				b: user(id: $b) { username displayName provisioning { userName externalId provisionedBy closed } department { id } roles { role { id } } }
				c: user(id: $c) { provisioning { userName externalId provisionedBy closed } suspension { until } }
				eng: department(id: $eng) { name externalId provisionedBy memberCount }
				plat: department(id: $plat) { memberCount parent { id } }
				ed: role(id: $ed) { name externalId provisionedBy memberCount members(first: 10) { edges { priority node { id } } } } }`,
				map[string]any{"a": ids.Alice, "b": ids.Bob, "c": ids.Carol, "eng": ids.Engineering, "plat": ids.Platform, "ed": ids.Editors}, &d)

			if p := d.A.Provisioning; d.A.Username != "test_user_"+tag || p == nil || p.UserName != "test.user."+tag+"@okta.local" ||
				deref(p.ExternalID) != "00u1alice"+tag || p.ProvisionedBy != client || p.Closed {
				t.Errorf("alice: username %q, provisioning %+v", d.A.Username, p)
			}
			if s := d.A.Suspension; s == nil || s.Reason == nil || !strings.Contains(*s.Reason, client) {
				t.Errorf("alice, deactivated: suspension %+v", s)
			}
			if d.A.Department == nil || d.A.Department.ID != ids.Engineering || len(d.A.Roles) != 1 || d.A.Roles[0].Role.ID != ids.Editors || d.A.Roles[0].Priority != 7 {
				t.Errorf("alice: department %+v, roles %+v; want %s and %s at 7", d.A.Department, d.A.Roles, ids.Engineering, ids.Editors)
			}
			if p := d.B.Provisioning; d.B.Username != "bob_"+tag || d.B.DisplayName != "Bob Builder" || p == nil || p.UserName != "bob_"+tag ||
				deref(p.ExternalID) != "00u1bob"+tag || p.ProvisionedBy != client {
				t.Errorf("bob: username %q, display name %q, provisioning %+v", d.B.Username, d.B.DisplayName, p)
			}
			if d.B.Department == nil || d.B.Department.ID != ids.Platform || len(d.B.Roles) != 0 {
				t.Errorf("bob: department %+v, roles %+v; want %s and none", d.B.Department, d.B.Roles, ids.Platform)
			}
			if p := d.C.Provisioning; p == nil || !p.Closed || d.C.Suspension == nil || d.C.Suspension.Until != nil {
				t.Errorf("carol, deleted: provisioning %+v, suspension %+v; want closed, suspended for good", p, d.C.Suspension)
			}
			if d.Eng.Name != "Engineering "+tag || d.Eng.ExternalID != "grp-eng-"+tag || d.Eng.ProvisionedBy != client || d.Eng.MemberCount != 1 {
				t.Errorf("Engineering: %+v", d.Eng)
			}
			if d.Plat.MemberCount != 1 || d.Plat.Parent == nil || d.Plat.Parent.ID != ids.Engineering {
				t.Errorf("Platform: %+v", d.Plat)
			}
			if e := d.Ed; e.Name != "Editors "+tag || e.ExternalID != "grp-editors-"+tag || e.ProvisionedBy != client || e.MemberCount != 1 ||
				len(e.Members.Edges) != 1 || e.Members.Edges[0].Node.ID != ids.Alice || e.Members.Edges[0].Priority != 7 {
				t.Errorf("Editors: %+v", e)
			}

			// Every change is the client's in the audit log, with no actor.
			var log struct {
				AuditLog struct {
					Edges []struct {
						Node struct {
							Action string
							Actor  *ref
							Client *string
						}
					}
				}
			}
			g.ok(admin.token, `query($t: ID!) { auditLog(first: 50, filter: {targetId: $t}) { edges { node { action actor { id } client } } } }`,
				map[string]any{"t": ids.Alice}, &log)
			var actions []string
			for _, e := range log.AuditLog.Edges {
				if e.Node.Actor != nil || deref(e.Node.Client) != client {
					t.Errorf("an event about alice by actor %+v, client %s", e.Node.Actor, deref(e.Node.Client))
				}
				actions = append(actions, e.Node.Action)
			}
			if len(actions) == 0 || actions[len(actions)-1] != "user.provision" {
				t.Errorf("alice's events, newest first: %v; want user.provision first made", actions)
			}
		})
	}
}
