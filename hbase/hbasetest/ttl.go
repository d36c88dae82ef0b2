package hbasetest

import (
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase"
)

// The check of a family's TTL: expired cells are absent to every call.

func cTTL(t *testing.T, e *cEnv) {
	old := time.Now().Add(-time.Hour).UnixMilli()
	row := []byte("ttl/1")
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Timestamp: old, Values: hbase.Values{cfTTL: {"old": []byte("gone")}, cfF: {"a": []byte("stays")}}})
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfTTL: {"new": []byte("here")}}})
	cWantCells(t, "expired cell", cGet(t, e, &hbase.Get{Table: e.a, Row: row}), false, `f:"a"="stays"`, `x:"new"="here"`)
	cWantCells(t, "expired cell, family x", cGet(t, e, &hbase.Get{Table: e.a, Row: row, Families: []string{cfTTL}, MaxVersions: 3}), false,
		`x:"new"="here"`)

	// A row holding only expired cells does not exist.
	cPut(t, e, &hbase.Put{Table: e.a, Row: []byte("ttl/2"), Timestamp: old, Values: hbase.Values{cfTTL: {"old": []byte("gone")}}})
	if r := cGet(t, e, &hbase.Get{Table: e.a, Row: []byte("ttl/2")}); r.Exists() {
		t.Errorf("row of expired cells: %q", cCellStrings(r, false))
	}
	cWantRows(t, "scan skips expired rows", cScan(t, e, &hbase.Scan{Table: e.a, Prefix: []byte("ttl/")}), "ttl/", "1")
	// An expired cell is absent to CheckAndPut too.
	ok, err := e.st.CheckAndPut(e.ctx, &hbase.Put{Table: e.a, Row: []byte("ttl/2"), Values: hbase.Values{cfTTL: {"old": []byte("again")}}}, cfTTL, "old", nil)
	if err != nil || !ok {
		t.Errorf("CheckAndPut(absent) on an expired cell = %v, %v; want true", ok, err)
	}
	cWantCells(t, "rewritten expired cell", cGet(t, e, &hbase.Get{Table: e.a, Row: []byte("ttl/2")}), false, `x:"old"="again"`)
}
