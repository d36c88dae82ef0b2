package hbasetest

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/weibohbase/gateway/hbase"
)

// The checks of forward scans: ranges (prefix, start, stop, limit,
// families), whole tables, stopping early and binary rowkeys. Reversed scans
// are in reverse.go.

func cScanRanges(t *testing.T, e *cEnv) {
	// Rows under "sc/"; every row has f:x = its rowkey; b and g also have g:y.
	for _, row := range []string{"sc/a", "sc/a/1", "sc/a/2", "sc/b", "sc/b/1", "sc/c"} {
		cPut(t, e, &hbase.Put{Table: e.a, Row: []byte(row), Values: hbase.Values{cfF: {"x": []byte(row)}}})
	}
	cPut(t, e, &hbase.Put{Table: e.a, Row: []byte("sc/b"), Values: hbase.Values{cfG: {"y": []byte("gb")}}})
	cPut(t, e, &hbase.Put{Table: e.a, Row: []byte("sc/g"), Values: hbase.Values{cfG: {"y": []byte("gg")}}})
	// Rows just outside the prefix.
	cPut(t, e, &hbase.Put{Table: e.a, Row: []byte("sc"), Values: hbase.Values{cfF: {"x": []byte("out")}}})
	cPut(t, e, &hbase.Put{Table: e.a, Row: []byte("sc0"), Values: hbase.Values{cfF: {"x": []byte("out")}}})

	cases := []struct {
		name string
		scan hbase.Scan
		want []string
	}{
		{"prefix", hbase.Scan{Prefix: []byte("sc/")}, []string{"a", "a/1", "a/2", "b", "b/1", "c", "g"}},
		{"prefix is a row", hbase.Scan{Prefix: []byte("sc/a")}, []string{"a", "a/1", "a/2"}},
		{"prefix of children", hbase.Scan{Prefix: []byte("sc/a/")}, []string{"a/1", "a/2"}},
		{"no match", hbase.Scan{Prefix: []byte("sc/zz")}, nil},
		{"start stop", hbase.Scan{Start: []byte("sc/a/2"), Stop: []byte("sc/c")}, []string{"a/2", "b", "b/1"}},
		{"start only", hbase.Scan{Start: []byte("sc/b/1"), Stop: []byte("sc0")}, []string{"b/1", "c", "g"}},
		{"prefix and start", hbase.Scan{Prefix: []byte("sc/"), Start: []byte("sc/b")}, []string{"b", "b/1", "c", "g"}},
		{"resume after cursor", hbase.Scan{Prefix: []byte("sc/"), Start: []byte("sc/a/1\x00")}, []string{"a/2", "b", "b/1", "c", "g"}},
		{"start before prefix", hbase.Scan{Prefix: []byte("sc/"), Start: []byte("s")}, []string{"a", "a/1", "a/2", "b", "b/1", "c", "g"}},
		{"prefix and stop", hbase.Scan{Prefix: []byte("sc/"), Stop: []byte("sc/b")}, []string{"a", "a/1", "a/2"}},
		{"limit", hbase.Scan{Prefix: []byte("sc/"), Limit: 2}, []string{"a", "a/1"}},
		{"limit beyond", hbase.Scan{Prefix: []byte("sc/"), Limit: 100}, []string{"a", "a/1", "a/2", "b", "b/1", "c", "g"}},
		{"prefix start limit", hbase.Scan{Prefix: []byte("sc/"), Start: []byte("sc/b"), Limit: 2}, []string{"b", "b/1"}},
		{"families g", hbase.Scan{Prefix: []byte("sc/"), Families: []string{cfG}}, []string{"b", "g"}},
		{"families f", hbase.Scan{Prefix: []byte("sc/"), Families: []string{cfF}}, []string{"a", "a/1", "a/2", "b", "b/1", "c"}},
		{"families g limit", hbase.Scan{Prefix: []byte("sc/"), Families: []string{cfG}, Limit: 1}, []string{"b"}},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			s := c.scan
			s.Table = e.a
			rs := cScan(t, e, &s)
			cWantRows(t, c.name, rs, "sc/", c.want...)
			for _, r := range rs {
				for _, cell := range r.Cells {
					if len(s.Families) > 0 && !slices.Contains(s.Families, cell.Family) {
						t.Errorf("row %q: cell of family %s, not asked for", r.Row, cell.Family)
					}
				}
				if x := r.Value(cfF, "x"); x != nil && string(x) != string(r.Row) {
					t.Errorf("row %q: f:x = %q", r.Row, x)
				}
			}
		})
	}
	// A row's cells in a scan: every family, HBase order.
	rs := cScan(t, e, &hbase.Scan{Table: e.a, Prefix: []byte("sc/b"), Limit: 1})
	if len(rs) == 1 {
		cWantCells(t, "scanned row sc/b", rs[0], false, `f:"x"="sc/b"`, `g:"y"="gb"`)
	}
}

func cScanWholeTable(t *testing.T, e *cEnv) {
	cPut(t, e, &hbase.Put{Table: e.b, Row: []byte("whole/\x00"), Values: hbase.Values{cfF: {"a": []byte("1")}}})
	cPut(t, e, &hbase.Put{Table: e.b, Row: []byte("whole/"), Values: hbase.Values{cfF: {"a": []byte("1")}}})
	rs := cScan(t, e, &hbase.Scan{Table: e.b})
	if len(rs) < 2 {
		t.Fatalf("whole-table scan returned %d rows", len(rs))
	}
	if !slices.IsSortedFunc(rs, func(x, y *hbase.Result) int { return bytes.Compare(x.Row, y.Row) }) {
		t.Errorf("whole-table scan is not in rowkey order: %q", cRowKeys(rs, ""))
	}
	seen := 0
	for i, r := range rs {
		if !r.Exists() {
			t.Errorf("row %q without cells", r.Row)
		}
		if i > 0 && bytes.Equal(r.Row, rs[i-1].Row) {
			t.Errorf("row %q returned twice", r.Row)
		}
		if string(r.Row) == "whole/" || string(r.Row) == "whole/\x00" {
			seen++
		}
	}
	if seen != 2 {
		t.Errorf("whole-table scan missed rows: saw %d of 2", seen)
	}
}

func cScanStopEarly(t *testing.T, e *cEnv) {
	for i := range 5 {
		cPut(t, e, &hbase.Put{Table: e.a, Row: []byte(fmt.Sprintf("stop/%d", i)), Values: hbase.Values{cfF: {"a": []byte("1")}}})
	}
	n := 0
	err := e.st.Scan(e.ctx, &hbase.Scan{Table: e.a, Prefix: []byte("stop/")}, func(*hbase.Result) error {
		n++
		if n == 2 {
			return hbase.ErrStopScan
		}
		return nil
	})
	if err != nil || n != 2 {
		t.Errorf("hbase.ErrStopScan after 2 rows: hbase.Scan = %v after %d rows, want nil after 2", err, n)
	}
	boom := errors.New("boom")
	n = 0
	err = e.st.Scan(e.ctx, &hbase.Scan{Table: e.a, Prefix: []byte("stop/")}, func(*hbase.Result) error {
		n++
		return fmt.Errorf("callback: %w", boom)
	})
	if !errors.Is(err, boom) || n != 1 {
		t.Errorf("callback error: hbase.Scan = %v after %d rows, want boom after 1", err, n)
	}
}

func cScanBinaryRowkeys(t *testing.T, e *cEnv) {
	const p = "bin/"
	suffixes := []string{"", "\x00", "\x00\x00", "\x00\x01", "\x01", "a", "a\x00", "a\x00b", "ab", "b",
		"\xff", "\xff\x00", "\xff\xff", "\xff\xff\xff"}
	shuffled := slices.Clone(suffixes)
	rand.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	var puts []*hbase.Put
	for _, s := range shuffled {
		puts = append(puts, &hbase.Put{Table: e.a, Row: []byte(p + s), Values: hbase.Values{cfF: {"k": []byte(p + s)}}})
	}
	// Half one by one, half in a batch.
	for _, put := range puts[:len(puts)/2] {
		cPut(t, e, put)
	}
	if err := e.st.PutMany(e.ctx, puts[len(puts)/2:]); err != nil {
		t.Fatalf("PutMany: %v", err)
	}
	sorted := slices.Clone(suffixes)
	slices.Sort(sorted)

	cases := []struct {
		name string
		scan hbase.Scan
		want []string
	}{
		{"all", hbase.Scan{Prefix: []byte(p)}, sorted},
		{"prefix a", hbase.Scan{Prefix: []byte(p + "a")}, []string{"a", "a\x00", "a\x00b", "ab"}},
		{"prefix a00", hbase.Scan{Prefix: []byte(p + "a\x00")}, []string{"a\x00", "a\x00b"}},
		{"prefix 00", hbase.Scan{Prefix: []byte(p + "\x00")}, []string{"\x00", "\x00\x00", "\x00\x01"}},
		{"prefix ff", hbase.Scan{Prefix: []byte(p + "\xff")}, []string{"\xff", "\xff\x00", "\xff\xff", "\xff\xff\xff"}},
		{"prefix ffff", hbase.Scan{Prefix: []byte(p + "\xff\xff")}, []string{"\xff\xff", "\xff\xff\xff"}},
		{"start stop 00..01", hbase.Scan{Start: []byte(p + "\x00"), Stop: []byte(p + "\x01")}, []string{"\x00", "\x00\x00", "\x00\x01"}},
		{"start stop a..a00b", hbase.Scan{Start: []byte(p + "a"), Stop: []byte(p + "a\x00b")}, []string{"a", "a\x00"}},
		{"stop is prefix row", hbase.Scan{Start: []byte(p), Stop: []byte(p + "\x00")}, []string{""}},
		{"resume after a", hbase.Scan{Prefix: []byte(p), Start: []byte(p + "a\x00")}, []string{"a\x00", "a\x00b", "ab", "b", "\xff", "\xff\x00", "\xff\xff", "\xff\xff\xff"}},
		{"resume after ff", hbase.Scan{Prefix: []byte(p), Start: []byte(p + "\xff\x00")}, []string{"\xff\x00", "\xff\xff", "\xff\xff\xff"}},
		{"limit 3", hbase.Scan{Prefix: []byte(p), Limit: 3}, sorted[:3]},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			s := c.scan
			s.Table = e.a
			rs := cScan(t, e, &s)
			cWantRows(t, c.name, rs, p, c.want...)
			for _, r := range rs {
				cWantCells(t, fmt.Sprintf("row %q", r.Row), r, false, fmt.Sprintf(`f:"k"=%q`, r.Row))
			}
		})
	}
	// Gets see exactly their own row, never a row the key is a prefix of.
	for _, s := range suffixes {
		r := cGet(t, e, &hbase.Get{Table: e.a, Row: []byte(p + s)})
		cWantCells(t, fmt.Sprintf("Get %q", p+s), r, false, fmt.Sprintf(`f:"k"=%q`, p+s))
	}
	if r := cGet(t, e, &hbase.Get{Table: e.a, Row: []byte(p + "a\x00\x00")}); r.Exists() {
		t.Errorf("Get of a missing binary row: %q", cCellStrings(r, false))
	}
}
