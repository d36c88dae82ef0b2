package seed

import (
	"slices"
	"testing"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/org"
)

// The helpers the weibo, fsck and seed tests share (internal/domaintest).
var (
	orgService = func(t *testing.T, st hbase.StoreAdmin) *domain.Domain { return domaintest.Service(t, st) }
	userRoles  = domaintest.UserRoles
	childNames = domaintest.ChildNames
)

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
			top, err := svc.Org.Departments.Top(ctx, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			var ceo *org.Department
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
			kids, _ := svc.Org.Departments.Children(ctx, ceo.ID, nil, nil)
			if got := childNames(t, svc, ceo.ID, 10); !slices.Equal(got, []string{"开发部", "测试部", "财务部"}) {
				t.Fatalf("children of CEO = %v", got)
			}
			if got := childNames(t, svc, kids.Edges[0].Department.ID, 10); !slices.Equal(got, []string{"开发1", "开发2", "大数据部"}) {
				t.Fatalf("children of 开发部 = %v", got)
			}
			if got := childNames(t, svc, kids.Edges[1].Department.ID, 10); !slices.Equal(got, []string{"测试1"}) {
				t.Fatalf("children of 测试部 = %v", got)
			}
			hong, _ := svc.Accounts.UserByUsername(ctx, DemoXiaohong)
			ming, _ := svc.Accounts.UserByUsername(ctx, DemoXiaoming)
			if got := userRoles(t, svc, hong.ID); !slices.Equal(got, []string{"学习委员:10", "劳动委员:9", "体育委员:8"}) {
				t.Fatalf("小红's roles = %v", got)
			}
			if got := userRoles(t, svc, ming.ID); !slices.Equal(got, []string{"劳动委员:10", "体育委员:9"}) {
				t.Fatalf("小明's roles = %v", got)
			}
			admin, _ := svc.Accounts.UserByUsername(ctx, DemoAdminUsername)
			if ok, err := svc.Org.Authz.HasRole(ctx, admin.ID, org.AdminRole); !ok || err != nil {
				t.Fatalf("demo admin is not admin: %v", err)
			}
			if err := svc.Org.Authz.RequirePermission(ctx, admin.ID, org.PermAdministrator); err != nil {
				t.Fatalf("demo admin is not an administrator: %v", err)
			}
		})
	}
}
