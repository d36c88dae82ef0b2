package fsck_test

import (
	"context"
	"testing"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/tables"
)

// errInjected is the error of an armed step (domaintest.Faults).
var errInjected = domaintest.ErrInjected

// orgService returns a migrated service over st with a fault hook.
func orgService(t *testing.T, st hbase.StoreAdmin) (*domain.Domain, *domaintest.Faults) {
	t.Helper()
	f := domaintest.NewFaults()
	return domaintest.Service(t, st, domain.WithStepHook(f.Hook)), f
}

// startedService opens b's store of the test's own (on HBase a namespace
// of its own, so that fsck sees only the test's rows), migrated, and a
// service over it with a fault hook, started (the publishes' fan-outs)
// and closed at the end of the test.
func startedService(t *testing.T, b testenv.Backend) (hbase.StoreAdmin, *domain.Domain, *domaintest.Faults) {
	t.Helper()
	st := b.OpenOwn(t, tables.Namespace, "fsck")
	svc, f := orgService(t, st)
	if err := svc.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close(context.Background()) })
	return st, svc, f
}

// The helpers the weibo, fsck and seed tests share (internal/domaintest).
var (
	uniq        = domaintest.Uniq
	mustUser    = domaintest.MustUser
	userRoles   = domaintest.UserRoles
	members     = domaintest.Members
	role        = domaintest.Role
	childNames  = domaintest.ChildNames
	deptMembers = domaintest.DeptMembers
	userDept    = domaintest.UserDept
)

// putPostCounter overwrites the counter in qualifier qual of post p's
// content row (likeCount, commentCount, repostCount: damage no API call
// makes), as a version newer than the cell's.
func putPostCounter(ctx context.Context, st hbase.Store, qual string, p weibo.PostID, v uint64) error {
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
