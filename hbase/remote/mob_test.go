package remote

import (
	"bytes"
	"strings"
	"testing"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestEnsureTablesMOB: a MOB family is created with IS_MOB true and its
// threshold, read back from the master's descriptors; an existing table
// gains a MOB family it lacks, and a family made MOB later is altered to
// it; a value above the threshold reads back whole.
func TestEnsureTablesMOB(t *testing.T) {
	st := newTestHBase(t)
	ns := uniqueNamespace(t, st)
	first := hbase.TableSpec{Name: "media", Families: []hbase.FamilySpec{{Name: "m"}}}
	if err := st.EnsureTables(tctx(t), ns, []hbase.TableSpec{first}); err != nil {
		t.Fatal(err)
	}
	if a := familyAttrs(t, st, ns, "media")["m"]; strings.EqualFold(a["IS_MOB"], "true") {
		t.Fatalf("a family without MOB: IS_MOB = %q", a["IS_MOB"])
	}
	spec := hbase.TableSpec{Name: "media", Families: []hbase.FamilySpec{
		{Name: "m", MOB: true},
		{Name: "b", MOB: true, MOBThreshold: 100 << 10},
	}}
	if err := st.EnsureTables(tctx(t), ns, []hbase.TableSpec{spec}); err != nil {
		t.Fatal(err)
	}
	attrs := familyAttrs(t, st, ns, "media")
	for _, fam := range []string{"m", "b"} {
		if got := attrs[fam]["IS_MOB"]; !strings.EqualFold(got, "true") {
			t.Errorf("family %s: IS_MOB = %q, want true", fam, got)
		}
		if got := attrs[fam]["MOB_THRESHOLD"]; got != "102400" {
			t.Errorf("family %s: MOB_THRESHOLD = %q, want 102400", fam, got)
		}
	}
	if n, err := st.ensureSettings(tctx(t), ns, []hbase.TableSpec{spec}); err != nil || n != 0 {
		t.Errorf("ensureSettings again altered %d families, %v; want 0", n, err)
	}
	big := bytes.Repeat([]byte{0xa5}, 300<<10)
	mustPut(t, st, &hbase.Put{Table: ns + ":media", Row: []byte("r"), Values: hbase.Values{"b": {"d": big}}})
	if r := mustGet(t, st, &hbase.Get{Table: ns + ":media", Row: []byte("r")}); !bytes.Equal(r.Value("b", "d"), big) {
		t.Errorf("a MOB value of %d bytes read back as %d bytes", len(big), len(r.Value("b", "d")))
	}
}

// TestMediaTableMOB: the weibo:media spec of `gateway migrate`
// (tables.Specs) gives its bytes' family IS_MOB true and a threshold of
// 100 KiB on real HBase, read back from the table descriptor, and its
// upload family its 24-hour TTL.
func TestMediaTableMOB(t *testing.T) {
	st := newTestHBase(t)
	ns := uniqueNamespace(t, st)
	var spec hbase.TableSpec
	for _, s := range tables.Specs() {
		if tables.Namespace+":"+s.Name == tables.Media {
			spec = s
		}
	}
	if spec.Name == "" {
		t.Fatal("no weibo:media in tables.Specs")
	}
	if err := st.EnsureTables(tctx(t), ns, []hbase.TableSpec{spec}); err != nil {
		t.Fatal(err)
	}
	attrs := familyAttrs(t, st, ns, spec.Name)
	if got := attrs[tables.FamMediaData]["IS_MOB"]; !strings.EqualFold(got, "true") {
		t.Errorf("family %s: IS_MOB = %q, want true", tables.FamMediaData, got)
	}
	if got := attrs[tables.FamMediaData]["MOB_THRESHOLD"]; got != "102400" {
		t.Errorf("family %s: MOB_THRESHOLD = %q, want 102400", tables.FamMediaData, got)
	}
	if got := attrs[tables.FamMediaUpload]["TTL"]; got != "86400" {
		t.Errorf("family %s: TTL = %q, want 86400", tables.FamMediaUpload, got)
	}
	if got := attrs[tables.FamMediaAttached]["IS_MOB"]; strings.EqualFold(got, "true") {
		t.Errorf("family %s is MOB", tables.FamMediaAttached)
	}
}
