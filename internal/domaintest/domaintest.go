// Package domaintest holds the test helpers that the weibo, fsck and seed
// tests share: a migrated service with test settings, stores of a test's
// own (OwnStore, Jittery), crash injection (CrashAt, Clock), unique names,
// and readers that flatten the role and department connections into slices
// for comparison. Every helper fails the test (t.Fatal) on a store error.
package domaintest

import (
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/org"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Service migrates st (tables.Migrate) and returns a service over it with
// a cheap bcrypt cost, no outbox sweep and a discarded log, then opts.
func Service(t testing.TB, st hbase.StoreAdmin, opts ...domain.Option) *domain.Domain {
	t.Helper()
	if err := tables.Migrate(t.Context(), st); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return domain.New(st, append([]domain.Option{domain.WithBcryptCost(4), domain.WithOutboxSweep(0),
		domain.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))}, opts...)...)
}

// Uniq returns prefix followed by a time- and random-based suffix, so that
// tests sharing one store (the shared real HBase) do not meet.
func Uniq(prefix string) string {
	return fmt.Sprintf("%s_%d_%04d", prefix, time.Now().UnixNano()%1e9, rand.IntN(10000))
}

// MustUser registers name with the password "correct horse".
func MustUser(t testing.TB, svc *domain.Domain, name string) *weibo.User {
	t.Helper()
	u, err := svc.Accounts.Register(t.Context(), name, "correct horse")
	if err != nil {
		t.Fatalf("register %s: %v", name, err)
	}
	return u
}

// RoleNames formats role assignments as "name:priority", in their order.
func RoleNames(as []*org.RoleAssignment) []string {
	var out []string
	for _, a := range as {
		out = append(out, fmt.Sprintf("%s:%d", a.Role.Name, a.Priority))
	}
	return out
}

// UserRoles returns the roles of uid as RoleNames does.
func UserRoles(t testing.TB, svc *domain.Domain, uid weibo.UserID) []string {
	t.Helper()
	rs, err := svc.Org.Roles.OfUsers(t.Context(), []weibo.UserID{uid})
	if err != nil {
		t.Fatalf("user roles: %v", err)
	}
	return RoleNames(rs[0])
}

// Members returns every member of role rid as "user:priority", read in
// pages of first.
func Members(t testing.TB, svc *domain.Domain, rid weibo.RoleID, first int) []string {
	t.Helper()
	var out []string
	var after *string
	for {
		p, err := svc.Org.Roles.Members(t.Context(), rid, &first, after)
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

// Role reads role rid (nil when it does not exist).
func Role(t testing.TB, svc *domain.Domain, rid weibo.RoleID) *org.Role {
	t.Helper()
	rs, err := svc.Org.Roles.Get(t.Context(), []weibo.RoleID{rid})
	if err != nil {
		t.Fatalf("get role: %v", err)
	}
	return rs[0]
}

// ChildNames returns the names of every child department of did (0: the
// top level), read in pages of first.
func ChildNames(t testing.TB, svc *domain.Domain, did weibo.DeptID, first int) []string {
	t.Helper()
	var out []string
	var after *string
	for {
		p, err := svc.Org.Departments.Children(t.Context(), did, &first, after)
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

// DeptMembers returns the members of department did (the first page of the
// default size).
func DeptMembers(t testing.TB, svc *domain.Domain, did weibo.DeptID) []weibo.UserID {
	t.Helper()
	p, err := svc.Org.Departments.Members(t.Context(), did, nil, nil)
	if err != nil {
		t.Fatalf("members of %d: %v", did, err)
	}
	var out []weibo.UserID
	for _, e := range p.Edges {
		out = append(out, e.User)
	}
	return out
}

// UserDept reads the department of uid (nil when it has none).
func UserDept(t testing.TB, svc *domain.Domain, uid weibo.UserID) *org.Department {
	t.Helper()
	ds, err := svc.Org.Departments.OfUsers(t.Context(), []weibo.UserID{uid})
	if err != nil {
		t.Fatal(err)
	}
	return ds[0]
}
