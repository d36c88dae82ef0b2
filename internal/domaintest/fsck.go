package domaintest

import (
	"context"
	"testing"

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
