// Package hbasetest is the conformance suite of package hbase's backends, in
// the manner of testing/fstest: a backend's own test runs it with one call,
//
//	func TestConformance(t *testing.T) {
//		hbasetest.TestStore(t, func(t testing.TB) hbase.StoreAdmin { ... })
//	}
//
// and every check of the hbase.Store and hbase.Admin contract, and of the
// decorators (hbase.Instrument, hbase.WithNamespace) over the backend,
// becomes a subtest. It is what keeps the embedded backend equal to the real
// HBase. The suite stays backend-neutral:
//
//   - it creates its own uniquely named tables (namespace "conformance", a
//     per-run suffix) once per run, and never assumes an empty store; the
//     admin checks work in namespaces of their own ("gwtest_..."), dropped
//     at the end;
//   - every subtest uses its own rowkey prefix;
//   - it relies only on behaviour HBase itself has, as the backends
//     configure it: versions and deletes are checked as HBase's
//     NEW_VERSION_BEHAVIOR makes them (versions.go), which the remote
//     backend sets on every family.
package hbasetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase"
)

// conformanceNamespace is the namespace of the suite's tables.
const conformanceNamespace = "conformance"

// Families of the suite's main table.
const (
	cfF   = "f" // MaxVersions 1
	cfG   = "g" // MaxVersions 1
	cfV   = "v" // MaxVersions 3
	cfTTL = "x" // MaxVersions 1, TTL conformanceTTL
)

// conformanceTTL is the TTL of family cfTTL; the suite writes "expired"
// cells an hour in the past, so clock skew between the test and an HBase
// server does not matter.
const conformanceTTL = time.Minute

// cEnv is what every conformance subtest gets.
type cEnv struct {
	st     hbase.StoreAdmin
	ctx    context.Context
	a, b   string // full names of the two tables
	suffix string // the run's unique suffix
}

// TestStore runs the conformance suite against the backend open returns:
// one backend for the whole run, which open registers to close with
// t.Cleanup (and may share with other tests: the suite uses tables and
// namespaces of its own). Each check is a subtest of t; a backend passes
// when all of them pass. The tables the suite creates are deleted at the end.
func TestStore(t *testing.T, open func(t testing.TB) hbase.StoreAdmin) {
	st := open(t)
	ctx := t.Context()
	suffix := fmt.Sprintf("%d_%04x", time.Now().UnixMilli(), rand.N(1<<16))
	e := &cEnv{
		st:     st,
		ctx:    ctx,
		a:      conformanceNamespace + ":a_" + suffix,
		b:      conformanceNamespace + ":b_" + suffix,
		suffix: suffix,
	}

	// The run's tables are dropped at the end (a shared HBase keeps them
	// otherwise); registered before they exist so that a failed setup cleans up.
	t.Cleanup(func() { dropConformanceTables(t, st, e.a, e.b) })

	// Create table a, write to it, then ensure a and b: a must be left as it
	// is (its row survives), b created.
	specA, specB := conformanceSpecs(suffix)
	if err := st.EnsureTables(ctx, conformanceNamespace, []hbase.TableSpec{specA}); err != nil {
		t.Fatalf("EnsureTables(a): %v", err)
	}
	cPut(t, e, &hbase.Put{Table: e.a, Row: []byte("marker"), Values: hbase.Values{cfF: {"m": []byte("1")}}})
	if err := st.EnsureTables(ctx, conformanceNamespace, []hbase.TableSpec{specA, specB}); err != nil {
		t.Fatalf("EnsureTables(a, b): %v", err)
	}

	tests := []struct {
		name string
		fn   func(t *testing.T, e *cEnv)
	}{
		{"Backend_Ping", cBackendPing},
		{"EnsureTables_idempotent", cEnsureTablesIdempotent},
		{"Get_missing_row", cGetMissingRow},
		{"Put_Get_families", cPutGetFamilies},
		{"Cell_order", cCellOrder},
		{"Overwrite", cOverwrite},
		{"Versions", cVersions},
		{"Explicit_timestamp", cExplicitTimestamp},
		{"Delete_row", cDeleteRow},
		{"Delete_family", cDeleteFamily},
		{"Delete_columns", cDeleteColumns},
		{"CheckAndDelete_CheckAndPut_same_millisecond", cCheckAndDeleteThenCheckAndPut},
		{"Delete_Put_same_millisecond", cDeleteThenPut},
		{"Put_Delete_Put", cPutDeletePut},
		{"Delete_one_version", cDeleteOneVersion},
		{"Versions_stay_gone", cVersionsStayGone},
		{"Increment_after_Delete", cIncrementAfterDelete},
		{"Delete_spares_future_versions", cDeleteSparesFuture},
		{"GetMany", cGetMany},
		{"PutMany_DeleteMany", cPutManyDeleteMany},
		{"Scan_ranges", cScanRanges},
		{"Scan_whole_table", cScanWholeTable},
		{"Scan_stop_early", cScanStopEarly},
		{"Scan_binary_rowkeys", cScanBinaryRowkeys},
		{"Scan_reversed", cScanReversed},
		{"MutateRow", cMutateRow},
		{"MutateRow_atomic", cMutateRowAtomic},
		{"CheckAndPut_absent", cCheckAndPutAbsent},
		{"CheckAndPut_value", cCheckAndPutValue},
		{"CheckAndPut_empty_value", cCheckAndPutEmptyValue},
		{"CheckAndDelete", cCheckAndDelete},
		{"Increment", cIncrement},
		{"Increment_concurrent", cIncrementConcurrent},
		{"CheckAndPut_concurrent", cCheckAndPutConcurrent},
		{"TTL", cTTL},
		{"Context_canceled", cContextCanceled},
		{"Unknown_table", cUnknownTable},
		{"Unknown_family", cUnknownFamily},
		{"Admin_DeleteTable", cAdminDeleteTable},
		{"Admin_DropNamespace", cAdminDropNamespace},
		{"Admin_add_family", cAdminAddFamily},
		{"WithNamespace", cWithNamespace},
		{"Instrument", cInstrument},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, e) })
	}
}

// conformanceSpecs returns the specs of the suite's two tables.
func conformanceSpecs(suffix string) (a, b hbase.TableSpec) {
	a = hbase.TableSpec{Name: "a_" + suffix, Families: []hbase.FamilySpec{
		{Name: cfF, MaxVersions: 1},
		{Name: cfG, MaxVersions: 1, Bloom: hbase.BloomRowCol},
		{Name: cfV, MaxVersions: 3},
		{Name: cfTTL, MaxVersions: 1, TTL: conformanceTTL},
	}}
	b = hbase.TableSpec{Name: "b_" + suffix, Families: []hbase.FamilySpec{
		{Name: cfF, MaxVersions: 1, Bloom: hbase.BloomNone, InMemory: true},
	}}
	return a, b
}

// dropConformanceTables deletes tables, logging failures.
func dropConformanceTables(t *testing.T, admin hbase.Admin, tables ...string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, table := range tables {
		err := admin.DisableTable(ctx, table)
		if err == nil {
			err = admin.DeleteTable(ctx, table)
		}
		if err != nil && !errors.Is(err, hbase.ErrTableNotFound) {
			t.Logf("dropping %s: %v", table, err)
		}
	}
}

// uniqueNamespace returns a fresh namespace name, dropped when t ends.
func uniqueNamespace(t *testing.T, admin hbase.Admin) string {
	ns := fmt.Sprintf("gwtest_%d_%x", time.Now().Unix(), rand.Uint32())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := admin.DropNamespace(ctx, ns); err != nil {
			t.Errorf("DropNamespace(%s): %v", ns, err)
		}
	})
	return ns
}

// stepCtx is a context for one admin step: admin calls on HBase take
// seconds, and t's own context has no deadline.
func stepCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// --- subtests ---------------------------------------------------------------

func cBackendPing(t *testing.T, e *cEnv) {
	if b := e.st.Backend(); b != hbase.BackendHBase && b != hbase.BackendEmbedded {
		t.Errorf("Backend() = %q", b)
	}
	if err := e.st.Ping(e.ctx); err != nil {
		t.Errorf("Ping: %v", err)
	}
}

func cEnsureTablesIdempotent(t *testing.T, e *cEnv) {
	specA, specB := conformanceSpecs(e.suffix)
	for i, tables := range [][]hbase.TableSpec{{specA, specB}, {specB}, {specA, specB}} {
		if err := e.st.EnsureTables(e.ctx, conformanceNamespace, tables); err != nil {
			t.Fatalf("EnsureTables #%d: %v", i, err)
		}
	}
	// Table a was created before; ensuring it again must not have touched it.
	r := cGet(t, e, &hbase.Get{Table: e.a, Row: []byte("marker")})
	cWantCells(t, "marker row", r, false, `f:"m"="1"`)
	// Both tables work.
	cPut(t, e, &hbase.Put{Table: e.b, Row: []byte("ensure/1"), Values: hbase.Values{cfF: {"q": []byte("b")}}})
	cWantCells(t, "table b", cGet(t, e, &hbase.Get{Table: e.b, Row: []byte("ensure/1")}), false, `f:"q"="b"`)
}
