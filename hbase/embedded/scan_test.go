package embedded

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/weibohbase/gateway/hbase"
)

// Tests of long scans: a scan outlives its iterators while rows are
// written, and keeps every Result it returned valid.

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
