package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/gatewaytest"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestCluster's gateway processes: starting and killing `gateway serve`,
// sending GraphQL requests to it, and the test users' setup, follows and
// publishes through it.

// gwProc is one `gateway serve` process.
type gwProc struct {
	name string
	url  string
	log  string
	cmd  *exec.Cmd
	done chan struct{}
}

// startGateway starts `gateway serve` on the rig's namespace, named name in
// fan-out leases, and waits until /readyz answers.
func (r *clusterRig) startGateway(t *testing.T, name string) *gwProc {
	t.Helper()
	addr := freeAddr(t)
	g := &gwProc{name: name, url: "http://" + addr, log: filepath.Join(r.logs, "gateway-"+name+".log"), done: make(chan struct{})}
	logf, err := os.Create(g.log)
	if err != nil {
		t.Fatal(err)
	}
	g.cmd = exec.Command(r.bin, "serve", "--addr", addr)
	g.cmd.Env = append(os.Environ(),
		"GATEWAY_STORE=hbase", "GATEWAY_HBASE_ZK="+r.zk, "GATEWAY_NAMESPACE="+r.ns,
		"GATEWAY_JWT_SECRET=cluster-test-secret-cluster-test-secret",
		"GATEWAY_INSTANCE="+name, "GATEWAY_LOG_LEVEL=debug",
		"GATEWAY_FANOUT_LEASE="+clusterLease.String(), "GATEWAY_OUTBOX_SWEEP="+clusterSweep.String(),
		"GATEWAY_REPAIR_GRACE="+clusterRepairGrace.String())
	g.cmd.Stdout, g.cmd.Stderr = logf, logf
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = g.cmd.Wait(); _ = logf.Close(); close(g.done) }()
	t.Cleanup(func() { g.kill() })
	deadline := time.Now().Add(90 * time.Second)
	for {
		resp, err := http.Get(g.url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return g
			}
		}
		select {
		case <-g.done:
			t.Fatalf("gateway %s exited:\n%s", name, tail(g.log, 40))
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("gateway %s not ready after 90 s:\n%s", name, tail(g.log, 40))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// kill sends SIGKILL and waits for the process to exit.
func (g *gwProc) kill() {
	_ = g.cmd.Process.Signal(syscall.SIGKILL)
	<-g.done
}

func tail(path string, n int) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// gqlResult is one GraphQL request's outcome.
type gqlResult struct {
	status int
	code   string // first error's extensions.code; "TRANSPORT" when no HTTP answer
	data   json.RawMessage
	retry  string // Retry-After
}

func (r gqlResult) ok() bool { return r.status == http.StatusOK && r.code == "" }

var clusterHTTP = &http.Client{Timeout: 60 * time.Second}

// gql sends one GraphQL request to g.
func (g *gwProc) gql(token, query string, vars map[string]any) gqlResult {
	r, err := gatewaytest.Do(context.Background(), clusterHTTP, g.url, token, query, vars)
	if err != nil && r.Status == 0 {
		return gqlResult{code: "TRANSPORT"}
	}
	res := gqlResult{status: r.Status, retry: r.Header.Get("Retry-After")}
	if err != nil {
		res.code = "UNDECODABLE"
		return res
	}
	res.data = r.Data
	if len(r.Errors) > 0 {
		res.code, _ = r.Errors[0].Extensions["code"].(string)
		if res.code == "" {
			res.code = "NO_CODE"
		}
	}
	return res
}

const (
	qRegister = `mutation($u: String!, $p: String!) { register(username: $u, password: $p) { token user { id } } }`
	qPublish  = `mutation($c: String!) { publishPost(content: $c) { id } }`
	qFollow   = `mutation($id: ID!) { follow(userId: $id) { id } }`
	qTimeline = `query { homeTimeline(first: 20) { edges { node { id content author { id } } } } }`
)

// setup registers the test users and the celebrity through g, makes each
// user follow four others, and gives the celebrity celebFans fans of its own
// (both rows of each follow and the fan counter written straight to the
// store: users that exist only there, so that a fan-out takes a while).
func (r *clusterRig) setup(t *testing.T, g *gwProc) {
	t.Helper()
	tag := r.ns[len(r.ns)-8:]
	register := func(name string) account {
		res := g.gql("", qRegister, map[string]any{"u": name, "p": "correct horse"})
		if !res.ok() {
			t.Fatalf("register %s: HTTP %d %s", name, res.status, res.code)
		}
		var d struct {
			Register struct {
				Token string
				User  struct{ ID string }
			}
		}
		if err := json.Unmarshal(res.data, &d); err != nil {
			t.Fatal(err)
		}
		id, err := tables.ParseUserID(d.Register.User.ID)
		if err != nil {
			t.Fatal(err)
		}
		return account{id: id, name: name, token: d.Register.Token}
	}
	for i := range clusterUsers {
		r.users = append(r.users, register(fmt.Sprintf("cu%02d_%s", i, tag)))
	}
	for i := range r.users {
		for _, j := range rand.Perm(clusterUsers)[:5] {
			if j != i && !r.follow(g, i, j).ok() {
				t.Fatalf("initial follow %d→%d failed", i, j)
			}
		}
	}
	r.celeb = register("celeb_" + tag)
	ctx := t.Context()
	var puts []*hbase.Put
	now := tables.U64(uint64(time.Now().UnixMilli()))
	for k := range celebFans {
		fan := tables.UserID(900_000_000_000 + uint64(k))
		puts = append(puts, &hbase.Put{Table: tables.Relations, Row: tables.RelationKey(r.celeb.id, tables.Fans, fan),
			Values: hbase.Values{tables.FamRel: {tables.ColRelSet: now}}},
			&hbase.Put{Table: tables.Relations, Row: tables.RelationKey(fan, tables.Attends, r.celeb.id),
				Values: hbase.Values{tables.FamRel: {tables.ColRelSet: now}}})
	}
	if err := r.st.PutMany(ctx, puts); err != nil {
		t.Fatal(err)
	}
	if _, err := r.st.Increment(ctx, &hbase.Increment{Table: tables.Users, Row: tables.UserKey(r.celeb.id),
		Family: tables.FamCount, Qualifier: tables.ColFans, Amount: celebFans}); err != nil {
		t.Fatal(err)
	}
}

// follow makes user i follow user j through g and records the outcome.
func (r *clusterRig) follow(g *gwProc, i, j int) gqlResult {
	res := g.gql(r.users[i].token, qFollow, map[string]any{"id": r.users[j].id.String()})
	r.mu.Lock()
	defer r.mu.Unlock()
	if res.ok() {
		r.follows = append(r.follows, ackedFollow{from: i, to: j, end: time.Now()})
	} else {
		r.dirty[i], r.dirty[j] = true, true
	}
	return res
}

// publish publishes a post of user i (-1: the celebrity) through g and
// records the outcome.
func (r *clusterRig) publish(g *gwProc, i int, content string) gqlResult {
	start := time.Now()
	acc := r.celeb
	if i >= 0 {
		acc = r.users[i]
	}
	res := g.gql(acc.token, qPublish, map[string]any{"c": content})
	r.mu.Lock()
	defer r.mu.Unlock()
	if !res.ok() {
		if i >= 0 {
			r.dirty[i] = true
		}
		return res
	}
	var d struct{ PublishPost struct{ ID string } }
	if err := json.Unmarshal(res.data, &d); err != nil {
		return gqlResult{status: res.status, code: "UNDECODABLE"}
	}
	id, err := tables.ParsePostID(d.PublishPost.ID)
	if err != nil {
		return gqlResult{status: res.status, code: "BAD_ID"}
	}
	p := ackedPost{id: id, author: i, content: content, start: start}
	if i < 0 {
		r.celebOnly = append(r.celebOnly, p)
	} else {
		r.posts = append(r.posts, p)
	}
	return res
}
