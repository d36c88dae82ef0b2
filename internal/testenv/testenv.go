// Package testenv gives tests the two store backends: an in-memory embedded
// store (hbase/embedded), and the real standalone HBase (hbase/remote) that
// `make hbase-up` starts, whose ZooKeeper address arrives in
// GATEWAY_TEST_HBASE_ZK. Without it HBase tests skip — except in CI
// (CI=true), where they fail: there they must run (internal/hbasezk).
package testenv

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/hbase/embedded"
	"github.com/weibohbase/gateway/hbase/remote"
	"github.com/weibohbase/gateway/internal/hbasezk"
)

// Backend is one store backend for table-driven tests.
type Backend struct {
	// Name is hbase.BackendEmbedded or hbase.BackendHBase.
	Name string
	// Open returns a store, with its table administration, closed at the
	// end of the test.
	Open func(t testing.TB) hbase.StoreAdmin
}

// Backends returns both backends: embedded first, then the real HBase.
func Backends() []Backend {
	return []Backend{{hbase.BackendEmbedded, Embedded}, {hbase.BackendHBase, HBase}}
}

// Embedded returns a fresh in-memory embedded store.
func Embedded(t testing.TB) hbase.StoreAdmin {
	t.Helper()
	st, err := embedded.Open("")
	if err != nil {
		t.Fatalf("embedded store: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// HBaseZK returns the test HBase's ZooKeeper address (hbasezk.Addr: skip
// outside CI without one, fail in CI).
func HBaseZK(t testing.TB) string { return hbasezk.Addr(t) }

// HBase returns a store on the real test HBase. The store is shared with
// other tests and runs: tests must create their own unique rows or tables.
func HBase(t testing.TB) hbase.StoreAdmin {
	t.Helper()
	zk := HBaseZK(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	st, err := remote.Open(ctx, zk)
	if err != nil {
		t.Fatalf("hbase store at %s: %v", zk, err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// OpenOwn opens b's store for a test that needs a store of its own (one
// that counts or checks every row): on the real HBase, namespace ns is
// mapped to a fresh one named prefix plus the time and a random number,
// dropped at the end of the test; the embedded store is fresh already.
func (b Backend) OpenOwn(t testing.TB, ns, prefix string) hbase.StoreAdmin {
	t.Helper()
	st := b.Open(t)
	if b.Name != hbase.BackendHBase {
		return st
	}
	st = hbase.WithNamespace(st, ns, fmt.Sprintf("%s_%d_%d", prefix, time.Now().UnixNano()%1e9, rand.IntN(1000)))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		_ = st.DropNamespace(ctx, ns)
	})
	return st
}
