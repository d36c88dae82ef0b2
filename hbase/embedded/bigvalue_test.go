package embedded

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/weibohbase/gateway/hbase"
)

// TestBigValues reads values around bigValue (held apart from a batch's
// other values) with GetMany, read twice (a miss, then a row cache hit for
// the rows small enough), Get and Scan, each next to small ones.
func TestBigValues(t *testing.T) {
	ctx := context.Background()
	st := etOpen(t, "")
	defer func() { _ = st.Close() }()
	sizes := []int{0, 10, bigValue - 1, bigValue, 3 * bigValue, 40000}
	want := map[string][]byte{}
	var gets []*hbase.Get
	for i, n := range sizes {
		row := fmt.Appendf(nil, "r%d", i)
		v := bytes.Repeat([]byte{byte('a' + i)}, n)
		small := fmt.Appendf(nil, "small%d", i)
		if err := st.Put(ctx, &hbase.Put{Table: "t:a", Row: row, Values: hbase.Values{"f": {"big": v, "small": small}}}); err != nil {
			t.Fatal(err)
		}
		want[string(row)+"/big"], want[string(row)+"/small"] = v, small
		gets = append(gets, &hbase.Get{Table: "t:a", Row: row})
	}
	check := func(how string, r *hbase.Result) {
		t.Helper()
		if len(r.Cells) != 2 {
			t.Fatalf("%s %s: %d cells", how, r.Row, len(r.Cells))
		}
		for _, c := range r.Cells {
			if w := want[string(r.Row)+"/"+c.Qualifier]; !bytes.Equal(c.Value, w) || c.Value == nil || cap(c.Value) != len(c.Value) {
				t.Fatalf("%s %s/%s: %d bytes (cap %d), want %d", how, r.Row, c.Qualifier, len(c.Value), cap(c.Value), len(w))
			}
		}
	}
	for round := range 2 {
		rs, err := st.GetMany(ctx, gets)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			check(fmt.Sprintf("GetMany #%d", round), r)
		}
	}
	for _, g := range gets {
		r, err := st.Get(ctx, g)
		if err != nil {
			t.Fatal(err)
		}
		check("Get", r)
	}
	n := 0
	if err := st.Scan(ctx, &hbase.Scan{Table: "t:a"}, func(r *hbase.Result) error {
		n++
		check("Scan", r)
		return nil
	}); err != nil || n != len(sizes) {
		t.Fatalf("Scan: %d rows, %v", n, err)
	}
}
