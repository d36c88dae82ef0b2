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
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
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

// --- helpers ---------------------------------------------------------------

func cPut(t *testing.T, e *cEnv, p *hbase.Put) {
	t.Helper()
	if err := e.st.Put(e.ctx, p); err != nil {
		t.Fatalf("Put %s %q: %v", p.Table, p.Row, err)
	}
}

func cGet(t *testing.T, e *cEnv, g *hbase.Get) *hbase.Result {
	t.Helper()
	r, err := e.st.Get(e.ctx, g)
	if err != nil {
		t.Fatalf("Get %s %q: %v", g.Table, g.Row, err)
	}
	if r == nil {
		t.Fatalf("Get %s %q: nil Result", g.Table, g.Row)
	}
	return r
}

func cScan(t *testing.T, e *cEnv, s *hbase.Scan) []*hbase.Result {
	t.Helper()
	rs, err := hbase.ScanAll(e.ctx, e.st, s)
	if err != nil {
		t.Fatalf("Scan %+v: %v", *s, err)
	}
	return rs
}

// cCellStrings renders cells as family:"qualifier"="value", with "@ts" when
// withTS is set.
func cCellStrings(r *hbase.Result, withTS bool) []string {
	if r == nil {
		return nil
	}
	out := []string{}
	for _, c := range r.Cells {
		s := fmt.Sprintf("%s:%q=%q", c.Family, c.Qualifier, c.Value)
		if withTS {
			s += fmt.Sprintf("@%d", c.Timestamp)
		}
		out = append(out, s)
	}
	return out
}

func cWantCells(t *testing.T, what string, r *hbase.Result, withTS bool, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if got := cCellStrings(r, withTS); !slices.Equal(got, want) {
		t.Errorf("%s: cells\n got  %q\n want %q", what, got, want)
	}
}

// cRowKeys returns the rowkeys of rs with prefix cut off.
func cRowKeys(rs []*hbase.Result, prefix string) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, strings.TrimPrefix(string(r.Row), prefix))
	}
	return out
}

func cWantRows(t *testing.T, what string, rs []*hbase.Result, prefix string, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if got := cRowKeys(rs, prefix); !slices.Equal(got, want) {
		t.Errorf("%s: rows\n got  %q\n want %q", what, got, want)
	}
}

func cBE64(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

// cNearNow reports whether ts (ms) is within 10 minutes of the local clock
// (room for an HBase server's clock skew).
func cNearNow(ts int64) bool {
	d := time.Since(time.UnixMilli(ts))
	return d > -10*time.Minute && d < 10*time.Minute
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

func cGetMissingRow(t *testing.T, e *cEnv) {
	for _, g := range []*hbase.Get{
		{Table: e.a, Row: []byte("missing/1")},
		{Table: e.a, Row: []byte("missing/1"), Families: []string{cfG}},
		{Table: e.a, Row: []byte("missing/1"), MaxVersions: 3},
		{Table: e.b, Row: []byte("missing/\x00\xff")},
	} {
		r := cGet(t, e, g)
		if r.Exists() || len(r.Cells) != 0 {
			t.Errorf("Get %+v of a missing row: %q", *g, cCellStrings(r, false))
		}
		if r.Value(cfF, "a") != nil || r.Cell(cfF, "a") != nil {
			t.Errorf("Get of a missing row: Value/Cell not nil")
		}
	}
}

func cPutGetFamilies(t *testing.T, e *cEnv) {
	row := []byte("pg/1")
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{
		cfF: {"a": []byte("1"), "b": []byte("2")},
		cfG: {"c": []byte("3")},
	}})
	r := cGet(t, e, &hbase.Get{Table: e.a, Row: row})
	if !bytes.Equal(r.Row, row) {
		t.Errorf("Row = %q, want %q", r.Row, row)
	}
	cWantCells(t, "all families", r, false, `f:"a"="1"`, `f:"b"="2"`, `g:"c"="3"`)
	if !r.Exists() {
		t.Errorf("Exists() = false")
	}
	if v := r.Value(cfF, "b"); string(v) != "2" {
		t.Errorf(`Value(f, b) = %q`, v)
	}
	if v := r.Value(cfF, "zz"); v != nil {
		t.Errorf(`Value(f, zz) = %q, want nil`, v)
	}
	// One Put: one timestamp for all its cells, the current time.
	ts := r.Cells[0].Timestamp
	for _, c := range r.Cells {
		if c.Timestamp != ts {
			t.Errorf("cells of one hbase.Put have timestamps %d and %d", ts, c.Timestamp)
		}
	}
	if !cNearNow(ts) {
		t.Errorf("timestamp %d (%v) is not the current time", ts, time.UnixMilli(ts))
	}

	cases := []struct {
		families []string
		want     []string
	}{
		{[]string{cfG}, []string{`g:"c"="3"`}},
		{[]string{cfF}, []string{`f:"a"="1"`, `f:"b"="2"`}},
		{[]string{cfG, cfF}, []string{`f:"a"="1"`, `f:"b"="2"`, `g:"c"="3"`}},
		{[]string{cfV}, nil},
		{[]string{cfV, cfG}, []string{`g:"c"="3"`}},
	}
	for _, c := range cases {
		r := cGet(t, e, &hbase.Get{Table: e.a, Row: row, Families: c.families})
		cWantCells(t, fmt.Sprintf("Families %q", c.families), r, false, c.want...)
	}
	if r := cGet(t, e, &hbase.Get{Table: e.a, Row: row, Families: []string{cfV}}); r.Exists() {
		t.Errorf("Get of a family the row lacks: Exists() = true")
	}
}

func cCellOrder(t *testing.T, e *cEnv) {
	row := []byte("order/1")
	quals := []string{"b", "a", "aa", "\x00", "\xff", "B", "", "a\x00", "\x00\x00"}
	fq := map[string][]byte{}
	for _, q := range quals {
		fq[q] = []byte("f" + q)
	}
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{
		cfV: {"z": []byte("vz"), "a": []byte("va")},
		cfG: {"a": []byte("ga")},
		cfF: fq,
	}})
	r := cGet(t, e, &hbase.Get{Table: e.a, Row: row})
	sorted := slices.Clone(quals)
	slices.Sort(sorted) // bytewise
	var want []string
	for _, q := range sorted {
		want = append(want, fmt.Sprintf("f:%q=%q", q, "f"+q))
	}
	want = append(want, `g:"a"="ga"`, `v:"a"="va"`, `v:"z"="vz"`)
	cWantCells(t, "cell order", r, false, want...)
	if got := len(r.Family(cfF)); got != len(quals) {
		t.Errorf("Family(f) has %d cells, want %d", got, len(quals))
	}
}

func cOverwrite(t *testing.T, e *cEnv) {
	row := []byte("over/1")
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfF: {"a": []byte("1"), "b": []byte("keep")}}})
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfF: {"a": []byte("2")}}})
	cWantCells(t, "after overwrite", cGet(t, e, &hbase.Get{Table: e.a, Row: row}), false, `f:"a"="2"`, `f:"b"="keep"`)
	// Family f keeps one version, whatever the Get asks for.
	cWantCells(t, "MaxVersions 3 on a 1-version family", cGet(t, e, &hbase.Get{Table: e.a, Row: row, MaxVersions: 3}), false,
		`f:"a"="2"`, `f:"b"="keep"`)

	// The same timestamp replaces the cell instead of adding a version.
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Timestamp: 5000, Values: hbase.Values{cfV: {"q": []byte("x")}}})
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Timestamp: 5000, Values: hbase.Values{cfV: {"q": []byte("y")}}})
	cWantCells(t, "same timestamp", cGet(t, e, &hbase.Get{Table: e.a, Row: row, Families: []string{cfV}, MaxVersions: 3}), true,
		`v:"q"="y"@5000`)
}

func cVersions(t *testing.T, e *cEnv) {
	row := []byte("ver/1")
	for i, ts := range []int64{1000, 2000, 3000, 4000} {
		cPut(t, e, &hbase.Put{Table: e.a, Row: row, Timestamp: ts, Values: hbase.Values{cfV: {"q": []byte(fmt.Sprintf("v%d", i+1))}}})
	}
	cases := []struct {
		maxVersions int
		want        []string
	}{
		{0, []string{`v:"q"="v4"@4000`}},
		{1, []string{`v:"q"="v4"@4000`}},
		{2, []string{`v:"q"="v4"@4000`, `v:"q"="v3"@3000`}},
		{3, []string{`v:"q"="v4"@4000`, `v:"q"="v3"@3000`, `v:"q"="v2"@2000`}},
		{10, []string{`v:"q"="v4"@4000`, `v:"q"="v3"@3000`, `v:"q"="v2"@2000`}},
	}
	for _, c := range cases {
		r := cGet(t, e, &hbase.Get{Table: e.a, Row: row, MaxVersions: c.maxVersions})
		cWantCells(t, fmt.Sprintf("MaxVersions %d", c.maxVersions), r, true, c.want...)
	}

	// An older version than the 3 kept is not visible; a version between
	// the kept ones is.
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Timestamp: 500, Values: hbase.Values{cfV: {"q": []byte("old")}}})
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Timestamp: 3500, Values: hbase.Values{cfV: {"q": []byte("v3.5")}}})
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Timestamp: 1000, Values: hbase.Values{cfV: {"p": []byte("p1")}}})
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Timestamp: 2000, Values: hbase.Values{cfV: {"p": []byte("p2")}}})
	r := cGet(t, e, &hbase.Get{Table: e.a, Row: row, MaxVersions: 3})
	cWantCells(t, "versions of two columns", r, true,
		`v:"p"="p2"@2000`, `v:"p"="p1"@1000`,
		`v:"q"="v4"@4000`, `v:"q"="v3.5"@3500`, `v:"q"="v3"@3000`)
	if c := r.Cell(cfV, "q"); c == nil || string(c.Value) != "v4" {
		t.Errorf("Cell(v, q) = %+v, want the newest", c)
	}
	if got := len(r.Family(cfV)); got != 2 {
		t.Errorf("Family(v) has %d cells, want 2 (newest of each qualifier)", got)
	}
}

func cExplicitTimestamp(t *testing.T, e *cEnv) {
	row := []byte("ts/1")
	const ts = int64(1_600_000_000_000)
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Timestamp: ts, Values: hbase.Values{cfF: {"a": []byte("new")}}})
	cWantCells(t, "explicit timestamp", cGet(t, e, &hbase.Get{Table: e.a, Row: row}), true, fmt.Sprintf(`f:"a"="new"@%d`, ts))
	// An older version in a 1-version family stays hidden behind the newer.
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Timestamp: ts - 1000, Values: hbase.Values{cfF: {"a": []byte("older")}}})
	cWantCells(t, "older put", cGet(t, e, &hbase.Get{Table: e.a, Row: row, MaxVersions: 3}), true, fmt.Sprintf(`f:"a"="new"@%d`, ts))
}

func cDeleteRow(t *testing.T, e *cEnv) {
	rows := []string{"del/r", "del/", "del/r\x00", "del/rr", "del/q"}
	for _, row := range rows {
		cPut(t, e, &hbase.Put{Table: e.a, Row: []byte(row), Values: hbase.Values{cfF: {"a": []byte(row)}, cfG: {"b": []byte("g")}}})
	}
	cPut(t, e, &hbase.Put{Table: e.a, Row: []byte("del/r"), Timestamp: 1000, Values: hbase.Values{cfV: {"a": []byte("1")}}})
	if err := e.st.Delete(e.ctx, &hbase.Delete{Table: e.a, Row: []byte("del/r")}); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if r := cGet(t, e, &hbase.Get{Table: e.a, Row: []byte("del/r"), MaxVersions: 3}); r.Exists() {
		t.Errorf("deleted row still has %q", cCellStrings(r, false))
	}
	for _, row := range rows[1:] {
		cWantCells(t, fmt.Sprintf("neighbour %q", row), cGet(t, e, &hbase.Get{Table: e.a, Row: []byte(row)}), false,
			fmt.Sprintf("f:%q=%q", "a", row), `g:"b"="g"`)
	}
	cWantRows(t, "scan after delete", cScan(t, e, &hbase.Scan{Table: e.a, Prefix: []byte("del/")}), "del/",
		"", "q", "r\x00", "rr")
	// Deleting a missing row is fine.
	if err := e.st.Delete(e.ctx, &hbase.Delete{Table: e.a, Row: []byte("del/missing")}); err != nil {
		t.Errorf("Delete of a missing row: %v", err)
	}
}

func cDeleteFamily(t *testing.T, e *cEnv) {
	row := []byte("delfam/1")
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfF: {"a": []byte("1"), "b": []byte("2")}, cfG: {"c": []byte("3")}}})
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Timestamp: 1000, Values: hbase.Values{cfV: {"d": []byte("4")}}})
	if err := e.st.Delete(e.ctx, &hbase.Delete{Table: e.a, Row: row, Values: hbase.Values{cfF: nil}}); err != nil {
		t.Fatalf("Delete family f: %v", err)
	}
	cWantCells(t, "after deleting f", cGet(t, e, &hbase.Get{Table: e.a, Row: row}), false, `g:"c"="3"`, `v:"d"="4"`)
	if err := e.st.Delete(e.ctx, &hbase.Delete{Table: e.a, Row: row, Values: hbase.Values{cfG: {}, cfV: nil}}); err != nil {
		t.Fatalf("Delete families g, v: %v", err)
	}
	if r := cGet(t, e, &hbase.Get{Table: e.a, Row: row}); r.Exists() {
		t.Errorf("row still has %q", cCellStrings(r, false))
	}
}

func cDeleteColumns(t *testing.T, e *cEnv) {
	row := []byte("delcol/1")
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfF: {"a": []byte("1"), "b": []byte("2"), "a\x00": []byte("3")}}})
	for _, ts := range []int64{1000, 2000, 3000} {
		cPut(t, e, &hbase.Put{Table: e.a, Row: row, Timestamp: ts, Values: hbase.Values{cfV: {"q": []byte(fmt.Sprint(ts)), "p": []byte("p")}}})
	}
	err := e.st.Delete(e.ctx, &hbase.Delete{Table: e.a, Row: row, Values: hbase.Values{
		cfF: {"a": nil},
		cfV: {"q": []byte("ignored")},
	}})
	if err != nil {
		t.Fatalf("Delete columns: %v", err)
	}
	cWantCells(t, "after deleting f:a", cGet(t, e, &hbase.Get{Table: e.a, Row: row, Families: []string{cfF}}), false,
		`f:"a\x00"="3"`, `f:"b"="2"`)
	cWantCells(t, "after deleting every version of v:q", cGet(t, e, &hbase.Get{Table: e.a, Row: row, Families: []string{cfV}, MaxVersions: 3}), true,
		`v:"p"="p"@3000`, `v:"p"="p"@2000`, `v:"p"="p"@1000`)
}

func cGetMany(t *testing.T, e *cEnv) {
	cPut(t, e, &hbase.Put{Table: e.a, Row: []byte("gm/1"), Values: hbase.Values{cfF: {"a": []byte("A1")}, cfG: {"b": []byte("A1g")}}})
	cPut(t, e, &hbase.Put{Table: e.b, Row: []byte("gm/1"), Values: hbase.Values{cfF: {"a": []byte("B1")}}})
	cPut(t, e, &hbase.Put{Table: e.a, Row: []byte("gm/2"), Values: hbase.Values{cfG: {"c": []byte("A2")}}})
	gets := []*hbase.Get{
		{Table: e.a, Row: []byte("gm/1")},
		{Table: e.b, Row: []byte("gm/1")},
		{Table: e.a, Row: []byte("gm/missing")},
		{Table: e.b, Row: []byte("gm/2")}, // exists in a only
		{Table: e.a, Row: []byte("gm/2"), Families: []string{cfG}},
		{Table: e.a, Row: []byte("gm/1"), Families: []string{cfG}},
		{Table: e.a, Row: []byte("gm/1")}, // the same get twice
	}
	want := [][]string{
		{`f:"a"="A1"`, `g:"b"="A1g"`},
		{`f:"a"="B1"`},
		nil,
		nil,
		{`g:"c"="A2"`},
		{`g:"b"="A1g"`},
		{`f:"a"="A1"`, `g:"b"="A1g"`},
	}
	rs, err := e.st.GetMany(e.ctx, gets)
	if err != nil {
		t.Fatalf("GetMany: %v", err)
	}
	if len(rs) != len(gets) {
		t.Fatalf("GetMany returned %d results for %d gets", len(rs), len(gets))
	}
	for i, r := range rs {
		cWantCells(t, fmt.Sprintf("result %d (%s %q)", i, gets[i].Table, gets[i].Row), r, false, want[i]...)
		if r.Exists() && !bytes.Equal(r.Row, gets[i].Row) {
			t.Errorf("result %d: Row = %q, want %q", i, r.Row, gets[i].Row)
		}
	}
	if rs, err := e.st.GetMany(e.ctx, nil); err != nil || len(rs) != 0 {
		t.Errorf("GetMany(nil) = %d results, %v", len(rs), err)
	}
}

func cPutManyDeleteMany(t *testing.T, e *cEnv) {
	const n = 40
	var puts []*hbase.Put
	for i := range n {
		row := []byte(fmt.Sprintf("pm/%03d", i))
		puts = append(puts,
			&hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfF: {"n": []byte(fmt.Sprint(i))}}},
			&hbase.Put{Table: e.b, Row: row, Values: hbase.Values{cfF: {"n": []byte(fmt.Sprint(-i))}}})
	}
	// Two puts of one row in one batch: both apply.
	puts = append(puts,
		&hbase.Put{Table: e.a, Row: []byte("pm/dup"), Values: hbase.Values{cfF: {"a": []byte("1")}}},
		&hbase.Put{Table: e.a, Row: []byte("pm/dup"), Values: hbase.Values{cfG: {"b": []byte("2")}}})
	rand.Shuffle(len(puts), func(i, j int) { puts[i], puts[j] = puts[j], puts[i] })
	if err := e.st.PutMany(e.ctx, puts); err != nil {
		t.Fatalf("PutMany: %v", err)
	}
	if err := e.st.PutMany(e.ctx, nil); err != nil {
		t.Errorf("PutMany(nil): %v", err)
	}
	cWantCells(t, "row put twice in one batch", cGet(t, e, &hbase.Get{Table: e.a, Row: []byte("pm/dup")}), false, `f:"a"="1"`, `g:"b"="2"`)

	ra := cScan(t, e, &hbase.Scan{Table: e.a, Prefix: []byte("pm/0")})
	rb := cScan(t, e, &hbase.Scan{Table: e.b, Prefix: []byte("pm/0")})
	if len(ra) != n || len(rb) != n {
		t.Fatalf("after PutMany: %d rows in a, %d in b, want %d each", len(ra), len(rb), n)
	}
	for i := range n {
		if got, want := string(ra[i].Value(cfF, "n")), fmt.Sprint(i); got != want {
			t.Errorf("a row %d: n = %q, want %q", i, got, want)
		}
		if got, want := string(rb[i].Value(cfF, "n")), fmt.Sprint(-i); got != want {
			t.Errorf("b row %d: n = %q, want %q", i, got, want)
		}
	}

	var dels []*hbase.Delete
	var wantA, wantB []string
	for i := range n {
		row := fmt.Sprintf("pm/%03d", i)
		if i%2 == 0 {
			dels = append(dels, &hbase.Delete{Table: e.a, Row: []byte(row)})
			wantB = append(wantB, row)
		} else {
			dels = append(dels, &hbase.Delete{Table: e.b, Row: []byte(row), Values: hbase.Values{cfF: nil}})
			wantA = append(wantA, row)
		}
	}
	if err := e.st.DeleteMany(e.ctx, dels); err != nil {
		t.Fatalf("DeleteMany: %v", err)
	}
	if err := e.st.DeleteMany(e.ctx, nil); err != nil {
		t.Errorf("DeleteMany(nil): %v", err)
	}
	cWantRows(t, "a after DeleteMany", cScan(t, e, &hbase.Scan{Table: e.a, Prefix: []byte("pm/0")}), "", wantA...)
	cWantRows(t, "b after DeleteMany", cScan(t, e, &hbase.Scan{Table: e.b, Prefix: []byte("pm/0")}), "", wantB...)
}

func cScanRanges(t *testing.T, e *cEnv) {
	// Rows under "sc/"; every row has f:x = its rowkey; b and g also have g:y.
	for _, row := range []string{"sc/a", "sc/a/1", "sc/a/2", "sc/b", "sc/b/1", "sc/c"} {
		cPut(t, e, &hbase.Put{Table: e.a, Row: []byte(row), Values: hbase.Values{cfF: {"x": []byte(row)}}})
	}
	cPut(t, e, &hbase.Put{Table: e.a, Row: []byte("sc/b"), Values: hbase.Values{cfG: {"y": []byte("gb")}}})
	cPut(t, e, &hbase.Put{Table: e.a, Row: []byte("sc/g"), Values: hbase.Values{cfG: {"y": []byte("gg")}}})
	// Rows just outside the prefix.
	cPut(t, e, &hbase.Put{Table: e.a, Row: []byte("sc"), Values: hbase.Values{cfF: {"x": []byte("out")}}})
	cPut(t, e, &hbase.Put{Table: e.a, Row: []byte("sc0"), Values: hbase.Values{cfF: {"x": []byte("out")}}})

	cases := []struct {
		name string
		scan hbase.Scan
		want []string
	}{
		{"prefix", hbase.Scan{Prefix: []byte("sc/")}, []string{"a", "a/1", "a/2", "b", "b/1", "c", "g"}},
		{"prefix is a row", hbase.Scan{Prefix: []byte("sc/a")}, []string{"a", "a/1", "a/2"}},
		{"prefix of children", hbase.Scan{Prefix: []byte("sc/a/")}, []string{"a/1", "a/2"}},
		{"no match", hbase.Scan{Prefix: []byte("sc/zz")}, nil},
		{"start stop", hbase.Scan{Start: []byte("sc/a/2"), Stop: []byte("sc/c")}, []string{"a/2", "b", "b/1"}},
		{"start only", hbase.Scan{Start: []byte("sc/b/1"), Stop: []byte("sc0")}, []string{"b/1", "c", "g"}},
		{"prefix and start", hbase.Scan{Prefix: []byte("sc/"), Start: []byte("sc/b")}, []string{"b", "b/1", "c", "g"}},
		{"resume after cursor", hbase.Scan{Prefix: []byte("sc/"), Start: []byte("sc/a/1\x00")}, []string{"a/2", "b", "b/1", "c", "g"}},
		{"start before prefix", hbase.Scan{Prefix: []byte("sc/"), Start: []byte("s")}, []string{"a", "a/1", "a/2", "b", "b/1", "c", "g"}},
		{"prefix and stop", hbase.Scan{Prefix: []byte("sc/"), Stop: []byte("sc/b")}, []string{"a", "a/1", "a/2"}},
		{"limit", hbase.Scan{Prefix: []byte("sc/"), Limit: 2}, []string{"a", "a/1"}},
		{"limit beyond", hbase.Scan{Prefix: []byte("sc/"), Limit: 100}, []string{"a", "a/1", "a/2", "b", "b/1", "c", "g"}},
		{"prefix start limit", hbase.Scan{Prefix: []byte("sc/"), Start: []byte("sc/b"), Limit: 2}, []string{"b", "b/1"}},
		{"families g", hbase.Scan{Prefix: []byte("sc/"), Families: []string{cfG}}, []string{"b", "g"}},
		{"families f", hbase.Scan{Prefix: []byte("sc/"), Families: []string{cfF}}, []string{"a", "a/1", "a/2", "b", "b/1", "c"}},
		{"families g limit", hbase.Scan{Prefix: []byte("sc/"), Families: []string{cfG}, Limit: 1}, []string{"b"}},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			s := c.scan
			s.Table = e.a
			rs := cScan(t, e, &s)
			cWantRows(t, c.name, rs, "sc/", c.want...)
			for _, r := range rs {
				for _, cell := range r.Cells {
					if len(s.Families) > 0 && !slices.Contains(s.Families, cell.Family) {
						t.Errorf("row %q: cell of family %s, not asked for", r.Row, cell.Family)
					}
				}
				if x := r.Value(cfF, "x"); x != nil && string(x) != string(r.Row) {
					t.Errorf("row %q: f:x = %q", r.Row, x)
				}
			}
		})
	}
	// A row's cells in a scan: every family, HBase order.
	rs := cScan(t, e, &hbase.Scan{Table: e.a, Prefix: []byte("sc/b"), Limit: 1})
	if len(rs) == 1 {
		cWantCells(t, "scanned row sc/b", rs[0], false, `f:"x"="sc/b"`, `g:"y"="gb"`)
	}
}

func cScanWholeTable(t *testing.T, e *cEnv) {
	cPut(t, e, &hbase.Put{Table: e.b, Row: []byte("whole/\x00"), Values: hbase.Values{cfF: {"a": []byte("1")}}})
	cPut(t, e, &hbase.Put{Table: e.b, Row: []byte("whole/"), Values: hbase.Values{cfF: {"a": []byte("1")}}})
	rs := cScan(t, e, &hbase.Scan{Table: e.b})
	if len(rs) < 2 {
		t.Fatalf("whole-table scan returned %d rows", len(rs))
	}
	if !slices.IsSortedFunc(rs, func(x, y *hbase.Result) int { return bytes.Compare(x.Row, y.Row) }) {
		t.Errorf("whole-table scan is not in rowkey order: %q", cRowKeys(rs, ""))
	}
	seen := 0
	for i, r := range rs {
		if !r.Exists() {
			t.Errorf("row %q without cells", r.Row)
		}
		if i > 0 && bytes.Equal(r.Row, rs[i-1].Row) {
			t.Errorf("row %q returned twice", r.Row)
		}
		if string(r.Row) == "whole/" || string(r.Row) == "whole/\x00" {
			seen++
		}
	}
	if seen != 2 {
		t.Errorf("whole-table scan missed rows: saw %d of 2", seen)
	}
}

func cScanStopEarly(t *testing.T, e *cEnv) {
	for i := range 5 {
		cPut(t, e, &hbase.Put{Table: e.a, Row: []byte(fmt.Sprintf("stop/%d", i)), Values: hbase.Values{cfF: {"a": []byte("1")}}})
	}
	n := 0
	err := e.st.Scan(e.ctx, &hbase.Scan{Table: e.a, Prefix: []byte("stop/")}, func(*hbase.Result) error {
		n++
		if n == 2 {
			return hbase.ErrStopScan
		}
		return nil
	})
	if err != nil || n != 2 {
		t.Errorf("hbase.ErrStopScan after 2 rows: hbase.Scan = %v after %d rows, want nil after 2", err, n)
	}
	boom := errors.New("boom")
	n = 0
	err = e.st.Scan(e.ctx, &hbase.Scan{Table: e.a, Prefix: []byte("stop/")}, func(*hbase.Result) error {
		n++
		return fmt.Errorf("callback: %w", boom)
	})
	if !errors.Is(err, boom) || n != 1 {
		t.Errorf("callback error: hbase.Scan = %v after %d rows, want boom after 1", err, n)
	}
}

func cScanBinaryRowkeys(t *testing.T, e *cEnv) {
	const p = "bin/"
	suffixes := []string{"", "\x00", "\x00\x00", "\x00\x01", "\x01", "a", "a\x00", "a\x00b", "ab", "b",
		"\xff", "\xff\x00", "\xff\xff", "\xff\xff\xff"}
	shuffled := slices.Clone(suffixes)
	rand.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	var puts []*hbase.Put
	for _, s := range shuffled {
		puts = append(puts, &hbase.Put{Table: e.a, Row: []byte(p + s), Values: hbase.Values{cfF: {"k": []byte(p + s)}}})
	}
	// Half one by one, half in a batch.
	for _, put := range puts[:len(puts)/2] {
		cPut(t, e, put)
	}
	if err := e.st.PutMany(e.ctx, puts[len(puts)/2:]); err != nil {
		t.Fatalf("PutMany: %v", err)
	}
	sorted := slices.Clone(suffixes)
	slices.Sort(sorted)

	cases := []struct {
		name string
		scan hbase.Scan
		want []string
	}{
		{"all", hbase.Scan{Prefix: []byte(p)}, sorted},
		{"prefix a", hbase.Scan{Prefix: []byte(p + "a")}, []string{"a", "a\x00", "a\x00b", "ab"}},
		{"prefix a00", hbase.Scan{Prefix: []byte(p + "a\x00")}, []string{"a\x00", "a\x00b"}},
		{"prefix 00", hbase.Scan{Prefix: []byte(p + "\x00")}, []string{"\x00", "\x00\x00", "\x00\x01"}},
		{"prefix ff", hbase.Scan{Prefix: []byte(p + "\xff")}, []string{"\xff", "\xff\x00", "\xff\xff", "\xff\xff\xff"}},
		{"prefix ffff", hbase.Scan{Prefix: []byte(p + "\xff\xff")}, []string{"\xff\xff", "\xff\xff\xff"}},
		{"start stop 00..01", hbase.Scan{Start: []byte(p + "\x00"), Stop: []byte(p + "\x01")}, []string{"\x00", "\x00\x00", "\x00\x01"}},
		{"start stop a..a00b", hbase.Scan{Start: []byte(p + "a"), Stop: []byte(p + "a\x00b")}, []string{"a", "a\x00"}},
		{"stop is prefix row", hbase.Scan{Start: []byte(p), Stop: []byte(p + "\x00")}, []string{""}},
		{"resume after a", hbase.Scan{Prefix: []byte(p), Start: []byte(p + "a\x00")}, []string{"a\x00", "a\x00b", "ab", "b", "\xff", "\xff\x00", "\xff\xff", "\xff\xff\xff"}},
		{"resume after ff", hbase.Scan{Prefix: []byte(p), Start: []byte(p + "\xff\x00")}, []string{"\xff\x00", "\xff\xff", "\xff\xff\xff"}},
		{"limit 3", hbase.Scan{Prefix: []byte(p), Limit: 3}, sorted[:3]},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			s := c.scan
			s.Table = e.a
			rs := cScan(t, e, &s)
			cWantRows(t, c.name, rs, p, c.want...)
			for _, r := range rs {
				cWantCells(t, fmt.Sprintf("row %q", r.Row), r, false, fmt.Sprintf(`f:"k"=%q`, r.Row))
			}
		})
	}
	// Gets see exactly their own row, never a row the key is a prefix of.
	for _, s := range suffixes {
		r := cGet(t, e, &hbase.Get{Table: e.a, Row: []byte(p + s)})
		cWantCells(t, fmt.Sprintf("Get %q", p+s), r, false, fmt.Sprintf(`f:"k"=%q`, p+s))
	}
	if r := cGet(t, e, &hbase.Get{Table: e.a, Row: []byte(p + "a\x00\x00")}); r.Exists() {
		t.Errorf("Get of a missing binary row: %q", cCellStrings(r, false))
	}
}

func cCheckAndPutAbsent(t *testing.T, e *cEnv) {
	row := []byte("cap/absent")
	put := func(v string) *hbase.Put {
		return &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfF: {"a": []byte(v)}}}
	}
	ok, err := e.st.CheckAndPut(e.ctx, put("first"), cfF, "a", nil)
	if err != nil || !ok {
		t.Fatalf("first CheckAndPut(absent) = %v, %v; want true", ok, err)
	}
	ok, err = e.st.CheckAndPut(e.ctx, put("second"), cfF, "a", nil)
	if err != nil || ok {
		t.Fatalf("second CheckAndPut(absent) = %v, %v; want false", ok, err)
	}
	cWantCells(t, "after two CheckAndPut(absent)", cGet(t, e, &hbase.Get{Table: e.a, Row: row}), false, `f:"a"="first"`)
}

func cCheckAndPutValue(t *testing.T, e *cEnv) {
	row := []byte("cap/value")
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfF: {"lock": []byte("v1")}}})
	cases := []struct {
		name     string
		family   string
		qual     string
		expected []byte
		data     string
		applied  bool
	}{
		{"match", cfF, "lock", []byte("v1"), "one", true},
		{"mismatch", cfF, "lock", []byte("v2"), "two", false},
		{"prefix of the value", cfF, "lock", []byte("v"), "three", false},
		{"value expected, cell absent", cfF, "nolock", []byte("v1"), "four", false},
		{"absent expected, cell present", cfF, "lock", nil, "five", false},
		{"absent expected, cell absent", cfG, "lock", nil, "six", true},
	}
	want := ""
	for _, c := range cases {
		ok, err := e.st.CheckAndPut(e.ctx, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfG: {"data": []byte(c.data)}}},
			c.family, c.qual, c.expected)
		if err != nil || ok != c.applied {
			t.Errorf("%s: CheckAndPut = %v, %v; want %v", c.name, ok, err, c.applied)
		}
		if c.applied {
			want = c.data
		}
		if got := cGet(t, e, &hbase.Get{Table: e.a, Row: row}).Value(cfG, "data"); string(got) != want {
			t.Errorf("%s: g:data = %q, want %q", c.name, got, want)
		}
	}
	// Check one column, put the same one.
	ok, err := e.st.CheckAndPut(e.ctx, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfF: {"lock": []byte("v2")}}}, cfF, "lock", []byte("v1"))
	if err != nil || !ok {
		t.Errorf("CheckAndPut swapping the checked cell = %v, %v", ok, err)
	}
	if got := cGet(t, e, &hbase.Get{Table: e.a, Row: row}).Value(cfF, "lock"); string(got) != "v2" {
		t.Errorf("after swap: f:lock = %q", got)
	}
}

// cCheckAndPutEmptyValue pins HBase's rule: an expected nil (or empty) value
// matches an absent cell and also a cell whose value is empty.
func cCheckAndPutEmptyValue(t *testing.T, e *cEnv) {
	row := []byte("cap/empty")
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfF: {"e": {}}}})
	r := cGet(t, e, &hbase.Get{Table: e.a, Row: row})
	if c := r.Cell(cfF, "e"); c == nil || len(c.Value) != 0 {
		t.Fatalf("empty value cell: %+v", c)
	}
	ok, err := e.st.CheckAndPut(e.ctx, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfG: {"d": []byte("1")}}}, cfF, "e", nil)
	if err != nil || !ok {
		t.Errorf("CheckAndPut(expected nil) on an empty value = %v, %v; want true (HBase)", ok, err)
	}
	ok, err = e.st.CheckAndPut(e.ctx, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfG: {"d": []byte("2")}}}, cfF, "e", []byte{})
	if err != nil || !ok {
		t.Errorf("CheckAndPut(expected empty) on an empty value = %v, %v; want true", ok, err)
	}
	ok, err = e.st.CheckAndPut(e.ctx, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfG: {"d": []byte("3")}}}, cfG, "d", []byte{})
	if err != nil || ok {
		t.Errorf("CheckAndPut(expected empty) on a non-empty value = %v, %v; want false", ok, err)
	}
}

func cCheckAndDelete(t *testing.T, e *cEnv) {
	row := []byte("cad/1")
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfF: {"a": []byte("v"), "b": []byte("w")}, cfG: {"c": []byte("x")}}})
	cases := []struct {
		name     string
		del      *hbase.Delete
		qual     string
		expected []byte
		applied  bool
		after    []string
	}{
		{"mismatch", &hbase.Delete{Table: e.a, Row: row}, "a", []byte("nope"), false,
			[]string{`f:"a"="v"`, `f:"b"="w"`, `g:"c"="x"`}},
		{"absent expected, cell present", &hbase.Delete{Table: e.a, Row: row}, "a", nil, false,
			[]string{`f:"a"="v"`, `f:"b"="w"`, `g:"c"="x"`}},
		{"match, delete family g", &hbase.Delete{Table: e.a, Row: row, Values: hbase.Values{cfG: nil}}, "a", []byte("v"), true,
			[]string{`f:"a"="v"`, `f:"b"="w"`}},
		{"match, delete column f:b", &hbase.Delete{Table: e.a, Row: row, Values: hbase.Values{cfF: {"b": nil}}}, "a", []byte("v"), true,
			[]string{`f:"a"="v"`}},
		{"match, delete row", &hbase.Delete{Table: e.a, Row: row}, "a", []byte("v"), true, nil},
		{"deleted cell no longer matches", &hbase.Delete{Table: e.a, Row: row}, "a", []byte("v"), false, nil},
		{"absent expected, row absent", &hbase.Delete{Table: e.a, Row: row}, "a", nil, true, nil},
	}
	for _, c := range cases {
		ok, err := e.st.CheckAndDelete(e.ctx, c.del, cfF, c.qual, c.expected)
		if err != nil || ok != c.applied {
			t.Errorf("%s: CheckAndDelete = %v, %v; want %v", c.name, ok, err, c.applied)
		}
		cWantCells(t, c.name, cGet(t, e, &hbase.Get{Table: e.a, Row: row}), false, c.after...)
	}
}

func cIncrement(t *testing.T, e *cEnv) {
	row := []byte("inc/1")
	steps := []struct {
		qual   string
		amount int64
		want   int64
	}{
		{"n", 5, 5},
		{"n", 10, 15},
		{"n", -20, -5},
		{"n", 0, -5},
		{"m", -3, -3},
		{"n", 1 << 40, 1<<40 - 5},
	}
	for _, s := range steps {
		got, err := e.st.Increment(e.ctx, &hbase.Increment{Table: e.a, Row: row, Family: cfF, Qualifier: s.qual, Amount: s.amount})
		if err != nil || got != s.want {
			t.Errorf("Increment %s by %d = %d, %v; want %d", s.qual, s.amount, got, err, s.want)
		}
	}
	r := cGet(t, e, &hbase.Get{Table: e.a, Row: row})
	cWantCells(t, "counters as 8-byte big-endian", r, false,
		fmt.Sprintf(`f:"m"=%q`, cBE64(-3)), fmt.Sprintf(`f:"n"=%q`, cBE64(1<<40-5)))
	if c := r.Cell(cfF, "n"); c == nil || !cNearNow(c.Timestamp) {
		t.Errorf("counter cell timestamp: %+v", c)
	}

	// A counter written by Put is incremented from its value.
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfG: {"p": cBE64(100)}}})
	if got, err := e.st.Increment(e.ctx, &hbase.Increment{Table: e.a, Row: row, Family: cfG, Qualifier: "p", Amount: 1}); err != nil || got != 101 {
		t.Errorf("Increment of a put counter = %d, %v; want 101", got, err)
	}
	// A cell that is not 8 bytes long is not a counter.
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfG: {"s": []byte("abc")}}})
	if _, err := e.st.Increment(e.ctx, &hbase.Increment{Table: e.a, Row: row, Family: cfG, Qualifier: "s", Amount: 1}); err == nil {
		t.Errorf("Increment of a 3-byte cell: no error")
	}
	if got := cGet(t, e, &hbase.Get{Table: e.a, Row: row}).Value(cfG, "s"); string(got) != "abc" {
		t.Errorf("failed hbase.Increment changed the cell to %q", got)
	}
}

func cIncrementConcurrent(t *testing.T, e *cEnv) {
	const workers, each = 8, 25
	row := []byte("inc/concurrent")
	var mu sync.Mutex
	var got []int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range each {
				v, err := e.st.Increment(e.ctx, &hbase.Increment{Table: e.a, Row: row, Family: cfF, Qualifier: "n", Amount: 1})
				if err != nil {
					t.Errorf("Increment: %v", err)
					return
				}
				mu.Lock()
				got = append(got, v)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	slices.Sort(got)
	for i, v := range got {
		if v != int64(i+1) {
			t.Fatalf("concurrent increments returned %v..., want each of 1..%d once", got[:i+1], workers*each)
		}
	}
	if len(got) != workers*each {
		t.Fatalf("%d increments succeeded, want %d", len(got), workers*each)
	}
	if v := cGet(t, e, &hbase.Get{Table: e.a, Row: row}).Value(cfF, "n"); !bytes.Equal(v, cBE64(workers*each)) {
		t.Errorf("counter = %x, want %d", v, workers*each)
	}
}

func cCheckAndPutConcurrent(t *testing.T, e *cEnv) {
	const workers = 16
	row := []byte("cap/concurrent")
	var wg sync.WaitGroup
	wins := make(chan string, workers)
	start := make(chan struct{})
	for i := range workers {
		wg.Go(func() {
			<-start
			v := fmt.Sprintf("w%d", i)
			ok, err := e.st.CheckAndPut(e.ctx, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfF: {"owner": []byte(v)}}}, cfF, "owner", nil)
			if err != nil {
				t.Errorf("CheckAndPut: %v", err)
			}
			if ok {
				wins <- v
			}
		})
	}
	close(start)
	wg.Wait()
	close(wins)
	var winners []string
	for w := range wins {
		winners = append(winners, w)
	}
	if len(winners) != 1 {
		t.Fatalf("%d CheckAndPut(absent) calls won (%q), want exactly 1", len(winners), winners)
	}
	if v := cGet(t, e, &hbase.Get{Table: e.a, Row: row}).Value(cfF, "owner"); string(v) != winners[0] {
		t.Errorf("owner = %q, want the winner %q", v, winners[0])
	}
}

func cTTL(t *testing.T, e *cEnv) {
	old := time.Now().Add(-time.Hour).UnixMilli()
	row := []byte("ttl/1")
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Timestamp: old, Values: hbase.Values{cfTTL: {"old": []byte("gone")}, cfF: {"a": []byte("stays")}}})
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfTTL: {"new": []byte("here")}}})
	cWantCells(t, "expired cell", cGet(t, e, &hbase.Get{Table: e.a, Row: row}), false, `f:"a"="stays"`, `x:"new"="here"`)
	cWantCells(t, "expired cell, family x", cGet(t, e, &hbase.Get{Table: e.a, Row: row, Families: []string{cfTTL}, MaxVersions: 3}), false,
		`x:"new"="here"`)

	// A row holding only expired cells does not exist.
	cPut(t, e, &hbase.Put{Table: e.a, Row: []byte("ttl/2"), Timestamp: old, Values: hbase.Values{cfTTL: {"old": []byte("gone")}}})
	if r := cGet(t, e, &hbase.Get{Table: e.a, Row: []byte("ttl/2")}); r.Exists() {
		t.Errorf("row of expired cells: %q", cCellStrings(r, false))
	}
	cWantRows(t, "scan skips expired rows", cScan(t, e, &hbase.Scan{Table: e.a, Prefix: []byte("ttl/")}), "ttl/", "1")
	// An expired cell is absent to CheckAndPut too.
	ok, err := e.st.CheckAndPut(e.ctx, &hbase.Put{Table: e.a, Row: []byte("ttl/2"), Values: hbase.Values{cfTTL: {"old": []byte("again")}}}, cfTTL, "old", nil)
	if err != nil || !ok {
		t.Errorf("CheckAndPut(absent) on an expired cell = %v, %v; want true", ok, err)
	}
	cWantCells(t, "rewritten expired cell", cGet(t, e, &hbase.Get{Table: e.a, Row: []byte("ttl/2")}), false, `x:"old"="again"`)
}

func cContextCanceled(t *testing.T, e *cEnv) {
	for i := range 3 {
		cPut(t, e, &hbase.Put{Table: e.a, Row: []byte(fmt.Sprintf("ctx/%d", i)), Values: hbase.Values{cfF: {"a": []byte("1")}}})
	}
	ctx, cancel := context.WithCancel(e.ctx)
	cancel()
	if _, err := e.st.Get(ctx, &hbase.Get{Table: e.a, Row: []byte("ctx/0")}); !errors.Is(err, context.Canceled) {
		t.Errorf("Get with a canceled context: %v", err)
	}
	if err := e.st.Put(ctx, &hbase.Put{Table: e.a, Row: []byte("ctx/x"), Values: hbase.Values{cfF: {"a": []byte("1")}}}); !errors.Is(err, context.Canceled) {
		t.Errorf("Put with a canceled context: %v", err)
	}
	if err := e.st.Scan(ctx, &hbase.Scan{Table: e.a, Prefix: []byte("ctx/")}, func(*hbase.Result) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("Scan with a canceled context: %v", err)
	}
	// Canceled while scanning: the scan ends with the context's error.
	ctx, cancel = context.WithCancel(e.ctx)
	defer cancel()
	n := 0
	err := e.st.Scan(ctx, &hbase.Scan{Table: e.a, Prefix: []byte("ctx/")}, func(*hbase.Result) error {
		n++
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) || n != 1 {
		t.Errorf("Scan canceled in its first callback: %v after %d rows, want context.Canceled after 1", err, n)
	}
}

func cUnknownTable(t *testing.T, e *cEnv) {
	for _, table := range []string{
		conformanceNamespace + ":missing_" + e.suffix,
		"missing_ns_" + e.suffix + ":t",
	} {
		row := []byte("r")
		put := &hbase.Put{Table: table, Row: row, Values: hbase.Values{cfF: {"a": []byte("1")}}}
		del := &hbase.Delete{Table: table, Row: row}
		ops := map[string]func() error{
			"Get": func() error { _, err := e.st.Get(e.ctx, &hbase.Get{Table: table, Row: row}); return err },
			"GetMany": func() error {
				_, err := e.st.GetMany(e.ctx, []*hbase.Get{{Table: e.a, Row: row}, {Table: table, Row: row}})
				return err
			},
			"Put":        func() error { return e.st.Put(e.ctx, put) },
			"PutMany":    func() error { return e.st.PutMany(e.ctx, []*hbase.Put{put}) },
			"Delete":     func() error { return e.st.Delete(e.ctx, del) },
			"DeleteMany": func() error { return e.st.DeleteMany(e.ctx, []*hbase.Delete{del}) },
			"Scan": func() error {
				return e.st.Scan(e.ctx, &hbase.Scan{Table: table}, func(*hbase.Result) error { return nil })
			},
			"CheckAndPut": func() error {
				_, err := e.st.CheckAndPut(e.ctx, put, cfF, "a", nil)
				return err
			},
			"CheckAndDelete": func() error {
				_, err := e.st.CheckAndDelete(e.ctx, del, cfF, "a", nil)
				return err
			},
			"Increment": func() error {
				_, err := e.st.Increment(e.ctx, &hbase.Increment{Table: table, Row: row, Family: cfF, Qualifier: "n", Amount: 1})
				return err
			},
		}
		for _, name := range slices.Sorted(maps.Keys(ops)) {
			if err := ops[name](); !errors.Is(err, hbase.ErrTableNotFound) {
				t.Errorf("%s on table %s: error %v, want hbase.ErrTableNotFound", name, table, err)
			}
		}
	}
}

func cUnknownFamily(t *testing.T, e *cEnv) {
	row := []byte("fam/1")
	if err := e.st.Put(e.ctx, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{"nope": {"a": []byte("1")}}}); !errors.Is(err, hbase.ErrFamilyNotFound) {
		t.Errorf("Put to an unknown family: %v, want hbase.ErrFamilyNotFound", err)
	}
	if err := e.st.Put(e.ctx, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfF: {"a": []byte("1")}, "nope": {"a": []byte("1")}}}); !errors.Is(err, hbase.ErrFamilyNotFound) {
		t.Errorf("Put to a known and an unknown family: %v, want hbase.ErrFamilyNotFound", err)
	}
	if err := e.st.Delete(e.ctx, &hbase.Delete{Table: e.a, Row: row, Values: hbase.Values{"nope": nil}}); !errors.Is(err, hbase.ErrFamilyNotFound) {
		t.Errorf("Delete of an unknown family: %v, want hbase.ErrFamilyNotFound", err)
	}
	if _, err := e.st.Increment(e.ctx, &hbase.Increment{Table: e.a, Row: row, Family: "nope", Qualifier: "n", Amount: 1}); !errors.Is(err, hbase.ErrFamilyNotFound) {
		t.Errorf("Increment in an unknown family: %v, want hbase.ErrFamilyNotFound", err)
	}
	if _, err := e.st.Get(e.ctx, &hbase.Get{Table: e.a, Row: row, Families: []string{"nope"}}); err == nil {
		t.Errorf("Get of an unknown family: no error")
	}
}
