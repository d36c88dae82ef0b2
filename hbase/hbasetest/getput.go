package hbasetest

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase"
)

// The checks of Get and Put: missing rows, families, the order of a row's
// cells, overwrites, MaxVersions and explicit timestamps.

func cGetMissingRow(t *testing.T, e *cEnv) {
	for _, g := range []*hbase.Get{
		{Table: e.a, Row: []byte("missing/1")},
		{Table: e.a, Row: []byte("missing/1"), Families: []string{cfG}},
		{Table: e.a, Row: []byte("missing/1"), MaxVersions: 3},
		{Table: e.b, Row: []byte("missing/\x00\xff")},
	} {
		r := cGet(t, e, g)
		if r.Exists() || len(r.Cells) != 0 {
			t.Errorf("Get %+v of a missing row: %q", *g, cCellStrings(r, false))
		}
		if r.Value(cfF, "a") != nil || r.Cell(cfF, "a") != nil {
			t.Errorf("Get of a missing row: Value/Cell not nil")
		}
	}
}

func cPutGetFamilies(t *testing.T, e *cEnv) {
	row := []byte("pg/1")
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{
		cfF: {"a": []byte("1"), "b": []byte("2")},
		cfG: {"c": []byte("3")},
	}})
	r := cGet(t, e, &hbase.Get{Table: e.a, Row: row})
	if !bytes.Equal(r.Row, row) {
		t.Errorf("Row = %q, want %q", r.Row, row)
	}
	cWantCells(t, "all families", r, false, `f:"a"="1"`, `f:"b"="2"`, `g:"c"="3"`)
	if !r.Exists() {
		t.Errorf("Exists() = false")
	}
	if v := r.Value(cfF, "b"); string(v) != "2" {
		t.Errorf(`Value(f, b) = %q`, v)
	}
	if v := r.Value(cfF, "zz"); v != nil {
		t.Errorf(`Value(f, zz) = %q, want nil`, v)
	}
	// One Put: one timestamp for all its cells, the current time.
	ts := r.Cells[0].Timestamp
	for _, c := range r.Cells {
		if c.Timestamp != ts {
			t.Errorf("cells of one hbase.Put have timestamps %d and %d", ts, c.Timestamp)
		}
	}
	if !cNearNow(ts) {
		t.Errorf("timestamp %d (%v) is not the current time", ts, time.UnixMilli(ts))
	}

	cases := []struct {
		families []string
		want     []string
	}{
		{[]string{cfG}, []string{`g:"c"="3"`}},
		{[]string{cfF}, []string{`f:"a"="1"`, `f:"b"="2"`}},
		{[]string{cfG, cfF}, []string{`f:"a"="1"`, `f:"b"="2"`, `g:"c"="3"`}},
		{[]string{cfV}, nil},
		{[]string{cfV, cfG}, []string{`g:"c"="3"`}},
	}
	for _, c := range cases {
		r := cGet(t, e, &hbase.Get{Table: e.a, Row: row, Families: c.families})
		cWantCells(t, fmt.Sprintf("Families %q", c.families), r, false, c.want...)
	}
	if r := cGet(t, e, &hbase.Get{Table: e.a, Row: row, Families: []string{cfV}}); r.Exists() {
		t.Errorf("Get of a family the row lacks: Exists() = true")
	}
}

func cCellOrder(t *testing.T, e *cEnv) {
	row := []byte("order/1")
	quals := []string{"b", "a", "aa", "\x00", "\xff", "B", "", "a\x00", "\x00\x00"}
	fq := map[string][]byte{}
	for _, q := range quals {
		fq[q] = []byte("f" + q)
	}
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{
		cfV: {"z": []byte("vz"), "a": []byte("va")},
		cfG: {"a": []byte("ga")},
		cfF: fq,
	}})
	r := cGet(t, e, &hbase.Get{Table: e.a, Row: row})
	sorted := slices.Clone(quals)
	slices.Sort(sorted) // bytewise
	var want []string
	for _, q := range sorted {
		want = append(want, fmt.Sprintf("f:%q=%q", q, "f"+q))
	}
	want = append(want, `g:"a"="ga"`, `v:"a"="va"`, `v:"z"="vz"`)
	cWantCells(t, "cell order", r, false, want...)
	if got := len(r.Family(cfF)); got != len(quals) {
		t.Errorf("Family(f) has %d cells, want %d", got, len(quals))
	}
}

func cOverwrite(t *testing.T, e *cEnv) {
	row := []byte("over/1")
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfF: {"a": []byte("1"), "b": []byte("keep")}}})
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfF: {"a": []byte("2")}}})
	cWantCells(t, "after overwrite", cGet(t, e, &hbase.Get{Table: e.a, Row: row}), false, `f:"a"="2"`, `f:"b"="keep"`)
	// Family f keeps one version, whatever the Get asks for.
	cWantCells(t, "MaxVersions 3 on a 1-version family", cGet(t, e, &hbase.Get{Table: e.a, Row: row, MaxVersions: 3}), false,
		`f:"a"="2"`, `f:"b"="keep"`)

	// The same timestamp replaces the cell instead of adding a version.
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Timestamp: 5000, Values: hbase.Values{cfV: {"q": []byte("x")}}})
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Timestamp: 5000, Values: hbase.Values{cfV: {"q": []byte("y")}}})
	cWantCells(t, "same timestamp", cGet(t, e, &hbase.Get{Table: e.a, Row: row, Families: []string{cfV}, MaxVersions: 3}), true,
		`v:"q"="y"@5000`)
}

func cVersions(t *testing.T, e *cEnv) {
	row := []byte("ver/1")
	for i, ts := range []int64{1000, 2000, 3000, 4000} {
		cPut(t, e, &hbase.Put{Table: e.a, Row: row, Timestamp: ts, Values: hbase.Values{cfV: {"q": []byte(fmt.Sprintf("v%d", i+1))}}})
	}
	cases := []struct {
		maxVersions int
		want        []string
	}{
		{0, []string{`v:"q"="v4"@4000`}},
		{1, []string{`v:"q"="v4"@4000`}},
		{2, []string{`v:"q"="v4"@4000`, `v:"q"="v3"@3000`}},
		{3, []string{`v:"q"="v4"@4000`, `v:"q"="v3"@3000`, `v:"q"="v2"@2000`}},
		{10, []string{`v:"q"="v4"@4000`, `v:"q"="v3"@3000`, `v:"q"="v2"@2000`}},
	}
	for _, c := range cases {
		r := cGet(t, e, &hbase.Get{Table: e.a, Row: row, MaxVersions: c.maxVersions})
		cWantCells(t, fmt.Sprintf("MaxVersions %d", c.maxVersions), r, true, c.want...)
	}

	// An older version than the 3 kept is not visible; a version between
	// the kept ones is.
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Timestamp: 500, Values: hbase.Values{cfV: {"q": []byte("old")}}})
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Timestamp: 3500, Values: hbase.Values{cfV: {"q": []byte("v3.5")}}})
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Timestamp: 1000, Values: hbase.Values{cfV: {"p": []byte("p1")}}})
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Timestamp: 2000, Values: hbase.Values{cfV: {"p": []byte("p2")}}})
	r := cGet(t, e, &hbase.Get{Table: e.a, Row: row, MaxVersions: 3})
	cWantCells(t, "versions of two columns", r, true,
		`v:"p"="p2"@2000`, `v:"p"="p1"@1000`,
		`v:"q"="v4"@4000`, `v:"q"="v3.5"@3500`, `v:"q"="v3"@3000`)
	if c := r.Cell(cfV, "q"); c == nil || string(c.Value) != "v4" {
		t.Errorf("Cell(v, q) = %+v, want the newest", c)
	}
	if got := len(r.Family(cfV)); got != 2 {
		t.Errorf("Family(v) has %d cells, want 2 (newest of each qualifier)", got)
	}
}

func cExplicitTimestamp(t *testing.T, e *cEnv) {
	row := []byte("ts/1")
	const ts = int64(1_600_000_000_000)
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Timestamp: ts, Values: hbase.Values{cfF: {"a": []byte("new")}}})
	cWantCells(t, "explicit timestamp", cGet(t, e, &hbase.Get{Table: e.a, Row: row}), true, fmt.Sprintf(`f:"a"="new"@%d`, ts))
	// An older version in a 1-version family stays hidden behind the newer.
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Timestamp: ts - 1000, Values: hbase.Values{cfF: {"a": []byte("older")}}})
	cWantCells(t, "older put", cGet(t, e, &hbase.Get{Table: e.a, Row: row, MaxVersions: 3}), true, fmt.Sprintf(`f:"a"="new"@%d`, ts))
}
