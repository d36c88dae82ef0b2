package hbasetest

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/weibohbase/gateway/hbase"
)

// The checks of MutateRow: a row's deletes and puts in one atomic step.

func cMutateRow(t *testing.T, e *cEnv) {
	row := []byte("mutate/1")
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{
		cfF: {"a": []byte("old a"), "b": []byte("old b")},
		cfG: {"c": []byte("c"), "d": []byte("d")},
	}})
	mutate := func(m *hbase.RowMutation) {
		t.Helper()
		m.Table, m.Row = e.a, row
		if err := e.st.MutateRow(e.ctx, m); err != nil {
			t.Fatalf("MutateRow: %v", err)
		}
	}
	mutate(&hbase.RowMutation{Put: hbase.Values{cfF: {"a": []byte("new a")}, cfG: {"e": []byte("e")}}, Delete: hbase.Values{cfF: {"b": nil}, cfG: {"d": nil}}})
	cWantCells(t, "put and delete columns", cGet(t, e, &hbase.Get{Table: e.a, Row: row}), false,
		`f:"a"="new a"`, `g:"c"="c"`, `g:"e"="e"`)
	mutate(&hbase.RowMutation{Put: hbase.Values{cfF: {"z": []byte("z")}}, Delete: hbase.Values{cfG: nil}})
	cWantCells(t, "put, delete a whole family", cGet(t, e, &hbase.Get{Table: e.a, Row: row}), false,
		`f:"a"="new a"`, `f:"z"="z"`)
	mutate(&hbase.RowMutation{Delete: hbase.Values{cfF: {"z": nil}}})
	cWantCells(t, "delete only", cGet(t, e, &hbase.Get{Table: e.a, Row: row}), false, `f:"a"="new a"`)
	mutate(&hbase.RowMutation{Put: hbase.Values{cfF: {"y": nil}}})
	cWantCells(t, "put only (an empty value)", cGet(t, e, &hbase.Get{Table: e.a, Row: row}), false, `f:"a"="new a"`, `f:"y"=""`)
	// A cell deleted and written again in a later mutation of the same
	// millisecond is visible.
	mutate(&hbase.RowMutation{Delete: hbase.Values{cfF: {"a": nil}}})
	mutate(&hbase.RowMutation{Put: hbase.Values{cfF: {"a": []byte("again")}}, Delete: hbase.Values{cfF: {"y": nil}}})
	cWantCells(t, "written again after its delete", cGet(t, e, &hbase.Get{Table: e.a, Row: row}), false, `f:"a"="again"`)

	// Refused mutations change nothing.
	for _, c := range []struct {
		name string
		m    hbase.RowMutation
		is   error
	}{
		{"nothing", hbase.RowMutation{}, nil},
		{"a column both", hbase.RowMutation{Put: hbase.Values{cfF: {"a": []byte("x")}}, Delete: hbase.Values{cfF: {"a": nil}}}, nil},
		{"a family both", hbase.RowMutation{Put: hbase.Values{cfF: {"a": []byte("x")}}, Delete: hbase.Values{cfF: nil}}, nil},
		{"an unknown family to delete", hbase.RowMutation{Put: hbase.Values{cfF: {"a": []byte("x")}}, Delete: hbase.Values{"nope": {"q": nil}}}, hbase.ErrFamilyNotFound},
		{"an unknown family to put", hbase.RowMutation{Put: hbase.Values{"nope": {"a": []byte("x")}}, Delete: hbase.Values{cfF: {"a": nil}}}, hbase.ErrFamilyNotFound},
	} {
		m := c.m
		m.Table, m.Row = e.a, row
		err := e.st.MutateRow(e.ctx, &m)
		if err == nil || c.is != nil && !errors.Is(err, c.is) {
			t.Errorf("MutateRow of %s = %v, want an error (%v)", c.name, err, c.is)
		}
	}
	cWantCells(t, "after the refused mutations", cGet(t, e, &hbase.Get{Table: e.a, Row: row}), false, `f:"a"="again"`)
	if err := e.st.MutateRow(e.ctx, &hbase.RowMutation{Table: e.a + "_missing", Row: row, Put: hbase.Values{cfF: {"a": nil}}}); !errors.Is(err, hbase.ErrTableNotFound) {
		t.Errorf("MutateRow on a missing table = %v, want ErrTableNotFound", err)
	}
}

// cMutateRowAtomic swaps a row between two states — f:x without f:y, f:y
// without f:x — with MutateRow while readers read it: a reader never sees
// both columns or neither (which a Put followed by a Delete would show).
func cMutateRowAtomic(t *testing.T, e *cEnv) {
	row := []byte("mutate/atomic")
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfF: {"x": []byte("0")}}})
	const swaps = 200
	var done atomic.Bool
	var wg sync.WaitGroup
	var reads, torn atomic.Int64
	var started sync.WaitGroup // each reader has read once: the swaps race reads on a busy machine too
	started.Add(4)
	for range 4 {
		wg.Go(func() {
			first := true
			for first || !done.Load() {
				r, err := e.st.Get(e.ctx, &hbase.Get{Table: e.a, Row: row, Families: []string{cfF}})
				if err != nil {
					t.Errorf("Get: %v", err)
					if first {
						started.Done()
					}
					return
				}
				reads.Add(1)
				if (r.Value(cfF, "x") == nil) == (r.Value(cfF, "y") == nil) {
					torn.Add(1)
				}
				if first {
					first = false
					started.Done()
				}
			}
		})
	}
	started.Wait()
	for i := range swaps {
		set, unset := "y", "x"
		if i%2 == 1 {
			set, unset = "x", "y"
		}
		if err := e.st.MutateRow(e.ctx, &hbase.RowMutation{Table: e.a, Row: row,
			Put: hbase.Values{cfF: {set: []byte{byte(i)}}}, Delete: hbase.Values{cfF: {unset: nil}}}); err != nil {
			t.Fatalf("MutateRow #%d: %v", i, err)
		}
	}
	done.Store(true)
	wg.Wait()
	if torn.Load() > 0 || reads.Load() == 0 {
		t.Errorf("%d of %d reads saw both columns or neither", torn.Load(), reads.Load())
	}
}
