package hbasetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/weibohbase/gateway/hbase"
)

// The checks of hbase.Admin and of the decorators over the backend.

// cGone waits (up to 20 s: HBase's region cache may first try the old
// region) for a Get on table to answer ErrTableNotFound.
func cGone(t *testing.T, st hbase.Store, table string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if _, err := st.Get(ctx, &hbase.Get{Table: table, Row: []byte("r")}); !errors.Is(err, hbase.ErrTableNotFound) {
		t.Errorf("Get on the deleted table %s = %v, want ErrTableNotFound", table, err)
	}
}

func cAdminDeleteTable(t *testing.T, e *cEnv) {
	st := e.st
	ns := uniqueNamespace(t, st)
	spec := []hbase.TableSpec{{Name: "gone", Families: []hbase.FamilySpec{{Name: "f"}}}}
	if err := st.EnsureTables(stepCtx(t), ns, spec); err != nil {
		t.Fatal(err)
	}
	table := ns + ":gone"
	cPut(t, e, &hbase.Put{Table: table, Row: []byte("r"), Values: hbase.Values{"f": {"q": []byte("v")}}})
	if err := st.DisableTable(stepCtx(t), ns+":never"); !errors.Is(err, hbase.ErrTableNotFound) {
		t.Errorf("DisableTable of a missing table = %v, want ErrTableNotFound", err)
	}
	if err := st.DisableTable(stepCtx(t), table); err != nil {
		t.Fatalf("DisableTable: %v", err)
	}
	if err := st.DisableTable(stepCtx(t), table); err != nil {
		t.Fatalf("DisableTable of a disabled table: %v", err)
	}
	// A disabled table serves no data calls (HBase's fail when their
	// deadline ends).
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	if _, err := st.Get(ctx, &hbase.Get{Table: table, Row: []byte("r")}); err == nil {
		t.Errorf("Get on a disabled table succeeded")
	}
	cancel()
	if err := st.DeleteTable(stepCtx(t), table); err != nil {
		t.Fatalf("DeleteTable: %v", err)
	}
	if err := st.DeleteTable(stepCtx(t), table); !errors.Is(err, hbase.ErrTableNotFound) {
		t.Errorf("DeleteTable of a deleted table = %v, want ErrTableNotFound", err)
	}
	cGone(t, st, table)
	// Re-created, it is empty and usable.
	if err := st.EnsureTables(stepCtx(t), ns, spec); err != nil {
		t.Fatalf("EnsureTables after DeleteTable: %v", err)
	}
	if r := cGet(t, e, &hbase.Get{Table: table, Row: []byte("r")}); r.Exists() {
		t.Errorf("re-created table holds %q", cCellStrings(r, false))
	}
	cPut(t, e, &hbase.Put{Table: table, Row: []byte("r2"), Values: hbase.Values{"f": {"q": []byte("v2")}}})
	// Deleting a table that was never disabled disables it first.
	if err := st.DeleteTable(stepCtx(t), table); err != nil {
		t.Fatalf("DeleteTable of an enabled table: %v", err)
	}
	cGone(t, st, table)
}

func cAdminDropNamespace(t *testing.T, e *cEnv) {
	st := e.st
	ns := uniqueNamespace(t, st) // its cleanup drops it again: a missing namespace is fine
	specs := []hbase.TableSpec{
		{Name: "one", Families: []hbase.FamilySpec{{Name: "f"}}},
		{Name: "two", Families: []hbase.FamilySpec{{Name: "f"}, {Name: "g"}}},
	}
	if err := st.EnsureTables(stepCtx(t), ns, specs); err != nil {
		t.Fatal(err)
	}
	for _, s := range specs {
		cPut(t, e, &hbase.Put{Table: ns + ":" + s.Name, Row: []byte("r"), Values: hbase.Values{"f": {"q": []byte("v")}}})
	}
	// A table of another namespace is not touched.
	cPut(t, e, &hbase.Put{Table: e.b, Row: []byte("dropns/keep"), Values: hbase.Values{cfF: {"q": []byte("v")}}})

	if err := st.DropNamespace(stepCtx(t), ns); err != nil {
		t.Fatalf("DropNamespace: %v", err)
	}
	for _, s := range specs {
		cGone(t, st, ns+":"+s.Name)
	}
	cWantCells(t, "table of another namespace", cGet(t, e, &hbase.Get{Table: e.b, Row: []byte("dropns/keep")}), false, `f:"q"="v"`)
	if err := st.DropNamespace(stepCtx(t), ns); err != nil {
		t.Errorf("DropNamespace of a dropped namespace: %v", err)
	}
	for _, bad := range []string{"", "default", "hbase"} {
		if err := st.DropNamespace(stepCtx(t), bad); err == nil {
			t.Errorf("DropNamespace(%q) succeeded", bad)
		}
	}
	// The namespace and its tables can be created again, empty.
	if err := st.EnsureTables(stepCtx(t), ns, specs[:1]); err != nil {
		t.Fatalf("EnsureTables after DropNamespace: %v", err)
	}
	if r := cGet(t, e, &hbase.Get{Table: ns + ":one", Row: []byte("r")}); r.Exists() {
		t.Errorf("re-created table holds %q", cCellStrings(r, false))
	}
}

func cWithNamespace(t *testing.T, e *cEnv) {
	raw := e.st
	ctx := stepCtx(t)
	spec := []hbase.TableSpec{{Name: "nst", Families: []hbase.FamilySpec{{Name: "f"}}}}
	to := uniqueNamespace(t, raw)
	st := hbase.WithNamespace(raw, "app", to)
	if hbase.WithNamespace(raw, "app", "app") != raw {
		t.Errorf("WithNamespace(b, x, x) is not b")
	}
	if err := st.EnsureTables(ctx, "app", spec); err != nil {
		t.Fatal(err)
	}
	row := []byte("r1")
	if err := st.Put(ctx, &hbase.Put{Table: "app:nst", Row: row, Values: hbase.Values{"f": {"q": []byte("v")}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Increment(ctx, &hbase.Increment{Table: "app:nst", Row: row, Family: "f", Qualifier: "n", Amount: 2}); err != nil {
		t.Fatal(err)
	}
	got, err := raw.Get(ctx, &hbase.Get{Table: to + ":nst", Row: row})
	if err != nil || !bytes.Equal(got.Value("f", "q"), []byte("v")) || len(got.Value("f", "n")) != 8 {
		t.Fatalf("raw read of %s:nst = %+v, %v", to, got, err)
	}
	rows, err := hbase.ScanAll(ctx, st, &hbase.Scan{Table: "app:nst"})
	if err != nil || len(rows) != 1 {
		t.Fatalf("scan through the mapping = %d rows, %v", len(rows), err)
	}
	rs, err := st.GetMany(ctx, []*hbase.Get{{Table: "app:nst", Row: row}, {Table: "app:nst", Row: []byte("none")}})
	if err != nil || !rs[0].Exists() || rs[1].Exists() {
		t.Fatalf("GetMany = %+v, %v", rs, err)
	}
	ok, err := st.CheckAndDelete(ctx, &hbase.Delete{Table: "app:nst", Row: row}, "f", "q", []byte("v"))
	if err != nil || !ok {
		t.Fatalf("CheckAndDelete = %v, %v", ok, err)
	}
	if got, _ := raw.Get(ctx, &hbase.Get{Table: to + ":nst", Row: row}); got.Exists() {
		t.Fatal("row survived the delete")
	}
	// Tables of other namespaces pass through unchanged.
	if err := st.Put(ctx, &hbase.Put{Table: e.b, Row: []byte("nsmap/other"), Values: hbase.Values{cfF: {"q": []byte("o")}}}); err != nil {
		t.Fatal(err)
	}
	cWantCells(t, "other namespace through the mapping", cGet(t, e, &hbase.Get{Table: e.b, Row: []byte("nsmap/other")}), false, `f:"q"="o"`)

	// Admin calls are mapped too.
	if err := st.DeleteTable(ctx, "app:nst"); err != nil {
		t.Fatalf("DeleteTable through the mapping: %v", err)
	}
	cGone(t, raw, to+":nst")
	if err := st.EnsureTables(ctx, "app", spec); err != nil {
		t.Fatal(err)
	}
	if err := st.DisableTable(ctx, "app:nst"); err != nil {
		t.Fatalf("DisableTable through the mapping: %v", err)
	}
	if err := st.DropNamespace(ctx, "app"); err != nil {
		t.Fatalf("DropNamespace through the mapping: %v", err)
	}
	cGone(t, raw, to+":nst")
}

// storeCalls reads gateway_store_calls_total{backend, op}.
func storeCalls(t *testing.T, backend, op string) float64 {
	t.Helper()
	var m dto.Metric
	if err := hbase.StoreCalls.WithLabelValues(backend, op).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

func cInstrument(t *testing.T, e *cEnv) {
	backend := e.st.Backend()
	var mu sync.Mutex
	var ops []string
	ctx := hbase.WithCallCounter(stepCtx(t), func(_ context.Context, b, op string) {
		if b != backend {
			t.Errorf("op %s counted for backend %q, want %q", op, b, backend)
		}
		mu.Lock()
		ops = append(ops, op)
		mu.Unlock()
	})
	st := hbase.Instrument(e.st)
	if st.Backend() != backend {
		t.Errorf("Backend() = %q through Instrument, want %q", st.Backend(), backend)
	}
	putsBefore := storeCalls(t, backend, "put")
	row := []byte("instr/1")
	put := &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfF: {"a": []byte("1")}}}
	del := &hbase.Delete{Table: e.a, Row: row, Values: hbase.Values{cfG: nil}}
	missing := conformanceNamespace + ":missing_" + e.suffix
	calls := []struct {
		op  string // "" when the call makes no round trip
		run func() error
	}{
		{"put", func() error { return st.Put(ctx, put) }},
		{"get", func() error {
			r, err := st.Get(ctx, &hbase.Get{Table: e.a, Row: row})
			if err == nil && string(r.Value(cfF, "a")) != "1" {
				err = fmt.Errorf("read %q", r.Value(cfF, "a"))
			}
			return err
		}},
		{"", func() error { _, err := st.GetMany(ctx, nil); return err }},
		{"get_many", func() error { _, err := st.GetMany(ctx, []*hbase.Get{{Table: e.a, Row: row}}); return err }},
		{"", func() error { return st.PutMany(ctx, nil) }},
		{"put_many", func() error { return st.PutMany(ctx, []*hbase.Put{put}) }},
		{"", func() error { return st.DeleteMany(ctx, nil) }},
		{"delete_many", func() error { return st.DeleteMany(ctx, []*hbase.Delete{del}) }},
		{"delete", func() error { return st.Delete(ctx, del) }},
		{"scan", func() error {
			_, err := hbase.ScanAll(ctx, st, &hbase.Scan{Table: e.a, Prefix: []byte("instr/")})
			return err
		}},
		{"check_and_put", func() error { _, err := st.CheckAndPut(ctx, put, cfF, "a", []byte("1")); return err }},
		{"check_and_delete", func() error { _, err := st.CheckAndDelete(ctx, del, cfF, "a", []byte("1")); return err }},
		{"increment", func() error {
			_, err := st.Increment(ctx, &hbase.Increment{Table: e.a, Row: row, Family: cfG, Qualifier: "n", Amount: 1})
			return err
		}},
		{"ping", func() error { return st.Ping(ctx) }},
		{"ensure_tables", func() error {
			_, specB := conformanceSpecs(e.suffix)
			return st.EnsureTables(ctx, conformanceNamespace, []hbase.TableSpec{specB})
		}},
		{"disable_table", func() error {
			if err := st.DisableTable(ctx, missing); !errors.Is(err, hbase.ErrTableNotFound) {
				return fmt.Errorf("DisableTable of a missing table: %v", err)
			}
			return nil
		}},
		{"delete_table", func() error {
			if err := st.DeleteTable(ctx, missing); !errors.Is(err, hbase.ErrTableNotFound) {
				return fmt.Errorf("DeleteTable of a missing table: %v", err)
			}
			return nil
		}},
		{"drop_namespace", func() error { return st.DropNamespace(ctx, "gwtest_missing_"+e.suffix) }},
	}
	var want []string
	for _, c := range calls {
		if err := c.run(); err != nil {
			t.Errorf("call counted as %q: %v", c.op, err)
		}
		if c.op != "" {
			want = append(want, c.op)
		}
	}
	if !slices.Equal(ops, want) {
		t.Errorf("counted ops\n got  %q\n want %q", ops, want)
	}
	if got := storeCalls(t, backend, "put") - putsBefore; got != 1 {
		t.Errorf("gateway_store_calls_total{backend=%q, op=\"put\"} grew by %v, want 1", backend, got)
	}
}

// cAdminAddFamily: EnsureTables of an existing table whose spec has a
// family more adds that family (with its TTL) and keeps the others and
// their cells; a second call changes nothing.
func cAdminAddFamily(t *testing.T, e *cEnv) {
	st := e.st
	ns := uniqueNamespace(t, st)
	table := ns + ":grow"
	before := []hbase.TableSpec{{Name: "grow", Families: []hbase.FamilySpec{{Name: "f"}}}}
	if err := st.EnsureTables(stepCtx(t), ns, before); err != nil {
		t.Fatal(err)
	}
	cPut(t, e, &hbase.Put{Table: table, Row: []byte("r"), Values: hbase.Values{"f": {"q": []byte("kept")}}})
	if _, err := st.Get(stepCtx(t), &hbase.Get{Table: table, Row: []byte("r"), Families: []string{"t"}}); !errors.Is(err, hbase.ErrFamilyNotFound) {
		t.Fatalf("Get of family t before it exists = %v, want ErrFamilyNotFound", err)
	}
	after := []hbase.TableSpec{{Name: "grow", Families: []hbase.FamilySpec{{Name: "f"}, {Name: "t", TTL: conformanceTTL, Bloom: hbase.BloomRow}}}}
	for i := range 2 {
		if err := st.EnsureTables(stepCtx(t), ns, after); err != nil {
			t.Fatalf("EnsureTables with a new family #%d: %v", i+1, err)
		}
	}
	old := time.Now().Add(-time.Hour).UnixMilli()
	cPut(t, e, &hbase.Put{Table: table, Row: []byte("r"), Values: hbase.Values{"t": {"new": []byte("here")}}})
	cPut(t, e, &hbase.Put{Table: table, Row: []byte("r"), Timestamp: old, Values: hbase.Values{"t": {"old": []byte("expired")}}})
	cWantCells(t, "the grown table", cGet(t, e, &hbase.Get{Table: table, Row: []byte("r")}), false,
		`f:"q"="kept"`, `t:"new"="here"`)
	cWantCells(t, "the new family alone", cGet(t, e, &hbase.Get{Table: table, Row: []byte("r"), Families: []string{"t"}}), false,
		`t:"new"="here"`)
	// A spec without a family the table has removes nothing.
	if err := st.EnsureTables(stepCtx(t), ns, before); err != nil {
		t.Fatal(err)
	}
	cWantCells(t, "after ensuring the old spec", cGet(t, e, &hbase.Get{Table: table, Row: []byte("r")}), false,
		`f:"q"="kept"`, `t:"new"="here"`)
}
