package domaintest

import (
	"context"
	"testing"

	"github.com/weibohbase/gateway/fsck"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/tables"
)

// FsckService is the fsck tests' fixture: b's store of the test's own (on
// HBase a namespace of its own, so that fsck sees only the test's rows),
// migrated, and a service over it with a fault hook, started (the
// publishes' fan-outs) and closed at the end of the test.
func FsckService(t *testing.T, b testenv.Backend) (hbase.StoreAdmin, *domain.Domain, *Faults) {
	t.Helper()
	st := b.OpenOwn(t, tables.Namespace, "fsck")
	f := NewFaults()
	svc := Service(t, st, domain.WithStepHook(f.Hook))
	if err := svc.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close(context.Background()) })
	return st, svc, f
}

// PutPostCounter overwrites the counter in qualifier qual of post p's
// content row (likeCount, commentCount, repostCount: damage no API call
// makes), as a version newer than the cell's.
func PutPostCounter(ctx context.Context, st hbase.Store, qual string, p weibo.PostID, v uint64) error {
	r, err := st.Get(ctx, &hbase.Get{Table: tables.Content, Row: tables.ContentKey(p), Families: []string{tables.FamPost}})
	if err != nil {
		return err
	}
	put := &hbase.Put{Table: tables.Content, Row: tables.ContentKey(p), Values: hbase.Values{tables.FamPost: {qual: tables.U64(v)}}}
	if c := r.Cell(tables.FamPost, qual); c != nil {
		put.Timestamp = c.Timestamp + 1
	}
	return st.Put(ctx, put)
}

// Damage is one piece of damage a check test makes by hand — a row
// deleted or written behind the writes' back — and the kind of issue fsck
// must report for it.
type Damage struct {
	Kind string
	Do   func() error
}

// Damaged makes every damage in order and returns how many of each kind
// fsck must report: one per damage.
func Damaged(t testing.TB, damage []Damage) map[string]int {
	t.Helper()
	want := map[string]int{}
	for _, d := range damage {
		if err := d.Do(); err != nil {
			t.Fatalf("damage %s: %v", d.Kind, err)
		}
		want[d.Kind]++
	}
	return want
}

// FsckRepairs runs fsck over svc three times: a check-only run, which
// must report exactly want[kind] issues of each kind in want and repair
// none; a repair run, which must leave none unrepaired; and a check-only
// run after it, which must find nothing. It returns the reports of the
// first two runs.
func FsckRepairs(t testing.TB, svc *domain.Domain, want map[string]int) (found, repaired *fsck.Report) {
	t.Helper()
	ctx := context.Background()
	found, err := fsck.Run(ctx, svc, fsck.Options{})
	if err != nil {
		t.Fatal(err)
	}
	counts := found.Counts()
	for k, n := range want {
		if counts[k] != n {
			t.Errorf("check: %d %s issues, want %d; found %v: %+v", counts[k], k, n, counts, found.Issues)
		}
	}
	if found.Unrepaired() != len(found.Issues) {
		t.Errorf("a check-only run repaired something: %+v", found.Issues)
	}
	if repaired, err = fsck.Run(ctx, svc, fsck.Options{Repair: true}); err != nil {
		t.Fatal(err)
	}
	if n := repaired.Unrepaired(); n > 0 {
		t.Errorf("repair left %d issues: %+v", n, repaired.Issues)
	}
	after, err := fsck.Run(ctx, svc, fsck.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Issues) > 0 {
		t.Errorf("after repair: %v %+v", after.Counts(), after.Issues)
	}
	return found, repaired
}
