// Package clustertest holds what the cluster fault tests (TestCluster… in
// hbase/remote and cmd/gateway) share: finding the repository, the pid of
// the region server that listens on a port, and stopping and starting the
// local cluster of `HBASE_REGIONSERVERS=3 make hbase-up` whose ZooKeeper
// address arrives in internal/hbasezk.ClusterEnv. It is a test helper: only
// tests import it.
package clustertest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// PidsEnv names the variable that may point at the file listing the region
// servers' pids (default: .hbase/regionservers.pids of the repository).
const PidsEnv = "GATEWAY_TEST_HBASE_CLUSTER_PIDS"

// ModuleRoot returns the directory of the repository's go.mod.
func ModuleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// PidsFile returns the file listing the region servers' pids.
func PidsFile(t testing.TB) string {
	if f := os.Getenv(PidsEnv); f != "" {
		return f
	}
	return filepath.Join(ModuleRoot(t), ".hbase", "regionservers.pids")
}

// ServerAddr returns "host:port" of a ServerName "host,port,startcode".
func ServerAddr(server string) string {
	parts := strings.Split(server, ",")
	if len(parts) != 3 {
		return server
	}
	return parts[0] + ":" + parts[1]
}

// Port returns the port of a ServerName "host,port,startcode", or "-".
func Port(server string) string {
	parts := strings.Split(server, ",")
	if len(parts) != 3 {
		return "-"
	}
	return parts[1]
}

// RegionServerPid returns the pid, among those listed in pidsFile, of the
// live process listening on server's port (found through /proc: the socket
// inodes of the process against the listening sockets of /proc/net/tcp*).
func RegionServerPid(pidsFile, server string) (int, error) {
	port, err := strconv.Atoi(Port(server))
	if err != nil {
		return 0, fmt.Errorf("no port in server name %q", server)
	}
	listening, err := listeningInodes(port)
	if err != nil {
		return 0, err
	}
	data, err := os.ReadFile(pidsFile)
	if err != nil {
		return 0, err
	}
	for _, f := range strings.Fields(string(data)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			continue
		}
		fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		if err != nil {
			continue // not running
		}
		for _, fd := range fds {
			link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
			if err == nil && strings.HasPrefix(link, "socket:[") && listening[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] {
				return pid, nil
			}
		}
	}
	return 0, fmt.Errorf("no process of %s listens on port %d", pidsFile, port)
}

// listeningInodes returns the inodes of the sockets listening on port.
func listeningInodes(port int) (map[string]bool, error) {
	out := map[string]bool{}
	for _, name := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(name)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || fields[3] != "0A" { // 0A: LISTEN
				continue
			}
			i := strings.LastIndexByte(fields[1], ':')
			p, err := strconv.ParseUint(fields[1][i+1:], 16, 16)
			if err == nil && int(p) == port {
				out[fields[9]] = true
			}
		}
		_ = f.Close()
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("nothing listens on port %d", port)
	}
	return out, nil
}

// Down stops the whole local cluster with scripts/hbase-down.sh (its data
// stays) and returns how long that took.
func Down(t testing.TB) time.Duration {
	t.Helper()
	start := time.Now()
	script(t, nil, "hbase-down.sh")
	return time.Since(start)
}

// Up starts (or completes) the local cluster of three region servers with
// scripts/hbase-up.sh on the ZooKeeper port of zk ("127.0.0.1:PORT"), keeping
// its data, and returns how long that took. On a running cluster it
// restarts the daemons that died.
func Up(t testing.TB, zk string) time.Duration {
	t.Helper()
	_, port, ok := strings.Cut(zk, ":")
	if !ok {
		t.Fatalf("ZooKeeper address %q has no port", zk)
	}
	start := time.Now()
	out := script(t, []string{"HBASE_REGIONSERVERS=3", "HBASE_ZK_PORT=" + port, "HBASE_CLEAN="}, "hbase-up.sh")
	if last := lastLine(out); last != zk {
		t.Fatalf("hbase-up printed %q as its address, want %q", last, zk)
	}
	return time.Since(start)
}

// script runs scripts/NAME with env added and returns its stdout; it fails
// t (with the script's stderr) when the script fails.
func script(t testing.TB, env []string, name string) string {
	t.Helper()
	root := ModuleRoot(t)
	cmd := exec.Command("bash", filepath.Join(root, "scripts", name))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("scripts/%s: %v\n%s", name, err, stderr.String())
	}
	return stdout.String()
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
