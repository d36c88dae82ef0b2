package domain_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/tables"
)

// adminWorld is a department of 100 users with a shared username prefix,
// and a role, for the admin benchmarks.
type adminWorld struct {
	svc    *domain.Domain
	prefix string
	users  []weibo.UserID
	dept   weibo.DeptID
	role   weibo.RoleID
}

func newAdminWorld(b *testing.B, st hbase.StoreAdmin) *adminWorld {
	b.Helper()
	ctx := context.Background()
	if err := tables.Migrate(ctx, st); err != nil {
		b.Fatal(err)
	}
	w := &adminWorld{svc: domaintest.Quiet(st), prefix: uniq("adm")}
	for i := range 100 {
		w.users = append(w.users, mustUserB(b, w.svc, fmt.Sprintf("%s%03d", w.prefix, i)))
	}
	d, err := w.svc.Org.Departments.Create(ctx, uniq("admdept"), weibo.RootDept)
	if err != nil {
		b.Fatal(err)
	}
	w.dept = d.ID
	if _, err := w.svc.Org.Bulk.SetDepartment(ctx, 0, w.users, w.dept); err != nil {
		b.Fatal(err)
	}
	r, err := w.svc.Org.Roles.Create(ctx, uniq("admrole"))
	if err != nil {
		b.Fatal(err)
	}
	w.role = r.ID
	return w
}

// adminStores returns the embedded store and, with GATEWAY_TEST_HBASE_ZK,
// a namespace of its own on the real HBase (dropped afterwards).
func adminStores(b *testing.B) map[string]func() hbase.StoreAdmin {
	return map[string]func() hbase.StoreAdmin{
		"embedded": func() hbase.StoreAdmin { return testenv.Embedded(b) },
		"hbase": func() hbase.StoreAdmin {
			ns := fmt.Sprintf("bench_%d", time.Now().UnixNano()%1e9)
			st := hbase.WithNamespace(testenv.HBase(b), tables.Namespace, ns)
			b.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				_ = st.DropNamespace(ctx, tables.Namespace)
			})
			return st
		},
	}
}

// BenchmarkAdmin measures the admin dashboards' reads and a bulk change,
// per operation:
//
//   - users-prefix-50: SearchUsers by username prefix, a page of 50;
//
//   - department-page-50: a department with its member count and a page
//     of 50 of its members, with the users' rows (as GraphQL reads them);
//
//   - bulk-100: assignRoleToUsers and revokeRoleFromUsers of 100 users in
//     turn (each a counted write per user).
//
//     go test ./weibo/domain -run '^$' -bench Admin -benchtime 20x
//     GATEWAY_TEST_HBASE_ZK=127.0.0.1:PORT go test ./weibo/domain -run '^$' -bench Admin/hbase -benchtime 20x
func BenchmarkAdmin(b *testing.B) {
	for name, open := range adminStores(b) {
		b.Run(name, func(b *testing.B) {
			w := newAdminWorld(b, open())
			ctx := context.Background()
			b.Run("users-prefix-50", func(b *testing.B) {
				for b.Loop() {
					p, err := w.svc.SearchUsers(ctx, domain.UserFilter{UsernamePrefix: w.prefix}, new(50), nil)
					if err != nil || len(p.Edges) != 50 {
						b.Fatal(err)
					}
					ids := make([]weibo.UserID, len(p.Edges))
					for i, e := range p.Edges {
						ids[i] = e.User
					}
					if _, err := w.svc.Accounts.GetUsers(ctx, ids); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("department-page-50", func(b *testing.B) {
				for b.Loop() {
					if _, err := w.svc.Org.Departments.Get(ctx, []weibo.DeptID{w.dept}); err != nil {
						b.Fatal(err)
					}
					p, err := w.svc.Org.Departments.Members(ctx, w.dept, new(50), nil)
					if err != nil || len(p.Edges) != 50 {
						b.Fatal(err)
					}
					ids := make([]weibo.UserID, len(p.Edges))
					for i, e := range p.Edges {
						ids[i] = e.User
					}
					if _, err := w.svc.Accounts.GetUsers(ctx, ids); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("bulk-100", func(b *testing.B) {
				i := 0
				for b.Loop() {
					var err error
					if i%2 == 0 {
						_, err = w.svc.Org.Bulk.AssignRole(ctx, w.users, w.role, 5)
					} else {
						_, err = w.svc.Org.Bulk.RevokeRole(ctx, w.users, w.role)
					}
					if err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		})
	}
}
