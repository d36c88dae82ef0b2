package check_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/hbase/embedded"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/check"
)

const now = int64(1_700_000_000_000)

func noPosts(weibo.PostID) bool { return false }

// TestIssue records one issue per case on a pass and checks what the
// pass made of it: pending when young, repaired only when repairing and
// the fix says so, the fix run only then, a fix's error returned.
func TestIssue(t *testing.T) {
	errFix := errors.New("fix failed")
	for _, c := range []struct {
		name         string
		repair       bool
		grace        time.Duration
		ts           int64
		fixed        bool
		fixErr       error
		nilFix       bool
		wantRan      bool
		wantPending  bool
		wantRepaired bool
		wantErr      bool
	}{
		{name: "report only", ts: now - 1},
		{name: "repaired", repair: true, ts: now - 1, fixed: true, wantRan: true, wantRepaired: true},
		{name: "fix changed nothing", repair: true, ts: now - 1, wantRan: true},
		{name: "young: pending", repair: true, grace: time.Minute, ts: now - 1000, fixed: true, wantPending: true},
		{name: "older than the grace", repair: true, grace: time.Second, ts: now - 2000, fixed: true, wantRan: true, wantRepaired: true},
		{name: "no time: never pending", repair: true, grace: time.Hour, ts: 0, fixed: true, wantRan: true, wantRepaired: true},
		{name: "report-only issue", repair: true, ts: now - 1, nilFix: true},
		{name: "fix fails", repair: true, ts: now - 1, fixErr: errFix, wantRan: true, wantErr: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := check.NewPass(nil, c.repair, c.grace, now, noPosts)
			ran := false
			fix := func() (bool, error) { ran = true; return c.fixed, c.fixErr }
			if c.nilFix {
				fix = nil
			}
			err := p.Issue("k", c.ts, fix, "row %d", 7)
			if (err != nil) != c.wantErr || (err != nil && !errors.Is(err, errFix)) {
				t.Fatalf("error %v, want one: %v", err, c.wantErr)
			}
			if ran != c.wantRan {
				t.Errorf("fix ran: %v, want %v", ran, c.wantRan)
			}
			if c.wantErr {
				if len(p.Issues()) != 0 {
					t.Errorf("a failed repair recorded %+v", p.Issues())
				}
				return
			}
			want := []check.Issue{{Kind: "k", Detail: "row 7", Repaired: c.wantRepaired, Pending: c.wantPending}}
			if got := p.Issues(); !slices.Equal(got, want) {
				t.Errorf("issues %+v, want %+v", got, want)
			}
		})
	}
}

// TestBatch checks that a batch passes its fix the issues neither young
// nor report-only, once, and marks them as the fix says, in order.
func TestBatch(t *testing.T) {
	found := []check.Found{
		{Issue: check.Issue{Kind: "a"}, TS: now - 10},     // young: pending
		{Issue: check.Issue{Kind: "b"}, TS: now - 60_000}, // repaired
		{Issue: check.Issue{Kind: "c"}, TS: 0},            // not repaired (the fix says)
	}
	p := check.NewPass(nil, true, time.Second, now, noPosts)
	calls := 0
	err := p.Batch(found, func(which []int) ([]bool, error) {
		calls++
		if !slices.Equal(which, []int{1, 2}) {
			t.Errorf("fix given %v, want [1 2]", which)
		}
		return []bool{true, false}, nil
	})
	if err != nil || calls != 1 {
		t.Fatalf("batch: %v, %d calls", err, calls)
	}
	want := []check.Issue{{Kind: "a", Pending: true}, {Kind: "b", Repaired: true}, {Kind: "c"}}
	if got := p.Issues(); !slices.Equal(got, want) {
		t.Errorf("issues %+v, want %+v", got, want)
	}

	p = check.NewPass(nil, false, 0, now, noPosts)
	if err := p.Batch(found[1:], func([]int) ([]bool, error) { t.Error("a check-only run repaired"); return nil, nil }); err != nil {
		t.Fatal(err)
	}
	if len(p.Issues()) != 2 {
		t.Errorf("check-only batch: %+v", p.Issues())
	}
}

// TestScan checks that a pass counts the rows each scan reads, per table,
// with the rows counted outside it, and that PostExists asks the run.
func TestScan(t *testing.T) {
	st, err := embedded.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := t.Context()
	if err := st.EnsureTables(ctx, "ck", []hbase.TableSpec{{Name: "t", Families: []hbase.FamilySpec{{Name: "f"}}}}); err != nil {
		t.Fatal(err)
	}
	for _, row := range []string{"a", "b", "c"} {
		if err := st.Put(ctx, &hbase.Put{Table: "ck:t", Row: []byte(row), Values: hbase.Values{"f": {"q": []byte(row)}}}); err != nil {
			t.Fatal(err)
		}
	}
	stored := weibo.PostID{Author: 1, Millis: 2}
	p := check.NewPass(st, false, 0, now, func(id weibo.PostID) bool { return id == stored })
	var rows []string
	if err := p.Scan(ctx, &hbase.Scan{Table: "ck:t"}, func(r *hbase.Result) { rows = append(rows, string(r.Row)) }); err != nil {
		t.Fatal(err)
	}
	p.CountRow("ck:other")
	if !slices.Equal(rows, []string{"a", "b", "c"}) || p.Rows()["ck:t"] != 3 || p.Rows()["ck:other"] != 1 {
		t.Errorf("rows %q, counted %v", rows, p.Rows())
	}
	if !p.PostExists(stored) || p.PostExists(weibo.PostID{Author: 1, Millis: 3}) {
		t.Error("PostExists does not ask the run")
	}
}
