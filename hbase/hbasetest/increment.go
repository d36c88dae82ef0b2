package hbasetest

import (
	"bytes"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/weibohbase/gateway/hbase"
)

// The checks of Increment: counters as 8-byte big-endian cells, alone and
// under concurrency.

func cIncrement(t *testing.T, e *cEnv) {
	row := []byte("inc/1")
	steps := []struct {
		qual   string
		amount int64
		want   int64
	}{
		{"n", 5, 5},
		{"n", 10, 15},
		{"n", -20, -5},
		{"n", 0, -5},
		{"m", -3, -3},
		{"n", 1 << 40, 1<<40 - 5},
	}
	for _, s := range steps {
		got, err := e.st.Increment(e.ctx, &hbase.Increment{Table: e.a, Row: row, Family: cfF, Qualifier: s.qual, Amount: s.amount})
		if err != nil || got != s.want {
			t.Errorf("Increment %s by %d = %d, %v; want %d", s.qual, s.amount, got, err, s.want)
		}
	}
	r := cGet(t, e, &hbase.Get{Table: e.a, Row: row})
	cWantCells(t, "counters as 8-byte big-endian", r, false,
		fmt.Sprintf(`f:"m"=%q`, cBE64(-3)), fmt.Sprintf(`f:"n"=%q`, cBE64(1<<40-5)))
	if c := r.Cell(cfF, "n"); c == nil || !cNearNow(c.Timestamp) {
		t.Errorf("counter cell timestamp: %+v", c)
	}

	// A counter written by Put is incremented from its value.
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfG: {"p": cBE64(100)}}})
	if got, err := e.st.Increment(e.ctx, &hbase.Increment{Table: e.a, Row: row, Family: cfG, Qualifier: "p", Amount: 1}); err != nil || got != 101 {
		t.Errorf("Increment of a put counter = %d, %v; want 101", got, err)
	}
	// A cell that is not 8 bytes long is not a counter.
	cPut(t, e, &hbase.Put{Table: e.a, Row: row, Values: hbase.Values{cfG: {"s": []byte("abc")}}})
	if _, err := e.st.Increment(e.ctx, &hbase.Increment{Table: e.a, Row: row, Family: cfG, Qualifier: "s", Amount: 1}); err == nil {
		t.Errorf("Increment of a 3-byte cell: no error")
	}
	if got := cGet(t, e, &hbase.Get{Table: e.a, Row: row}).Value(cfG, "s"); string(got) != "abc" {
		t.Errorf("failed hbase.Increment changed the cell to %q", got)
	}
}

func cIncrementConcurrent(t *testing.T, e *cEnv) {
	const workers, each = 8, 25
	row := []byte("inc/concurrent")
	var mu sync.Mutex
	var got []int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range each {
				v, err := e.st.Increment(e.ctx, &hbase.Increment{Table: e.a, Row: row, Family: cfF, Qualifier: "n", Amount: 1})
				if err != nil {
					t.Errorf("Increment: %v", err)
					return
				}
				mu.Lock()
				got = append(got, v)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	slices.Sort(got)
	for i, v := range got {
		if v != int64(i+1) {
			t.Fatalf("concurrent increments returned %v..., want each of 1..%d once", got[:i+1], workers*each)
		}
	}
	if len(got) != workers*each {
		t.Fatalf("%d increments succeeded, want %d", len(got), workers*each)
	}
	if v := cGet(t, e, &hbase.Get{Table: e.a, Row: row}).Value(cfF, "n"); !bytes.Equal(v, cBE64(workers*each)) {
		t.Errorf("counter = %x, want %d", v, workers*each)
	}
}
