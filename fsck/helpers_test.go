package fsck_test

import (
	"testing"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/weibo/domain"
)

// errInjected is the error of an armed step (domaintest.Faults).
var errInjected = domaintest.ErrInjected

// orgService returns a migrated service over st with a fault hook.
func orgService(t *testing.T, st hbase.StoreAdmin) (*domain.Domain, *domaintest.Faults) {
	t.Helper()
	f := domaintest.NewFaults()
	return domaintest.Service(t, st, domain.WithStepHook(f.Hook)), f
}

var startedService = domaintest.FsckService

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
