package hbasetest

import (
	"bytes"
	"testing"

	"github.com/weibohbase/gateway/hbase"
)

// The checks of the decorators over the backend.

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
}
