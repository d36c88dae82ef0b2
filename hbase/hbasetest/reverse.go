package hbasetest

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/weibohbase/gateway/hbase"
)

// cScanReversed checks reversed scans: for every range (prefix, start,
// stop, limit, families) the rows are exactly the forward scan's in
// descending order, Limit keeps the highest rowkeys, a continuation below
// the last row read (Stop = that row) neither repeats nor skips a row, and
// a range without an end is refused. The rows live in a table of their own,
// pre-split inside the range, so that on HBase the scans cross regions.
func cScanReversed(t *testing.T, e *cEnv) {
	const p = "rv/"
	spec := hbase.TableSpec{Name: "r_" + e.suffix,
		Families:  []hbase.FamilySpec{{Name: cfF, MaxVersions: 1}, {Name: cfG, MaxVersions: 1}},
		SplitKeys: [][]byte{[]byte(p + "a\x00"), []byte(p + "b")}}
	table := conformanceNamespace + ":" + spec.Name
	t.Cleanup(func() { dropConformanceTables(t, e.st, table) })
	if err := e.st.EnsureTables(stepCtx(t), conformanceNamespace, []hbase.TableSpec{spec}); err != nil {
		t.Fatalf("EnsureTables(r): %v", err)
	}
	suffixes := []string{"", "\x00", "a", "a\x00", "a\x00b", "ab", "b", "b/1", "\xff", "\xff\xff"}
	var puts []*hbase.Put
	for _, s := range suffixes {
		puts = append(puts, &hbase.Put{Table: table, Row: []byte(p + s), Values: hbase.Values{cfF: {"k": []byte(p + s)}}})
	}
	// Rows just outside the prefix, and one row with family g only.
	for _, row := range []string{"rv", "rv0"} {
		puts = append(puts, &hbase.Put{Table: table, Row: []byte(row), Values: hbase.Values{cfF: {"k": []byte(row)}}})
	}
	puts = append(puts, &hbase.Put{Table: table, Row: []byte(p + "b"), Values: hbase.Values{cfG: {"y": []byte("gb")}}})
	if err := e.st.PutMany(e.ctx, puts); err != nil {
		t.Fatalf("PutMany: %v", err)
	}
	desc := slices.Clone(suffixes)
	slices.Sort(desc)
	slices.Reverse(desc)

	cases := []struct {
		name string
		scan hbase.Scan
		want []string
	}{
		{"prefix", hbase.Scan{Prefix: []byte(p)}, desc},
		{"prefix limit", hbase.Scan{Prefix: []byte(p), Limit: 3}, desc[:3]},
		{"prefix and stop", hbase.Scan{Prefix: []byte(p), Stop: []byte(p + "b")}, []string{"ab", "a\x00b", "a\x00", "a", "\x00", ""}},
		{"prefix and start", hbase.Scan{Prefix: []byte(p), Start: []byte(p + "a")}, []string{"\xff\xff", "\xff", "b/1", "b", "ab", "a\x00b", "a\x00", "a"}},
		{"start not ending in 00", hbase.Scan{Prefix: []byte(p), Start: []byte(p + "ab")}, []string{"\xff\xff", "\xff", "b/1", "b", "ab"}},
		{"start stop", hbase.Scan{Start: []byte(p + "a\x00"), Stop: []byte(p + "b/1")}, []string{"b", "ab", "a\x00b", "a\x00"}},
		{"start stop limit", hbase.Scan{Start: []byte(p + "a\x00"), Stop: []byte(p + "b/1"), Limit: 2}, []string{"b", "ab"}},
		{"stop is not a row", hbase.Scan{Prefix: []byte(p), Stop: []byte(p + "a\x00a")}, []string{"a\x00", "a", "\x00", ""}},
		{"prefix ff", hbase.Scan{Prefix: []byte(p + "\xff")}, []string{"\xff\xff", "\xff"}},
		{"prefix is a row", hbase.Scan{Prefix: []byte(p + "a")}, []string{"ab", "a\x00b", "a\x00", "a"}},
		{"no match", hbase.Scan{Prefix: []byte(p + "zz")}, nil},
		{"empty range", hbase.Scan{Start: []byte(p + "b"), Stop: []byte(p + "a")}, nil},
		{"families g", hbase.Scan{Prefix: []byte(p), Families: []string{cfG}}, []string{"b"}},
		{"families f limit", hbase.Scan{Prefix: []byte(p), Families: []string{cfF}, Limit: 1}, []string{"\xff\xff"}},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			s := c.scan
			s.Table, s.Reversed = table, true
			rs := cScan(t, e, &s)
			cWantRows(t, c.name, rs, p, c.want...)
			// The same rows as the forward scan, in reverse.
			fwd := c.scan
			fwd.Table, fwd.Limit = table, 0
			want := cScan(t, e, &fwd)
			slices.Reverse(want)
			if c.scan.Limit > 0 && len(want) > c.scan.Limit {
				want = want[:c.scan.Limit]
			}
			cWantRows(t, c.name+" vs forward", rs, p, cRowKeys(want, p)...)
			for _, r := range rs {
				if k := r.Value(cfF, "k"); k != nil && string(k) != string(r.Row) {
					t.Errorf("row %q: f:k = %q", r.Row, k)
				}
			}
		})
	}

	// Paging down two rows at a time: each page's Stop is the last row read.
	var paged []string
	s := hbase.Scan{Table: table, Prefix: []byte(p), Reversed: true, Limit: 2}
	for range len(suffixes) {
		rs := cScan(t, e, &s)
		if len(rs) == 0 {
			break
		}
		paged = append(paged, cRowKeys(rs, p)...)
		s.Stop = rs[len(rs)-1].Row
	}
	if !slices.Equal(paged, desc) {
		t.Errorf("paged down by 2: %q, want %q", paged, desc)
	}

	// Stopping early.
	n := 0
	err := e.st.Scan(e.ctx, &hbase.Scan{Table: table, Prefix: []byte(p), Reversed: true}, func(r *hbase.Result) error {
		n++
		if n == 2 {
			return hbase.ErrStopScan
		}
		return nil
	})
	if err != nil || n != 2 {
		t.Errorf("hbase.ErrStopScan after 2 rows: Scan = %v after %d rows", err, n)
	}

	// A range without an end.
	for _, s := range []hbase.Scan{{Table: table, Reversed: true}, {Table: table, Start: []byte(p), Reversed: true},
		{Table: table, Prefix: []byte{0xff, 0xff}, Reversed: true}} {
		err := e.st.Scan(e.ctx, &s, func(*hbase.Result) error { return nil })
		if !errors.Is(err, hbase.ErrUnboundedReverse) {
			t.Errorf("reversed scan %+v without an end: %v, want hbase.ErrUnboundedReverse", s, err)
		}
	}
}
