package main

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// buildGateway builds this command into a temporary directory.
func buildGateway(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "gateway")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// serveProc is a `gateway serve` process under test.
type serveProc struct {
	pid  int         // the process's id
	base string      // http://ADDR
	logs *syncBuffer // its stdout and stderr
	stop func()      // SIGTERM, then wait (60 s at most) for a clean exit; also run at cleanup
}

// startServe starts `gateway serve --addr ADDR args...` at a free 127.0.0.1
// port with env as its whole environment and waits (90 s at most: a hang
// guard, the demo data takes a while to load on a loaded machine) until
// /readyz answers 200.
func startServe(t *testing.T, bin string, env []string, args ...string) *serveProc {
	t.Helper()
	addr := freeAddr(t)
	cmd := exec.Command(bin, append([]string{"serve", "--addr", addr}, args...)...)
	cmd.Env = env
	logs := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case err := <-exited:
				if err != nil {
					t.Errorf("serve exited with %v:\n%s", err, logs.String())
				}
			case <-time.After(60 * time.Second):
				_ = cmd.Process.Kill()
				<-exited
				t.Errorf("serve did not exit within 60 s of SIGTERM:\n%s", logs.String())
			}
		})
	}
	t.Cleanup(stop)
	base := "http://" + addr
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get(base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return &serveProc{pid: cmd.Process.Pid, base: base, logs: logs, stop: stop}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve not ready after 90 s:\n%s", logs.String())
		}
	}
}

func run(t *testing.T, bin string, args ...string) string {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("gateway %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestBinary drives the real binary on the embedded store: migrate (twice:
// idempotent), seed of the demo subset, admin grant, serve with the demo,
// the probes and a GraphQL login, then SIGTERM, after which serve must exit
// cleanly and the data must be there for the next start.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	bin := buildGateway(t)
	data := filepath.Join(t.TempDir(), "store")
	run(t, bin, "migrate", "--data", data)
	run(t, bin, "migrate", "--data", data)
	run(t, bin, "seed", "--data", data, "--quiet")
	if out, err := exec.Command(bin, "admin", "grant", "nobody_at_all", "--data", data).CombinedOutput(); err == nil {
		t.Fatalf("admin grant of an unknown user succeeded:\n%s", out)
	}
	run(t, bin, "admin", "grant", "u1", "--data", data)
	if out, err := exec.Command(bin, "serve", "--store", "nosuch").CombinedOutput(); err == nil {
		t.Fatalf("serve --store nosuch succeeded:\n%s", out)
	}

	for start := range 2 {
		addr := freeAddr(t)
		cmd := exec.Command(bin, "serve", "--data", data, "--addr", addr, "--demo")
		cmd.Env = append(os.Environ(), "GATEWAY_JWT_SECRET=binary-test-secret-binary-test-secret")
		var logs bytes.Buffer
		cmd.Stdout, cmd.Stderr = &logs, &logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		stopped := make(chan struct{})
		go func() { exited <- cmd.Wait(); close(stopped) }()
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			<-stopped
		})
		base := "http://" + addr
		deadline := time.Now().Add(60 * time.Second)
		for {
			resp, err := http.Get(base + "/readyz")
			if err == nil && resp.StatusCode == http.StatusOK {
				resp.Body.Close()
				break
			}
			if err == nil {
				resp.Body.Close()
			}
			if time.Now().After(deadline) {
				_ = cmd.Process.Kill()
				t.Fatalf("start %d: not ready after 60 s:\n%s", start, logs.String())
			}
			time.Sleep(100 * time.Millisecond)
		}
		body := `{"query":"mutation { login(username: \"u1\", password: \"weibo-demo\") { token user { username } } }"}`
		resp, err := http.Post(base+"/graphql", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Data struct {
				Login struct {
					Token string
				}
			}
			Errors []any
		}
		_ = json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		if got.Data.Login.Token == "" || len(got.Errors) > 0 {
			t.Fatalf("start %d: login as a seeded user: %+v\n%s", start, got, logs.String())
		}
		if !demoRepostsShown(base, got.Data.Login.Token) {
			t.Fatalf("start %d: no repost in u1's home timeline:\n%s", start, logs.String())
		}
		if rank := administratorRank(t, base, got.Data.Login.Token); rank != 1000 {
			t.Fatalf("start %d: u1's rank after admin grant = %d, want 1000", start, rank)
		}
		if resp, err := http.Get(base + "/metrics"); err != nil || resp.StatusCode != 200 {
			t.Fatalf("/metrics: %v", err)
		} else {
			resp.Body.Close()
		}
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-exited:
			if err != nil {
				t.Fatalf("start %d: serve exited with %v after SIGTERM:\n%s", start, err, logs.String())
			}
		case <-time.After(40 * time.Second):
			_ = cmd.Process.Kill()
			t.Fatalf("start %d: serve did not exit within 40 s of SIGTERM:\n%s", start, logs.String())
		}
		if start == 1 && strings.Contains(logs.String(), "demo reposts made") {
			t.Fatalf("the second start made the demo reposts again:\n%s", logs.String())
		}
		if start == 1 && strings.Contains(logs.String(), "importing the demo data set") {
			t.Fatalf("the second start imported the demo again:\n%s", logs.String())
		}
	}
}

// demoRepostsShown reports whether the home timeline of the user of token
// shows a repost with its original within 10 s (the demo's reposts are
// fanned out by the first outbox sweep).
func demoRepostsShown(base, token string) bool {
	body := `{"query":"{ homeTimeline(first: 10) { edges { node { repostOf { id content } } } } }"}`
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		req, _ := http.NewRequest(http.MethodPost, base+"/graphql", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			continue
		}
		var got struct {
			Data struct {
				HomeTimeline struct {
					Edges []struct {
						Node struct{ RepostOf *struct{ ID string } }
					}
				}
			}
		}
		_ = json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		for _, e := range got.Data.HomeTimeline.Edges {
			if e.Node.RepostOf != nil {
				return true
			}
		}
	}
	return false
}

// administratorRank returns the viewer's rank, read with a query that
// needs VIEW_AUDIT_LOG (which ADMINISTRATOR, the admin role's, grants);
// it fails the test if the query is refused.
func administratorRank(t *testing.T, base, token string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/graphql", strings.NewReader(`{"query":"{ me { rank } auditLog(first: 1) { edges { cursor } } }"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got struct {
		Data struct {
			Me struct{ Rank int }
		}
		Errors []any
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || len(got.Errors) > 0 {
		t.Fatalf("me { rank } auditLog: %v %+v", err, got.Errors)
	}
	return got.Data.Me.Rank
}
