package embedded

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/weibohbase/gateway/hbase"
)

// Tests of a store on disk: its tables, data and admin changes survive
// Close and Open, a directory of another pebble store is refused, and
// WithNoSync loses nothing once the store has synced or closed.

func TestPersistence(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := etOpen(t, dir)
	if err := s.Put(ctx, &hbase.Put{Table: "t:a", Row: []byte("r1"), Values: hbase.Values{"f": {"q": []byte("1")}, "v": {"q": []byte("v")}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := s.Ping(ctx); err == nil {
		t.Errorf("Ping after Close: no error")
	}
	if err := s.Put(ctx, &hbase.Put{Table: "t:a", Row: []byte("r1"), Values: hbase.Values{"f": {"q": []byte("1")}}}); err == nil {
		t.Errorf("Put after Close: no error")
	}

	// Reopen: the tables and the data are there; a new table gets a new id.
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Get(ctx, &hbase.Get{Table: "t:a", Row: []byte("r1")})
	if err != nil || string(r.Value("f", "q")) != "1" || string(r.Value("v", "q")) != "v" {
		t.Fatalf("after reopen: %v, %v", cellStrings(r, false), err)
	}
	ta, _ := s.table("t:a")
	if ta.families["v"].maxVersions != 3 || ta.families["x"].ttlMillis != 10000 {
		t.Errorf("family specs after reopen: v %+v, x %+v", *ta.families["v"], *ta.families["x"])
	}
	if err := s.EnsureTables(ctx, "t", append(slices.Clone(etSpecs), hbase.TableSpec{Name: "c", Families: []hbase.FamilySpec{{Name: "f"}}})); err != nil {
		t.Fatal(err)
	}
	ids := map[uint32]string{}
	for name, tb := range *s.tables.Load() {
		if other, dup := ids[tb.id]; dup {
			t.Errorf("tables %s and %s share id %d", name, other, tb.id)
		}
		ids[tb.id] = name
	}
	if err := s.Put(ctx, &hbase.Put{Table: "t:c", Row: []byte("r1"), Values: hbase.Values{"f": {"q": []byte("c")}}}); err != nil {
		t.Fatal(err)
	}
	for table, want := range map[string]string{"t:a": "1", "t:b": "", "t:c": "c"} {
		r, err := s.Get(ctx, &hbase.Get{Table: table, Row: []byte("r1")})
		if err != nil || string(r.Value("f", "q")) != want {
			t.Errorf("%s r1: %q, %v; want %q", table, r.Value("f", "q"), err, want)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// A directory holding another pebble store is refused.
	other := t.TempDir()
	db, err := pebble.Open(other, &pebble.Options{Comparer: embeddedComparer, Logger: quietLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	_ = db.Set([]byte("\x01foreign"), []byte("x"), pebble.Sync)
	_ = db.Close()
	if st, err := Open(other); err == nil {
		_ = st.Close()
		t.Errorf("Open on a foreign store: no error")
	}
}

func TestAdminPersistence(t *testing.T) {
	// DisableTable, DeleteTable and DropNamespace are recorded in the store:
	// a reopened store sees them, and the deleted tables' cells are gone.
	ctx := context.Background()
	dir := t.TempDir()
	s := etOpen(t, dir)
	if err := s.EnsureTables(ctx, "u", etSpecs); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"t:a", "t:b", "u:a", "u:b"} {
		if err := s.Put(ctx, &hbase.Put{Table: table, Row: []byte("r"), Values: hbase.Values{"f": {"q": []byte(table)}}}); err != nil {
			t.Fatal(err)
		}
	}
	ta, _ := s.table("t:a")
	ua, _ := s.table("u:a")
	if err := s.DisableTable(ctx, "t:b"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteTable(ctx, "t:a"); err != nil {
		t.Fatal(err)
	}
	if err := s.DropNamespace(ctx, "u"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	if _, err := s.Get(ctx, &hbase.Get{Table: "t:b", Row: []byte("r")}); !errors.Is(err, errTableDisabled) {
		t.Errorf("Get on a disabled table after reopen = %v, want errTableDisabled", err)
	}
	if err := s.Put(ctx, &hbase.Put{Table: "t:b", Row: []byte("r"), Values: hbase.Values{"f": {"q": nil}}}); !errors.Is(err, errTableDisabled) {
		t.Errorf("Put on a disabled table = %v, want errTableDisabled", err)
	}
	if err := s.EnsureTables(ctx, "t", etSpecs[1:]); !errors.Is(err, errTableDisabled) {
		t.Errorf("EnsureTables of a disabled table = %v, want errTableDisabled", err)
	}
	for _, table := range []string{"t:a", "u:a", "u:b"} {
		if _, err := s.Get(ctx, &hbase.Get{Table: table, Row: []byte("r")}); !errors.Is(err, hbase.ErrTableNotFound) {
			t.Errorf("Get on deleted %s after reopen = %v, want ErrTableNotFound", table, err)
		}
	}
	// The deleted tables' cells are gone from the store, not just hidden.
	for _, tb := range []*embTable{ta, ua} {
		it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: tb.prefix, UpperBound: hbase.PrefixEnd(tb.prefix)})
		if err != nil {
			t.Fatal(err)
		}
		if it.First() {
			t.Errorf("table %s: cell %q survived DeleteTable", tb.name, it.Key())
		}
		_ = it.Close()
	}
	// Created again, a table gets a new id and starts empty.
	if err := s.EnsureTables(ctx, "t", etSpecs[:1]); err != nil {
		t.Fatal(err)
	}
	if tb, _ := s.table("t:a"); tb.id == ta.id {
		t.Errorf("re-created table reuses id %d", ta.id)
	}
	if r, err := s.Get(ctx, &hbase.Get{Table: "t:a", Row: []byte("r")}); err != nil || r.Exists() {
		t.Errorf("re-created table: %q, %v", cellStrings(r, false), err)
	}
	// Deleting the disabled table works and takes its data.
	if err := s.DeleteTable(ctx, "t:b"); err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureTables(ctx, "t", etSpecs[1:]); err != nil {
		t.Fatal(err)
	}
	if r, err := s.Get(ctx, &hbase.Get{Table: "t:b", Row: []byte("r")}); err != nil || r.Exists() {
		t.Errorf("re-created t:b: %q, %v", cellStrings(r, false), err)
	}
}

func TestNoSyncDurableAfterSyncAndClose(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := etOpen(t, dir, WithNoSync(), WithCacheSize(8<<20))
	var puts []*hbase.Put
	for i := range 1000 {
		puts = append(puts, &hbase.Put{Table: "t:b", Row: fmt.Appendf(nil, "r%04d", i), Values: hbase.Values{"f": {"q": []byte("v")}}})
	}
	if err := s.PutMany(ctx, puts); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = etOpen(t, dir)
	defer func() { _ = s.Close() }()
	rs, err := hbase.ScanAll(ctx, s, &hbase.Scan{Table: "t:b"})
	if err != nil || len(rs) != 1000 {
		t.Fatalf("after reopen: %d rows, %v", len(rs), err)
	}
}

func TestAddedFamilyPersists(t *testing.T) {
	// A family that EnsureTables adds to an existing table is recorded: a
	// reopened store has it, with its TTL, and the cells written to it.
	ctx := context.Background()
	dir := t.TempDir()
	s := etOpen(t, dir)
	spec := func(fams ...hbase.FamilySpec) []hbase.TableSpec {
		return []hbase.TableSpec{{Name: "a", Families: fams}}
	}
	if err := s.EnsureTables(ctx, "t", spec(hbase.FamilySpec{Name: "f"})); err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureTables(ctx, "t", spec(hbase.FamilySpec{Name: "f"}, hbase.FamilySpec{Name: "x", TTL: time.Minute})); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour).UnixMilli()
	for _, p := range []*hbase.Put{
		{Table: "t:a", Row: []byte("r"), Values: hbase.Values{"f": {"q": []byte("1")}, "x": {"q": []byte("2")}}},
		{Table: "t:a", Row: []byte("r"), Timestamp: old, Values: hbase.Values{"x": {"old": []byte("expired")}}},
	} {
		if err := s.Put(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	r, err := s.Get(ctx, &hbase.Get{Table: "t:a", Row: []byte("r")})
	if got := cellStrings(r, false); err != nil || strings.Join(got, " ") != `f:"q"="1" x:"q"="2"` {
		t.Errorf("after reopen: %q, %v", got, err)
	}
}

func TestFamilySettingsPersist(t *testing.T) {
	// EnsureTables records an existing family's new read settings (and
	// keeps its MaxVersions and TTL), as HBase's alter does; a reopened
	// store has them.
	ctx := context.Background()
	dir := t.TempDir()
	s := etOpen(t, dir)
	spec := func(f hbase.FamilySpec) []hbase.TableSpec {
		return []hbase.TableSpec{{Name: "tuned", Families: []hbase.FamilySpec{f}}}
	}
	if err := s.EnsureTables(ctx, "t", spec(hbase.FamilySpec{Name: "f", MaxVersions: 2, TTL: time.Hour})); err != nil {
		t.Fatal(err)
	}
	tuned := hbase.FamilySpec{Name: "f", MaxVersions: 7, Encoding: hbase.EncodingFastDiff, BlockSize: 16 << 10, InMemory: true, Bloom: hbase.BloomNone,
		MOB: true, MOBThreshold: 100 << 10}
	if err := s.EnsureTables(ctx, "t", spec(tuned)); err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureTables(ctx, "t", spec(hbase.FamilySpec{Name: "f", Encoding: "LZ4"})); err == nil {
		t.Error("EnsureTables took an unknown encoding")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	want := embFamilyMeta{Name: "f", MaxVersions: 2, TTLMillis: time.Hour.Milliseconds(), Bloom: hbase.BloomNone,
		InMemory: true, Encoding: hbase.EncodingFastDiff, BlockSize: 16 << 10, MOB: true, MOBThreshold: 100 << 10}
	if got := (*s.tables.Load())["t:tuned"].meta.Families; len(got) != 1 || got[0] != want {
		t.Errorf("after reopen: %+v, want %+v", got, want)
	}
}
