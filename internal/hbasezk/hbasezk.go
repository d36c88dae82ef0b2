// Package hbasezk tells tests where the real test HBase is: its ZooKeeper
// address arrives in GATEWAY_TEST_HBASE_ZK (`make test` starts HBase and
// sets it). Without it HBase tests skip, except in CI (CI=true), where they
// fail: there they must run. It imports nothing of the project, so the
// backend's own tests (hbase/remote) can use it too, while internal/testenv,
// which imports the backends, uses it for everyone else.
package hbasezk

import (
	"os"
	"testing"
)

// Env names the variable holding the test HBase's ZooKeeper address.
const Env = "GATEWAY_TEST_HBASE_ZK"

// Addr returns the test HBase's ZooKeeper address, skipping t when there is
// none outside CI and failing it in CI.
func Addr(t testing.TB) string {
	t.Helper()
	zk := os.Getenv(Env)
	if zk == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is unset: in CI the real-HBase tests must run (make test starts HBase)", Env)
		}
		t.Skipf("%s is unset: run `make test` (or `make hbase-up` and set it) for the real-HBase tests", Env)
	}
	return zk
}

// ClusterEnv names the variable holding the ZooKeeper address of the local
// cluster of three region servers (`HBASE_REGIONSERVERS=3 make hbase-up`)
// that the cluster fault tests (TestCluster…) need: they move and split its
// regions, kill its region servers and stop it. `make test` starts that
// cluster after the other tests and runs only them on it.
const ClusterEnv = "GATEWAY_TEST_HBASE_CLUSTER_ZK"

// ClusterAddr returns the test cluster's ZooKeeper address, skipping t when
// there is none outside CI and failing it in CI.
func ClusterAddr(t testing.TB) string {
	t.Helper()
	zk := os.Getenv(ClusterEnv)
	if zk == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is unset: in CI the cluster tests must run (make test starts the cluster)", ClusterEnv)
		}
		t.Skipf("%s is unset: start a cluster with `HBASE_REGIONSERVERS=3 make hbase-up` and set it to the printed address (make test does)", ClusterEnv)
	}
	return zk
}
