package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/gatewaytest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo/tables"
)

// crashGrace is the repair grace of the gateways of TestCrashRecovery
// (GATEWAY_REPAIR_GRACE): short, so that recovery is quick, and still well
// above the latency of one call.
const crashGrace = 5 * time.Second

// gatewayProc is one `gateway serve` process of a test.
type gatewayProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	url    string
	logs   *bytes.Buffer
	exited chan error
}

// startGatewayProc starts `gateway serve` with args and waits until /readyz answers.
func startGatewayProc(t *testing.T, bin string, env []string, args ...string) *gatewayProc {
	t.Helper()
	addr := freeAddr(t)
	cmd := exec.Command(bin, append([]string{"serve", "--addr", addr}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	logs := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	g := &gatewayProc{t: t, cmd: cmd, url: "http://" + addr, logs: logs, exited: make(chan error, 1)}
	go func() { g.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-g.exited
		g.exited <- nil
	})
	deadline := time.Now().Add(90 * time.Second)
	for {
		resp, err := http.Get(g.url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return g
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("gateway not ready after 90 s:\n%s", logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (g *gatewayProc) kill() {
	_ = g.cmd.Process.Signal(syscall.SIGKILL)
	<-g.exited
	g.exited <- nil
}

// stop sends SIGTERM and waits for a clean exit.
func (g *gatewayProc) stop() {
	g.t.Helper()
	_ = g.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-g.exited:
		g.exited <- nil
		if err != nil {
			g.t.Fatalf("serve exited with %v after SIGTERM:\n%s", err, g.logs.String())
		}
	case <-time.After(60 * time.Second):
		g.t.Fatalf("serve did not stop within 60 s of SIGTERM")
	}
}

// gql posts one GraphQL request; it returns the data, or an error for a
// transport failure or a GraphQL error (an unacknowledged call).
func (g *gatewayProc) gql(token, query string, vars map[string]any, out any) error {
	r, err := gatewaytest.Do(context.Background(), crashHTTP, g.url, token, query, vars)
	if err != nil {
		return err
	}
	if len(r.Errors) > 0 {
		return fmt.Errorf("graphql: %s", r.Errors[0].Message)
	}
	if out != nil {
		return json.Unmarshal(r.Data, out)
	}
	return nil
}

// crashHTTP bounds each request of the crash tests: a hang guard.
var crashHTTP = &http.Client{Timeout: 30 * time.Second}

func (g *gatewayProc) must(token, query string, vars map[string]any, out any) {
	g.t.Helper()
	if err := g.gql(token, query, vars, out); err != nil {
		g.t.Fatalf("%v\nquery: %s", err, query)
	}
}

// crashUser is a registered user of TestCrashRecovery.
type crashUser struct {
	id, name, token string
}

// registerUsers registers n users named prefix<i>_<random> through g and
// returns them with their tokens.
func (g *gatewayProc) registerUsers(prefix string, n int) []crashUser {
	g.t.Helper()
	users := make([]crashUser, 0, n)
	for i := range n {
		name := fmt.Sprintf("%s%d_%d", prefix, i, rand.IntN(1e6))
		var d struct {
			Register struct {
				Token string
				User  struct{ ID string }
			}
		}
		g.must("", `mutation($u: String!) { register(username: $u, password: "correct horse") { token user { id } } }`, map[string]any{"u": name}, &d)
		users = append(users, crashUser{id: d.Register.User.ID, name: name, token: d.Register.Token})
	}
	return users
}

// TestCrashRecovery kills the gateway binary with SIGKILL in the middle of
// concurrent publishes, follows and unfollows (two kills per run, after a
// random 0.3-1.5 s of load), restarts it on the same store, and waits for
// its automatic recovery (Start's outbox sweep and repair pass, then one
// every GATEWAY_OUTBOX_SWEEP): then every acknowledged post, follow and
// unfollow is there, every counter equals its list, relations are
// symmetric, every home timeline equals a recomputation from the posts of
// its owner and followees (every fan's inbox complete), and `gateway fsck`
// on the stopped store finds 0 issues. On HBase the store is a namespace
// of its own.
func TestCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	bin := buildGateway(t)
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			var storeArgs []string
			if b.Name == hbase.BackendHBase {
				raw := testenv.HBase(t)
				ns := fmt.Sprintf("crash_%d_%d", time.Now().UnixNano()%1e9, rand.IntN(1000))
				storeArgs = []string{"--store", "hbase", "--hbase-zk", testenv.HBaseZK(t), "--namespace", ns, "--migrate"}
				t.Cleanup(func() {
					ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
					defer cancel()
					_ = hbase.WithNamespace(raw, tables.Namespace, ns).DropNamespace(ctx, tables.Namespace)
				})
			} else {
				storeArgs = []string{"--data", filepath.Join(t.TempDir(), "store")}
			}
			// The killed gateway's fan-out leases must expire before the
			// grace does: the repair of an unfollow waits for the fan-outs
			// of its followee, and the checks below allow the grace and
			// two sweeps (a restarted gateway is another instance).
			env := []string{"GATEWAY_JWT_SECRET=crash-test-secret-crash-test-secret",
				"GATEWAY_REPAIR_GRACE=" + crashGrace.String(), "GATEWAY_OUTBOX_SWEEP=500ms",
				"GATEWAY_FANOUT_LEASE=" + (crashGrace / 2).String()}
			g := startGatewayProc(t, bin, env, storeArgs...)

			users := g.registerUsers("crash", 8)
			acked := map[string][]string{} // author id -> acknowledged post ids
			var mu sync.Mutex
			for kill := range 2 {
				// Pairs that only get follows, and pairs (followed first) that only get unfollows.
				perm := rand.Perm(len(users) * len(users))
				var followPairs, unfollowPairs [][2]int
				for _, p := range perm {
					a, bb := p/len(users), p%len(users)
					if a == bb {
						continue
					}
					switch {
					case len(followPairs) < 6:
						followPairs = append(followPairs, [2]int{a, bb})
					case len(unfollowPairs) < 4:
						unfollowPairs = append(unfollowPairs, [2]int{a, bb})
					}
				}
				for _, p := range unfollowPairs {
					g.must(users[p[0]].token, `mutation($id: ID!) { follow(userId: $id) { id } }`, map[string]any{"id": users[p[1]].id}, nil)
				}
				followed, unfollowed := map[[2]int]bool{}, map[[2]int]bool{}
				ctx, stopLoad := context.WithCancel(context.Background())
				var wg sync.WaitGroup
				for w := range 16 {
					wg.Go(func() {
						for i := 0; ctx.Err() == nil; i++ {
							switch r := rand.IntN(10); {
							case r < 5:
								u := users[rand.IntN(len(users))]
								var d struct{ PublishPost struct{ ID string } }
								if g.gql(u.token, `mutation($c: String!) { publishPost(content: $c) { id } }`,
									map[string]any{"c": fmt.Sprintf("kill %d worker %d post %d", kill, w, i)}, &d) == nil {
									mu.Lock()
									acked[u.id] = append(acked[u.id], d.PublishPost.ID)
									mu.Unlock()
								}
							case r < 8:
								p := followPairs[rand.IntN(len(followPairs))]
								if g.gql(users[p[0]].token, `mutation($id: ID!) { follow(userId: $id) { id } }`, map[string]any{"id": users[p[1]].id}, nil) == nil {
									mu.Lock()
									followed[p] = true
									mu.Unlock()
								}
							default:
								p := unfollowPairs[rand.IntN(len(unfollowPairs))]
								if g.gql(users[p[0]].token, `mutation($id: ID!) { unfollow(userId: $id) { id } }`, map[string]any{"id": users[p[1]].id}, nil) == nil {
									mu.Lock()
									unfollowed[p] = true
									mu.Unlock()
								}
							}
						}
					})
				}
				load := 300*time.Millisecond + time.Duration(rand.IntN(1200))*time.Millisecond
				time.Sleep(load)
				g.kill()
				killed := time.Now()
				stopLoad()
				wg.Wait()
				mu.Lock()
				posts := 0
				for _, ps := range acked {
					posts += len(ps)
				}
				mu.Unlock()
				t.Logf("kill %d after %s of load: %d posts acknowledged so far, %d pairs followed, %d unfollowed", kill+1, load.Round(time.Millisecond), posts, len(followed), len(unfollowed))

				restarted := time.Now()
				g = startGatewayProc(t, bin, env, storeArgs...)
				var last string
				for deadline := time.Now().Add(3 * time.Minute); ; {
					problems := crashProblems(g, users, acked, followed, unfollowed)
					if len(problems) == 0 {
						break
					}
					if last = strings.Join(problems, "\n"); time.Now().After(deadline) {
						t.Fatalf("not recovered 3 minutes after the restart:\n%s\nlogs:\n%s", last, g.logs.String())
					}
					time.Sleep(500 * time.Millisecond)
				}
				t.Logf("consistent %s after the restart", time.Since(restarted).Round(time.Millisecond))
				// The markers of the killed writes (and of unfollows that
				// finished while a fan-out of the followee was running) are
				// repaired once older than the grace: by then, plus two
				// sweeps, the repair is done, which fsck checks at the end.
				time.Sleep(time.Until(killed.Add(crashGrace + 2*time.Second)))
				if problems := crashProblems(g, users, acked, followed, unfollowed); len(problems) > 0 {
					t.Fatalf("after the repair:\n%s", strings.Join(problems, "\n"))
				}
			}
			g.stop()
			args := append([]string{"fsck", "--grace", "0s", "--repair-grace", crashGrace.String()}, storeArgs...)
			if b.Name == hbase.BackendHBase {
				args = slices.DeleteFunc(args, func(a string) bool { return a == "--migrate" })
			}
			out, err := exec.Command(bin, args...).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "(0 in all)") {
				t.Fatalf("gateway fsck after recovery: %v\n%s", err, out)
			}
		})
	}
}

// crashProblems checks over GraphQL what TestCrashRecovery promises and
// returns what does not hold yet.
func crashProblems(g *gatewayProc, users []crashUser, acked map[string][]string, followed, unfollowed map[[2]int]bool) []string {
	var problems []string
	type conn struct {
		Edges []struct {
			Node struct {
				ID     string
				Author struct{ ID string }
			}
		}
		PageInfo struct {
			HasNextPage bool
			EndCursor   *string
		}
	}
	follows, fans := map[string][]string{}, map[string][]string{}
	posts := map[string][]string{}
	index := map[string]int{}
	for i, u := range users {
		index[u.id] = i
		var d struct {
			User struct {
				FollowCount, FanCount, PostCount int
				Follows, Fans                    conn
			}
		}
		if err := g.gql("", `query($id: ID!) { user(id: $id) { followCount fanCount postCount
			follows(first: 100) { edges { node { id } } } fans(first: 100) { edges { node { id } } } } }`, map[string]any{"id": u.id}, &d); err != nil {
			return []string{err.Error()}
		}
		for _, e := range d.User.Follows.Edges {
			follows[u.id] = append(follows[u.id], e.Node.ID)
		}
		for _, e := range d.User.Fans.Edges {
			fans[u.id] = append(fans[u.id], e.Node.ID)
		}
		var after *string
		for {
			var p struct{ User struct{ Posts conn } }
			if err := g.gql("", `query($id: ID!, $after: String) { user(id: $id) { posts(first: 100, after: $after) {
				edges { node { id } } pageInfo { hasNextPage endCursor } } } }`, map[string]any{"id": u.id, "after": after}, &p); err != nil {
				return []string{err.Error()}
			}
			for _, e := range p.User.Posts.Edges {
				posts[u.id] = append(posts[u.id], e.Node.ID)
			}
			if !p.User.Posts.PageInfo.HasNextPage {
				break
			}
			after = p.User.Posts.PageInfo.EndCursor
		}
		if d.User.FollowCount != len(follows[u.id]) || d.User.FanCount != len(fans[u.id]) || d.User.PostCount != len(posts[u.id]) {
			problems = append(problems, fmt.Sprintf("user %s: followCount %d fanCount %d postCount %d; lists %d, %d, %d",
				u.id, d.User.FollowCount, d.User.FanCount, d.User.PostCount, len(follows[u.id]), len(fans[u.id]), len(posts[u.id])))
		}
		for _, id := range acked[u.id] {
			if !slices.Contains(posts[u.id], id) {
				problems = append(problems, "acknowledged post "+id+" is missing")
			}
		}
	}
	for _, u := range users {
		for _, f := range follows[u.id] {
			if !slices.Contains(fans[f], u.id) {
				problems = append(problems, fmt.Sprintf("%s follows %s, whose fans lack them", u.id, f))
			}
		}
		for _, f := range fans[u.id] {
			if !slices.Contains(follows[f], u.id) {
				problems = append(problems, fmt.Sprintf("%s lists fan %s, who does not follow them", u.id, f))
			}
		}
	}
	for p := range followed {
		if a, b := users[p[0]], users[p[1]]; !slices.Contains(follows[a.id], b.id) {
			problems = append(problems, fmt.Sprintf("acknowledged follow %s -> %s is missing", a.id, b.id))
		}
	}
	for p := range unfollowed {
		if a, b := users[p[0]], users[p[1]]; slices.Contains(follows[a.id], b.id) {
			problems = append(problems, fmt.Sprintf("acknowledged unfollow %s -> %s is undone", a.id, b.id))
		}
	}
	// Home timelines: the newest 100 of the owner's and followees' posts.
	for _, u := range users {
		var want []string
		for _, a := range append([]string{u.id}, follows[u.id]...) {
			want = append(want, posts[a]...)
		}
		slices.SortFunc(want, func(x, y string) int {
			xa, xm, _ := strings.Cut(x, "_")
			ya, ym, _ := strings.Cut(y, "_")
			return cmp.Or(cmp.Compare(len(ym), len(xm)), strings.Compare(ym, xm), cmp.Compare(len(xa), len(ya)), strings.Compare(xa, ya))
		})
		want = want[:min(len(want), 100)]
		var d struct{ HomeTimeline conn }
		if err := g.gql(u.token, `{ homeTimeline(first: 100) { edges { node { id } } } }`, nil, &d); err != nil {
			return append(problems, err.Error())
		}
		var got []string
		for _, e := range d.HomeTimeline.Edges {
			got = append(got, e.Node.ID)
		}
		if !slices.Equal(got, want) {
			problems = append(problems, fmt.Sprintf("home timeline of %s: %d entries differ from the %d recomputed", u.id, len(got), len(want)))
		}
	}
	return problems
}
