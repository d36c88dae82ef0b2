package remote

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/weibohbase/gateway/hbase"
)

// Tests of the conditional writes and counters on the real HBase:
// CheckAndPut, CheckAndDelete and Increment.

func TestCheckAndPut(t *testing.T) {
	st := gtStore(t)
	row := []byte(rowPrefix(t) + "cap")
	put := func(v string) *hbase.Put {
		return &hbase.Put{Table: gtTableA, Row: row, Values: hbase.Values{"f": {"owner": []byte(v)}, "g": {"log": []byte(v)}}}
	}
	steps := []struct {
		name     string
		put      *hbase.Put
		expected []byte
		applied  bool
		owner    string // f:owner afterwards
	}{
		{"absent, expect absent", put("alice"), nil, true, "alice"},
		{"present, expect absent", put("bob"), nil, false, "alice"},
		{"present, expect other", put("bob"), []byte("carol"), false, "alice"},
		{"present, expect it", put("bob"), []byte("alice"), true, "bob"},
	}
	for _, s := range steps {
		ok, err := st.CheckAndPut(tctx(t), s.put, "f", "owner", s.expected)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if ok != s.applied {
			t.Errorf("%s: applied=%v, want %v", s.name, ok, s.applied)
		}
		r := mustGet(t, st, &hbase.Get{Table: gtTableA, Row: row})
		if got := string(r.Value("f", "owner")); got != s.owner {
			t.Errorf("%s: owner=%q, want %q", s.name, got, s.owner)
		}
		if got := string(r.Value("g", "log")); got != s.owner {
			t.Errorf("%s: the put is not atomic: g:log=%q, owner %q", s.name, got, s.owner)
		}
	}

	// Only one of many concurrent claims wins.
	claim := []byte(rowPrefix(t) + "claim")
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := st.CheckAndPut(tctx(t), &hbase.Put{Table: gtTableA, Row: claim, Values: hbase.Values{"f": {"owner": []byte(fmt.Sprint(i))}}}, "f", "owner", nil)
			if err != nil {
				t.Errorf("claim %d: %v", i, err)
			}
			if ok {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if wins != 1 {
		t.Errorf("%d concurrent claims won, want 1", wins)
	}
}

func TestCheckAndDelete(t *testing.T) {
	st := gtStore(t)
	p := rowPrefix(t)
	seed := func(row string) {
		t.Helper()
		mustPut(t, st, &hbase.Put{Table: gtTableA, Row: []byte(row), Values: hbase.Values{
			"f": {"state": []byte("open"), "x": []byte("1")},
			"g": {"y": []byte("2")},
		}})
	}
	cases := []struct {
		name      string
		del       hbase.Values
		family    string
		qualifier string
		expected  []byte
		applied   bool
		want      string // cells afterwards
	}{
		{"match, whole row", nil, "f", "state", []byte("open"), true, ""},
		{"mismatch, whole row", nil, "f", "state", []byte("closed"), false, "f:state=open f:x=1 g:y=2"},
		{"match, one column", hbase.Values{"f": {"x": nil}}, "f", "state", []byte("open"), true, "f:state=open g:y=2"},
		{"match, one family", hbase.Values{"g": nil}, "f", "state", []byte("open"), true, "f:state=open f:x=1"},
		{"expect absent, present", nil, "f", "state", nil, false, "f:state=open f:x=1 g:y=2"},
		{"expect absent, absent", hbase.Values{"g": {"y": nil}}, "f", "nothing", nil, true, "f:state=open f:x=1"},
		{"condition on other family", hbase.Values{"f": {"x": nil}}, "g", "y", []byte("2"), true, "f:state=open g:y=2"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			row := fmt.Sprintf("%scad%d", p, i)
			seed(row)
			ok, err := st.CheckAndDelete(tctx(t), &hbase.Delete{Table: gtTableA, Row: []byte(row), Values: c.del}, c.family, c.qualifier, c.expected)
			if err != nil {
				t.Fatalf("CheckAndDelete: %v", err)
			}
			if ok != c.applied {
				t.Errorf("applied=%v, want %v", ok, c.applied)
			}
			r := mustGet(t, st, &hbase.Get{Table: gtTableA, Row: []byte(row)})
			if got := cellsString(r.Cells, false); got != c.want {
				t.Errorf("after: %s, want %s", got, c.want)
			}
		})
	}
	// Exactly one of many concurrent conditional deletes applies.
	row := p + "race"
	seed(row)
	var wg sync.WaitGroup
	var mu sync.Mutex
	applied := 0
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := st.CheckAndDelete(tctx(t), &hbase.Delete{Table: gtTableA, Row: []byte(row)}, "f", "state", []byte("open"))
			if err != nil {
				t.Errorf("CheckAndDelete: %v", err)
			}
			if ok {
				mu.Lock()
				applied++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if applied != 1 {
		t.Errorf("%d concurrent CheckAndDeletes applied, want 1", applied)
	}
}

func TestIncrement(t *testing.T) {
	st := gtStore(t)
	row := []byte(rowPrefix(t) + "counter")
	inc := func(amount int64) int64 {
		t.Helper()
		v, err := st.Increment(tctx(t), &hbase.Increment{Table: gtTableA, Row: row, Family: "g", Qualifier: "n", Amount: amount})
		if err != nil {
			t.Fatalf("Increment(%d): %v", amount, err)
		}
		return v
	}
	for _, s := range []struct{ amount, want int64 }{{1, 1}, {41, 42}, {-50, -8}, {0, -8}, {1 << 40, 1<<40 - 8}} {
		if got := inc(s.amount); got != s.want {
			t.Errorf("Increment(%d) = %d, want %d", s.amount, got, s.want)
		}
	}
	if v := mustGet(t, st, &hbase.Get{Table: gtTableA, Row: row}).Value("g", "n"); !bytes.Equal(v, be64(1<<40-8)) {
		t.Errorf("counter cell = %x, want 8-byte big-endian %x", v, be64(1<<40-8))
	}

	// Concurrent increments are atomic.
	crow := []byte(rowPrefix(t) + "concurrent")
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 25 {
				if _, err := st.Increment(tctx(t), &hbase.Increment{Table: gtTableA, Row: crow, Family: "g", Qualifier: "n", Amount: 1}); err != nil {
					t.Errorf("Increment: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if v := mustGet(t, st, &hbase.Get{Table: gtTableA, Row: crow}).Value("g", "n"); !bytes.Equal(v, be64(200)) {
		t.Errorf("after 200 concurrent increments: %x", v)
	}

	// A cell that is not an 8-byte counter is an error.
	bad := []byte(rowPrefix(t) + "bad")
	mustPut(t, st, &hbase.Put{Table: gtTableA, Row: bad, Values: hbase.Values{"g": {"n": []byte("abc")}}})
	if _, err := st.Increment(tctx(t), &hbase.Increment{Table: gtTableA, Row: bad, Family: "g", Qualifier: "n", Amount: 1}); err == nil {
		t.Error("Increment of a 3-byte cell succeeded")
	}
}
