package remote

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase"
)

// Tests of Get, Put, Delete and the batch calls across tables on the real
// HBase.

func TestGetPut(t *testing.T) {
	st := gtStore(t)
	p := rowPrefix(t)
	row := []byte(p + "row")

	// A missing row: no cells, no error, Row set.
	r := mustGet(t, st, &hbase.Get{Table: gtTableA, Row: row})
	if r.Exists() || !bytes.Equal(r.Row, row) {
		t.Fatalf("missing row: %+v", r)
	}

	mustPut(t, st, &hbase.Put{Table: gtTableA, Row: row, Values: hbase.Values{
		"f": {"b": []byte("fb"), "a": []byte("fa"), "empty": {}},
		"g": {"x": []byte("gx")},
	}})
	r = mustGet(t, st, &hbase.Get{Table: gtTableA, Row: row})
	if got, want := cellsString(r.Cells, false), "f:a=fa f:b=fb f:empty= g:x=gx"; got != want {
		t.Errorf("Get = %s, want %s", got, want)
	}
	for _, c := range r.Cells {
		if d := time.Since(time.UnixMilli(c.Timestamp)); d < -time.Minute || d > time.Minute {
			t.Errorf("cell %s:%s timestamp %d is not ms near now", c.Family, c.Qualifier, c.Timestamp)
		}
	}
	if v := r.Value("f", "empty"); v == nil || len(v) != 0 {
		t.Errorf("empty value = %v, want empty non-nil", v)
	}

	// Families filter.
	r = mustGet(t, st, &hbase.Get{Table: gtTableA, Row: row, Families: []string{"g"}})
	if got := cellsString(r.Cells, false); got != "g:x=gx" {
		t.Errorf("Get families [g] = %s", got)
	}

	// Versions with explicit timestamps (family f keeps 3).
	vrow := []byte(p + "versions")
	for ts := int64(1_000); ts <= 4_000; ts += 1_000 {
		mustPut(t, st, &hbase.Put{Table: gtTableA, Row: vrow, Timestamp: ts, Values: hbase.Values{"f": {"q": []byte(fmt.Sprint(ts))}}})
	}
	cases := []struct {
		max  int
		want string
	}{
		{0, "f:q=4000@4000"},
		{1, "f:q=4000@4000"},
		{2, "f:q=4000@4000 f:q=3000@3000"},
		{10, "f:q=4000@4000 f:q=3000@3000 f:q=2000@2000"}, // the family keeps 3
	}
	for _, c := range cases {
		r := mustGet(t, st, &hbase.Get{Table: gtTableA, Row: vrow, MaxVersions: c.max})
		if got := cellsString(r.Cells, true); got != c.want {
			t.Errorf("MaxVersions %d: %s, want %s", c.max, got, c.want)
		}
	}
	// An older timestamp does not hide the newest.
	mustPut(t, st, &hbase.Put{Table: gtTableA, Row: vrow, Timestamp: 500, Values: hbase.Values{"f": {"q": []byte("old")}}})
	if v := mustGet(t, st, &hbase.Get{Table: gtTableA, Row: vrow}).Value("f", "q"); string(v) != "4000" {
		t.Errorf("newest after an older put = %q", v)
	}

	// TTL: a cell older than the family's 5 s TTL is not returned.
	trow := []byte(p + "ttl")
	old := time.Now().Add(-time.Minute).UnixMilli()
	mustPut(t, st, &hbase.Put{Table: gtTableA, Row: trow, Timestamp: old, Values: hbase.Values{"ttl": {"old": []byte("x")}}})
	mustPut(t, st, &hbase.Put{Table: gtTableA, Row: trow, Values: hbase.Values{"ttl": {"new": []byte("y")}}})
	if got := cellsString(mustGet(t, st, &hbase.Get{Table: gtTableA, Row: trow}).Cells, false); got != "ttl:new=y" {
		t.Errorf("TTL family = %s, want ttl:new=y", got)
	}

	// Binary rowkeys and qualifiers.
	brow := []byte{0, 0xff, 0x10, 0}
	brow = append([]byte(p), brow...)
	mustPut(t, st, &hbase.Put{Table: gtTableA, Row: brow, Values: hbase.Values{"f": {"\x00\xff": {1, 2, 3}}}})
	if v := mustGet(t, st, &hbase.Get{Table: gtTableA, Row: brow}).Value("f", "\x00\xff"); !bytes.Equal(v, []byte{1, 2, 3}) {
		t.Errorf("binary row = %v", v)
	}
}

func TestDelete(t *testing.T) {
	st := gtStore(t)
	p := rowPrefix(t)
	full := func(row string) {
		t.Helper()
		for ts := int64(1); ts <= 2; ts++ {
			mustPut(t, st, &hbase.Put{Table: gtTableA, Row: []byte(row), Timestamp: ts, Values: hbase.Values{
				"f": {"a": []byte("1"), "b": []byte("2")},
				"g": {"c": []byte("3")},
			}})
		}
	}
	cases := []struct {
		name   string
		values hbase.Values
		want   string // remaining cells, all versions
	}{
		{"whole row", nil, ""},
		{"whole family (nil map)", hbase.Values{"f": nil}, "g:c=3@2"},
		{"whole family (empty map)", hbase.Values{"f": {}}, "g:c=3@2"},
		{"one column, all versions", hbase.Values{"f": {"a": nil}}, "f:b=2@2 f:b=2@1 g:c=3@2"},
		{"columns of two families", hbase.Values{"f": {"b": []byte("ignored")}, "g": {"c": nil}}, "f:a=1@2 f:a=1@1"},
		{"missing column", hbase.Values{"f": {"zz": nil}}, "f:a=1@2 f:a=1@1 f:b=2@2 f:b=2@1 g:c=3@2"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			row := fmt.Sprintf("%sdel%d", p, i)
			full(row)
			if err := st.Delete(tctx(t), &hbase.Delete{Table: gtTableA, Row: []byte(row), Values: c.values}); err != nil {
				t.Fatalf("Delete: %v", err)
			}
			r := mustGet(t, st, &hbase.Get{Table: gtTableA, Row: []byte(row), MaxVersions: 10})
			if got := cellsString(r.Cells, true); got != c.want {
				t.Errorf("after delete: %s, want %s", got, c.want)
			}
		})
	}
	// Deleting a missing row is not an error.
	if err := st.Delete(tctx(t), &hbase.Delete{Table: gtTableA, Row: []byte(p + "never")}); err != nil {
		t.Errorf("Delete of a missing row: %v", err)
	}
}

func TestManyAcrossTables(t *testing.T) {
	st := gtStore(t)
	p := rowPrefix(t)
	rowA := []byte(p + "a")
	rowB1 := []byte("a" + p) // first region of table B
	rowB2 := []byte("z" + p) // second region
	puts := []*hbase.Put{
		{Table: gtTableA, Row: rowA, Values: hbase.Values{"f": {"q": []byte("A")}}},
		{Table: gtTableB, Row: rowB1, Values: hbase.Values{"f": {"q": []byte("B1")}}},
		{Table: gtTableB, Row: rowB2, Values: hbase.Values{"f": {"q": []byte("B2")}}},
		{Table: gtTableA, Row: rowA, Values: hbase.Values{"g": {"q": []byte("A2")}}},
	}
	if err := st.PutMany(tctx(t), puts); err != nil {
		t.Fatalf("PutMany: %v", err)
	}
	gets := []*hbase.Get{
		{Table: gtTableB, Row: rowB2},
		{Table: gtTableA, Row: []byte(p + "missing")},
		{Table: gtTableA, Row: rowA},
		{Table: gtTableB, Row: rowB1},
		{Table: gtTableA, Row: rowA, Families: []string{"g"}},
		{Table: gtTableB, Row: rowB2}, // duplicate
	}
	res, err := st.GetMany(tctx(t), gets)
	if err != nil {
		t.Fatalf("GetMany: %v", err)
	}
	want := []string{"f:q=B2", "", "f:q=A g:q=A2", "f:q=B1", "g:q=A2", "f:q=B2"}
	if len(res) != len(want) {
		t.Fatalf("GetMany returned %d results for %d gets", len(res), len(gets))
	}
	for i := range want {
		if got := cellsString(res[i].Cells, false); got != want[i] || !bytes.Equal(res[i].Row, gets[i].Row) {
			t.Errorf("GetMany[%d] = %q %s, want %q %s", i, res[i].Row, got, gets[i].Row, want[i])
		}
	}
	if res, err := st.GetMany(tctx(t), nil); err != nil || len(res) != 0 {
		t.Errorf("GetMany(nil) = %v, %v", res, err)
	}

	if err := st.DeleteMany(tctx(t), []*hbase.Delete{
		{Table: gtTableB, Row: rowB1},
		{Table: gtTableA, Row: rowA, Values: hbase.Values{"g": nil}},
		{Table: gtTableB, Row: rowB2, Values: hbase.Values{"f": {"q": nil}}},
	}); err != nil {
		t.Fatalf("DeleteMany: %v", err)
	}
	res, err = st.GetMany(tctx(t), []*hbase.Get{{Table: gtTableA, Row: rowA}, {Table: gtTableB, Row: rowB1}, {Table: gtTableB, Row: rowB2}})
	if err != nil {
		t.Fatalf("GetMany after DeleteMany: %v", err)
	}
	for i, want := range []string{"f:q=A", "", ""} {
		if got := cellsString(res[i].Cells, false); got != want {
			t.Errorf("after DeleteMany [%d] = %s, want %s", i, got, want)
		}
	}
	if err := st.PutMany(tctx(t), nil); err != nil {
		t.Errorf("PutMany(nil): %v", err)
	}
	if err := st.DeleteMany(tctx(t), nil); err != nil {
		t.Errorf("DeleteMany(nil): %v", err)
	}

	// A larger batch: 300 rows in one PutMany, read back with one GetMany.
	var bigPuts []*hbase.Put
	var bigGets []*hbase.Get
	for i := range 300 {
		table, row := gtTableA, []byte(fmt.Sprintf("%sbig%03d", p, i))
		if i%2 == 1 {
			table, row = gtTableB, []byte(fmt.Sprintf("%c%sbig%03d", "az"[i%4/2], p, i))
		}
		bigPuts = append(bigPuts, &hbase.Put{Table: table, Row: row, Values: hbase.Values{"f": {"i": be64(int64(i))}}})
		bigGets = append(bigGets, &hbase.Get{Table: table, Row: row})
	}
	if err := st.PutMany(tctx(t), bigPuts); err != nil {
		t.Fatalf("PutMany 300: %v", err)
	}
	res, err = st.GetMany(tctx(t), bigGets)
	if err != nil {
		t.Fatalf("GetMany 300: %v", err)
	}
	for i, r := range res {
		if v := r.Value("f", "i"); !bytes.Equal(v, be64(int64(i))) {
			t.Fatalf("GetMany 300 [%d] = %v", i, v)
		}
	}
}
