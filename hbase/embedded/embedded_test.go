package embedded

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
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
