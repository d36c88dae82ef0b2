package remote

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase"
)

// TestSnapshotClone snapshots a table, writes to it afterwards, clones the
// snapshot into a table of another namespace and reads there what was
// written before the snapshot and nothing written after; a snapshot name
// taken twice and a clone onto an existing table fail; Tables lists both
// namespaces' tables; deleting a snapshot twice is fine.
func TestSnapshotClone(t *testing.T) {
	st := newTestHBase(t)
	src, dst := uniqueNamespace(t, st), uniqueNamespace(t, st)
	specs := []hbase.TableSpec{{Name: "a", Families: []hbase.FamilySpec{{Name: "f", MaxVersions: 2}}}, {Name: "b", Families: []hbase.FamilySpec{{Name: "f"}}}}
	if err := st.EnsureTables(tctx(t), src, specs); err != nil {
		t.Fatal(err)
	}
	if got, err := st.Tables(tctx(t), src); err != nil || !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("Tables(%s) = %v, %v; want [a b]", src, got, err)
	}
	if got, err := st.Tables(tctx(t), src+"_none"); err != nil || len(got) != 0 {
		t.Fatalf("Tables of a missing namespace = %v, %v; want none", got, err)
	}
	mustPut(t, st, &hbase.Put{Table: src + ":a", Row: []byte("before"), Values: hbase.Values{"f": {"q": []byte("1")}}})
	name := fmt.Sprintf("snaptest-%s-%d", src, time.Now().UnixNano())
	t.Cleanup(func() { _ = st.DeleteSnapshot(tctx(t), name) })
	if err := st.Snapshot(tctx(t), src+":a", name); err != nil {
		t.Fatal(err)
	}
	if err := st.Snapshot(tctx(t), src+":a", name); err == nil {
		t.Errorf("a second snapshot of the same name: no error")
	}
	mustPut(t, st, &hbase.Put{Table: src + ":a", Row: []byte("after"), Values: hbase.Values{"f": {"q": []byte("2")}}})

	if err := st.EnsureTables(tctx(t), dst, nil); err != nil {
		t.Fatal(err)
	}
	if err := st.CloneSnapshot(tctx(t), name, dst+":a"); err != nil {
		t.Fatal(err)
	}
	var rows []string
	if err := st.Scan(tctx(t), &hbase.Scan{Table: dst + ":a"}, func(r *hbase.Result) error {
		rows = append(rows, fmt.Sprintf("%s=%s", r.Row, r.Value("f", "q")))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rows, []string{"before=1"}) {
		t.Errorf("the clone holds %v, want [before=1]", rows)
	}
	mustPut(t, st, &hbase.Put{Table: dst + ":a", Row: []byte("clone"), Values: hbase.Values{"f": {"q": []byte("3")}}})
	if err := st.CloneSnapshot(tctx(t), name, src+":b"); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("a clone onto an existing table: %v", err)
	}
	if err := st.DeleteSnapshot(tctx(t), name); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteSnapshot(tctx(t), name); err != nil {
		t.Errorf("deleting a deleted snapshot: %v", err)
	}
}
