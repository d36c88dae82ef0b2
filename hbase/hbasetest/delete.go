package hbasetest

import (
	"fmt"
	"testing"

	"github.com/weibohbase/gateway/hbase"
)

// The checks of Delete: of a whole row, of families, of columns.

func cDeleteRow(t *testing.T, e *cEnv) {
	rows := []string{"del/r", "del/", "del/r\x00", "del/rr", "del/q"}
	for _, row := range rows {
		cPut(t, e, &hbase.Put{Table: e.a, Row: []byte(row), Values: hbase.Values{cfF: {"a": []byte(row)}, cfG: {"b": []byte("g")}}})
	}
	cPut(t, e, &hbase.Put{Table: e.a, Row: []byte("del/r"), Timestamp: 1000, Values: hbase.Values{cfV: {"a": []byte("1")}}})
	if err := e.st.Delete(e.ctx, &hbase.Delete{Table: e.a, Row: []byte("del/r")}); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if r := cGet(t, e, &hbase.Get{Table: e.a, Row: []byte("del/r"), MaxVersions: 3}); r.Exists() {
		t.Errorf("deleted row still has %q", cCellStrings(r, false))
	}
	for _, row := range rows[1:] {
		cWantCells(t, fmt.Sprintf("neighbour %q", row), cGet(t, e, &hbase.Get{Table: e.a, Row: []byte(row)}), false,
			fmt.Sprintf("f:%q=%q", "a", row), `g:"b"="g"`)
	}
	cWantRows(t, "scan after delete", cScan(t, e, &hbase.Scan{Table: e.a, Prefix: []byte("del/")}), "del/",
		"", "q", "r\x00", "rr")
	// Deleting a missing row is fine.
	if err := e.st.Delete(e.ctx, &hbase.Delete{Table: e.a, Row: []byte("del/missing")}); err != nil {
		t.Errorf("Delete of a missing row: %v", err)
	}
}

func cDeleteFamily(t *testing.T, e *cEnv) {
	row := []byte("delfam/1")
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfF: {"a": []byte("1"), "b": []byte("2")}, cfG: {"c": []byte("3")}}})
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Timestamp: 1000, Values: hbase.Values{cfV: {"d": []byte("4")}}})
	if err := e.st.Delete(e.ctx, &hbase.Delete{Table: e.a, Row: row, Values: hbase.Values{cfF: nil}}); err != nil {
		t.Fatalf("Delete family f: %v", err)
	}
	cWantCells(t, "after deleting f", cGet(t, e, &hbase.Get{Table: e.a, Row: row}), false, `g:"c"="3"`, `v:"d"="4"`)
	if err := e.st.Delete(e.ctx, &hbase.Delete{Table: e.a, Row: row, Values: hbase.Values{cfG: {}, cfV: nil}}); err != nil {
		t.Fatalf("Delete families g, v: %v", err)
	}
	if r := cGet(t, e, &hbase.Get{Table: e.a, Row: row}); r.Exists() {
		t.Errorf("row still has %q", cCellStrings(r, false))
	}
}

func cDeleteColumns(t *testing.T, e *cEnv) {
	row := []byte("delcol/1")
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfF: {"a": []byte("1"), "b": []byte("2"), "a\x00": []byte("3")}}})
	for _, ts := range []int64{1000, 2000, 3000} {
		cPut(t, e, &hbase.Put{Table: e.a, Row: row, Timestamp: ts, Values: hbase.Values{cfV: {"q": []byte(fmt.Sprint(ts)), "p": []byte("p")}}})
	}
	err := e.st.Delete(e.ctx, &hbase.Delete{Table: e.a, Row: row, Values: hbase.Values{
		cfF: {"a": nil},
		cfV: {"q": []byte("ignored")},
	}})
	if err != nil {
		t.Fatalf("Delete columns: %v", err)
	}
	cWantCells(t, "after deleting f:a", cGet(t, e, &hbase.Get{Table: e.a, Row: row, Families: []string{cfF}}), false,
		`f:"a\x00"="3"`, `f:"b"="2"`)
	cWantCells(t, "after deleting every version of v:q", cGet(t, e, &hbase.Get{Table: e.a, Row: row, Families: []string{cfV}, MaxVersions: 3}), true,
		`v:"p"="p"@3000`, `v:"p"="p"@2000`, `v:"p"="p"@1000`)
}
