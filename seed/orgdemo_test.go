package seed

import (
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/tables"
)

// orgService returns a migrated service over st.
func orgService(t *testing.T, st hbase.StoreAdmin) *weibo.Service {
	t.Helper()
	if err := tables.Migrate(t.Context(), st); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return weibo.New(st, weibo.WithBcryptCost(4), weibo.WithOutboxSweep(0),
		weibo.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
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

// TestSeedOrgDemo checks that the seed's examples answer as the seed says,
// and that loading them twice changes nothing. On the shared real HBase the
// top level may hold other tests' departments, so only there it checks
// that CEO is among them.
func TestSeedOrgDemo(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			svc := orgService(t, b.Open(t))
			for range 2 {
				if err := OrgDemo(ctx, svc); err != nil {
					t.Fatal(err)
				}
			}
			top, err := svc.TopDepartments(ctx, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			var ceo *weibo.Department
			var names []string
			for _, e := range top.Edges {
				names = append(names, e.Department.Name)
				if e.Department.Name == "CEO" {
					ceo = e.Department
				}
			}
			if b.Name == "embedded" && !slices.Equal(names, []string{"CEO"}) {
				t.Fatalf("topDepartments = %v, want [CEO]", names)
			}
			if ceo == nil {
				t.Fatalf("no CEO among %v", names)
			}
			kids, _ := svc.DepartmentChildren(ctx, ceo.ID, nil, nil)
			if got := childNames(t, svc, ceo.ID, 10); !slices.Equal(got, []string{"开发部", "测试部", "财务部"}) {
				t.Fatalf("children of CEO = %v", got)
			}
			if got := childNames(t, svc, kids.Edges[0].Department.ID, 10); !slices.Equal(got, []string{"开发1", "开发2", "大数据部"}) {
				t.Fatalf("children of 开发部 = %v", got)
			}
			if got := childNames(t, svc, kids.Edges[1].Department.ID, 10); !slices.Equal(got, []string{"测试1"}) {
				t.Fatalf("children of 测试部 = %v", got)
			}
			hong, _ := svc.UserByUsername(ctx, DemoXiaohong)
			ming, _ := svc.UserByUsername(ctx, DemoXiaoming)
			if got := userRoles(t, svc, hong.ID); !slices.Equal(got, []string{"学习委员:10", "劳动委员:9", "体育委员:8"}) {
				t.Fatalf("小红's roles = %v", got)
			}
			if got := userRoles(t, svc, ming.ID); !slices.Equal(got, []string{"劳动委员:10", "体育委员:9"}) {
				t.Fatalf("小明's roles = %v", got)
			}
			admin, _ := svc.UserByUsername(ctx, DemoAdminUsername)
			if ok, err := svc.HasRole(ctx, admin.ID, weibo.AdminRole); !ok || err != nil {
				t.Fatalf("demo admin is not admin: %v", err)
			}
		})
	}
}
