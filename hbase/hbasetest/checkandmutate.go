package hbasetest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/weibohbase/gateway/hbase"
)

// The checks of the conditional writes: CheckAndPut and CheckAndDelete,
// alone and under concurrency.

func cCheckAndPutAbsent(t *testing.T, e *cEnv) {
	row := []byte("cap/absent")
	put := func(v string) *hbase.Put {
		return &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfF: {"a": []byte(v)}}}
	}
	ok, err := e.st.CheckAndPut(e.ctx, put("first"), cfF, "a", nil)
	if err != nil || !ok {
		t.Fatalf("first CheckAndPut(absent) = %v, %v; want true", ok, err)
	}
	ok, err = e.st.CheckAndPut(e.ctx, put("second"), cfF, "a", nil)
	if err != nil || ok {
		t.Fatalf("second CheckAndPut(absent) = %v, %v; want false", ok, err)
	}
	cWantCells(t, "after two CheckAndPut(absent)", cGet(t, e, &hbase.Get{Table: e.a, Row: row}), false, `f:"a"="first"`)
}

func cCheckAndPutValue(t *testing.T, e *cEnv) {
	row := []byte("cap/value")
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfF: {"lock": []byte("v1")}}})
	cases := []struct {
		name     string
		family   string
		qual     string
		expected []byte
		data     string
		applied  bool
	}{
		{"match", cfF, "lock", []byte("v1"), "one", true},
		{"mismatch", cfF, "lock", []byte("v2"), "two", false},
		{"prefix of the value", cfF, "lock", []byte("v"), "three", false},
		{"value expected, cell absent", cfF, "nolock", []byte("v1"), "four", false},
		{"absent expected, cell present", cfF, "lock", nil, "five", false},
		{"absent expected, cell absent", cfG, "lock", nil, "six", true},
	}
	want := ""
	for _, c := range cases {
		ok, err := e.st.CheckAndPut(e.ctx, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfG: {"data": []byte(c.data)}}},
			c.family, c.qual, c.expected)
		if err != nil || ok != c.applied {
			t.Errorf("%s: CheckAndPut = %v, %v; want %v", c.name, ok, err, c.applied)
		}
		if c.applied {
			want = c.data
		}
		if got := cGet(t, e, &hbase.Get{Table: e.a, Row: row}).Value(cfG, "data"); string(got) != want {
			t.Errorf("%s: g:data = %q, want %q", c.name, got, want)
		}
	}
	// Check one column, put the same one.
	ok, err := e.st.CheckAndPut(e.ctx, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfF: {"lock": []byte("v2")}}}, cfF, "lock", []byte("v1"))
	if err != nil || !ok {
		t.Errorf("CheckAndPut swapping the checked cell = %v, %v", ok, err)
	}
	if got := cGet(t, e, &hbase.Get{Table: e.a, Row: row}).Value(cfF, "lock"); string(got) != "v2" {
		t.Errorf("after swap: f:lock = %q", got)
	}
}

// cCheckAndPutEmptyValue pins HBase's rule: an expected nil (or empty) value
// matches an absent cell and also a cell whose value is empty.
func cCheckAndPutEmptyValue(t *testing.T, e *cEnv) {
	row := []byte("cap/empty")
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfF: {"e": {}}}})
	r := cGet(t, e, &hbase.Get{Table: e.a, Row: row})
	if c := r.Cell(cfF, "e"); c == nil || len(c.Value) != 0 {
		t.Fatalf("empty value cell: %+v", c)
	}
	ok, err := e.st.CheckAndPut(e.ctx, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfG: {"d": []byte("1")}}}, cfF, "e", nil)
	if err != nil || !ok {
		t.Errorf("CheckAndPut(expected nil) on an empty value = %v, %v; want true (HBase)", ok, err)
	}
	ok, err = e.st.CheckAndPut(e.ctx, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfG: {"d": []byte("2")}}}, cfF, "e", []byte{})
	if err != nil || !ok {
		t.Errorf("CheckAndPut(expected empty) on an empty value = %v, %v; want true", ok, err)
	}
	ok, err = e.st.CheckAndPut(e.ctx, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfG: {"d": []byte("3")}}}, cfG, "d", []byte{})
	if err != nil || ok {
		t.Errorf("CheckAndPut(expected empty) on a non-empty value = %v, %v; want false", ok, err)
	}
}

func cCheckAndDelete(t *testing.T, e *cEnv) {
	row := []byte("cad/1")
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfF: {"a": []byte("v"), "b": []byte("w")}, cfG: {"c": []byte("x")}}})
	cases := []struct {
		name     string
		del      *hbase.Delete
		qual     string
		expected []byte
		applied  bool
		after    []string
	}{
		{"mismatch", &hbase.Delete{Table: e.a, Row: row}, "a", []byte("nope"), false,
			[]string{`f:"a"="v"`, `f:"b"="w"`, `g:"c"="x"`}},
		{"absent expected, cell present", &hbase.Delete{Table: e.a, Row: row}, "a", nil, false,
			[]string{`f:"a"="v"`, `f:"b"="w"`, `g:"c"="x"`}},
		{"match, delete family g", &hbase.Delete{Table: e.a, Row: row, Values: hbase.Values{cfG: nil}}, "a", []byte("v"), true,
			[]string{`f:"a"="v"`, `f:"b"="w"`}},
		{"match, delete column f:b", &hbase.Delete{Table: e.a, Row: row, Values: hbase.Values{cfF: {"b": nil}}}, "a", []byte("v"), true,
			[]string{`f:"a"="v"`}},
		{"match, delete row", &hbase.Delete{Table: e.a, Row: row}, "a", []byte("v"), true, nil},
		{"deleted cell no longer matches", &hbase.Delete{Table: e.a, Row: row}, "a", []byte("v"), false, nil},
		{"absent expected, row absent", &hbase.Delete{Table: e.a, Row: row}, "a", nil, true, nil},
	}
	for _, c := range cases {
		ok, err := e.st.CheckAndDelete(e.ctx, c.del, cfF, c.qual, c.expected)
		if err != nil || ok != c.applied {
			t.Errorf("%s: CheckAndDelete = %v, %v; want %v", c.name, ok, err, c.applied)
		}
		cWantCells(t, c.name, cGet(t, e, &hbase.Get{Table: e.a, Row: row}), false, c.after...)
	}
}

func cCheckAndPutConcurrent(t *testing.T, e *cEnv) {
	const workers = 16
	row := []byte("cap/concurrent")
	var wg sync.WaitGroup
	wins := make(chan string, workers)
	start := make(chan struct{})
	for i := range workers {
		wg.Go(func() {
			<-start
			v := fmt.Sprintf("w%d", i)
			ok, err := e.st.CheckAndPut(e.ctx, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfF: {"owner": []byte(v)}}}, cfF, "owner", nil)
			if err != nil {
				t.Errorf("CheckAndPut: %v", err)
			}
			if ok {
				wins <- v
			}
		})
	}
	close(start)
	wg.Wait()
	close(wins)
	var winners []string
	for w := range wins {
		winners = append(winners, w)
	}
	if len(winners) != 1 {
		t.Fatalf("%d CheckAndPut(absent) calls won (%q), want exactly 1", len(winners), winners)
	}
	if v := cGet(t, e, &hbase.Get{Table: e.a, Row: row}).Value(cfF, "owner"); string(v) != winners[0] {
		t.Errorf("owner = %q, want the winner %q", v, winners[0])
	}
}
