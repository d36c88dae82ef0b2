package fsck_test

import (
	"testing"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/orgtest"
	"github.com/weibohbase/gateway/weibo/domain"
)

// errInjected is the error of an armed step (orgtest.Faults).
var errInjected = orgtest.ErrInjected

// orgService returns a migrated service over st with a fault hook.
func orgService(t *testing.T, st hbase.StoreAdmin) (*domain.Domain, *orgtest.Faults) {
	t.Helper()
	f := orgtest.NewFaults()
	return orgtest.Service(t, st, domain.WithStepHook(f.Hook)), f
}

// The helpers the weibo, fsck and seed tests share (internal/orgtest).
var (
	uniq        = orgtest.Uniq
	mustUser    = orgtest.MustUser
	userRoles   = orgtest.UserRoles
	members     = orgtest.Members
	role        = orgtest.Role
	childNames  = orgtest.ChildNames
	deptMembers = orgtest.DeptMembers
	userDept    = orgtest.UserDept
)
