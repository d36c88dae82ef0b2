package hbasetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase"
)

// The checks of versions and deletes: the semantics of HBase's
// NEW_VERSION_BEHAVIOR, which the Store contract promises on every backend.
// Without it (HBase's default) a delete marker masks every Put of a
// timestamp <= its own until a major compaction: on the real HBase most of
// these checks then fail (on a table created without the setting, a good
// share of the CheckAndDelete→CheckAndPut cycles, of the Delete→Put cycles
// and of the Increments after a Delete lose their write).

// cycles is how many write cycles on one row the same-millisecond checks
// run: on a real HBase, consecutive calls land in the same millisecond often
// enough that a masked write shows up many times over.
const cycles = 1000

// cDelete deletes or fails t.
func cDelete(t *testing.T, e *cEnv, d *hbase.Delete) {
	t.Helper()
	if err := e.st.Delete(e.ctx, d); err != nil {
		t.Fatalf("Delete %s %q %+v @%d: %v", d.Table, d.Row, d.Values, d.Timestamp, err)
	}
}

// cVersionsOf reads every kept version of row (MaxVersions 10).
func cVersionsOf(t *testing.T, e *cEnv, row []byte, families ...string) *hbase.Result {
	t.Helper()
	return cGet(t, e, &hbase.Get{Table: e.a, Row: row, Families: families, MaxVersions: 10})
}

// cCheckAndDeleteThenCheckAndPut is the cycle of every two-row change of the
// domain: claim a row with CheckAndPut(absent), release it with
// CheckAndDelete(expected value), claim it again at once. Every applied
// CheckAndPut must be visible, even in the millisecond of the delete before it.
func cCheckAndDeleteThenCheckAndPut(t *testing.T, e *cEnv) {
	row := []byte("samems/cad-cap")
	lost := 0
	for i := range cycles {
		v := []byte(fmt.Sprint(i))
		ok, err := e.st.CheckAndPut(e.ctx, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfF: {"owner": v}}}, cfF, "owner", nil)
		if err != nil || !ok {
			t.Fatalf("cycle %d: CheckAndPut(absent) = %v, %v; want applied (the row was released)", i, ok, err)
		}
		visible := string(cGet(t, e, &hbase.Get{Table: e.a, Row: row}).Value(cfF, "owner")) == string(v)
		if !visible {
			lost++
		}
		ok, err = e.st.CheckAndDelete(e.ctx, &hbase.Delete{Table: e.a, Row: row}, cfF, "owner", v)
		if err != nil {
			t.Fatalf("cycle %d: CheckAndDelete: %v", i, err)
		}
		if ok != visible {
			t.Fatalf("cycle %d: CheckAndDelete(expected the value read back) = %v, want %v", i, ok, visible)
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d applied CheckAndPut(absent) were invisible right after (masked by the CheckAndDelete before them)", lost, cycles)
	}
}

// cDeleteThenPut: Put, Delete, Put again on one row, as fast as the store
// allows; the last Put must always be visible. Then the same with explicit
// timestamps older than the delete, which show the rule without timing.
func cDeleteThenPut(t *testing.T, e *cEnv) {
	row := []byte("samems/del-put")
	lost := 0
	for i := range cycles / 4 {
		cPut(t, e, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfF: {"a": []byte("old")}}})
		cDelete(t, e, &hbase.Delete{Table: e.a, Row: row})
		v := fmt.Sprint(i)
		cPut(t, e, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfF: {"a": []byte(v)}}})
		if got := cGet(t, e, &hbase.Get{Table: e.a, Row: row}).Value(cfF, "a"); string(got) != v {
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d Puts right after a Delete of the row were invisible", lost, cycles/4)
	}

	// A Put older than the delete, or at the timestamp of the version it
	// deleted, is visible: the delete hides only what existed before it.
	row = []byte("samems/older")
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Timestamp: 2000, Values: hbase.Values{cfF: {"a": []byte("t2000")}, cfV: {"q": []byte("t2000")}}})
	cDelete(t, e, &hbase.Delete{Table: e.a, Row: row})
	if r := cVersionsOf(t, e, row); r.Exists() {
		t.Fatalf("deleted row: %q", cCellStrings(r, true))
	}
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Timestamp: 1000, Values: hbase.Values{cfF: {"a": []byte("t1000")}, cfV: {"q": []byte("t1000")}}})
	cWantCells(t, "put @1000 after deleting the row", cVersionsOf(t, e, row), true, `f:"a"="t1000"@1000`, `v:"q"="t1000"@1000`)
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Timestamp: 2000, Values: hbase.Values{cfF: {"a": []byte("again")}, cfV: {"q": []byte("again")}}})
	cWantCells(t, "put @2000 (the deleted version's timestamp) after it", cVersionsOf(t, e, row), true,
		`f:"a"="again"@2000`, `v:"q"="again"@2000`, `v:"q"="t1000"@1000`)
	// A Put one second in the past, after deleting the row now.
	cDelete(t, e, &hbase.Delete{Table: e.a, Row: row})
	past := time.Now().Add(-time.Second).UnixMilli()
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Timestamp: past, Values: hbase.Values{cfF: {"a": []byte("past")}}})
	cWantCells(t, "put a second in the past after a delete now", cVersionsOf(t, e, row), false, `f:"a"="past"`)
}

// cPutDeletePut: the second Put after a Delete of the column, its family or
// its row is all that is left, in a family that keeps 3 versions too (the
// first Put does not come back as an older version).
func cPutDeletePut(t *testing.T, e *cEnv) {
	cases := []struct {
		name string
		del  hbase.Values
	}{
		{"row", nil},
		{"family", hbase.Values{cfV: nil}},
		{"column", hbase.Values{cfV: {"q": nil}}},
	}
	for _, c := range cases {
		row := []byte("pdp/" + c.name)
		cPut(t, e, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfV: {"q": []byte("first")}}})
		cDelete(t, e, &hbase.Delete{Table: e.a, Row: row, Values: c.del})
		cPut(t, e, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfV: {"q": []byte("second")}}})
		cWantCells(t, "put, delete "+c.name+", put", cVersionsOf(t, e, row), false, `v:"q"="second"`)
	}
	// The same through CheckAndDelete and CheckAndPut.
	row := []byte("pdp/check")
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfV: {"q": []byte("first")}}})
	if ok, err := e.st.CheckAndDelete(e.ctx, &hbase.Delete{Table: e.a, Row: row}, cfV, "q", []byte("first")); err != nil || !ok {
		t.Fatalf("CheckAndDelete = %v, %v", ok, err)
	}
	if ok, err := e.st.CheckAndPut(e.ctx, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfV: {"q": []byte("second")}}}, cfV, "q", nil); err != nil || !ok {
		t.Fatalf("CheckAndPut(absent) = %v, %v", ok, err)
	}
	cWantCells(t, "put, CheckAndDelete, CheckAndPut", cVersionsOf(t, e, row), false, `v:"q"="second"`)
}

// cDeleteOneVersion: a Delete with a Timestamp takes away exactly that
// version, of the named columns or of every column of a family.
func cDeleteOneVersion(t *testing.T, e *cEnv) {
	row := []byte("delver/1")
	for _, ts := range []int64{1000, 2000, 3000} {
		cPut(t, e, &hbase.Put{Table: e.a, Row: row, Timestamp: ts, Values: hbase.Values{cfV: {"q": []byte(fmt.Sprint("q", ts)), "p": []byte(fmt.Sprint("p", ts))}}})
	}
	cDelete(t, e, &hbase.Delete{Table: e.a, Row: row, Timestamp: 2000, Values: hbase.Values{cfV: {"q": nil}}})
	cWantCells(t, "v:q without version 2000", cVersionsOf(t, e, row), true,
		`v:"p"="p3000"@3000`, `v:"p"="p2000"@2000`, `v:"p"="p1000"@1000`,
		`v:"q"="q3000"@3000`, `v:"q"="q1000"@1000`)
	// The newest version deleted: the next one is the newest now.
	cDelete(t, e, &hbase.Delete{Table: e.a, Row: row, Timestamp: 3000, Values: hbase.Values{cfV: {"q": nil}}})
	if c := cGet(t, e, &hbase.Get{Table: e.a, Row: row}).Cell(cfV, "q"); c == nil || c.Timestamp != 1000 {
		t.Errorf("newest v:q after deleting versions 2000 and 3000 = %+v, want the one @1000", c)
	}
	// A version that does not exist: nothing happens, and a later Put at its
	// timestamp is visible.
	cDelete(t, e, &hbase.Delete{Table: e.a, Row: row, Timestamp: 5000, Values: hbase.Values{cfV: {"q": nil}}})
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Timestamp: 5000, Values: hbase.Values{cfV: {"q": []byte("q5000")}}})
	// A deleted version written again is back.
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Timestamp: 2000, Values: hbase.Values{cfV: {"q": []byte("again")}}})
	cWantCells(t, "v:q after rewriting", cVersionsOf(t, e, row, cfV), true,
		`v:"p"="p3000"@3000`, `v:"p"="p2000"@2000`, `v:"p"="p1000"@1000`,
		`v:"q"="q5000"@5000`, `v:"q"="again"@2000`, `v:"q"="q1000"@1000`)

	// One version of every column of a family (HBase's DeleteFamilyVersion);
	// other versions and families stay.
	row = []byte("delver/family")
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Timestamp: 7000, Values: hbase.Values{cfV: {"p": []byte("p7"), "q": []byte("q7")}, cfG: {"r": []byte("r7")}}})
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Timestamp: 8000, Values: hbase.Values{cfV: {"q": []byte("q8")}}})
	cDelete(t, e, &hbase.Delete{Table: e.a, Row: row, Timestamp: 7000, Values: hbase.Values{cfV: nil}})
	cWantCells(t, "after deleting version 7000 of family v", cVersionsOf(t, e, row), true, `g:"r"="r7"@7000`, `v:"q"="q8"@8000`)

	// Through DeleteMany and CheckAndDelete.
	row = []byte("delver/many")
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Timestamp: 1000, Values: hbase.Values{cfV: {"q": []byte("1")}}})
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Timestamp: 2000, Values: hbase.Values{cfV: {"q": []byte("2")}}})
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Timestamp: 3000, Values: hbase.Values{cfV: {"q": []byte("3")}}})
	if err := e.st.DeleteMany(e.ctx, []*hbase.Delete{{Table: e.a, Row: row, Timestamp: 1000, Values: hbase.Values{cfV: {"q": nil}}}}); err != nil {
		t.Fatalf("DeleteMany of one version: %v", err)
	}
	ok, err := e.st.CheckAndDelete(e.ctx, &hbase.Delete{Table: e.a, Row: row, Timestamp: 3000, Values: hbase.Values{cfV: {"q": nil}}}, cfV, "q", []byte("3"))
	if err != nil || !ok {
		t.Fatalf("CheckAndDelete of one version = %v, %v", ok, err)
	}
	cWantCells(t, "after DeleteMany @1000 and CheckAndDelete @3000", cVersionsOf(t, e, row), true, `v:"q"="2"@2000`)

	// A version must name what to delete, and be positive.
	for _, bad := range []*hbase.Delete{
		{Table: e.a, Row: row, Timestamp: 2000},
		{Table: e.a, Row: row, Timestamp: -1, Values: hbase.Values{cfV: {"q": nil}}},
	} {
		if err := e.st.Delete(e.ctx, bad); err == nil {
			t.Errorf("Delete %+v succeeded", *bad)
		}
		if _, err := e.st.CheckAndDelete(e.ctx, bad, cfV, "q", []byte("2")); err == nil {
			t.Errorf("CheckAndDelete %+v succeeded", *bad)
		}
	}
	cWantCells(t, "after the refused deletes", cVersionsOf(t, e, row), true, `v:"q"="2"@2000`)
}

// cVersionsStayGone: a version pushed out of MaxVersions by newer ones never
// comes back when the newer ones are deleted. (Without NEW_VERSION_BEHAVIOR,
// HBase shows it again until a major compaction drops it.)
func cVersionsStayGone(t *testing.T, e *cEnv) {
	// One version kept: a Put older than the kept one is pushed out at once.
	row := []byte("gone/1")
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Timestamp: 2000, Values: hbase.Values{cfF: {"a": []byte("new")}}})
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Timestamp: 1000, Values: hbase.Values{cfF: {"a": []byte("old")}}})
	cWantCells(t, "1-version family, older put second", cVersionsOf(t, e, row), true, `f:"a"="new"@2000`)
	cDelete(t, e, &hbase.Delete{Table: e.a, Row: row, Timestamp: 2000, Values: hbase.Values{cfF: {"a": nil}}})
	cWantCells(t, "1-version family after deleting the kept version", cVersionsOf(t, e, row), true)

	// Two puts at one timestamp: the second replaces the first, for good.
	row = []byte("gone/2")
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Timestamp: 5000, Values: hbase.Values{cfF: {"a": []byte("first")}}})
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Timestamp: 5000, Values: hbase.Values{cfF: {"a": []byte("second")}}})
	cWantCells(t, "two puts at one timestamp", cVersionsOf(t, e, row), true, `f:"a"="second"@5000`)
	cDelete(t, e, &hbase.Delete{Table: e.a, Row: row, Timestamp: 5000, Values: hbase.Values{cfF: {"a": nil}}})
	cWantCells(t, "after deleting that version", cVersionsOf(t, e, row), true)

	// Three versions kept of four: deleting the newest leaves two.
	row = []byte("gone/3")
	for _, ts := range []int64{1000, 2000, 3000, 4000} {
		cPut(t, e, &hbase.Put{Table: e.a, Row: row, Timestamp: ts, Values: hbase.Values{cfV: {"q": []byte(fmt.Sprint(ts))}}})
	}
	cDelete(t, e, &hbase.Delete{Table: e.a, Row: row, Timestamp: 4000, Values: hbase.Values{cfV: {"q": nil}}})
	cWantCells(t, "3-version family after deleting the newest of 4", cVersionsOf(t, e, row), true,
		`v:"q"="3000"@3000`, `v:"q"="2000"@2000`)

	// Several default-timestamp puts of one row in one batch and in a row:
	// the last one is the value, whatever millisecond they share.
	for i := range 50 {
		row := []byte(fmt.Sprintf("gone/batch/%d", i))
		err := e.st.PutMany(e.ctx, []*hbase.Put{
			{Table: e.a, Row: row, Values: hbase.Values{cfF: {"a": []byte("1")}}},
			{Table: e.a, Row: row, Values: hbase.Values{cfF: {"a": []byte("2")}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		cPut(t, e, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfF: {"b": []byte("1")}}})
		cPut(t, e, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfF: {"b": []byte("2")}}})
		cWantCells(t, "puts of one row in one batch, then in a row", cGet(t, e, &hbase.Get{Table: e.a, Row: row}), false, `f:"a"="2"`, `f:"b"="2"`)
	}
}

// cIncrementAfterDelete: a counter deleted and incremented at once starts
// again from 0, visibly.
func cIncrementAfterDelete(t *testing.T, e *cEnv) {
	row := []byte("incdel/1")
	inc := &hbase.Increment{Table: e.a, Row: row, Family: cfF, Qualifier: "n", Amount: 1}
	lost := 0
	for i := range cycles / 4 {
		if _, err := e.st.Increment(e.ctx, inc); err != nil {
			t.Fatal(err)
		}
		cDelete(t, e, &hbase.Delete{Table: e.a, Row: row})
		v, err := e.st.Increment(e.ctx, inc)
		if err != nil {
			t.Fatal(err)
		}
		if v != 1 {
			t.Fatalf("cycle %d: Increment after deleting the counter = %d, want 1", i, v)
		}
		if got := cGet(t, e, &hbase.Get{Table: e.a, Row: row}).Value(cfF, "n"); string(got) != string(cBE64(1)) {
			lost++
		}
		cDelete(t, e, &hbase.Delete{Table: e.a, Row: row})
	}
	if lost > 0 {
		t.Errorf("%d of %d Increments right after a Delete of the counter were invisible", lost, cycles/4)
	}
}

// cDeleteSparesFuture: a Delete without a timestamp takes the versions up to
// its own time only; a cell with a timestamp in the future stays, and a
// CheckAndPut that checks it writes at its timestamp (HBase writes a
// conditional Put at max(now, the checked cell's timestamp)).
func cDeleteSparesFuture(t *testing.T, e *cEnv) {
	row := []byte("future/1")
	future := time.Now().Add(time.Hour).UnixMilli()
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Timestamp: future, Values: hbase.Values{cfF: {"a": []byte("future")}}})
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfF: {"b": []byte("now")}}})
	cDelete(t, e, &hbase.Delete{Table: e.a, Row: row})
	cWantCells(t, "after deleting the row", cVersionsOf(t, e, row), true, fmt.Sprintf(`f:"a"="future"@%d`, future))
	ok, err := e.st.CheckAndPut(e.ctx, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfF: {"c": []byte("checked")}}}, cfF, "a", []byte("future"))
	if err != nil || !ok {
		t.Fatalf("CheckAndPut = %v, %v", ok, err)
	}
	cWantCells(t, "CheckAndPut checking a future cell", cVersionsOf(t, e, row), true,
		fmt.Sprintf(`f:"a"="future"@%d`, future), fmt.Sprintf(`f:"c"="checked"@%d`, future))
	// A Delete of that one version does take it.
	cDelete(t, e, &hbase.Delete{Table: e.a, Row: row, Timestamp: future, Values: hbase.Values{cfF: nil}})
	if r := cVersionsOf(t, e, row); r.Exists() {
		t.Errorf("after deleting version %d of family f: %q", future, cCellStrings(r, true))
	}
	if err := e.st.Delete(e.ctx, &hbase.Delete{Table: e.a, Row: row, Timestamp: future, Values: hbase.Values{"nope": nil}}); !errors.Is(err, hbase.ErrFamilyNotFound) {
		t.Errorf("Delete of one version of an unknown family: %v, want ErrFamilyNotFound", err)
	}
}
