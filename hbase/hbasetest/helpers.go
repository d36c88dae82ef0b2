package hbasetest

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase"
)

// The helpers of the conformance subtests: writes and reads that fail the
// test on an error, and renderings of cells and rowkeys to compare against.

func cPut(t *testing.T, e *cEnv, p *hbase.Put) {
	t.Helper()
	if err := e.st.Put(e.ctx, p); err != nil {
		t.Fatalf("Put %s %q: %v", p.Table, p.Row, err)
	}
}

func cGet(t *testing.T, e *cEnv, g *hbase.Get) *hbase.Result {
	t.Helper()
	r, err := e.st.Get(e.ctx, g)
	if err != nil {
		t.Fatalf("Get %s %q: %v", g.Table, g.Row, err)
	}
	if r == nil {
		t.Fatalf("Get %s %q: nil Result", g.Table, g.Row)
	}
	return r
}

func cScan(t *testing.T, e *cEnv, s *hbase.Scan) []*hbase.Result {
	t.Helper()
	rs, err := hbase.ScanAll(e.ctx, e.st, s)
	if err != nil {
		t.Fatalf("Scan %+v: %v", *s, err)
	}
	return rs
}

// cCellStrings renders cells as family:"qualifier"="value", with "@ts" when
// withTS is set.
func cCellStrings(r *hbase.Result, withTS bool) []string {
	if r == nil {
		return nil
	}
	out := []string{}
	for _, c := range r.Cells {
		s := fmt.Sprintf("%s:%q=%q", c.Family, c.Qualifier, c.Value)
		if withTS {
			s += fmt.Sprintf("@%d", c.Timestamp)
		}
		out = append(out, s)
	}
	return out
}

func cWantCells(t *testing.T, what string, r *hbase.Result, withTS bool, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if got := cCellStrings(r, withTS); !slices.Equal(got, want) {
		t.Errorf("%s: cells\n got  %q\n want %q", what, got, want)
	}
}

// cRowKeys returns the rowkeys of rs with prefix cut off.
func cRowKeys(rs []*hbase.Result, prefix string) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, strings.TrimPrefix(string(r.Row), prefix))
	}
	return out
}

func cWantRows(t *testing.T, what string, rs []*hbase.Result, prefix string, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if got := cRowKeys(rs, prefix); !slices.Equal(got, want) {
		t.Errorf("%s: rows\n got  %q\n want %q", what, got, want)
	}
}

func cBE64(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

// cNearNow reports whether ts (ms) is within 10 minutes of the local clock
// (room for an HBase server's clock skew).
func cNearNow(ts int64) bool {
	d := time.Since(time.UnixMilli(ts))
	return d > -10*time.Minute && d < 10*time.Minute
}
