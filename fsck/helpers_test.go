package fsck_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/orgtest"
	"github.com/weibohbase/gateway/weibo/domain"
)

// faults is a WithPairWriteHook hook that fails the steps armed in it.
type faults struct {
	mu    sync.Mutex
	armed map[string]bool
}

var errInjected = errors.New("injected failure between the two writes")

func (f *faults) hook(_ context.Context, step string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.armed[step] {
		delete(f.armed, step)
		return errInjected
	}
	return nil
}

// arm makes the next call of step fail.
func (f *faults) arm(step string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.armed[step] = true
}

// orgService returns a migrated service over st with a fault hook.
func orgService(t *testing.T, st hbase.StoreAdmin) (*domain.Domain, *faults) {
	t.Helper()
	f := &faults{armed: map[string]bool{}}
	return orgtest.Service(t, st, domain.WithStepHook(f.hook)), f
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
