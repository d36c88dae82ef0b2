package hbasetest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/weibohbase/gateway/hbase"
)

// The checks of the batch calls: GetMany, PutMany and DeleteMany, across
// tables.

func cGetMany(t *testing.T, e *cEnv) {
	cPut(t, e, &hbase.Put{Table: e.a, Row: []byte("gm/1"), Values: hbase.Values{cfF: {"a": []byte("A1")}, cfG: {"b": []byte("A1g")}}})
	cPut(t, e, &hbase.Put{Table: e.b, Row: []byte("gm/1"), Values: hbase.Values{cfF: {"a": []byte("B1")}}})
	cPut(t, e, &hbase.Put{Table: e.a, Row: []byte("gm/2"), Values: hbase.Values{cfG: {"c": []byte("A2")}}})
	gets := []*hbase.Get{
		{Table: e.a, Row: []byte("gm/1")},
		{Table: e.b, Row: []byte("gm/1")},
		{Table: e.a, Row: []byte("gm/missing")},
		{Table: e.b, Row: []byte("gm/2")}, // exists in a only
		{Table: e.a, Row: []byte("gm/2"), Families: []string{cfG}},
		{Table: e.a, Row: []byte("gm/1"), Families: []string{cfG}},
		{Table: e.a, Row: []byte("gm/1")}, // the same get twice
	}
	want := [][]string{
		{`f:"a"="A1"`, `g:"b"="A1g"`},
		{`f:"a"="B1"`},
		nil,
		nil,
		{`g:"c"="A2"`},
		{`g:"b"="A1g"`},
		{`f:"a"="A1"`, `g:"b"="A1g"`},
	}
	rs, err := e.st.GetMany(e.ctx, gets)
	if err != nil {
		t.Fatalf("GetMany: %v", err)
	}
	if len(rs) != len(gets) {
		t.Fatalf("GetMany returned %d results for %d gets", len(rs), len(gets))
	}
	for i, r := range rs {
		cWantCells(t, fmt.Sprintf("result %d (%s %q)", i, gets[i].Table, gets[i].Row), r, false, want[i]...)
		if r.Exists() && !bytes.Equal(r.Row, gets[i].Row) {
			t.Errorf("result %d: Row = %q, want %q", i, r.Row, gets[i].Row)
		}
	}
	if rs, err := e.st.GetMany(e.ctx, nil); err != nil || len(rs) != 0 {
		t.Errorf("GetMany(nil) = %d results, %v", len(rs), err)
	}
}

func cPutManyDeleteMany(t *testing.T, e *cEnv) {
	const n = 40
	var puts []*hbase.Put
	for i := range n {
		row := []byte(fmt.Sprintf("pm/%03d", i))
		puts = append(puts,
			&hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfF: {"n": []byte(fmt.Sprint(i))}}},
			&hbase.Put{Table: e.b, Row: row, Values: hbase.Values{cfF: {"n": []byte(fmt.Sprint(-i))}}})
	}
	// Two puts of one row in one batch: both apply.
	puts = append(puts,
		&hbase.Put{Table: e.a, Row: []byte("pm/dup"), Values: hbase.Values{cfF: {"a": []byte("1")}}},
		&hbase.Put{Table: e.a, Row: []byte("pm/dup"), Values: hbase.Values{cfG: {"b": []byte("2")}}})
	rand.Shuffle(len(puts), func(i, j int) { puts[i], puts[j] = puts[j], puts[i] })
	if err := e.st.PutMany(e.ctx, puts); err != nil {
		t.Fatalf("PutMany: %v", err)
	}
	if err := e.st.PutMany(e.ctx, nil); err != nil {
		t.Errorf("PutMany(nil): %v", err)
	}
	cWantCells(t, "row put twice in one batch", cGet(t, e, &hbase.Get{Table: e.a, Row: []byte("pm/dup")}), false, `f:"a"="1"`, `g:"b"="2"`)

	ra := cScan(t, e, &hbase.Scan{Table: e.a, Prefix: []byte("pm/0")})
	rb := cScan(t, e, &hbase.Scan{Table: e.b, Prefix: []byte("pm/0")})
	if len(ra) != n || len(rb) != n {
		t.Fatalf("after PutMany: %d rows in a, %d in b, want %d each", len(ra), len(rb), n)
	}
	for i := range n {
		if got, want := string(ra[i].Value(cfF, "n")), fmt.Sprint(i); got != want {
			t.Errorf("a row %d: n = %q, want %q", i, got, want)
		}
		if got, want := string(rb[i].Value(cfF, "n")), fmt.Sprint(-i); got != want {
			t.Errorf("b row %d: n = %q, want %q", i, got, want)
		}
	}

	var dels []*hbase.Delete
	var wantA, wantB []string
	for i := range n {
		row := fmt.Sprintf("pm/%03d", i)
		if i%2 == 0 {
			dels = append(dels, &hbase.Delete{Table: e.a, Row: []byte(row)})
			wantB = append(wantB, row)
		} else {
			dels = append(dels, &hbase.Delete{Table: e.b, Row: []byte(row), Values: hbase.Values{cfF: nil}})
			wantA = append(wantA, row)
		}
	}
	if err := e.st.DeleteMany(e.ctx, dels); err != nil {
		t.Fatalf("DeleteMany: %v", err)
	}
	if err := e.st.DeleteMany(e.ctx, nil); err != nil {
		t.Errorf("DeleteMany(nil): %v", err)
	}
	cWantRows(t, "a after DeleteMany", cScan(t, e, &hbase.Scan{Table: e.a, Prefix: []byte("pm/0")}), "", wantA...)
	cWantRows(t, "b after DeleteMany", cScan(t, e, &hbase.Scan{Table: e.b, Prefix: []byte("pm/0")}), "", wantB...)
}
