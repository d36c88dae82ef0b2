package remote

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/proto"

	"github.com/weibohbase/gateway/hbase"
)

// storeFiles returns the number of store files of table's regions as the
// master's cluster status reports them (region servers report every few
// seconds).
func storeFiles(t *testing.T, st *Store, table string) uint32 {
	t.Helper()
	msg, err := st.master(tctx(t), "GetClusterStatus", "",
		&pb.GetClusterStatusRequest{}, func() proto.Message { return &pb.GetClusterStatusResponse{} })
	if err != nil {
		t.Fatalf("cluster status: %v", err)
	}
	r, ok := msg.(*pb.GetClusterStatusResponse)
	if !ok {
		t.Fatalf("cluster status: unexpected response %T", msg)
	}
	prefix := []byte(table + ",")
	var n uint32
	for _, ls := range r.GetClusterStatus().GetLiveServers() {
		for _, rl := range ls.GetServerLoad().GetRegionLoads() {
			if bytes.HasPrefix(rl.GetRegionSpecifier().GetValue(), prefix) {
				n += rl.GetStorefiles()
			}
		}
	}
	return n
}

func TestFlushNamespace(t *testing.T) {
	st := newTestHBase(t)
	ns := uniqueNamespace(t, st)
	specs := []hbase.TableSpec{{Name: "a", Families: []hbase.FamilySpec{{Name: "f"}}}, {Name: "b", Families: []hbase.FamilySpec{{Name: "f"}}}}
	if err := st.EnsureTables(tctx(t), ns, specs); err != nil {
		t.Fatal(err)
	}
	table := ns + ":a"
	mustPut(t, st, &hbase.Put{Table: table, Row: []byte("r"), Values: hbase.Values{"f": {"q": []byte("v")}}})
	if n := storeFiles(t, st, table); n != 0 {
		t.Fatalf("a new table holds %d store files before any flush", n)
	}

	flushed, err := st.FlushNamespace(tctx(t), ns)
	if err != nil {
		t.Fatalf("FlushNamespace: %v", err)
	}
	if want := []string{ns + ":a", ns + ":b"}; !slices.Equal(flushed, want) {
		t.Errorf("flushed %v, want %v", flushed, want)
	}
	// The memstore went to an HFile: the region reports a store file.
	deadline := time.Now().Add(30 * time.Second)
	for storeFiles(t, st, table) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no store file of the flushed table reported within 30 s")
		}
		time.Sleep(500 * time.Millisecond)
	}
	if r := mustGet(t, st, &hbase.Get{Table: table, Row: []byte("r")}); string(r.Value("f", "q")) != "v" {
		t.Errorf("the row after the flush: %s", cellsString(r.Cells, false))
	}
	// The snapshots are gone again.
	snaps, err := st.adminRPC.(gohbase.AdminClient).ListSnapshots(hrpc.NewListSnapshots(tctx(t)))
	if err != nil {
		t.Fatalf("ListSnapshots: %v", err)
	}
	for _, sd := range snaps {
		if strings.HasPrefix(sd.GetTable(), ns+":") {
			t.Errorf("snapshot %s of %s left behind", sd.GetName(), sd.GetTable())
		}
	}
}
