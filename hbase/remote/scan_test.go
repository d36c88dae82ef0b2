package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weibohbase/gateway/hbase"
)

// Tests of Scan on the real HBase: ranges, regions, and the Scan RPCs a
// Limit costs.

func TestScan(t *testing.T) {
	st := gtStore(t)
	p := rowPrefix(t)
	// Rows in table B (split at "m"): keys span both regions.
	keys := []string{"a1", "a2", "ab", "b", "m", "ma", "mb", "x", "z"}
	var puts []*hbase.Put
	for _, k := range keys {
		puts = append(puts, &hbase.Put{Table: gtTableB, Row: []byte(k + "|" + p), Values: hbase.Values{"f": {"k": []byte(k)}}})
	}
	// Table A rows under this test's prefix, two families.
	for _, k := range keys {
		puts = append(puts, &hbase.Put{Table: gtTableA, Row: []byte(p + k), Values: hbase.Values{"f": {"k": []byte(k)}, "g": {"k": []byte(k)}}})
	}
	if err := st.PutMany(tctx(t), puts); err != nil {
		t.Fatal(err)
	}
	pre := func(s string) []byte { return []byte(p + s) }
	cases := []struct {
		name string
		scan hbase.Scan
		want string // values of f:k, comma-separated
	}{
		{"prefix", hbase.Scan{Prefix: []byte(p)}, "a1,a2,ab,b,m,ma,mb,x,z"},
		{"sub-prefix", hbase.Scan{Prefix: pre("a")}, "a1,a2,ab"},
		{"prefix and start", hbase.Scan{Prefix: pre("a"), Start: pre("a2")}, "a2,ab"},
		{"prefix and stop", hbase.Scan{Prefix: []byte(p), Stop: pre("m")}, "a1,a2,ab,b"},
		{"start/stop", hbase.Scan{Start: pre("ab"), Stop: pre("mb")}, "ab,b,m,ma"},
		{"start before prefix", hbase.Scan{Prefix: pre("m"), Start: pre("a")}, "m,ma,mb"},
		{"limit", hbase.Scan{Prefix: []byte(p), Limit: 4}, "a1,a2,ab,b"},
		{"limit beyond rows", hbase.Scan{Prefix: pre("m"), Limit: 100}, "m,ma,mb"},
		{"empty range", hbase.Scan{Start: pre("x"), Stop: pre("b")}, ""},
		{"start equals stop", hbase.Scan{Start: pre("b"), Stop: pre("b")}, ""},
		{"no match", hbase.Scan{Prefix: pre("q")}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc := c.scan
			sc.Table = gtTableA
			rows, err := hbase.ScanAll(tctx(t), st, &sc)
			if err != nil {
				t.Fatalf("Scan: %v", err)
			}
			var got []string
			for _, r := range rows {
				got = append(got, string(r.Value("f", "k")))
				if !bytes.HasPrefix(r.Row, []byte(p)) {
					t.Errorf("row %q outside the test's prefix", r.Row)
				}
			}
			if g := strings.Join(got, ","); g != c.want {
				t.Errorf("Scan = %s, want %s", g, c.want)
			}
		})
	}

	t.Run("families", func(t *testing.T) {
		rows, err := hbase.ScanAll(tctx(t), st, &hbase.Scan{Table: gtTableA, Prefix: pre("a"), Families: []string{"g"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 3 {
			t.Fatalf("%d rows", len(rows))
		}
		for _, r := range rows {
			if got := cellsString(r.Cells, false); !strings.HasPrefix(got, "g:k=") || strings.Contains(got, " ") {
				t.Errorf("row %q cells %s, want only g", r.Row, got)
			}
		}
	})

	t.Run("across regions", func(t *testing.T) {
		// Table B's rows end with "|prefix"; scan the whole table and keep ours.
		rows, err := hbase.ScanAll(tctx(t), st, &hbase.Scan{Table: gtTableB})
		if err != nil {
			t.Fatal(err)
		}
		var got, want []string
		for _, r := range rows {
			if bytes.HasSuffix(r.Row, []byte("|"+p)) {
				got = append(got, string(r.Row))
			}
		}
		for _, k := range keys {
			want = append(want, k+"|"+p)
		}
		sort.Strings(want) // "m|…" sorts after "ma|…" and "mb|…"
		if g, w := strings.Join(got, ","), strings.Join(want, ","); g != w {
			t.Errorf("full scan of B = %s, want %s", g, w)
		}
		rows, err = hbase.ScanAll(tctx(t), st, &hbase.Scan{Table: gtTableB, Start: []byte("l"), Stop: []byte("n"), Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if r.Row[0] != 'm' {
				t.Errorf("row %q outside [l, n)", r.Row)
			}
		}
	})

	t.Run("early stop", func(t *testing.T) {
		n := 0
		err := st.Scan(tctx(t), &hbase.Scan{Table: gtTableA, Prefix: []byte(p)}, func(r *hbase.Result) error {
			n++
			if n == 2 {
				return hbase.ErrStopScan
			}
			return nil
		})
		if err != nil || n != 2 {
			t.Errorf("hbase.ErrStopScan: err=%v after %d rows, want nil after 2", err, n)
		}
		boom := errors.New("boom")
		err = st.Scan(tctx(t), &hbase.Scan{Table: gtTableA, Prefix: []byte(p)}, func(r *hbase.Result) error { return boom })
		if !errors.Is(err, boom) {
			t.Errorf("callback error: got %v", err)
		}
		// The store still works after early stops (scanners were closed).
		if _, err := hbase.ScanAll(tctx(t), st, &hbase.Scan{Table: gtTableA, Prefix: []byte(p)}); err != nil {
			t.Errorf("scan after early stops: %v", err)
		}
	})

	t.Run("context canceled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := hbase.ScanAll(ctx, st, &hbase.Scan{Table: gtTableA, Prefix: []byte(p)})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Scan with a canceled context = %v, want context.Canceled", err)
		}
	})
}

// scanRPCs returns how many Scan RPCs gohbase has sent (its
// gohbase_operation_duration_seconds{operation="Scan"} observations, which
// count the close-scanner RPCs too).
func scanRPCs(t *testing.T) uint64 {
	t.Helper()
	mfs, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n uint64
	for _, mf := range mfs {
		if mf.GetName() != "gohbase_operation_duration_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "operation" && l.GetValue() == "Scan" {
					n += m.GetHistogram().GetSampleCount()
				}
			}
		}
	}
	return n
}

// TestScanLimitOneRPC: a forward Scan that stops at its Limit with rows
// left in the region costs one Scan RPC (the region scanner closes with
// the response, not with a second RPC) and returns the first Limit rows; a
// reversed one returns the last Limit rows (and still costs two: see Scan).
func TestScanLimitOneRPC(t *testing.T) {
	st := gtStore(t)
	p := rowPrefix(t)
	var puts []*hbase.Put
	for i := range 20 {
		puts = append(puts, &hbase.Put{Table: gtTableA, Row: fmt.Appendf(nil, "%s%02d", p, i), Values: hbase.Values{"f": {"k": fmt.Appendf(nil, "%02d", i)}}})
	}
	if err := st.PutMany(tctx(t), puts); err != nil {
		t.Fatal(err)
	}
	// Table B is split at "m": five rows on each side, nothing of other
	// tests between them.
	puts = puts[:0]
	for _, side := range []string{"l", "m"} {
		for i := range 5 {
			puts = append(puts, &hbase.Put{Table: gtTableB, Row: fmt.Appendf(nil, "%s/%s%02d", side, p, i), Values: hbase.Values{"f": {"k": fmt.Appendf(nil, "%s%d", side, i)}}})
		}
	}
	if err := st.PutMany(tctx(t), puts); err != nil {
		t.Fatal(err)
	}
	across := hbase.Scan{Table: gtTableB, Start: []byte("l/" + p), Stop: []byte("m/" + p + "~"), Limit: 7}
	for _, c := range []struct {
		name string
		scan hbase.Scan
		want string
		rpcs uint64
	}{
		{"across regions", across, "l0,l1,l2,l3,l4,m0,m1", 2}, // one RPC a region
		{"forward", hbase.Scan{Table: gtTableA, Prefix: []byte(p), Limit: 5}, "00,01,02,03,04", 1},
		{"reversed", hbase.Scan{Table: gtTableA, Prefix: []byte(p), Limit: 5, Reversed: true}, "19,18,17,16,15", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := scanRPCs(t)
			rows, err := hbase.ScanAll(tctx(t), st, &c.scan)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range rows {
				got = append(got, string(r.Value("f", "k")))
			}
			if g := strings.Join(got, ","); g != c.want {
				t.Errorf("Scan = %s, want %s", g, c.want)
			}
			time.Sleep(300 * time.Millisecond) // gohbase sends a close RPC in a goroutine
			if n := scanRPCs(t) - before; n != c.rpcs {
				t.Errorf("%d Scan RPCs, want %d", n, c.rpcs)
			}
		})
	}
}
