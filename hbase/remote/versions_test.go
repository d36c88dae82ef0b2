package remote

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/proto"

	"github.com/weibohbase/gateway/hbase"
)

// createLegacyTable creates ns:spec.Name as the gateway did before it set
// NEW_VERSION_BEHAVIOR: the same family descriptors without the attribute.
func createLegacyTable(t *testing.T, st *Store, ns string, spec hbase.TableSpec) {
	t.Helper()
	ctx := tctx(t)
	if err := st.ensureNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	full := fullTableName(ns, spec.Name)
	schema := &pb.TableSchema{TableName: pbTableName(full)}
	for _, f := range spec.Families {
		cf := familySchema(f)
		var attrs []*pb.BytesBytesPair
		for _, a := range cf.Attributes {
			if string(a.GetFirst()) != attrNewVersionBehavior {
				attrs = append(attrs, a)
			}
		}
		cf.Attributes = attrs
		schema.ColumnFamilies = append(schema.ColumnFamilies, cf)
	}
	msg, err := st.master(ctx, "CreateTable", full, &pb.CreateTableRequest{TableSchema: schema, SplitKeys: splitKeys(spec.SplitKeys)},
		func() proto.Message { return &pb.CreateTableResponse{} })
	if err != nil {
		t.Fatalf("create legacy table %s: %v", full, err)
	}
	if err := st.waitProcedure(ctx, full, msg.(*pb.CreateTableResponse).GetProcId()); err != nil {
		t.Fatalf("create legacy table %s: %v", full, err)
	}
	if err := st.waitTableServing(ctx, full, spec.SplitKeys); err != nil {
		t.Fatal(err)
	}
}

// familyAttrs returns the attributes of every family of ns:name, by family.
func familyAttrs(t *testing.T, st *Store, ns, name string) map[string]map[string]string {
	t.Helper()
	schemas, err := st.tableSchemas(tctx(t), ns, []string{name})
	if err != nil {
		t.Fatalf("table descriptors: %v", err)
	}
	if schemas[name] == nil {
		t.Fatalf("no descriptor for %s:%s", ns, name)
	}
	out := map[string]map[string]string{}
	for _, cf := range schemas[name].GetColumnFamilies() {
		attrs := map[string]string{}
		for _, a := range cf.GetAttributes() {
			attrs[string(a.GetFirst())] = string(a.GetSecond())
		}
		out[string(cf.GetName())] = attrs
	}
	return out
}

// sameMillisecondLosses runs n CheckAndPut(absent) → Get → CheckAndDelete
// cycles on row and returns how many applied puts the Get did not see.
func sameMillisecondLosses(t *testing.T, st *Store, table string, row []byte, n int) int {
	t.Helper()
	ctx := tctx(t)
	lost := 0
	for i := range n {
		v := []byte(fmt.Sprint(i))
		ok, err := st.CheckAndPut(ctx, &hbase.Put{Table: table, Row: row, Values: hbase.Values{"f": {"o": v}}}, "f", "o", nil)
		if err != nil || !ok {
			t.Fatalf("cycle %d: CheckAndPut(absent) = %v, %v", i, ok, err)
		}
		r := mustGet(t, st, &hbase.Get{Table: table, Row: row})
		if string(r.Value("f", "o")) != string(v) {
			lost++
		}
		if _, err := st.CheckAndDelete(ctx, &hbase.Delete{Table: table, Row: row}, "f", "o", v); err != nil {
			t.Fatalf("cycle %d: CheckAndDelete: %v", i, err)
		}
	}
	return lost
}

// TestEnsureTablesMigratesNewVersionBehavior creates a table the way the
// gateway did before NEW_VERSION_BEHAVIOR, shows that it masks writes made
// after a delete, then lets EnsureTables (what `gateway migrate` runs) alter
// it, and checks the setting, the other settings, the data and the
// same-millisecond cycle.
func TestEnsureTablesMigratesNewVersionBehavior(t *testing.T) {
	st := newTestHBase(t)
	ns := uniqueNamespace(t, st)
	spec := hbase.TableSpec{Name: "legacy", Families: []hbase.FamilySpec{
		{Name: "f"},
		{Name: "v", MaxVersions: 3, Bloom: hbase.BloomRowCol, InMemory: true},
	}, SplitKeys: [][]byte{[]byte("m")}}
	table := ns + ":legacy"
	createLegacyTable(t, st, ns, spec)
	before := familyAttrs(t, st, ns, "legacy")
	for fam, attrs := range before {
		if attrs[attrNewVersionBehavior] == "true" {
			t.Fatalf("legacy family %s already has NEW_VERSION_BEHAVIOR", fam)
		}
	}

	// The old semantics, deterministically: a delete masks a later put of an
	// older timestamp.
	mustPut(t, st, &hbase.Put{Table: table, Row: []byte("a/masked"), Timestamp: 2000, Values: hbase.Values{"f": {"a": []byte("t2000")}}})
	if err := st.Delete(tctx(t), &hbase.Delete{Table: table, Row: []byte("a/masked")}); err != nil {
		t.Fatal(err)
	}
	mustPut(t, st, &hbase.Put{Table: table, Row: []byte("a/masked"), Timestamp: 1000, Values: hbase.Values{"f": {"a": []byte("t1000")}}})
	if r := mustGet(t, st, &hbase.Get{Table: table, Row: []byte("a/masked")}); r.Exists() {
		t.Fatalf("the legacy table shows a put older than a delete (%s): it is not legacy", cellsString(r.Cells, true))
	}
	// ... and by timing: the cycle of the two-row changes loses puts.
	const n = 300
	t.Logf("legacy table: %d of %d applied CheckAndPut(absent) invisible after a CheckAndDelete", sameMillisecondLosses(t, st, table, []byte("a/cycle"), n), n)
	// Data to keep through the alter, in both regions.
	for _, row := range []string{"b/kept", "z/kept"} {
		mustPut(t, st, &hbase.Put{Table: table, Row: []byte(row), Values: hbase.Values{"f": {"a": []byte(row)}, "v": {"q": []byte(row)}}})
	}

	// Two migrations at once (two gateways running `gateway migrate`).
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Go(func() { errs[i] = st.EnsureTables(tctx(t), ns, []hbase.TableSpec{spec}) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("concurrent EnsureTables #%d on the legacy table: %v", i, err)
		}
	}
	after := familyAttrs(t, st, ns, "legacy")
	for fam, attrs := range before {
		if got := after[fam][attrNewVersionBehavior]; got != "true" {
			t.Errorf("family %s after EnsureTables: NEW_VERSION_BEHAVIOR = %q, want true", fam, got)
		}
		for k, v := range attrs {
			if after[fam][k] != v {
				t.Errorf("family %s: %s = %q after the alter, was %q", fam, k, after[fam][k], v)
			}
		}
	}
	// Idempotent: nothing left to alter.
	if n, err := st.ensureSettings(tctx(t), ns, []hbase.TableSpec{spec}); err != nil || n != 0 {
		t.Errorf("second ensureSettings altered %d families, %v; want 0", n, err)
	}
	if err := st.EnsureTables(tctx(t), ns, []hbase.TableSpec{spec}); err != nil {
		t.Errorf("EnsureTables again: %v", err)
	}

	// The data survived; what the old semantics masked stays masked (the
	// alter reopens the regions, whose flush leaves the old cells without
	// the write order that would let the put through).
	for _, row := range []string{"b/kept", "z/kept"} {
		r := mustGet(t, st, &hbase.Get{Table: table, Row: []byte(row)})
		if got := cellsString(r.Cells, false); got != fmt.Sprintf("f:a=%s v:q=%s", row, row) {
			t.Errorf("row %s after the alter: %s", row, got)
		}
	}
	if r := mustGet(t, st, &hbase.Get{Table: table, Row: []byte("a/masked")}); r.Exists() {
		t.Errorf("a put masked before the alter is visible after it: %s", cellsString(r.Cells, true))
	}

	// The new semantics.
	if lost := sameMillisecondLosses(t, st, table, []byte("a/cycle2"), n); lost != 0 {
		t.Errorf("migrated table: %d of %d applied CheckAndPut(absent) invisible after a CheckAndDelete", lost, n)
	}
	mustPut(t, st, &hbase.Put{Table: table, Row: []byte("a/masked"), Timestamp: 1000, Values: hbase.Values{"f": {"a": []byte("again")}}})
	if r := mustGet(t, st, &hbase.Get{Table: table, Row: []byte("a/masked")}); string(r.Value("f", "a")) != "again" {
		t.Errorf("migrated table: a put older than an earlier delete is invisible: %s", cellsString(r.Cells, true))
	}
}

// TestEnsureTablesCreatesNewVersionBehavior checks the descriptor of a table
// EnsureTables creates: every family has the setting.
func TestEnsureTablesCreatesNewVersionBehavior(t *testing.T) {
	st := newTestHBase(t)
	ns := uniqueNamespace(t, st)
	spec := hbase.TableSpec{Name: "fresh", Families: []hbase.FamilySpec{{Name: "f"}, {Name: "g", MaxVersions: 2}}}
	if err := st.EnsureTables(tctx(t), ns, []hbase.TableSpec{spec}); err != nil {
		t.Fatal(err)
	}
	attrs := familyAttrs(t, st, ns, "fresh")
	if len(attrs) != 2 {
		t.Fatalf("families: %v", attrs)
	}
	for fam, a := range attrs {
		if a[attrNewVersionBehavior] != "true" {
			t.Errorf("family %s: NEW_VERSION_BEHAVIOR = %q, want true", fam, a[attrNewVersionBehavior])
		}
	}
	if n, err := st.ensureSettings(tctx(t), ns, []hbase.TableSpec{spec}); err != nil || n != 0 {
		t.Errorf("ensureSettings on a fresh table altered %d families, %v; want 0", n, err)
	}
}

// TestEnsureTablesAltersSettings: EnsureTables brings an existing table's
// families to their spec's read settings (data block encoding, block
// size, IN_MEMORY, Bloom filter), read back from the master's
// descriptors, keeps their VERSIONS and TTL and their data, and alters
// nothing when called again.
func TestEnsureTablesAltersSettings(t *testing.T) {
	st := newTestHBase(t)
	ns := uniqueNamespace(t, st)
	old := hbase.TableSpec{Name: "tuned", Families: []hbase.FamilySpec{{Name: "f", MaxVersions: 2}, {Name: "g"}}}
	if err := st.EnsureTables(tctx(t), ns, []hbase.TableSpec{old}); err != nil {
		t.Fatal(err)
	}
	table := ns + ":tuned"
	mustPut(t, st, &hbase.Put{Table: table, Row: []byte("r"), Values: hbase.Values{"f": {"a": []byte("kept")}}})
	before := familyAttrs(t, st, ns, "tuned")
	if before["f"]["DATA_BLOCK_ENCODING"] != hbase.EncodingNone || before["f"]["BLOCKSIZE"] != "65536" {
		t.Fatalf("a table created without settings: %v", before["f"])
	}

	tuned := hbase.TableSpec{Name: "tuned", Families: []hbase.FamilySpec{
		{Name: "f", MaxVersions: 5, Encoding: hbase.EncodingFastDiff, BlockSize: 16 << 10, InMemory: true, Bloom: hbase.BloomRowCol},
		{Name: "g", Encoding: hbase.EncodingRowIndex},
	}}
	if err := st.EnsureTables(tctx(t), ns, []hbase.TableSpec{tuned}); err != nil {
		t.Fatal(err)
	}
	after := familyAttrs(t, st, ns, "tuned")
	for _, c := range []struct{ fam, key, want string }{
		{"f", "DATA_BLOCK_ENCODING", "FAST_DIFF"},
		{"f", "BLOCKSIZE", "16384"},
		{"f", "IN_MEMORY", "true"},
		{"f", "BLOOMFILTER", "ROWCOL"},
		{"f", "VERSIONS", before["f"]["VERSIONS"]},
		{"f", "TTL", before["f"]["TTL"]},
		{"f", attrNewVersionBehavior, "true"},
		{"g", "DATA_BLOCK_ENCODING", "ROW_INDEX_V1"},
		{"g", "BLOCKSIZE", "65536"},
	} {
		if got := after[c.fam][c.key]; !strings.EqualFold(got, c.want) {
			t.Errorf("family %s: %s = %q, want %q", c.fam, c.key, got, c.want)
		}
	}
	if r := mustGet(t, st, &hbase.Get{Table: table, Row: []byte("r")}); string(r.Value("f", "a")) != "kept" {
		t.Errorf("the row after the alter: %s", cellsString(r.Cells, false))
	}
	if n, err := st.ensureSettings(tctx(t), ns, []hbase.TableSpec{tuned}); err != nil || n != 0 {
		t.Errorf("ensureSettings again altered %d families, %v; want 0", n, err)
	}
}
