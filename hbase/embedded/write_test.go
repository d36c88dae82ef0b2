package embedded

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/weibohbase/gateway/hbase"
)

// Tests of the embedded backend's writes: version trimming, TTLs and the
// timestamps the clock gives, PutMany with shared Values and its row order.

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
