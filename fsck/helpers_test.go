package fsck_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/tables"
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
func orgService(t *testing.T, st hbase.StoreAdmin) (*weibo.Service, *faults) {
	t.Helper()
	if err := tables.Migrate(t.Context(), st); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	f := &faults{armed: map[string]bool{}}
	svc := weibo.New(st, weibo.WithBcryptCost(4), weibo.WithOutboxSweep(0),
		weibo.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))), weibo.WithPairWriteHook(f.hook))
	return svc, f
}

func uniq(prefix string) string {
	return fmt.Sprintf("%s_%d_%04d", prefix, time.Now().UnixNano()%1e9, rand.IntN(10000))
}

func mustUser(t *testing.T, svc *weibo.Service, name string) *weibo.User {
	t.Helper()
	u, err := svc.Register(t.Context(), name, "correct horse")
	if err != nil {
		t.Fatalf("register %s: %v", name, err)
	}
	return u
}

func userRoles(t *testing.T, svc *weibo.Service, uid weibo.UserID) []string {
	t.Helper()
	rs, err := svc.UserRoles(t.Context(), []weibo.UserID{uid})
	if err != nil {
		t.Fatalf("user roles: %v", err)
	}
	var out []string
	for _, a := range rs[0] {
		out = append(out, fmt.Sprintf("%s:%d", a.Role.Name, a.Priority))
	}
	return out
}

func members(t *testing.T, svc *weibo.Service, rid weibo.RoleID, first int) []string {
	t.Helper()
	var out []string
	var after *string
	for {
		p, err := svc.RoleMembers(t.Context(), rid, &first, after)
		if err != nil {
			t.Fatalf("role members: %v", err)
		}
		for _, e := range p.Edges {
			out = append(out, fmt.Sprintf("%d:%d", e.User, e.Priority))
		}
		if !p.PageInfo.HasNextPage {
			return out
		}
		after = p.PageInfo.EndCursor
	}
}

func role(t *testing.T, svc *weibo.Service, rid weibo.RoleID) *weibo.Role {
	t.Helper()
	rs, err := svc.GetRoles(t.Context(), []weibo.RoleID{rid})
	if err != nil {
		t.Fatalf("get role: %v", err)
	}
	return rs[0]
}

func childNames(t *testing.T, svc *weibo.Service, did weibo.DeptID, first int) []string {
	t.Helper()
	var out []string
	var after *string
	for {
		p, err := svc.DepartmentChildren(t.Context(), did, &first, after)
		if err != nil {
			t.Fatalf("children of %d: %v", did, err)
		}
		for _, e := range p.Edges {
			out = append(out, e.Department.Name)
		}
		if !p.PageInfo.HasNextPage {
			return out
		}
		after = p.PageInfo.EndCursor
	}
}

func deptMembers(t *testing.T, svc *weibo.Service, did weibo.DeptID) []weibo.UserID {
	t.Helper()
	p, err := svc.DepartmentMembers(t.Context(), did, nil, nil)
	if err != nil {
		t.Fatalf("members of %d: %v", did, err)
	}
	var out []weibo.UserID
	for _, e := range p.Edges {
		out = append(out, e.User)
	}
	return out
}

func userDept(t *testing.T, svc *weibo.Service, uid weibo.UserID) *weibo.Department {
	t.Helper()
	ds, err := svc.UserDepartments(t.Context(), []weibo.UserID{uid})
	if err != nil {
		t.Fatal(err)
	}
	return ds[0]
}
