package embedded

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/hbase/hbasetest"
)

// TestConformance runs the backend-neutral conformance suite against an
// in-memory embedded store.
func TestConformance(t *testing.T) {
	hbasetest.TestStore(t, func(t testing.TB) hbase.StoreAdmin {
		st, err := Open("")
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() {
			if err := st.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
		return st
	})
}

// --- embedded-only tests -----------------------------------------------------

// cellStrings renders cells as family:"qualifier"="value", with "@ts" when
// withTS is set (as the conformance suite does).
func cellStrings(r *hbase.Result, withTS bool) []string {
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

func wantCells(t *testing.T, what string, r *hbase.Result, withTS bool, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if got := cellStrings(r, withTS); !slices.Equal(got, want) {
		t.Errorf("%s: cells\n got  %q\n want %q", what, got, want)
	}
}

func be64(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

// etSpecs are the tables of the embedded-only tests, in namespace "t".
var etSpecs = []hbase.TableSpec{
	{Name: "a", Families: []hbase.FamilySpec{
		{Name: "f"},
		{Name: "v", MaxVersions: 3},
		{Name: "x", TTL: 10 * time.Second},
	}},
	{Name: "b", Families: []hbase.FamilySpec{{Name: "f"}}},
}

// fakeClock is a settable clock for withClock.
type fakeClock struct{ ms atomic.Int64 }

func (c *fakeClock) now() time.Time   { return time.UnixMilli(c.ms.Load()) }
func (c *fakeClock) set(ms int64)     { c.ms.Store(ms) }
func (c *fakeClock) advance(ms int64) { c.ms.Add(ms) }

// etOpen opens an embedded store in dir ("" = memory) with etSpecs ensured.
func etOpen(t testing.TB, dir string, opts ...Option) *Store {
	t.Helper()
	st, err := Open(dir, opts...)
	if err != nil {
		t.Fatalf("Open(%q): %v", dir, err)
	}
	if err := st.EnsureTables(context.Background(), "t", etSpecs); err != nil {
		t.Fatalf("EnsureTables: %v", err)
	}
	return st
}

// rawKeys returns the store's cell keys of row in table (every version,
// including hidden or expired ones).
func rawKeys(t *testing.T, s *Store, table string, row []byte) [][]byte {
	t.Helper()
	tb, err := s.table(table)
	if err != nil {
		t.Fatal(err)
	}
	rp := appendRowPrefix(nil, tb, row)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: rp, UpperBound: segEnd(nil, rp)})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = it.Close() }()
	var out [][]byte
	for valid := it.First(); valid; valid = it.Next() {
		out = append(out, bytes.Clone(it.Key()))
	}
	return out
}

func TestKeyOrder(t *testing.T) {
	// Rowkeys from a small alphabet rich in the bytes the escaping treats
	// specially: encoded row prefixes must sort as the rowkeys do, and the
	// scan bound encoding must select exactly the rows >= / < a key.
	alphabet := []byte{0x00, 0x01, 0x02, 0xfe, 0xff, 'a'}
	tb := &embTable{prefix: []byte{keyspaceData, 0, 0, 1, 0}}
	r := rand.New(rand.NewPCG(1, 2))
	key := func() []byte {
		k := make([]byte, r.IntN(5))
		for i := range k {
			k[i] = alphabet[r.IntN(len(alphabet))]
		}
		return k
	}
	for range 20000 {
		a, b := key(), key()
		ea, eb := appendRowPrefix(nil, tb, a), appendRowPrefix(nil, tb, b)
		if got, want := bytes.Compare(ea, eb), bytes.Compare(a, b); got != want {
			t.Fatalf("rows %x, %x: encoded order %d, want %d", a, b, got, want)
		}
		// A cell key of a against the bound encoding of b.
		cell := appendTS(appendSegString(appendSegString(ea, "f"), "q\x00"), 42)
		bound := appendEscaped(bytes.Clone(tb.prefix), b)
		if got, want := bytes.Compare(cell, bound) >= 0, bytes.Compare(a, b) >= 0; got != want {
			t.Fatalf("row %x vs bound %x: cell >= bound is %v, want %v", a, b, got, want)
		}
		// Decoding.
		n := embeddedSplit(cell)
		if n != len(ea) {
			t.Fatalf("split of a cell of row %x = %d, want %d", a, n, len(ea))
		}
		if got := unescape(cell[tableHeaderLen : n-2]); !bytes.Equal(got, a) {
			t.Fatalf("decoded row %x, want %x", got, a)
		}
		famSeg, rest, _ := nextSeg(cell[n:])
		qualSeg, tsb, _ := nextSeg(rest)
		if string(famSeg) != "f" || string(unescape(qualSeg)) != "q\x00" || len(tsb) != tsLen || keyTS(cell) != 42 {
			t.Fatalf("decoded cell %q %q %d", famSeg, unescape(qualSeg), keyTS(cell))
		}
	}
}

func TestComparerSplit(t *testing.T) {
	// Compare (bytewise) must agree with "prefixes bytewise, then suffixes
	// bytewise" for the Split (pebble's requirement), on cell keys, scan
	// bounds and metadata keys alike.
	r := rand.New(rand.NewPCG(3, 4))
	tb := &embTable{prefix: []byte{keyspaceData, 0, 0, 0, 1}}
	alphabet := []byte{0x00, 0x01, 0x02, 0xff, 'a'}
	randBytes := func(n int) []byte {
		k := make([]byte, r.IntN(n))
		for i := range k {
			k[i] = alphabet[r.IntN(len(alphabet))]
		}
		return k
	}
	mk := func() []byte {
		switch r.IntN(5) {
		case 0:
			return appendEscaped(bytes.Clone(tb.prefix), randBytes(4)) // scan bound
		case 1:
			return segEnd(nil, appendRowPrefix(nil, tb, randBytes(4))) // row end
		case 2:
			return append([]byte{keyspaceMeta}, randBytes(6)...)
		default:
			rp := appendRowPrefix(nil, tb, randBytes(4))
			return appendTS(appendSeg(appendSegString(rp, "f"), randBytes(3)), r.Int64N(1<<50))
		}
	}
	split := embeddedComparer.Split
	for range 50000 {
		a, b := mk(), mk()
		an, bn := split(a), split(b)
		want := bytes.Compare(a[:an], b[:bn])
		if want == 0 {
			want = bytes.Compare(a[an:], b[bn:])
		}
		if got := bytes.Compare(a, b); got != want {
			t.Fatalf("keys %x / %x: Compare %d, prefix-then-suffix %d", a, b, got, want)
		}
		if an < len(a) && bytes.Compare(a[:an], a) >= 0 {
			t.Fatalf("prefix of %x does not sort before the key", a)
		}
	}
}

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

func TestVersionTrimming(t *testing.T) {
	ctx := context.Background()
	s := etOpen(t, "")
	defer func() { _ = s.Close() }()
	row := []byte("r")
	for ts := int64(1); ts <= 6; ts++ {
		if err := s.Put(ctx, &hbase.Put{Table: "t:a", Row: row, Timestamp: ts * 1000, Values: hbase.Values{"v": {"q": fmt.Appendf(nil, "%d", ts)}, "f": {"q": fmt.Appendf(nil, "%d", ts)}}}); err != nil {
			t.Fatal(err)
		}
	}
	// An old version below the kept ones is not even written.
	if err := s.Put(ctx, &hbase.Put{Table: "t:a", Row: row, Timestamp: 10, Values: hbase.Values{"v": {"q": []byte("old")}}}); err != nil {
		t.Fatal(err)
	}
	if keys := rawKeys(t, s, "t:a", row); len(keys) != 1+3 {
		t.Errorf("stored %d cells, want 4 (1 of f:q, 3 of v:q)", len(keys))
	}
	r, err := s.Get(ctx, &hbase.Get{Table: "t:a", Row: row, MaxVersions: 10})
	if err != nil {
		t.Fatal(err)
	}
	wantCells(t, "trimmed", r, true, `f:"q"="6"@6000`, `v:"q"="6"@6000`, `v:"q"="5"@5000`, `v:"q"="4"@4000`)

	// Two puts of the same column in one batch: the batch sees its own writes.
	if err := s.PutMany(ctx, []*hbase.Put{
		{Table: "t:a", Row: row, Timestamp: 7000, Values: hbase.Values{"v": {"q": []byte("7")}}},
		{Table: "t:a", Row: row, Timestamp: 8000, Values: hbase.Values{"v": {"q": []byte("8")}}},
		{Table: "t:a", Row: row, Timestamp: 8000, Values: hbase.Values{"v": {"q": []byte("8b")}}},
	}); err != nil {
		t.Fatal(err)
	}
	if keys := rawKeys(t, s, "t:a", row); len(keys) != 1+3 {
		t.Errorf("after batch: stored %d cells, want 4", len(keys))
	}
	r, _ = s.Get(ctx, &hbase.Get{Table: "t:a", Row: row, Families: []string{"v"}, MaxVersions: 3})
	wantCells(t, "batch", r, true, `v:"q"="8b"@8000`, `v:"q"="7"@7000`, `v:"q"="6"@6000`)
}

func TestTTLAndClock(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{}
	clock.set(1_700_000_000_000)
	s := etOpen(t, "", withClock(clock.now))
	defer func() { _ = s.Close() }()
	row := []byte("r")
	if err := s.Put(ctx, &hbase.Put{Table: "t:a", Row: row, Values: hbase.Values{"x": {"q": []byte("1")}, "f": {"q": []byte("f")}}}); err != nil {
		t.Fatal(err)
	}
	get := func() *hbase.Result {
		r, err := s.Get(ctx, &hbase.Get{Table: "t:a", Row: row})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if c := get().Cell("x", "q"); c == nil || c.Timestamp != 1_700_000_000_000 {
		t.Fatalf("default timestamp: %+v", c)
	}
	clock.advance(10_000) // exactly the TTL: still visible (expired when ts < now - ttl)
	if get().Cell("x", "q") == nil {
		t.Errorf("cell expired at exactly its TTL")
	}
	clock.advance(1)
	wantCells(t, "after TTL", get(), false, `f:"q"="f"`)
	if rs, _ := hbase.ScanAll(ctx, s, &hbase.Scan{Table: "t:a", Families: []string{"x"}}); len(rs) != 0 {
		t.Errorf("scan of expired family: %d rows", len(rs))
	}
	// Expired counters restart from 0; the write drops the expired version.
	if err := s.Put(ctx, &hbase.Put{Table: "t:a", Row: row, Values: hbase.Values{"x": {"n": be64(41)}}}); err != nil {
		t.Fatal(err)
	}
	clock.advance(20_000)
	if v, err := s.Increment(ctx, &hbase.Increment{Table: "t:a", Row: row, Family: "x", Qualifier: "n", Amount: 1}); err != nil || v != 1 {
		t.Errorf("Increment of an expired counter = %d, %v; want 1", v, err)
	}
	// x:q is still stored (nothing rewrote it), x:n only once.
	if keys := rawKeys(t, s, "t:a", row); len(keys) != 3 {
		t.Errorf("stored %d cells, want 3 (f:q, x:n, expired x:q)", len(keys))
	}
	// A write to the expired column drops its expired version.
	if err := s.Put(ctx, &hbase.Put{Table: "t:a", Row: row, Values: hbase.Values{"x": {"q": []byte("2")}}}); err != nil {
		t.Fatal(err)
	}
	if keys := rawKeys(t, s, "t:a", row); len(keys) != 3 {
		t.Errorf("stored %d cells, want 3", len(keys))
	}

	// Increment timestamps move past the previous version even when the
	// clock stands still (HBase: max(now, previous+1)).
	now := clock.now().UnixMilli()
	for i := range 3 {
		if _, err := s.Increment(ctx, &hbase.Increment{Table: "t:a", Row: row, Family: "f", Qualifier: "n", Amount: 1}); err != nil {
			t.Fatal(err)
		}
		if c := get().Cell("f", "n"); c.Timestamp != now+int64(i) {
			t.Errorf("increment %d: timestamp %d, want %d", i, c.Timestamp, now+int64(i))
		}
	}

	// CheckAndPut writes at max(now, checked cell's timestamp).
	future := now + 60_000
	if err := s.Put(ctx, &hbase.Put{Table: "t:a", Row: row, Timestamp: future, Values: hbase.Values{"f": {"lock": []byte("a")}}}); err != nil {
		t.Fatal(err)
	}
	ok, err := s.CheckAndPut(ctx, &hbase.Put{Table: "t:a", Row: row, Values: hbase.Values{"f": {"lock": []byte("b")}}}, "f", "lock", []byte("a"))
	if err != nil || !ok {
		t.Fatalf("CheckAndPut = %v, %v", ok, err)
	}
	if c := get().Cell("f", "lock"); string(c.Value) != "b" || c.Timestamp != future {
		t.Errorf("CheckAndPut over a future cell: %+v", c)
	}
	// A Delete (at now) leaves versions newer than now, as HBase's does:
	// here the future f:lock and the counter whose versions crept to now+2.
	if err := s.Delete(ctx, &hbase.Delete{Table: "t:a", Row: row}); err != nil {
		t.Fatal(err)
	}
	wantCells(t, "after delete", get(), false, `f:"lock"="b"`, fmt.Sprintf(`f:"n"=%q`, be64(3)))
}

func TestValidation(t *testing.T) {
	ctx := context.Background()
	s := etOpen(t, "")
	defer func() { _ = s.Close() }()
	bad := []struct {
		name string
		err  error
	}{
		{"empty row Put", s.Put(ctx, &hbase.Put{Table: "t:a", Values: hbase.Values{"f": {"q": nil}}})},
		{"empty row Get", func() error { _, err := s.Get(ctx, &hbase.Get{Table: "t:a"}); return err }()},
		{"huge row", s.Put(ctx, &hbase.Put{Table: "t:a", Row: make([]byte, 40000), Values: hbase.Values{"f": {"q": nil}}})},
		{"negative timestamp", s.Put(ctx, &hbase.Put{Table: "t:a", Row: []byte("r"), Timestamp: -1, Values: hbase.Values{"f": {"q": nil}}})},
		{"bad namespace", s.EnsureTables(ctx, "a:b", etSpecs)},
		{"bad table", s.EnsureTables(ctx, "t", []hbase.TableSpec{{Name: "a/b", Families: []hbase.FamilySpec{{Name: "f"}}}})},
		{"no family", s.EnsureTables(ctx, "t", []hbase.TableSpec{{Name: "nofam"}})},
		{"bad family", s.EnsureTables(ctx, "t", []hbase.TableSpec{{Name: "badfam", Families: []hbase.FamilySpec{{Name: "a:b"}}}})},
		{"dup family", s.EnsureTables(ctx, "t", []hbase.TableSpec{{Name: "dupfam", Families: []hbase.FamilySpec{{Name: "f"}, {Name: "f"}}}})},
		{"bad bloom", s.EnsureTables(ctx, "t", []hbase.TableSpec{{Name: "badbloom", Families: []hbase.FamilySpec{{Name: "f", Bloom: "SOMETIMES"}}}})},
		{"unknown check family", func() error {
			_, err := s.CheckAndPut(ctx, &hbase.Put{Table: "t:a", Row: []byte("r"), Values: hbase.Values{"f": {"q": nil}}}, "nope", "q", nil)
			return err
		}()},
	}
	for _, b := range bad {
		if b.err == nil {
			t.Errorf("%s: no error", b.name)
		}
	}
	if _, err := s.CheckAndDelete(ctx, &hbase.Delete{Table: "t:a", Row: []byte("r")}, "nope", "q", nil); !errors.Is(err, hbase.ErrFamilyNotFound) {
		t.Errorf("CheckAndDelete with an unknown family: %v", err)
	}
	if err := s.Scan(ctx, &hbase.Scan{Table: "t:a", Families: []string{"nope"}}, func(*hbase.Result) error { return nil }); !errors.Is(err, hbase.ErrFamilyNotFound) {
		t.Errorf("Scan of an unknown family: %v", err)
	}
	// Empty ranges.
	for _, sc := range []*hbase.Scan{
		{Table: "t:a", Start: []byte("b"), Stop: []byte("a")},
		{Table: "t:a", Start: []byte("a"), Stop: []byte("a")},
		{Table: "t:a", Prefix: []byte("b"), Stop: []byte("a")},
	} {
		if rs, err := hbase.ScanAll(ctx, s, sc); err != nil || len(rs) != 0 {
			t.Errorf("empty range %+v: %d rows, %v", *sc, len(rs), err)
		}
	}
	// A Put without cells is a no-op.
	if err := s.Put(ctx, &hbase.Put{Table: "t:a", Row: []byte("r"), Values: hbase.Values{"f": {}}}); err != nil {
		t.Errorf("Put without cells: %v", err)
	}
}

func TestScanLongWithWrites(t *testing.T) {
	// A scan longer than one iterator's lifetime (scanRefreshRows) whose
	// callback writes to the store sees every row exactly once, in order,
	// forward and reversed.
	ctx := context.Background()
	s := etOpen(t, "")
	defer func() { _ = s.Close() }()
	const n = 3*scanRefreshRows + 17
	var puts []*hbase.Put
	for i := range n {
		puts = append(puts, &hbase.Put{Table: "t:a", Row: fmt.Appendf(nil, "s/%05d", i), Values: hbase.Values{"f": {"q": []byte("v")}}})
	}
	if err := s.PutMany(ctx, puts); err != nil {
		t.Fatal(err)
	}
	for _, reversed := range []bool{false, true} {
		i := 0
		err := s.Scan(ctx, &hbase.Scan{Table: "t:a", Prefix: []byte("s/"), Reversed: reversed}, func(r *hbase.Result) error {
			want := fmt.Sprintf("s/%05d", i)
			if reversed {
				want = fmt.Sprintf("s/%05d", n-1-i)
			}
			if string(r.Row) != want {
				return fmt.Errorf("row %d is %q, want %q", i, r.Row, want)
			}
			i++
			// Write behind and ahead of the cursor, and into another prefix.
			return s.PutMany(ctx, []*hbase.Put{
				{Table: "t:a", Row: fmt.Appendf(nil, "t/%05d", i), Values: hbase.Values{"f": {"q": []byte("w")}}},
				{Table: "t:a", Row: r.Row, Values: hbase.Values{"v": {"q": []byte("w")}}},
			})
		})
		if err != nil || i != n {
			t.Fatalf("scan (reversed %v): %v after %d rows, want %d", reversed, err, i, n)
		}
	}
}

// TestScanResultsKept keeps every Result of a scan over several of the
// scan's arena chunks (rows, cells and bytes; values large enough to be
// allocated alone; rowkeys with escaped 0x00 bytes; columns that differ
// from row to row) and checks them all once the scan is over, and that
// appending to a kept rowkey or value changes no other Result.
func TestScanResultsKept(t *testing.T) {
	ctx := context.Background()
	s := etOpen(t, "")
	defer func() { _ = s.Close() }()
	const n = 3*scanArenaRows + 7
	row := func(i int) []byte { return binary.BigEndian.AppendUint32([]byte("k\x00"), uint32(i)) }
	val := func(i, j int) []byte { return bytes.Repeat([]byte{byte(i), byte(j)}, 1+(i*j)%40+(i%17)*200) }
	qual := func(i, j int) string { return fmt.Sprintf("q%d", (i%3)*10+j) }
	var puts []*hbase.Put
	for i := range n {
		v := hbase.Values{"f": {}}
		for j := range 1 + i%4 {
			v["f"][qual(i, j)] = val(i, j)
		}
		puts = append(puts, &hbase.Put{Table: "t:a", Row: row(i), Values: v})
	}
	if err := s.PutMany(ctx, puts); err != nil {
		t.Fatal(err)
	}
	rs, err := hbase.ScanAll(ctx, s, &hbase.Scan{Table: "t:a", Prefix: []byte("k")})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != n {
		t.Fatalf("%d rows, want %d", len(rs), n)
	}
	for _, r := range rs {
		r.Row = append(r.Row, 0xee)
		for _, c := range r.Cells {
			c.Value = append(c.Value, 0xee)
		}
	}
	for i, r := range rs {
		if want := append(row(i), 0xee); !bytes.Equal(r.Row, want) {
			t.Fatalf("row %d: %x, want %x", i, r.Row, want)
		}
		if len(r.Cells) != 1+i%4 {
			t.Fatalf("row %d: %d cells, want %d", i, len(r.Cells), 1+i%4)
		}
		for j, c := range r.Cells {
			if q := qual(i, j); c.Family != "f" || c.Qualifier != q {
				t.Fatalf("row %d cell %d: %s:%s, want f:%s", i, j, c.Family, c.Qualifier, q)
			}
			if want := append(val(i, j), 0xee); !bytes.Equal(c.Value, want) {
				t.Fatalf("row %d cell %d: value of %d bytes, want %d", i, j, len(c.Value), len(want))
			}
		}
	}
}

// TestPutManySharedValues writes one Values map into the rows of a batch,
// as a fan-out does: every row gets its cells, and a put of another table
// whose families differ is still checked against its own table.
func TestPutManySharedValues(t *testing.T) {
	ctx := context.Background()
	s := etOpen(t, "")
	defer func() { _ = s.Close() }()
	v := hbase.Values{"f": {"b": []byte("2"), "a": []byte("1")}, "v": {"c": []byte("3")}}
	var puts []*hbase.Put
	for i := range 5 {
		puts = append(puts, &hbase.Put{Table: "t:a", Row: []byte{'r', byte('0' + i)}, Values: v, Timestamp: 10})
	}
	if err := s.PutMany(ctx, puts); err != nil {
		t.Fatal(err)
	}
	for _, p := range puts {
		r, err := s.Get(ctx, &hbase.Get{Table: "t:a", Row: p.Row})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range r.Cells {
			got = append(got, fmt.Sprintf("%s:%s=%s@%d", c.Family, c.Qualifier, c.Value, c.Timestamp))
		}
		if want := []string{"f:a=1@10", "f:b=2@10", "v:c=3@10"}; !slices.Equal(got, want) {
			t.Errorf("row %s: %v, want %v", p.Row, got, want)
		}
	}
	// t:b has no family "v": the second put fails although its Values
	// are those of the first.
	err := s.PutMany(ctx, []*hbase.Put{
		{Table: "t:a", Row: []byte("x"), Values: v},
		{Table: "t:b", Row: []byte("x"), Values: v},
	})
	if !errors.Is(err, hbase.ErrFamilyNotFound) {
		t.Errorf("PutMany with family v into t:b: %v, want ErrFamilyNotFound", err)
	}
}

// TestPutOrder checks PutMany's row order against a sort of the row
// prefixes (then the indexes): random batches of one or two tables, some
// sorted, some of interleaved sorted runs (salted rowkeys), with repeated
// rows and 0x00 bytes.
func TestPutOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	tables := []*embTable{newEmbTable("t:x", &embTableMeta{ID: 7}), newEmbTable("t:y", &embTableMeta{ID: 256})}
	for round := range 2000 {
		n := 1 + r.IntN(60)
		pps := make([]preparedPut, n)
		for i := range pps {
			var row []byte
			switch round % 3 {
			case 0: // salted, ids ascending
				id := uint64(i*3 + r.IntN(3))
				row = binary.BigEndian.AppendUint64([]byte{byte(id * 7 % 5)}, id)
			case 1: // few distinct short rows: repeats and 0x00 bytes
				row = []byte{byte(r.IntN(3)), byte(r.IntN(2))}[:1+r.IntN(2)]
			default: // ascending
				row = binary.BigEndian.AppendUint64(nil, uint64(i/2))
			}
			tb := tables[0]
			if round%5 == 0 {
				tb = tables[r.IntN(2)]
			}
			pps[i] = preparedPut{t: tb, rp: appendRowPrefix(nil, tb, row)}
		}
		want := make([]int32, n)
		for i := range want {
			want[i] = int32(i)
		}
		slices.SortStableFunc(want, func(a, b int32) int { return bytes.Compare(pps[a].rp, pps[b].rp) })
		if got := putOrder(pps); !slices.Equal(got, want) {
			t.Fatalf("round %d: putOrder = %v, want %v", round, got, want)
		}
	}
}

func TestConcurrentMixed(t *testing.T) {
	// Increments, Puts of other columns of the same rows, CheckAndPuts and
	// overlapping PutMany batches at once: no deadlock, exact counters.
	ctx := context.Background()
	s := etOpen(t, "")
	defer func() { _ = s.Close() }()
	const workers, rounds, rows = 6, 200, 5
	rowKey := func(i int) []byte { return fmt.Appendf(nil, "c/%d", i%rows) }
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 9))
			for i := range rounds {
				row := rowKey(r.IntN(rows))
				var err error
				switch i % 4 {
				case 0, 1:
					_, err = s.Increment(ctx, &hbase.Increment{Table: "t:a", Row: row, Family: "f", Qualifier: "n", Amount: 1})
				case 2:
					err = s.PutMany(ctx, []*hbase.Put{
						{Table: "t:a", Row: rowKey(r.IntN(rows)), Values: hbase.Values{"v": {"p": []byte("x")}}},
						{Table: "t:a", Row: rowKey(r.IntN(rows)), Values: hbase.Values{"f": {"p": []byte("y")}}},
						{Table: "t:b", Row: row, Values: hbase.Values{"f": {"p": []byte("z")}}},
					})
				case 3:
					_, err = s.CheckAndPut(ctx, &hbase.Put{Table: "t:a", Row: row, Values: hbase.Values{"v": {"c": []byte("1")}}}, "f", "p", []byte("y"))
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	var total int64
	for i := range rows {
		r, err := s.Get(ctx, &hbase.Get{Table: "t:a", Row: rowKey(i)})
		if err != nil {
			t.Fatal(err)
		}
		if v := r.Value("f", "n"); v != nil {
			total += int64(binary.BigEndian.Uint64(v))
		}
	}
	if want := int64(workers * rounds / 2); total != want {
		t.Errorf("counters sum to %d, want %d", total, want)
	}
}

func TestCloseWaitsForCalls(t *testing.T) {
	ctx := context.Background()
	s := etOpen(t, "")
	if err := s.Put(ctx, &hbase.Put{Table: "t:a", Row: []byte("r"), Values: hbase.Values{"f": {"q": nil}}}); err != nil {
		t.Fatal(err)
	}
	inScan := make(chan struct{})
	release := make(chan struct{})
	scanDone := make(chan error, 1)
	go func() {
		scanDone <- s.Scan(ctx, &hbase.Scan{Table: "t:a"}, func(*hbase.Result) error {
			close(inScan)
			<-release
			return nil
		})
	}()
	<-inScan
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case <-closed:
		t.Fatal("Close returned while a hbase.Scan was running")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if err := <-scanDone; err != nil {
		t.Errorf("Scan: %v", err)
	}
	if err := <-closed; err != nil {
		t.Errorf("Close: %v", err)
	}
}

// --- benchmarks ----------------------------------------------------------------

// BenchmarkEmbeddedPutMany measures bulk loading as the data import
// (seed.Import) does it: PutMany batches of 4,000 small rows shaped like
// weibo:relations rows (an 18-byte binary rowkey, one family, one qualifier,
// an 8-byte value), into a store on disk. One iteration is one batch; the
// rows/s metric is the figure to read. "ordered" writes rowkeys in
// ascending order, as Seed does (table by table, in rowkey order); "random"
// writes them in random order (the worst case: every batch touches the
// whole key space, and compactions rewrite it). "sync" syncs every batch,
// the others use WithNoSync. "random-shared" is "random" with one Values
// map shared by the puts of a batch, as the fan-out writes its inbox rows.
//
//	go test ./hbase/embedded/ -run '^$' -bench EmbeddedPutMany -benchtime 250x             # 1M rows each
//	go test ./hbase/embedded/ -run '^$' -bench EmbeddedPutMany/ordered -benchtime 2750x    # 11M rows
func BenchmarkEmbeddedPutMany(b *testing.B) {
	for _, mode := range []struct {
		name    string
		ordered bool
		shared  bool // every put of a batch has the same Values, as a fan-out's
		opts    []Option
	}{
		{"ordered", true, false, []Option{WithNoSync()}},
		{"random", false, false, []Option{WithNoSync()}},
		{"random-shared", false, true, []Option{WithNoSync()}},
		{"ordered-sync", true, false, nil},
	} {
		b.Run(mode.name, func(b *testing.B) {
			const batch = 4000
			ctx := context.Background()
			s := etOpen(b, b.TempDir(), mode.opts...)
			r := rand.New(rand.NewPCG(1, 1))
			puts := make([]*hbase.Put, batch)
			val := be64(1_700_000_000_000)
			var seq uint64
			rows := 0
			b.ResetTimer()
			for b.Loop() {
				b.StopTimer()
				for i := range puts {
					row := make([]byte, 18)
					if mode.ordered {
						binary.BigEndian.PutUint64(row[1:], seq/64)
						binary.BigEndian.PutUint64(row[10:], seq%64)
						seq++
					} else {
						row[0] = byte(r.IntN(16))
						binary.BigEndian.PutUint64(row[1:], r.Uint64N(2_000_000))
						binary.BigEndian.PutUint64(row[10:], r.Uint64N(2_000_000))
					}
					row[9] = 'f'
					puts[i] = &hbase.Put{Table: "t:b", Row: row, Values: hbase.Values{"f": {"t": val}}}
					if mode.shared && i > 0 {
						puts[i].Values = puts[0].Values
					}
				}
				b.StartTimer()
				if err := s.PutMany(ctx, puts); err != nil {
					b.Fatal(err)
				}
				rows += batch
			}
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// putRows writes put(0) .. put(n-1) into s in PutMany batches of 5,000:
// the rows a read benchmark reads.
func putRows(b *testing.B, s *Store, n int, put func(i int) *hbase.Put) {
	b.Helper()
	puts := make([]*hbase.Put, 0, 5000)
	for i := range n {
		if puts = append(puts, put(i)); len(puts) == cap(puts) || i == n-1 {
			if err := s.PutMany(context.Background(), puts); err != nil {
				b.Fatal(err)
			}
			puts = puts[:0]
		}
	}
}

// BenchmarkEmbeddedGet measures point reads of existing and missing rows.
func BenchmarkEmbeddedGet(b *testing.B) {
	ctx := context.Background()
	s := etOpen(b, b.TempDir(), WithNoSync())
	defer func() { _ = s.Close() }()
	const n = 100_000
	putRows(b, s, n, func(i int) *hbase.Put {
		return &hbase.Put{Table: "t:b", Row: binary.BigEndian.AppendUint64(nil, uint64(i)*2), Values: hbase.Values{"f": {"q": []byte("value")}}}
	})
	r := rand.New(rand.NewPCG(2, 2))
	b.ResetTimer()
	for b.Loop() {
		k := uint64(r.IntN(2 * n))
		res, err := s.Get(ctx, &hbase.Get{Table: "t:b", Row: binary.BigEndian.AppendUint64(nil, k)})
		if err != nil || res.Exists() != (k%2 == 0) {
			b.Fatalf("Get %d: %v, %v", k, res.Exists(), err)
		}
	}
}

// BenchmarkEmbeddedScan measures a scan of 100,000 rows shaped like
// weibo:relations fans rows (an 18-byte rowkey, one small cell each), the
// fan-out's read; it reports the time per row (ns/row); allocs/op are
// those of one scan of every row.
//
//	go test ./hbase/embedded/ -run '^$' -bench EmbeddedScan -benchtime 20x
func BenchmarkEmbeddedScan(b *testing.B) {
	ctx := context.Background()
	s := etOpen(b, b.TempDir(), WithNoSync())
	defer func() { _ = s.Close() }()
	const n = 100_000
	putRows(b, s, n, func(i int) *hbase.Put {
		row := binary.BigEndian.AppendUint64([]byte{7}, 42)
		row = binary.BigEndian.AppendUint64(append(row, 'f'), uint64(i))
		return &hbase.Put{Table: "t:b", Row: row, Values: hbase.Values{"f": {"t": be64(int64(i))}}}
	})
	b.ReportAllocs()
	rows := 0
	for b.Loop() {
		err := s.Scan(ctx, &hbase.Scan{Table: "t:b", Prefix: []byte{7}}, func(r *hbase.Result) error {
			rows++
			if len(r.Cells) != 1 {
				b.Fatalf("row %x: %d cells", r.Row, len(r.Cells))
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	if rows != n*b.N {
		b.Fatalf("scanned %d rows, want %d", rows, n*b.N)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows), "ns/row")
}

// BenchmarkEmbeddedGetMany measures the read of a home-timeline page's
// posts: one GetMany of 50 random existing rows (of 100,000, flushed to an
// sstable) of one family. One iteration is one GetMany.
//
//	go test ./hbase/embedded/ -run '^$' -bench EmbeddedGetMany -benchtime 20000x
func BenchmarkEmbeddedGetMany(b *testing.B) {
	ctx := context.Background()
	s := etOpen(b, b.TempDir(), WithNoSync())
	defer func() { _ = s.Close() }()
	const n = 100_000
	putRows(b, s, n, func(i int) *hbase.Put {
		return &hbase.Put{Table: "t:b", Row: binary.BigEndian.AppendUint64(nil, uint64(i)),
			Values: hbase.Values{"f": {"c": []byte("a post of some length, as a post is"), "t": be64(int64(i))}}}
	})
	if err := s.db.Flush(); err != nil { // read from an sstable, as most reads are
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(4, 4))
	batches := make([][]*hbase.Get, 1024)
	for i := range batches {
		batches[i] = make([]*hbase.Get, 50)
		for j := range batches[i] {
			batches[i][j] = &hbase.Get{Table: "t:b", Row: binary.BigEndian.AppendUint64(nil, uint64(r.IntN(n))), Families: []string{"f"}}
		}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		gets := batches[i%len(batches)]
		i++
		rs, err := s.GetMany(ctx, gets)
		if err != nil || len(rs) != len(gets) || len(rs[0].Cells) != 2 {
			b.Fatalf("GetMany: %v", err)
		}
	}
}

// BenchmarkAppendRowPrefix measures the encoding of a weibo:inbox rowkey
// (salt, owner id, reversed ms, author id: 25 bytes, 12 of them 0x00).
func BenchmarkAppendRowPrefix(b *testing.B) {
	t := newEmbTable("t:x", &embTableMeta{ID: 7})
	row := binary.BigEndian.AppendUint64([]byte{3}, 123_456)
	row = binary.BigEndian.AppendUint64(row, uint64(1<<63-1_700_000_000_000))
	row = binary.BigEndian.AppendUint64(row, 98_765)
	var dst []byte
	for b.Loop() {
		dst = appendRowPrefix(dst[:0], t, row)
	}
}
