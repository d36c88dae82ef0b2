package hbase

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
)

func TestPrefixEnd(t *testing.T) {
	for _, c := range []struct{ prefix, want []byte }{
		{nil, nil},
		{[]byte{}, nil},
		{[]byte("a"), []byte("b")},
		{[]byte("ab"), []byte("ac")},
		{[]byte("a\xff"), []byte("b")},
		{[]byte("a\xff\xff"), []byte("b")},
		{[]byte("\xff"), nil},
		{[]byte("\xff\xff"), nil},
		{[]byte{0x00}, []byte{0x01}},
	} {
		prefix := bytes.Clone(c.prefix)
		if got := PrefixEnd(prefix); !bytes.Equal(got, c.want) || (got == nil) != (c.want == nil) {
			t.Errorf("PrefixEnd(%q) = %q, want %q", c.prefix, got, c.want)
		}
		if !bytes.Equal(prefix, c.prefix) {
			t.Errorf("PrefixEnd(%q) changed its argument to %q", c.prefix, prefix)
		}
	}
}

func TestScanRange(t *testing.T) {
	for _, c := range []struct {
		name        string
		scan        Scan
		start, stop string
	}{
		{"nothing", Scan{}, "", ""},
		{"start stop", Scan{Start: []byte("b"), Stop: []byte("d")}, "b", "d"},
		{"prefix", Scan{Prefix: []byte("p/")}, "p/", "p0"},
		{"prefix, start inside", Scan{Prefix: []byte("p/"), Start: []byte("p/x")}, "p/x", "p0"},
		{"prefix, start before", Scan{Prefix: []byte("p/"), Start: []byte("a")}, "p/", "p0"},
		{"prefix, stop inside", Scan{Prefix: []byte("p/"), Stop: []byte("p/m")}, "p/", "p/m"},
		{"prefix, stop after", Scan{Prefix: []byte("p/"), Stop: []byte("z")}, "p/", "p0"},
		{"prefix of 0xff", Scan{Prefix: []byte("\xff\xff")}, "\xff\xff", ""},
	} {
		start, stop := ScanRange(&c.scan)
		if string(start) != c.start || string(stop) != c.stop {
			t.Errorf("%s: ScanRange = [%q, %q), want [%q, %q)", c.name, start, stop, c.start, c.stop)
		}
	}
}

func TestSortCellsAndResult(t *testing.T) {
	cells := []*Cell{
		{Family: "g", Qualifier: "a", Value: []byte("ga"), Timestamp: 1},
		{Family: "f", Qualifier: "b", Value: []byte("fb1"), Timestamp: 1},
		{Family: "f", Qualifier: "a", Value: []byte("fa"), Timestamp: 5},
		{Family: "f", Qualifier: "b", Value: []byte("fb3"), Timestamp: 3},
		{Family: "f", Qualifier: "a\x00", Value: []byte("fa0"), Timestamp: 2},
	}
	SortCells(cells)
	var got []string
	for _, c := range cells {
		got = append(got, fmt.Sprintf("%s:%q@%d", c.Family, c.Qualifier, c.Timestamp))
	}
	want := []string{`f:"a"@5`, `f:"a\x00"@2`, `f:"b"@3`, `f:"b"@1`, `g:"a"@1`}
	if !slices.Equal(got, want) {
		t.Fatalf("SortCells order\n got  %q\n want %q", got, want)
	}

	r := &Result{Row: []byte("r"), Cells: cells}
	if !r.Exists() || (&Result{}).Exists() || (*Result)(nil).Exists() {
		t.Errorf("Exists: wrong for a row with cells, without, or nil")
	}
	if v := r.Value("f", "b"); string(v) != "fb3" {
		t.Errorf(`Value(f, b) = %q, want the newest "fb3"`, v)
	}
	if v := r.Value("f", "zz"); v != nil {
		t.Errorf("Value of an absent cell = %q, want nil", v)
	}
	if c := (*Result)(nil).Cell("f", "a"); c != nil {
		t.Errorf("Cell of a nil Result = %+v", c)
	}
	var fam []string
	for _, c := range r.Family("f") {
		fam = append(fam, string(c.Value))
	}
	if want := []string{"fa", "fa0", "fb3"}; !slices.Equal(fam, want) {
		t.Errorf("Family(f) = %q, want %q (newest of each qualifier)", fam, want)
	}
	if f := r.Family("none"); len(f) != 0 {
		t.Errorf("Family(none) = %d cells", len(f))
	}
}
