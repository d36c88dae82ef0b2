package remote

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

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

// The fixed test tables of the data-call tests (this file and getput_test.go,
// scan_test.go, checkandmutate_test.go, timeout_test.go). Their names carry a
// version: bump it when their specs change (EnsureTables leaves existing
// tables as they are).
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

// TestConformance runs the backend-neutral conformance suite against the
// real HBase.
func TestConformance(t *testing.T) {
	hbasetest.TestStore(t, func(t testing.TB) hbase.StoreAdmin { return newTestHBase(t) })
}
