package seed

import (
	"cmp"
	"context"
	"errors"

	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/org"
)

// The seed's own examples of roles and departments (seed 001, cases 1 and 2),
// loaded by `make run` (gateway serve --demo) through OrgDemo.
const (
	// DemoAdminUsername is the demo user who holds the admin role; its
	// password is DefaultPassword.
	DemoAdminUsername = "admin"
	// DemoXiaoming is 小明's username: 劳动委员 > 体育委员.
	DemoXiaoming = "xiaoming"
	// DemoXiaohong is 小红's username: 学习委员 > 劳动委员 > 体育委员.
	DemoXiaohong = "xiaohong"
)

// demoTree is the seed's organization chart, parent before children, in
// the order the seed lists them.
var demoTree = []struct{ name, parent string }{
	{"CEO", ""},
	{"开发部", "CEO"}, {"测试部", "CEO"}, {"财务部", "CEO"},
	{"开发1", "开发部"}, {"开发2", "开发部"}, {"大数据部", "开发部"},
	{"测试1", "测试部"},
}

// demoRoles are the seed's role assignments with the seed's priorities
// (psn cf2: 200=10, 100=9 for 小明; 300=10, 200=9, 100=8 for 小红).
var demoRoles = []struct {
	user, role string
	priority   int
}{
	{DemoXiaoming, "劳动委员", 10}, {DemoXiaoming, "体育委员", 9},
	{DemoXiaohong, "学习委员", 10}, {DemoXiaohong, "劳动委员", 9}, {DemoXiaohong, "体育委员", 8},
	{DemoAdminUsername, org.AdminRole, org.MaxPriority},
}

// demoMembers put the demo users into departments (the seed has no members).
var demoMembers = []struct{ user, dept string }{
	{DemoAdminUsername, "CEO"}, {DemoXiaoming, "开发1"}, {DemoXiaohong, "测试1"},
}

// OrgDemo loads the seed's examples through svc: the users xiaoming (小明),
// xiaohong (小红) and admin (password DefaultPassword, registered when
// missing); the roles 体育委员, 劳动委员, 学习委员 and admin with the seed's
// assignments; admin holding the admin role (carrying ADMINISTRATOR); the department tree CEO →
// 开发部 (开发1, 开发2, 大数据部), 测试部 (测试1), 财务部; and the demo users in
// CEO, 开发1 and 测试1; xiaohong managing 开发部. It is idempotent: what exists (users and roles by
// name, departments by name under their parent) is reused, so a second run
// changes nothing. Errors are the domain's.
func OrgDemo(ctx context.Context, svc *domain.Domain) error {
	users := map[string]weibo.UserID{}
	for _, name := range []string{DemoAdminUsername, DemoXiaoming, DemoXiaohong} {
		u, err := svc.Accounts.UserByUsername(ctx, name)
		if err != nil {
			return err
		}
		if u == nil {
			if u, err = svc.Accounts.Register(ctx, name, DefaultPassword); err != nil {
				e, ok := errors.AsType[*weibo.Error](err)
				if !ok || e.Reason != weibo.ReasonUsernameTaken {
					return err
				}
				// Registered concurrently (another seeding process).
				if u, err = svc.Accounts.UserByUsername(ctx, name); err != nil || u == nil {
					return cmp.Or(err, error(e))
				}
			}
		}
		users[name] = u.ID
	}
	for _, a := range demoRoles {
		if a.role == org.AdminRole {
			// The command line's grant: the admin role with ADMINISTRATOR.
			if _, _, err := svc.GrantRoleByName(ctx, a.user, a.role, a.priority); err != nil {
				return err
			}
			continue
		}
		role, err := svc.Org.Roles.Ensure(ctx, a.role)
		if err != nil {
			return err
		}
		if _, err := svc.Org.Roles.Assign(ctx, users[a.user], role.ID, a.priority); err != nil {
			return err
		}
	}
	depts := map[string]weibo.DeptID{}
	for _, d := range demoTree {
		parent := depts[d.parent] // weibo.RootDept for ""
		id, err := childNamed(ctx, svc, parent, d.name)
		if err != nil {
			return err
		}
		if id == weibo.RootDept {
			created, err := svc.Org.Departments.Create(ctx, d.name, parent)
			if err != nil {
				return err
			}
			id = created.ID
		}
		depts[d.name] = id
	}
	for _, m := range demoMembers {
		if _, err := svc.Org.Members.Set(ctx, users[m.user], depts[m.dept]); err != nil {
			return err
		}
	}
	// A department head: 小红 manages 开发部 and its subtree.
	_, err := svc.Org.Departments.AddManager(ctx, depts[demoManaged], users[DemoXiaohong])
	return err
}

// demoManaged is the department the demo's manager (xiaohong) manages.
const demoManaged = "开发部"

// childNamed returns the id of the first child of parent named name, or
// weibo.RootDept when it has none.
func childNamed(ctx context.Context, svc *domain.Domain, parent weibo.DeptID, name string) (weibo.DeptID, error) {
	var after *string
	for {
		page, err := svc.Org.Departments.Children(ctx, parent, new(weibo.MaxPageSize), after)
		if err != nil {
			return 0, err
		}
		for _, e := range page.Edges {
			if e.Department.Name == name {
				return e.Department.ID, nil
			}
		}
		if !page.PageInfo.HasNextPage {
			return weibo.RootDept, nil
		}
		after = page.PageInfo.EndCursor
	}
}
