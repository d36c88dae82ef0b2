package weibo

import (
	"context"
)

// The seed's own examples of roles and departments (seed 001, cases 1 and 2),
// loaded by `make run` (gateway serve --demo) through SeedOrgDemo.
const (
	// DemoAdminUsername is the demo user who holds the admin role; its
	// password is DefaultSeedPassword.
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
	{DemoAdminUsername, AdminRole, MaxPriority},
}

// demoMembers put the demo users into departments (the seed has no members).
var demoMembers = []struct{ user, dept string }{
	{DemoAdminUsername, "CEO"}, {DemoXiaoming, "开发1"}, {DemoXiaohong, "测试1"},
}

// SeedOrgDemo loads the seed's examples: the users xiaoming (小明), xiaohong
// (小红) and admin (password DefaultSeedPassword, registered when missing);
// the roles 体育委员, 劳动委员, 学习委员 and admin with the seed's
// assignments; admin holding the admin role; and the department tree CEO →
// 开发部 (开发1, 开发2, 大数据部), 测试部 (测试1), 财务部. It is idempotent: what
// exists (users and roles by name, departments by name under their parent)
// is reused, so a second run changes nothing.
func (s *Service) SeedOrgDemo(ctx context.Context) error {
	users := map[string]UserID{}
	for _, name := range []string{DemoAdminUsername, DemoXiaoming, DemoXiaohong} {
		u, err := s.UserByUsername(ctx, name)
		if err != nil {
			return err
		}
		if u == nil {
			if u, err = s.Register(ctx, name, DefaultSeedPassword); err != nil {
				var e *Error
				if !asError(err, &e) || e.Reason != ReasonUsernameTaken {
					return err
				}
				// Registered concurrently (another seeding process).
				if u, err = s.UserByUsername(ctx, name); err != nil || u == nil {
					return cmpOr(err, e)
				}
			}
		}
		users[name] = u.ID
	}
	for _, a := range demoRoles {
		role, err := s.EnsureRole(ctx, a.role)
		if err != nil {
			return err
		}
		if _, err := s.AssignRole(ctx, users[a.user], role.ID, a.priority); err != nil {
			return err
		}
	}
	depts := map[string]DeptID{}
	for _, d := range demoTree {
		parent := depts[d.parent] // RootDept for ""
		kids, err := s.allChildren(ctx, parent)
		if err != nil {
			return err
		}
		found := false
		for _, k := range kids {
			if k.Name == d.name {
				depts[d.name], found = k.ID, true
				break
			}
		}
		if !found {
			created, err := s.CreateDepartment(ctx, d.name, parent)
			if err != nil {
				return err
			}
			depts[d.name] = created.ID
		}
	}
	for _, m := range demoMembers {
		if _, err := s.SetUserDepartment(ctx, users[m.user], depts[m.dept]); err != nil {
			return err
		}
	}
	return nil
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
