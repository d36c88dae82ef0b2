package paging

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
)

// TestWindowScanBounds checks that a window's scan stays within the
// query's own Start and Stop, whichever side its cursors lie on.
func TestWindowScanBounds(t *testing.T) {
	base := hbase.Scan{Prefix: []byte("p"), Start: []byte("p\x10"), Stop: []byte("p\x40")}
	for _, c := range []struct {
		name        string
		w           Window
		start, stop string
	}{
		{"no cursor", Window{N: 1}, "p\x10", "p\x40"},
		{"after within", Window{N: 1, After: []byte("p\x20")}, "p\x20", "p\x40"},
		{"after before the start", Window{N: 1, After: []byte("p\x05")}, "p\x10", "p\x40"},
		{"before within", Window{N: 1, Before: []byte("p\x20")}, "p\x10", "p\x20"},
		{"before past the stop", Window{N: 1, Before: []byte("p\x50")}, "p\x10", "p\x40"},
		{"backward within", Window{N: 1, Backward: true, After: []byte("p\x18"), Before: []byte("p\x20")}, "p\x18\x00", "p\x20\x00"},
		{"backward outside", Window{N: 1, Backward: true, After: []byte("p\x01"), Before: []byte("p\x60")}, "p\x10", "p\x40"},
	} {
		sc, _, _ := c.w.Scan(base)
		if string(sc.Start) != c.start || string(sc.Stop) != c.stop {
			t.Errorf("%s: [%q, %q), want [%q, %q)", c.name, sc.Start, sc.Stop, c.start, c.stop)
		}
	}
	// Without bounds of its own a query scans the cursors' range, as before.
	sc, _, _ := Window{N: 1, After: []byte("p\x20")}.Scan(hbase.Scan{Prefix: []byte("p")})
	if string(sc.Start) != "p\x20" || sc.Stop != nil {
		t.Errorf("unbounded: [%q, %q)", sc.Start, sc.Stop)
	}
}

// TestRoundsFrontier pages through a bounded range where verify keeps one
// row in ten, or one in three, with every bound on the rounds: each page
// cut short ends at the last row it read — or, holding an edge beyond its
// last, at its last edge —, and paging on from its end cursor lists every
// kept row of the range once, in order, forward and backward.
func TestRoundsFrontier(t *testing.T) {
	ctx := t.Context()
	st := testenv.Embedded(t)
	if err := st.EnsureTables(ctx, "pg", []hbase.TableSpec{{Name: "rows", Families: []hbase.FamilySpec{{Name: "f", MaxVersions: 1}}}}); err != nil {
		t.Fatal(err)
	}
	var puts []*hbase.Put
	for i := range 50 {
		puts = append(puts, &hbase.Put{Table: "pg:rows", Row: []byte{'p', byte(i)}, Values: hbase.Values{"f": {"v": {1}}}})
	}
	if err := st.PutMany(ctx, puts); err != nil {
		t.Fatal(err)
	}
	edge := func(v *int, c string) string { return fmt.Sprintf("%d@%s", *v, c) }
	for _, every := range []int{10, 3} {
		verify := func(_ context.Context, rows []*hbase.Result) ([]*int, error) {
			out := make([]*int, len(rows))
			for i, r := range rows {
				if v := int(r.Row[1]); v%every == 0 {
					out[i] = &v
				}
			}
			return out, nil
		}
		for _, rounds := range []int{0, 1, 2, 5} {
			for _, n := range []int{1, 2, 3, 10} {
				for _, backward := range []bool{false, true} {
					t.Run(fmt.Sprintf("every=%d/rounds=%d/n=%d/backward=%v", every, rounds, n, backward), func(t *testing.T) {
						q := Query{Kind: CursorAudit, RowLen: 2, Rounds: rounds,
							Scan: hbase.Scan{Table: "pg:rows", Prefix: []byte("p"), Start: []byte{'p', 5}, Stop: []byte{'p', 45}}}
						var got []string
						var cur *string
						for page := 0; ; page++ {
							if page > 50 {
								t.Fatal("paging does not end")
							}
							p := weibo.Page{First: &n, After: cur}
							if backward {
								p = weibo.Page{Last: &n, Before: cur}
							}
							edges, info, err := ReadBoth(ctx, st, q, p, verify, edge)
							if err != nil {
								t.Fatal(err)
							}
							var vals []string
							for _, e := range edges {
								vals = append(vals, e[:bytes.IndexByte([]byte(e), '@')])
							}
							if backward {
								slices.Reverse(vals)
							}
							got = append(got, vals...)
							more, next := info.HasNextPage, info.EndCursor
							if backward {
								more, next = info.HasPreviousPage, info.StartCursor
							}
							if !more {
								break
							}
							if next == nil {
								t.Fatalf("page %d: more rows but no cursor", page)
							}
							cur = next
						}
						var want []string
						for v := 5; v < 45; v++ {
							if v%every == 0 {
								want = append(want, fmt.Sprint(v))
							}
						}
						if backward {
							slices.Reverse(want)
						}
						if !slices.Equal(got, want) {
							t.Errorf("listed %v, want %v", got, want)
						}
					})
				}
			}
		}
	}
}
