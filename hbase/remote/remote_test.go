package remote

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/hbase/hbasetest"
	"github.com/weibohbase/gateway/internal/hbasezk"
)

// These tests run against the real HBase started by `make hbase-up`, whose
// ZooKeeper address arrives in GATEWAY_TEST_HBASE_ZK (make test sets it).

// newTestHBase returns a Store on the test HBase, closed when t ends. Without
// GATEWAY_TEST_HBASE_ZK it skips t, except in CI (CI=true) where it fails t:
// there the HBase tests must run. The HBase is shared by every test and test
// binary of the run: tests use tables or row prefixes of their own.
func newTestHBase(t testing.TB) *Store {
	t.Helper()
	zk := hbasezk.Addr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	st, err := Open(ctx, zk)
	if err != nil {
		t.Fatalf("Open(%s): %v", zk, err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// The fixed test tables of this file. Their names carry a version: bump it
// when their specs change (EnsureTables leaves existing tables as they are).
const (
	gtNamespace = "gwtest"
	gtTableA    = gtNamespace + ":gohbase_a_v1" // families f (3 versions), g, ttl (5 s)
	gtTableB    = gtNamespace + ":gohbase_b_v1" // family f; two regions, split at "m"
)

var gtSpecs = []hbase.TableSpec{
	{Name: "gohbase_a_v1", Families: []hbase.FamilySpec{
		{Name: "f", MaxVersions: 3},
		{Name: "g", Bloom: hbase.BloomRowCol, InMemory: true},
		{Name: "ttl", TTL: 5 * time.Second, Bloom: hbase.BloomNone},
	}},
	{Name: "gohbase_b_v1", Families: []hbase.FamilySpec{{Name: "f"}}, SplitKeys: [][]byte{[]byte("m")}},
}

// gtStore returns a store with the fixed test tables in place.
func gtStore(t *testing.T) *Store {
	t.Helper()
	st := newTestHBase(t)
	if err := st.EnsureTables(tctx(t), gtNamespace, gtSpecs); err != nil {
		t.Fatalf("EnsureTables: %v", err)
	}
	return st
}

// tctx is a context for one test step.
func tctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// rowPrefix returns a prefix unique to this test and run, for its rows.
func rowPrefix(t *testing.T) string {
	return fmt.Sprintf("%s/%x/", t.Name(), rand.Uint64())
}

// uniqueNamespace returns a fresh namespace name dropped when t ends.
func uniqueNamespace(t *testing.T, st *Store) string {
	ns := fmt.Sprintf("gwtest_%d_%x", time.Now().Unix(), rand.Uint32())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := st.DropNamespace(ctx, ns); err != nil {
			t.Errorf("DropNamespace(%s): %v", ns, err)
		}
	})
	return ns
}

func be64(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

// cellsString renders cells compactly for comparisons: "f:q=v@ts ...".
func cellsString(cells []*hbase.Cell, withTS bool) string {
	var b strings.Builder
	for i, c := range cells {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s:%s=%s", c.Family, c.Qualifier, c.Value)
		if withTS {
			fmt.Fprintf(&b, "@%d", c.Timestamp)
		}
	}
	return b.String()
}

func rowsString(rows []*hbase.Result) string {
	var s []string
	for _, r := range rows {
		s = append(s, string(r.Row))
	}
	return strings.Join(s, ",")
}

func mustPut(t *testing.T, st *Store, p *hbase.Put) {
	t.Helper()
	if err := st.Put(tctx(t), p); err != nil {
		t.Fatalf("Put %s/%q: %v", p.Table, p.Row, err)
	}
}

func mustGet(t *testing.T, st *Store, g *hbase.Get) *hbase.Result {
	t.Helper()
	r, err := st.Get(tctx(t), g)
	if err != nil {
		t.Fatalf("Get %s/%q: %v", g.Table, g.Row, err)
	}
	return r
}

func TestBackendAndPing(t *testing.T) {
	st := newTestHBase(t)
	if got := st.Backend(); got != hbase.BackendHBase {
		t.Errorf("Backend() = %q, want %q", got, hbase.BackendHBase)
	}
	if err := st.Ping(tctx(t)); err != nil {
		t.Errorf("Ping: %v", err)
	}
	// Closing twice is fine.
	if err := st.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := st.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestOpenUnreachable(t *testing.T) {
	newTestHBase(t) // skip/fail like the other HBase tests
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	// gohbase keeps retrying ZooKeeper in the background even after Close;
	// keep its complaints out of the test output.
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	st, err := Open(ctx, "127.0.0.1:1", WithLogger(quiet))
	if err == nil {
		_ = st.Close()
		t.Fatal("Open on a dead quorum succeeded")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Open error = %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Open took %v with a 2s context", d)
	}
	if _, err := Open(context.Background(), " "); err == nil {
		t.Error("Open with an empty quorum succeeded")
	}
}

func TestEnsureTables(t *testing.T) {
	st := newTestHBase(t)
	ns := uniqueNamespace(t, st)
	specs := []hbase.TableSpec{
		{Name: "one", Families: []hbase.FamilySpec{{Name: "f", MaxVersions: 2}, {Name: "g", TTL: time.Hour}}},
		{Name: "split", Families: []hbase.FamilySpec{{Name: "f"}},
			// Unsorted, with a duplicate and an empty key: EnsureTables cleans them.
			SplitKeys: [][]byte{[]byte("r"), []byte("h"), nil, []byte("h")}},
	}

	// Concurrent first calls: one creates, the others find the namespace and
	// tables existing (or being created) and must succeed all the same.
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = st.EnsureTables(tctx(t), ns, specs)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("concurrent EnsureTables #%d: %v", i, err)
		}
	}
	// Idempotent.
	if err := st.EnsureTables(tctx(t), ns, specs); err != nil {
		t.Fatalf("second EnsureTables: %v", err)
	}
	// Adding a table to an existing namespace.
	more := append(specs, hbase.TableSpec{Name: "later", Families: []hbase.FamilySpec{{Name: "f"}}})
	if err := st.EnsureTables(tctx(t), ns, more); err != nil {
		t.Fatalf("EnsureTables with one more table: %v", err)
	}

	// The tables are usable at once, in every region.
	split := ns + ":split"
	for _, row := range []string{"a", "h", "k", "r", "z"} {
		mustPut(t, st, &hbase.Put{Table: split, Row: []byte(row), Values: hbase.Values{"f": {"q": []byte(row)}}})
	}
	rows, err := hbase.ScanAll(tctx(t), st, &hbase.Scan{Table: split})
	if err != nil {
		t.Fatalf("scan across regions: %v", err)
	}
	if got := rowsString(rows); got != "a,h,k,r,z" {
		t.Errorf("scan across regions = %s, want a,h,k,r,z", got)
	}
	mustPut(t, st, &hbase.Put{Table: ns + ":later", Row: []byte("x"), Values: hbase.Values{"f": {"q": []byte("1")}}})

	// MaxVersions reached the family descriptor: 2 versions kept of f, 1 of g.
	one := ns + ":one"
	now := time.Now().UnixMilli() // g has a TTL of an hour: recent timestamps
	for ts := now - 3000; ts < now; ts += 1000 {
		mustPut(t, st, &hbase.Put{Table: one, Row: []byte("r"), Timestamp: ts,
			Values: hbase.Values{"f": {"q": be64(ts)}, "g": {"q": be64(ts)}}})
	}
	r := mustGet(t, st, &hbase.Get{Table: one, Row: []byte("r"), MaxVersions: 10})
	var f, g int
	for _, c := range r.Cells {
		switch c.Family {
		case "f":
			f++
		case "g":
			g++
		}
	}
	if f != 2 || g != 1 {
		t.Errorf("versions kept: f=%d g=%d, want 2 and 1 (cells %s)", f, g, cellsString(r.Cells, true))
	}

	// Invalid specs are refused before anything is sent.
	for _, bad := range []hbase.TableSpec{
		{Name: "", Families: []hbase.FamilySpec{{Name: "f"}}},
		{Name: "a:b", Families: []hbase.FamilySpec{{Name: "f"}}},
		{Name: "nofam"},
		{Name: "badbloom", Families: []hbase.FamilySpec{{Name: "f", Bloom: "SOMETIMES"}}},
	} {
		if err := st.EnsureTables(tctx(t), ns, []hbase.TableSpec{bad}); err == nil {
			t.Errorf("EnsureTables(%+v) succeeded", bad)
		}
	}
}

func TestNotFoundErrors(t *testing.T) {
	st := gtStore(t)
	missing := gtNamespace + ":no_such_table"
	row := []byte(rowPrefix(t) + "r")
	ctx := tctx(t)
	checks := []struct {
		name string
		run  func() error
		want error
	}{
		{"Get missing table", func() error {
			_, err := st.Get(ctx, &hbase.Get{Table: missing, Row: row})
			return err
		}, hbase.ErrTableNotFound},
		{"Get missing namespace", func() error {
			_, err := st.Get(ctx, &hbase.Get{Table: "no_such_ns_gw:t", Row: row})
			return err
		}, hbase.ErrTableNotFound},
		{"Put missing table", func() error {
			return st.Put(ctx, &hbase.Put{Table: missing, Row: row, Values: hbase.Values{"f": {"q": []byte("v")}}})
		}, hbase.ErrTableNotFound},
		{"Scan missing table", func() error {
			_, err := hbase.ScanAll(ctx, st, &hbase.Scan{Table: missing})
			return err
		}, hbase.ErrTableNotFound},
		{"GetMany with one missing table", func() error {
			_, err := st.GetMany(ctx, []*hbase.Get{{Table: gtTableA, Row: row}, {Table: missing, Row: row}})
			return err
		}, hbase.ErrTableNotFound},
		{"PutMany missing table", func() error {
			return st.PutMany(ctx, []*hbase.Put{{Table: missing, Row: row, Values: hbase.Values{"f": {"q": nil}}}})
		}, hbase.ErrTableNotFound},
		{"Increment missing table", func() error {
			_, err := st.Increment(ctx, &hbase.Increment{Table: missing, Row: row, Family: "f", Qualifier: "n", Amount: 1})
			return err
		}, hbase.ErrTableNotFound},
		{"CheckAndDelete missing table", func() error {
			_, err := st.CheckAndDelete(ctx, &hbase.Delete{Table: missing, Row: row}, "f", "q", nil)
			return err
		}, hbase.ErrTableNotFound},
		{"Put missing family", func() error {
			return st.Put(ctx, &hbase.Put{Table: gtTableA, Row: row, Values: hbase.Values{"nofam": {"q": []byte("v")}}})
		}, hbase.ErrFamilyNotFound},
		{"PutMany missing family", func() error {
			return st.PutMany(ctx, []*hbase.Put{
				{Table: gtTableA, Row: row, Values: hbase.Values{"f": {"q": []byte("v")}}},
				{Table: gtTableA, Row: row, Values: hbase.Values{"nofam": {"q": []byte("v")}}},
			})
		}, hbase.ErrFamilyNotFound},
		{"CheckAndPut missing family", func() error {
			// A row of its own: the PutMany above wrote f:q of row, so the check would fail first.
			fresh := []byte(rowPrefix(t) + "fresh")
			_, err := st.CheckAndPut(ctx, &hbase.Put{Table: gtTableA, Row: fresh, Values: hbase.Values{"nofam": {"q": []byte("v")}}}, "f", "q", nil)
			return err
		}, hbase.ErrFamilyNotFound},
		{"Get missing family", func() error {
			_, err := st.Get(ctx, &hbase.Get{Table: gtTableA, Row: row, Families: []string{"nofam"}})
			return err
		}, hbase.ErrFamilyNotFound},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			err := c.run()
			if !errors.Is(err, c.want) {
				t.Fatalf("error = %v, want %v", err, c.want)
			}
			if msg := err.Error(); strings.Contains(msg, "\tat ") || len(msg) > 400 {
				t.Errorf("error message carries a Java stack trace or is too long: %q", msg)
			}
		})
	}
}

func TestGetPut(t *testing.T) {
	st := gtStore(t)
	p := rowPrefix(t)
	row := []byte(p + "row")

	// A missing row: no cells, no error, Row set.
	r := mustGet(t, st, &hbase.Get{Table: gtTableA, Row: row})
	if r.Exists() || !bytes.Equal(r.Row, row) {
		t.Fatalf("missing row: %+v", r)
	}

	mustPut(t, st, &hbase.Put{Table: gtTableA, Row: row, Values: hbase.Values{
		"f": {"b": []byte("fb"), "a": []byte("fa"), "empty": {}},
		"g": {"x": []byte("gx")},
	}})
	r = mustGet(t, st, &hbase.Get{Table: gtTableA, Row: row})
	if got, want := cellsString(r.Cells, false), "f:a=fa f:b=fb f:empty= g:x=gx"; got != want {
		t.Errorf("Get = %s, want %s", got, want)
	}
	for _, c := range r.Cells {
		if d := time.Since(time.UnixMilli(c.Timestamp)); d < -time.Minute || d > time.Minute {
			t.Errorf("cell %s:%s timestamp %d is not ms near now", c.Family, c.Qualifier, c.Timestamp)
		}
	}
	if v := r.Value("f", "empty"); v == nil || len(v) != 0 {
		t.Errorf("empty value = %v, want empty non-nil", v)
	}

	// Families filter.
	r = mustGet(t, st, &hbase.Get{Table: gtTableA, Row: row, Families: []string{"g"}})
	if got := cellsString(r.Cells, false); got != "g:x=gx" {
		t.Errorf("Get families [g] = %s", got)
	}

	// Versions with explicit timestamps (family f keeps 3).
	vrow := []byte(p + "versions")
	for ts := int64(1_000); ts <= 4_000; ts += 1_000 {
		mustPut(t, st, &hbase.Put{Table: gtTableA, Row: vrow, Timestamp: ts, Values: hbase.Values{"f": {"q": []byte(fmt.Sprint(ts))}}})
	}
	cases := []struct {
		max  int
		want string
	}{
		{0, "f:q=4000@4000"},
		{1, "f:q=4000@4000"},
		{2, "f:q=4000@4000 f:q=3000@3000"},
		{10, "f:q=4000@4000 f:q=3000@3000 f:q=2000@2000"}, // the family keeps 3
	}
	for _, c := range cases {
		r := mustGet(t, st, &hbase.Get{Table: gtTableA, Row: vrow, MaxVersions: c.max})
		if got := cellsString(r.Cells, true); got != c.want {
			t.Errorf("MaxVersions %d: %s, want %s", c.max, got, c.want)
		}
	}
	// An older timestamp does not hide the newest.
	mustPut(t, st, &hbase.Put{Table: gtTableA, Row: vrow, Timestamp: 500, Values: hbase.Values{"f": {"q": []byte("old")}}})
	if v := mustGet(t, st, &hbase.Get{Table: gtTableA, Row: vrow}).Value("f", "q"); string(v) != "4000" {
		t.Errorf("newest after an older put = %q", v)
	}

	// TTL: a cell older than the family's 5 s TTL is not returned.
	trow := []byte(p + "ttl")
	old := time.Now().Add(-time.Minute).UnixMilli()
	mustPut(t, st, &hbase.Put{Table: gtTableA, Row: trow, Timestamp: old, Values: hbase.Values{"ttl": {"old": []byte("x")}}})
	mustPut(t, st, &hbase.Put{Table: gtTableA, Row: trow, Values: hbase.Values{"ttl": {"new": []byte("y")}}})
	if got := cellsString(mustGet(t, st, &hbase.Get{Table: gtTableA, Row: trow}).Cells, false); got != "ttl:new=y" {
		t.Errorf("TTL family = %s, want ttl:new=y", got)
	}

	// Binary rowkeys and qualifiers.
	brow := []byte{0, 0xff, 0x10, 0}
	brow = append([]byte(p), brow...)
	mustPut(t, st, &hbase.Put{Table: gtTableA, Row: brow, Values: hbase.Values{"f": {"\x00\xff": {1, 2, 3}}}})
	if v := mustGet(t, st, &hbase.Get{Table: gtTableA, Row: brow}).Value("f", "\x00\xff"); !bytes.Equal(v, []byte{1, 2, 3}) {
		t.Errorf("binary row = %v", v)
	}
}

func TestDelete(t *testing.T) {
	st := gtStore(t)
	p := rowPrefix(t)
	full := func(row string) {
		t.Helper()
		for ts := int64(1); ts <= 2; ts++ {
			mustPut(t, st, &hbase.Put{Table: gtTableA, Row: []byte(row), Timestamp: ts, Values: hbase.Values{
				"f": {"a": []byte("1"), "b": []byte("2")},
				"g": {"c": []byte("3")},
			}})
		}
	}
	cases := []struct {
		name   string
		values hbase.Values
		want   string // remaining cells, all versions
	}{
		{"whole row", nil, ""},
		{"whole family (nil map)", hbase.Values{"f": nil}, "g:c=3@2"},
		{"whole family (empty map)", hbase.Values{"f": {}}, "g:c=3@2"},
		{"one column, all versions", hbase.Values{"f": {"a": nil}}, "f:b=2@2 f:b=2@1 g:c=3@2"},
		{"columns of two families", hbase.Values{"f": {"b": []byte("ignored")}, "g": {"c": nil}}, "f:a=1@2 f:a=1@1"},
		{"missing column", hbase.Values{"f": {"zz": nil}}, "f:a=1@2 f:a=1@1 f:b=2@2 f:b=2@1 g:c=3@2"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			row := fmt.Sprintf("%sdel%d", p, i)
			full(row)
			if err := st.Delete(tctx(t), &hbase.Delete{Table: gtTableA, Row: []byte(row), Values: c.values}); err != nil {
				t.Fatalf("Delete: %v", err)
			}
			r := mustGet(t, st, &hbase.Get{Table: gtTableA, Row: []byte(row), MaxVersions: 10})
			if got := cellsString(r.Cells, true); got != c.want {
				t.Errorf("after delete: %s, want %s", got, c.want)
			}
		})
	}
	// Deleting a missing row is not an error.
	if err := st.Delete(tctx(t), &hbase.Delete{Table: gtTableA, Row: []byte(p + "never")}); err != nil {
		t.Errorf("Delete of a missing row: %v", err)
	}
}

func TestManyAcrossTables(t *testing.T) {
	st := gtStore(t)
	p := rowPrefix(t)
	rowA := []byte(p + "a")
	rowB1 := []byte("a" + p) // first region of table B
	rowB2 := []byte("z" + p) // second region
	puts := []*hbase.Put{
		{Table: gtTableA, Row: rowA, Values: hbase.Values{"f": {"q": []byte("A")}}},
		{Table: gtTableB, Row: rowB1, Values: hbase.Values{"f": {"q": []byte("B1")}}},
		{Table: gtTableB, Row: rowB2, Values: hbase.Values{"f": {"q": []byte("B2")}}},
		{Table: gtTableA, Row: rowA, Values: hbase.Values{"g": {"q": []byte("A2")}}},
	}
	if err := st.PutMany(tctx(t), puts); err != nil {
		t.Fatalf("PutMany: %v", err)
	}
	gets := []*hbase.Get{
		{Table: gtTableB, Row: rowB2},
		{Table: gtTableA, Row: []byte(p + "missing")},
		{Table: gtTableA, Row: rowA},
		{Table: gtTableB, Row: rowB1},
		{Table: gtTableA, Row: rowA, Families: []string{"g"}},
		{Table: gtTableB, Row: rowB2}, // duplicate
	}
	res, err := st.GetMany(tctx(t), gets)
	if err != nil {
		t.Fatalf("GetMany: %v", err)
	}
	want := []string{"f:q=B2", "", "f:q=A g:q=A2", "f:q=B1", "g:q=A2", "f:q=B2"}
	if len(res) != len(want) {
		t.Fatalf("GetMany returned %d results for %d gets", len(res), len(gets))
	}
	for i := range want {
		if got := cellsString(res[i].Cells, false); got != want[i] || !bytes.Equal(res[i].Row, gets[i].Row) {
			t.Errorf("GetMany[%d] = %q %s, want %q %s", i, res[i].Row, got, gets[i].Row, want[i])
		}
	}
	if res, err := st.GetMany(tctx(t), nil); err != nil || len(res) != 0 {
		t.Errorf("GetMany(nil) = %v, %v", res, err)
	}

	if err := st.DeleteMany(tctx(t), []*hbase.Delete{
		{Table: gtTableB, Row: rowB1},
		{Table: gtTableA, Row: rowA, Values: hbase.Values{"g": nil}},
		{Table: gtTableB, Row: rowB2, Values: hbase.Values{"f": {"q": nil}}},
	}); err != nil {
		t.Fatalf("DeleteMany: %v", err)
	}
	res, err = st.GetMany(tctx(t), []*hbase.Get{{Table: gtTableA, Row: rowA}, {Table: gtTableB, Row: rowB1}, {Table: gtTableB, Row: rowB2}})
	if err != nil {
		t.Fatalf("GetMany after DeleteMany: %v", err)
	}
	for i, want := range []string{"f:q=A", "", ""} {
		if got := cellsString(res[i].Cells, false); got != want {
			t.Errorf("after DeleteMany [%d] = %s, want %s", i, got, want)
		}
	}
	if err := st.PutMany(tctx(t), nil); err != nil {
		t.Errorf("PutMany(nil): %v", err)
	}
	if err := st.DeleteMany(tctx(t), nil); err != nil {
		t.Errorf("DeleteMany(nil): %v", err)
	}

	// A larger batch: 300 rows in one PutMany, read back with one GetMany.
	var bigPuts []*hbase.Put
	var bigGets []*hbase.Get
	for i := range 300 {
		table, row := gtTableA, []byte(fmt.Sprintf("%sbig%03d", p, i))
		if i%2 == 1 {
			table, row = gtTableB, []byte(fmt.Sprintf("%c%sbig%03d", "az"[i%4/2], p, i))
		}
		bigPuts = append(bigPuts, &hbase.Put{Table: table, Row: row, Values: hbase.Values{"f": {"i": be64(int64(i))}}})
		bigGets = append(bigGets, &hbase.Get{Table: table, Row: row})
	}
	if err := st.PutMany(tctx(t), bigPuts); err != nil {
		t.Fatalf("PutMany 300: %v", err)
	}
	res, err = st.GetMany(tctx(t), bigGets)
	if err != nil {
		t.Fatalf("GetMany 300: %v", err)
	}
	for i, r := range res {
		if v := r.Value("f", "i"); !bytes.Equal(v, be64(int64(i))) {
			t.Fatalf("GetMany 300 [%d] = %v", i, v)
		}
	}
}

func TestScan(t *testing.T) {
	st := gtStore(t)
	p := rowPrefix(t)
	// Rows in table B (split at "m"): keys span both regions.
	keys := []string{"a1", "a2", "ab", "b", "m", "ma", "mb", "x", "z"}
	var puts []*hbase.Put
	for _, k := range keys {
		puts = append(puts, &hbase.Put{Table: gtTableB, Row: []byte(k + "|" + p), Values: hbase.Values{"f": {"k": []byte(k)}}})
	}
	// Table A rows under this test's prefix, two families.
	for _, k := range keys {
		puts = append(puts, &hbase.Put{Table: gtTableA, Row: []byte(p + k), Values: hbase.Values{"f": {"k": []byte(k)}, "g": {"k": []byte(k)}}})
	}
	if err := st.PutMany(tctx(t), puts); err != nil {
		t.Fatal(err)
	}
	pre := func(s string) []byte { return []byte(p + s) }
	cases := []struct {
		name string
		scan hbase.Scan
		want string // values of f:k, comma-separated
	}{
		{"prefix", hbase.Scan{Prefix: []byte(p)}, "a1,a2,ab,b,m,ma,mb,x,z"},
		{"sub-prefix", hbase.Scan{Prefix: pre("a")}, "a1,a2,ab"},
		{"prefix and start", hbase.Scan{Prefix: pre("a"), Start: pre("a2")}, "a2,ab"},
		{"prefix and stop", hbase.Scan{Prefix: []byte(p), Stop: pre("m")}, "a1,a2,ab,b"},
		{"start/stop", hbase.Scan{Start: pre("ab"), Stop: pre("mb")}, "ab,b,m,ma"},
		{"start before prefix", hbase.Scan{Prefix: pre("m"), Start: pre("a")}, "m,ma,mb"},
		{"limit", hbase.Scan{Prefix: []byte(p), Limit: 4}, "a1,a2,ab,b"},
		{"limit beyond rows", hbase.Scan{Prefix: pre("m"), Limit: 100}, "m,ma,mb"},
		{"empty range", hbase.Scan{Start: pre("x"), Stop: pre("b")}, ""},
		{"start equals stop", hbase.Scan{Start: pre("b"), Stop: pre("b")}, ""},
		{"no match", hbase.Scan{Prefix: pre("q")}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc := c.scan
			sc.Table = gtTableA
			rows, err := hbase.ScanAll(tctx(t), st, &sc)
			if err != nil {
				t.Fatalf("Scan: %v", err)
			}
			var got []string
			for _, r := range rows {
				got = append(got, string(r.Value("f", "k")))
				if !bytes.HasPrefix(r.Row, []byte(p)) {
					t.Errorf("row %q outside the test's prefix", r.Row)
				}
			}
			if g := strings.Join(got, ","); g != c.want {
				t.Errorf("Scan = %s, want %s", g, c.want)
			}
		})
	}

	t.Run("families", func(t *testing.T) {
		rows, err := hbase.ScanAll(tctx(t), st, &hbase.Scan{Table: gtTableA, Prefix: pre("a"), Families: []string{"g"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 3 {
			t.Fatalf("%d rows", len(rows))
		}
		for _, r := range rows {
			if got := cellsString(r.Cells, false); !strings.HasPrefix(got, "g:k=") || strings.Contains(got, " ") {
				t.Errorf("row %q cells %s, want only g", r.Row, got)
			}
		}
	})

	t.Run("across regions", func(t *testing.T) {
		// Table B's rows end with "|prefix"; scan the whole table and keep ours.
		rows, err := hbase.ScanAll(tctx(t), st, &hbase.Scan{Table: gtTableB})
		if err != nil {
			t.Fatal(err)
		}
		var got, want []string
		for _, r := range rows {
			if bytes.HasSuffix(r.Row, []byte("|"+p)) {
				got = append(got, string(r.Row))
			}
		}
		for _, k := range keys {
			want = append(want, k+"|"+p)
		}
		sort.Strings(want) // "m|…" sorts after "ma|…" and "mb|…"
		if g, w := strings.Join(got, ","), strings.Join(want, ","); g != w {
			t.Errorf("full scan of B = %s, want %s", g, w)
		}
		rows, err = hbase.ScanAll(tctx(t), st, &hbase.Scan{Table: gtTableB, Start: []byte("l"), Stop: []byte("n"), Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if r.Row[0] != 'm' {
				t.Errorf("row %q outside [l, n)", r.Row)
			}
		}
	})

	t.Run("early stop", func(t *testing.T) {
		n := 0
		err := st.Scan(tctx(t), &hbase.Scan{Table: gtTableA, Prefix: []byte(p)}, func(r *hbase.Result) error {
			n++
			if n == 2 {
				return hbase.ErrStopScan
			}
			return nil
		})
		if err != nil || n != 2 {
			t.Errorf("hbase.ErrStopScan: err=%v after %d rows, want nil after 2", err, n)
		}
		boom := errors.New("boom")
		err = st.Scan(tctx(t), &hbase.Scan{Table: gtTableA, Prefix: []byte(p)}, func(r *hbase.Result) error { return boom })
		if !errors.Is(err, boom) {
			t.Errorf("callback error: got %v", err)
		}
		// The store still works after early stops (scanners were closed).
		if _, err := hbase.ScanAll(tctx(t), st, &hbase.Scan{Table: gtTableA, Prefix: []byte(p)}); err != nil {
			t.Errorf("scan after early stops: %v", err)
		}
	})

	t.Run("context canceled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := hbase.ScanAll(ctx, st, &hbase.Scan{Table: gtTableA, Prefix: []byte(p)})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Scan with a canceled context = %v, want context.Canceled", err)
		}
	})
}

// scanRPCs returns how many Scan RPCs gohbase has sent (its
// gohbase_operation_duration_seconds{operation="Scan"} observations, which
// count the close-scanner RPCs too).
func scanRPCs(t *testing.T) uint64 {
	t.Helper()
	mfs, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n uint64
	for _, mf := range mfs {
		if mf.GetName() != "gohbase_operation_duration_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "operation" && l.GetValue() == "Scan" {
					n += m.GetHistogram().GetSampleCount()
				}
			}
		}
	}
	return n
}

// TestScanLimitOneRPC: a forward Scan that stops at its Limit with rows
// left in the region costs one Scan RPC (the region scanner closes with
// the response, not with a second RPC) and returns the first Limit rows; a
// reversed one returns the last Limit rows (and still costs two: see Scan).
func TestScanLimitOneRPC(t *testing.T) {
	st := gtStore(t)
	p := rowPrefix(t)
	var puts []*hbase.Put
	for i := range 20 {
		puts = append(puts, &hbase.Put{Table: gtTableA, Row: fmt.Appendf(nil, "%s%02d", p, i), Values: hbase.Values{"f": {"k": fmt.Appendf(nil, "%02d", i)}}})
	}
	if err := st.PutMany(tctx(t), puts); err != nil {
		t.Fatal(err)
	}
	// Table B is split at "m": five rows on each side, nothing of other
	// tests between them.
	puts = puts[:0]
	for _, side := range []string{"l", "m"} {
		for i := range 5 {
			puts = append(puts, &hbase.Put{Table: gtTableB, Row: fmt.Appendf(nil, "%s/%s%02d", side, p, i), Values: hbase.Values{"f": {"k": fmt.Appendf(nil, "%s%d", side, i)}}})
		}
	}
	if err := st.PutMany(tctx(t), puts); err != nil {
		t.Fatal(err)
	}
	across := hbase.Scan{Table: gtTableB, Start: []byte("l/" + p), Stop: []byte("m/" + p + "~"), Limit: 7}
	for _, c := range []struct {
		name string
		scan hbase.Scan
		want string
		rpcs uint64
	}{
		{"across regions", across, "l0,l1,l2,l3,l4,m0,m1", 2}, // one RPC a region
		{"forward", hbase.Scan{Table: gtTableA, Prefix: []byte(p), Limit: 5}, "00,01,02,03,04", 1},
		{"reversed", hbase.Scan{Table: gtTableA, Prefix: []byte(p), Limit: 5, Reversed: true}, "19,18,17,16,15", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := scanRPCs(t)
			rows, err := hbase.ScanAll(tctx(t), st, &c.scan)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range rows {
				got = append(got, string(r.Value("f", "k")))
			}
			if g := strings.Join(got, ","); g != c.want {
				t.Errorf("Scan = %s, want %s", g, c.want)
			}
			time.Sleep(300 * time.Millisecond) // gohbase sends a close RPC in a goroutine
			if n := scanRPCs(t) - before; n != c.rpcs {
				t.Errorf("%d Scan RPCs, want %d", n, c.rpcs)
			}
		})
	}
}

func TestCheckAndPut(t *testing.T) {
	st := gtStore(t)
	row := []byte(rowPrefix(t) + "cap")
	put := func(v string) *hbase.Put {
		return &hbase.Put{Table: gtTableA, Row: row, Values: hbase.Values{"f": {"owner": []byte(v)}, "g": {"log": []byte(v)}}}
	}
	steps := []struct {
		name     string
		put      *hbase.Put
		expected []byte
		applied  bool
		owner    string // f:owner afterwards
	}{
		{"absent, expect absent", put("alice"), nil, true, "alice"},
		{"present, expect absent", put("bob"), nil, false, "alice"},
		{"present, expect other", put("bob"), []byte("carol"), false, "alice"},
		{"present, expect it", put("bob"), []byte("alice"), true, "bob"},
	}
	for _, s := range steps {
		ok, err := st.CheckAndPut(tctx(t), s.put, "f", "owner", s.expected)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if ok != s.applied {
			t.Errorf("%s: applied=%v, want %v", s.name, ok, s.applied)
		}
		r := mustGet(t, st, &hbase.Get{Table: gtTableA, Row: row})
		if got := string(r.Value("f", "owner")); got != s.owner {
			t.Errorf("%s: owner=%q, want %q", s.name, got, s.owner)
		}
		if got := string(r.Value("g", "log")); got != s.owner {
			t.Errorf("%s: the put is not atomic: g:log=%q, owner %q", s.name, got, s.owner)
		}
	}

	// Only one of many concurrent claims wins.
	claim := []byte(rowPrefix(t) + "claim")
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := st.CheckAndPut(tctx(t), &hbase.Put{Table: gtTableA, Row: claim, Values: hbase.Values{"f": {"owner": []byte(fmt.Sprint(i))}}}, "f", "owner", nil)
			if err != nil {
				t.Errorf("claim %d: %v", i, err)
			}
			if ok {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if wins != 1 {
		t.Errorf("%d concurrent claims won, want 1", wins)
	}
}

func TestCheckAndDelete(t *testing.T) {
	st := gtStore(t)
	p := rowPrefix(t)
	seed := func(row string) {
		t.Helper()
		mustPut(t, st, &hbase.Put{Table: gtTableA, Row: []byte(row), Values: hbase.Values{
			"f": {"state": []byte("open"), "x": []byte("1")},
			"g": {"y": []byte("2")},
		}})
	}
	cases := []struct {
		name      string
		del       hbase.Values
		family    string
		qualifier string
		expected  []byte
		applied   bool
		want      string // cells afterwards
	}{
		{"match, whole row", nil, "f", "state", []byte("open"), true, ""},
		{"mismatch, whole row", nil, "f", "state", []byte("closed"), false, "f:state=open f:x=1 g:y=2"},
		{"match, one column", hbase.Values{"f": {"x": nil}}, "f", "state", []byte("open"), true, "f:state=open g:y=2"},
		{"match, one family", hbase.Values{"g": nil}, "f", "state", []byte("open"), true, "f:state=open f:x=1"},
		{"expect absent, present", nil, "f", "state", nil, false, "f:state=open f:x=1 g:y=2"},
		{"expect absent, absent", hbase.Values{"g": {"y": nil}}, "f", "nothing", nil, true, "f:state=open f:x=1"},
		{"condition on other family", hbase.Values{"f": {"x": nil}}, "g", "y", []byte("2"), true, "f:state=open g:y=2"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			row := fmt.Sprintf("%scad%d", p, i)
			seed(row)
			ok, err := st.CheckAndDelete(tctx(t), &hbase.Delete{Table: gtTableA, Row: []byte(row), Values: c.del}, c.family, c.qualifier, c.expected)
			if err != nil {
				t.Fatalf("CheckAndDelete: %v", err)
			}
			if ok != c.applied {
				t.Errorf("applied=%v, want %v", ok, c.applied)
			}
			r := mustGet(t, st, &hbase.Get{Table: gtTableA, Row: []byte(row)})
			if got := cellsString(r.Cells, false); got != c.want {
				t.Errorf("after: %s, want %s", got, c.want)
			}
		})
	}
	// Exactly one of many concurrent conditional deletes applies.
	row := p + "race"
	seed(row)
	var wg sync.WaitGroup
	var mu sync.Mutex
	applied := 0
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := st.CheckAndDelete(tctx(t), &hbase.Delete{Table: gtTableA, Row: []byte(row)}, "f", "state", []byte("open"))
			if err != nil {
				t.Errorf("CheckAndDelete: %v", err)
			}
			if ok {
				mu.Lock()
				applied++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if applied != 1 {
		t.Errorf("%d concurrent CheckAndDeletes applied, want 1", applied)
	}
}

func TestIncrement(t *testing.T) {
	st := gtStore(t)
	row := []byte(rowPrefix(t) + "counter")
	inc := func(amount int64) int64 {
		t.Helper()
		v, err := st.Increment(tctx(t), &hbase.Increment{Table: gtTableA, Row: row, Family: "g", Qualifier: "n", Amount: amount})
		if err != nil {
			t.Fatalf("Increment(%d): %v", amount, err)
		}
		return v
	}
	for _, s := range []struct{ amount, want int64 }{{1, 1}, {41, 42}, {-50, -8}, {0, -8}, {1 << 40, 1<<40 - 8}} {
		if got := inc(s.amount); got != s.want {
			t.Errorf("Increment(%d) = %d, want %d", s.amount, got, s.want)
		}
	}
	if v := mustGet(t, st, &hbase.Get{Table: gtTableA, Row: row}).Value("g", "n"); !bytes.Equal(v, be64(1<<40-8)) {
		t.Errorf("counter cell = %x, want 8-byte big-endian %x", v, be64(1<<40-8))
	}

	// Concurrent increments are atomic.
	crow := []byte(rowPrefix(t) + "concurrent")
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 25 {
				if _, err := st.Increment(tctx(t), &hbase.Increment{Table: gtTableA, Row: crow, Family: "g", Qualifier: "n", Amount: 1}); err != nil {
					t.Errorf("Increment: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if v := mustGet(t, st, &hbase.Get{Table: gtTableA, Row: crow}).Value("g", "n"); !bytes.Equal(v, be64(200)) {
		t.Errorf("after 200 concurrent increments: %x", v)
	}

	// A cell that is not an 8-byte counter is an error.
	bad := []byte(rowPrefix(t) + "bad")
	mustPut(t, st, &hbase.Put{Table: gtTableA, Row: bad, Values: hbase.Values{"g": {"n": []byte("abc")}}})
	if _, err := st.Increment(tctx(t), &hbase.Increment{Table: gtTableA, Row: bad, Family: "g", Qualifier: "n", Amount: 1}); err == nil {
		t.Error("Increment of a 3-byte cell succeeded")
	}
}

// TestCallTimeout checks that every data call gets the call timeout,
// whatever the caller's deadline, that running out of it is
// hbase.ErrUnavailable while the caller's own deadline is not, and that a
// scan's timeout bounds each wait for a row, not the time spent in its callback.
func TestCallTimeout(t *testing.T) {
	gtStore(t) // the tables exist
	zk := hbasezk.Addr(t)
	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	tests := []struct {
		name        string
		callTimeout time.Duration
		ctx         context.Context
		unavailable bool   // the error wraps hbase.ErrUnavailable
		kinds       string // hbase.ErrorKind of the error, one of these ("" = no error)
	}{
		{"call timeout, no deadline", time.Nanosecond, context.Background(), true, "timeout unavailable region_moved"},
		{"call timeout before the caller's deadline", time.Nanosecond, tctx(t), true, "timeout unavailable region_moved"},
		{"caller's deadline before the call timeout", time.Minute, expired, false, "canceled"},
		{"no call timeout", 0, tctx(t), false, ""},
		{"default call timeout", DefaultCallTimeout, context.Background(), false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := Open(tctx(t), zk, WithCallTimeout(tt.callTimeout), WithNoPing())
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			_, err = st.Get(tt.ctx, &hbase.Get{Table: gtTableA, Row: []byte("x")})
			if got := errors.Is(err, hbase.ErrUnavailable); got != tt.unavailable {
				t.Errorf("Get: %v; wraps ErrUnavailable = %v, want %v", err, got, tt.unavailable)
			}
			kind := hbase.ErrorKind(err)
			if (tt.kinds == "") != (kind == "") || (kind != "" && !strings.Contains(tt.kinds, kind)) {
				t.Errorf("ErrorKind(%v) = %q, want one of %q", err, kind, tt.kinds)
			}
			if err != nil && !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Get: %v does not wrap context.DeadlineExceeded", err)
			}
		})
	}

	t.Run("scan callback time does not count", func(t *testing.T) {
		st, err := Open(tctx(t), zk, WithCallTimeout(300*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		prefix := rowPrefix(t)
		for i := range 3 {
			mustPut(t, st, &hbase.Put{Table: gtTableA, Row: []byte(fmt.Sprintf("%s%d", prefix, i)), Values: hbase.Values{"f": {"q": []byte("v")}}})
		}
		n := 0
		err = st.Scan(tctx(t), &hbase.Scan{Table: gtTableA, Prefix: []byte(prefix)}, func(*hbase.Result) error {
			n++
			time.Sleep(500 * time.Millisecond) // longer than the call timeout
			return nil
		})
		if err != nil || n != 3 {
			t.Errorf("Scan with a slow callback: %d rows, %v; want 3 rows, nil", n, err)
		}
	})
}

// TestSharedCallTimeout checks that calls whose context shares one call
// timeout (hbase.ShareCallTimeout, as a GraphQL request's do) are bounded
// by what they have not spent of it — time waiting for the store, not time
// between calls — while calls without it each get the whole call timeout.
func TestSharedCallTimeout(t *testing.T) {
	gtStore(t)
	st, err := Open(tctx(t), hbasezk.Addr(t), WithCallTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	get := func(ctx context.Context) error {
		_, err := st.Get(ctx, &hbase.Get{Table: gtTableA, Row: []byte("x")})
		return err
	}
	shared := hbase.ShareCallTimeout(context.Background())
	if err := get(shared); err != nil {
		t.Fatalf("first call: %v", err)
	}
	time.Sleep(1100 * time.Millisecond) // between calls: not counted
	if err := get(shared); err != nil {
		t.Fatalf("a call after a pause longer than the call timeout: %v", err)
	}
	// A scan whose callback holds it open spends the shared second.
	prefix := rowPrefix(t)
	for i := range 2 {
		mustPut(t, st, &hbase.Put{Table: gtTableA, Row: []byte(fmt.Sprintf("%s%d", prefix, i)), Values: hbase.Values{"f": {"q": []byte("v")}}})
	}
	err = st.Scan(shared, &hbase.Scan{Table: gtTableA, Prefix: []byte(prefix)}, func(*hbase.Result) error {
		time.Sleep(700 * time.Millisecond)
		return nil
	})
	if !errors.Is(err, hbase.ErrUnavailable) {
		t.Errorf("a scan open longer than the shared call timeout = %v, want ErrUnavailable", err)
	}
	if err := get(shared); !errors.Is(err, hbase.ErrUnavailable) {
		t.Errorf("a call after the shared call timeout was spent = %v, want ErrUnavailable", err)
	}
	if err := get(context.Background()); err != nil {
		t.Errorf("a call of its own: %v", err)
	}
}

// TestProbe checks that Probe replaces the data client with a fresh one that
// works, and fails once the store is closed.
func TestProbe(t *testing.T) {
	st := gtStore(t)
	row := []byte(rowPrefix(t) + "probe")
	mustPut(t, st, &hbase.Put{Table: gtTableA, Row: row, Values: hbase.Values{"f": {"q": []byte("before")}}})
	before := st.conn()
	if err := st.Probe(tctx(t)); err != nil {
		t.Fatalf("Probe: %v", err)
	}
	if st.conn() == before {
		t.Error("Probe kept the old client")
	}
	if got := mustGet(t, st, &hbase.Get{Table: gtTableA, Row: row}).Value("f", "q"); string(got) != "before" {
		t.Errorf("after Probe: read %q, want %q", got, "before")
	}
	mustPut(t, st, &hbase.Put{Table: gtTableA, Row: row, Values: hbase.Values{"f": {"q": []byte("after")}}})
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.Probe(tctx(t)); !errors.Is(err, hbase.ErrUnavailable) {
		t.Errorf("Probe after Close = %v, want hbase.ErrUnavailable", err)
	}
}

// TestConformance runs the backend-neutral conformance suite against the
// real HBase.
func TestConformance(t *testing.T) {
	hbasetest.TestStore(t, func(t testing.TB) hbase.StoreAdmin { return newTestHBase(t) })
}
