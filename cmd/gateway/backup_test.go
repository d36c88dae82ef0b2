package main

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/clustertest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestBackupRestore seeds a store, serves it, and takes `gateway backup`
// while 8 workers keep publishing, following and unfollowing over GraphQL;
// on the embedded store the backup goes through the serving gateway's
// admin socket (pebble locks the directory). `gateway restore` then loads
// the backup into a fresh store (a new data directory; on HBase a new
// namespace, then its repair), after which `gateway fsck` finds 0 issues
// and a gateway serving the restored store shows every post, follow and
// unfollow acknowledged before the backup began, every counter equal to
// its list and every home timeline complete. A second restore into the
// now non-empty store is refused. On the embedded store a backup taken
// once the gateway has stopped opens the store itself and holds every
// acknowledged write. The embedded store is seeded with the
// demo data set (`gateway seed`), HBase through GraphQL alone (the export
// copies every file of the namespace).
func TestBackupRestore(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	bin := buildGateway(t)
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			env := []string{"GATEWAY_JWT_SECRET=backup-test-secret-backup-test-secret"}
			var src, dst []string // store flags of the source and of the restored store
			if b.Name == hbase.BackendHBase {
				raw := testenv.HBase(t)
				zk := testenv.HBaseZK(t)
				id := fmt.Sprintf("%d_%d", time.Now().UnixNano()%1e9, rand.IntN(1000))
				srcNS, dstNS := "backup_"+id, "restored_"+id
				src = []string{"--store", "hbase", "--hbase-zk", zk, "--namespace", srcNS}
				dst = []string{"--store", "hbase", "--hbase-zk", zk, "--namespace", dstNS}
				t.Cleanup(func() {
					ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
					defer cancel()
					for _, ns := range []string{srcNS, dstNS} {
						_ = hbase.WithNamespace(raw, tables.Namespace, ns).DropNamespace(ctx, tables.Namespace)
					}
				})
				root := clustertest.ModuleRoot(t)
				env = append(env, "GATEWAY_HBASE_CLASSPATH="+filepath.Join(root, ".hbase", "conf")+":"+filepath.Join(root, ".hbase", "lib", "*"))
				runEnv(t, bin, env, append([]string{"migrate"}, src...)...)
			} else {
				data := filepath.Join(t.TempDir(), "store")
				src = []string{"--data", data}
				dst = []string{"--data", filepath.Join(t.TempDir(), "restored")}
				runEnv(t, bin, env, append([]string{"seed", "--quiet"}, src...)...)
			}
			g := startGatewayProc(t, bin, env, src...)

			users := g.registerUsers("backup", 8)
			// Pairs that only get follows, and pairs (followed first) that only get unfollows.
			var followPairs, unfollowPairs [][2]int
			for _, p := range rand.Perm(len(users) * len(users)) {
				a, bb := p/len(users), p%len(users)
				switch {
				case a == bb:
				case len(followPairs) < 8:
					followPairs = append(followPairs, [2]int{a, bb})
				case len(unfollowPairs) < 6:
					unfollowPairs = append(unfollowPairs, [2]int{a, bb})
				}
			}
			for _, p := range unfollowPairs {
				g.must(users[p[0]].token, `mutation($id: ID!) { follow(userId: $id) { id } }`, map[string]any{"id": users[p[1]].id}, nil)
			}

			var mu sync.Mutex
			acked := map[string][]string{} // author id -> acknowledged post ids
			followed, unfollowed := map[[2]int]bool{}, map[[2]int]bool{}
			writes := 0
			ctx, stopLoad := context.WithCancel(context.Background())
			defer stopLoad()
			var wg sync.WaitGroup
			for w := range 8 {
				wg.Go(func() {
					for i := 0; ctx.Err() == nil; i++ {
						var ok bool
						switch r := rand.IntN(10); {
						case r < 5:
							u := users[rand.IntN(len(users))]
							var d struct{ PublishPost struct{ ID string } }
							if ok = g.gql(u.token, `mutation($c: String!) { publishPost(content: $c) { id } }`,
								map[string]any{"c": fmt.Sprintf("worker %d post %d", w, i)}, &d) == nil; ok {
								mu.Lock()
								acked[u.id] = append(acked[u.id], d.PublishPost.ID)
								mu.Unlock()
							}
						case r < 8:
							p := followPairs[rand.IntN(len(followPairs))]
							if ok = g.gql(users[p[0]].token, `mutation($id: ID!) { follow(userId: $id) { id } }`, map[string]any{"id": users[p[1]].id}, nil) == nil; ok {
								mu.Lock()
								followed[p] = true
								mu.Unlock()
							}
						default:
							p := unfollowPairs[rand.IntN(len(unfollowPairs))]
							if ok = g.gql(users[p[0]].token, `mutation($id: ID!) { unfollow(userId: $id) { id } }`, map[string]any{"id": users[p[1]].id}, nil) == nil; ok {
								mu.Lock()
								unfollowed[p] = true
								mu.Unlock()
							}
						}
						if ok {
							mu.Lock()
							writes++
							mu.Unlock()
						}
					}
				})
			}
			// Back up once the load has acknowledged writes of every kind;
			// what was acknowledged by then must be in the backup.
			for deadline := time.Now().Add(2 * time.Minute); ; {
				mu.Lock()
				ready := len(acked) > 0 && len(followed) > 0 && len(unfollowed) > 0 && writes >= 40
				mu.Unlock()
				if ready {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the load acknowledged too little in 2 minutes:\n%s", g.logs.String())
				}
				time.Sleep(20 * time.Millisecond)
			}
			mu.Lock()
			ackedBefore := map[string][]string{}
			for k, v := range acked {
				ackedBefore[k] = append([]string(nil), v...)
			}
			followedBefore, unfollowedBefore, writesBefore := maps.Clone(followed), maps.Clone(unfollowed), writes
			mu.Unlock()

			dir := filepath.Join(t.TempDir(), "backup")
			start := time.Now()
			out := runEnv(t, bin, env, append([]string{"backup", "--to", dir}, src...)...)
			took := time.Since(start)
			if b.Name == hbase.BackendEmbedded && !strings.Contains(out, "via=server") {
				t.Fatalf("the backup did not go through the serving gateway:\n%s", out)
			}
			mu.Lock()
			during := writes - writesBefore
			mu.Unlock()
			stopLoad()
			wg.Wait()
			t.Logf("backup took %s; %d writes acknowledged before it, %d during it", took.Round(time.Millisecond), writesBefore, during)

			start = time.Now()
			out = runEnv(t, bin, env, append([]string{"restore", "--from", dir}, dst...)...)
			t.Logf("restore (with its repair) took %s", time.Since(start).Round(time.Millisecond))
			for _, l := range strings.Split(out, "\n") {
				if strings.Contains(l, "repair pass") {
					t.Log(l)
				}
			}
			if out, err := command(bin, env, append([]string{"restore", "--from", dir}, dst...)...).CombinedOutput(); err == nil || !strings.Contains(string(out), "restore only into") {
				t.Fatalf("a second restore into the restored store: %v\n%s", err, out)
			}
			out = runEnv(t, bin, env, append([]string{"fsck", "--grace", "0s"}, dst...)...)
			if !strings.Contains(out, "(0 in all)") {
				t.Fatalf("gateway fsck of the restored store:\n%s", out)
			}
			r := startGatewayProc(t, bin, env, dst...)
			if problems := crashProblems(r, users, ackedBefore, followedBefore, unfollowedBefore); len(problems) > 0 {
				t.Fatalf("the restored store:\n%s", strings.Join(problems, "\n"))
			}
			if b.Name != hbase.BackendEmbedded {
				return
			}
			// With the gateway stopped, backup opens the store itself, and
			// the backup holds every acknowledged write.
			g.stop()
			dir2, dst2 := filepath.Join(t.TempDir(), "backup2"), []string{"--data", filepath.Join(t.TempDir(), "restored2")}
			if out := runEnv(t, bin, env, append([]string{"backup", "--to", dir2}, src...)...); !strings.Contains(out, "via=store") {
				t.Fatalf("backup of a stopped store did not open it:\n%s", out)
			}
			runEnv(t, bin, env, append([]string{"restore", "--from", dir2}, dst2...)...)
			r2 := startGatewayProc(t, bin, env, dst2...)
			if problems := crashProblems(r2, users, acked, followed, unfollowed); len(problems) > 0 {
				t.Fatalf("the store restored from the backup of the stopped store:\n%s", strings.Join(problems, "\n"))
			}
		})
	}
}

// command is exec.Command with env added to the test's environment.
func command(bin string, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	return cmd
}

// runEnv runs the binary with env added to the test's environment to
// completion and returns its output; it fails the test when the command
// fails.
func runEnv(t *testing.T, bin string, env []string, args ...string) string {
	t.Helper()
	out, err := command(bin, env, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("gateway %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
