package department_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/org"
)

// The helpers the weibo, fsck and seed tests share (internal/domaintest).
var (
	uniq        = domaintest.Uniq
	mustUser    = domaintest.MustUser
	childNames  = domaintest.ChildNames
	deptMembers = domaintest.DeptMembers
	userDept    = domaintest.UserDept
)

func wantReason(t *testing.T, err error, reason, what string) {
	t.Helper()
	if e, ok := errors.AsType[*weibo.Error](err); !ok || e.Reason != reason {
		t.Fatalf("%s: want reason %s, got %v", what, reason, err)
	}
}

// TestDepartments covers the tree (create, children, top level, ancestors,
// rename, move with cycle refusal, delete with and without cascade) and
// membership, on both backends.
func TestDepartments(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			svc := domaintest.Service(t, b.Open(t))
			tag := uniq("d")
			mk := func(name string, parent weibo.DeptID) *org.Department {
				t.Helper()
				d, err := svc.Org.Departments.Create(ctx, name+tag, parent)
				if err != nil {
					t.Fatalf("create %s: %v", name, err)
				}
				return d
			}
			ceo := mk("CEO", weibo.RootDept)
			dev, test, fin := mk("开发部", ceo.ID), mk("测试部", ceo.ID), mk("财务部", ceo.ID)
			dev1, dev2, big := mk("开发1", dev.ID), mk("开发2", dev.ID), mk("大数据部", dev.ID)
			test1 := mk("测试1", test.ID)

			if got, want := childNames(t, svc, dev.ID, 2), []string{"开发1" + tag, "开发2" + tag, "大数据部" + tag}; !slices.Equal(got, want) {
				t.Fatalf("children of 开发部 = %v, want %v", got, want)
			}
			if got, want := childNames(t, svc, ceo.ID, 10), []string{"开发部" + tag, "测试部" + tag, "财务部" + tag}; !slices.Equal(got, want) {
				t.Fatalf("children of CEO = %v", got)
			}
			top := childNames(t, svc, weibo.RootDept, 100)
			if !slices.Contains(top, "CEO"+tag) || slices.Contains(top, "开发部"+tag) {
				t.Fatalf("top-level = %v", top)
			}
			anc, err := svc.Org.Departments.Ancestors(ctx, big)
			if err != nil || len(anc) != 2 || anc[0].ID != ceo.ID || anc[1].ID != dev.ID {
				t.Fatalf("ancestors of 大数据部 = %v %v", anc, err)
			}

			// Bad input.
			_, err = svc.Org.Departments.Create(ctx, "", ceo.ID)
			domaintest.WantCode(t, err, weibo.CodeBadUserInput, "empty name")
			_, err = svc.Org.Departments.Create(ctx, "x", 999_999_999)
			domaintest.WantCode(t, err, weibo.CodeNotFound, "unknown parent")
			_, err = svc.Org.Departments.Rename(ctx, 999_999_999, "x")
			domaintest.WantCode(t, err, weibo.CodeNotFound, "rename unknown")
			_, err = svc.Org.Departments.Rename(ctx, fin.ID, " \t")
			domaintest.WantCode(t, err, weibo.CodeBadUserInput, "rename to blank")
			_, err = svc.Org.Departments.Move(ctx, 999_999_999, ceo.ID)
			domaintest.WantCode(t, err, weibo.CodeNotFound, "move unknown")
			_, err = svc.Org.Departments.Move(ctx, dev.ID, 999_999_999)
			domaintest.WantCode(t, err, weibo.CodeNotFound, "move under unknown")
			_, err = svc.Org.Departments.Delete(ctx, 999_999_999, true)
			domaintest.WantCode(t, err, weibo.CodeNotFound, "delete unknown")

			// Cycles are refused.
			_, err = svc.Org.Departments.Move(ctx, dev.ID, dev.ID)
			wantReason(t, err, weibo.ReasonDepartmentCycle, "move under itself")
			_, err = svc.Org.Departments.Move(ctx, ceo.ID, big.ID)
			wantReason(t, err, weibo.ReasonDepartmentCycle, "move under a grandchild")
			_, err = svc.Org.Departments.Move(ctx, dev.ID, dev2.ID)
			wantReason(t, err, weibo.ReasonDepartmentCycle, "move under a child")

			// Rename and move.
			if d, err := svc.Org.Departments.Rename(ctx, fin.ID, "财务中心"+tag); err != nil || d.Name != "财务中心"+tag {
				t.Fatalf("rename: %v %v", d, err)
			}
			if _, err := svc.Org.Departments.Move(ctx, big.ID, test.ID); err != nil {
				t.Fatal(err)
			}
			if got := childNames(t, svc, dev.ID, 10); !slices.Equal(got, []string{"开发1" + tag, "开发2" + tag}) {
				t.Fatalf("开发部 after move = %v", got)
			}
			if got := childNames(t, svc, test.ID, 10); !slices.Equal(got, []string{"大数据部" + tag, "测试1" + tag}) && !slices.Equal(got, []string{"测试1" + tag, "大数据部" + tag}) {
				t.Fatalf("测试部 after move = %v", got)
			}
			if _, err := svc.Org.Departments.Move(ctx, test.ID, weibo.RootDept); err != nil {
				t.Fatal(err)
			}
			if top := childNames(t, svc, weibo.RootDept, 100); !slices.Contains(top, "测试部"+tag) {
				t.Fatalf("测试部 not top-level after move: %v", top)
			}
			if anc, _ := svc.Org.Departments.Ancestors(ctx, test1); len(anc) != 1 || anc[0].ID != test.ID {
				t.Fatalf("ancestors of 测试1 after move = %v", anc)
			}
			if _, err := svc.Org.Departments.Move(ctx, test.ID, ceo.ID); err != nil {
				t.Fatal(err)
			}

			// Membership.
			a, bb := mustUser(t, svc, uniq("mem")), mustUser(t, svc, uniq("mem"))
			if _, err := svc.Org.Members.Set(ctx, a.ID, dev1.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := svc.Org.Members.Set(ctx, bb.ID, dev1.ID); err != nil {
				t.Fatal(err)
			}
			_, err = svc.Org.Members.Set(ctx, a.ID, 999_999_999)
			domaintest.WantCode(t, err, weibo.CodeNotFound, "unknown department")
			_, err = svc.Org.Members.Set(ctx, 999_999_999_999, dev1.ID)
			domaintest.WantCode(t, err, weibo.CodeNotFound, "unknown user")
			if got := deptMembers(t, svc, dev1.ID); len(got) != 2 {
				t.Fatalf("开发1 members = %v", got)
			}
			if d := userDept(t, svc, a.ID); d == nil || d.ID != dev1.ID {
				t.Fatalf("a's department = %v", d)
			}
			if _, err := svc.Org.Members.Set(ctx, a.ID, dev2.ID); err != nil {
				t.Fatal(err)
			}
			if got := deptMembers(t, svc, dev1.ID); !slices.Equal(got, []weibo.UserID{bb.ID}) {
				t.Fatalf("开发1 members after move = %v", got)
			}
			if _, err := svc.Org.Members.Set(ctx, bb.ID, weibo.RootDept); err != nil {
				t.Fatal(err)
			}
			if d := userDept(t, svc, bb.ID); d != nil {
				t.Fatalf("b still in %v", d)
			}

			// Non-empty delete is refused; an empty one works.
			_, err = svc.Org.Departments.Delete(ctx, dev.ID, false)
			wantReason(t, err, weibo.ReasonDepartmentNotEmpty, "delete with children")
			_, err = svc.Org.Departments.Delete(ctx, dev2.ID, false)
			wantReason(t, err, weibo.ReasonDepartmentNotEmpty, "delete with members")
			if ok, err := svc.Org.Departments.Delete(ctx, dev1.ID, false); err != nil || !ok {
				t.Fatalf("delete empty: %v", err)
			}
			// Cascade deletes the subtree; members leave.
			if ok, err := svc.Org.Departments.Delete(ctx, dev.ID, true); err != nil || !ok {
				t.Fatalf("cascade: %v", err)
			}
			ds, _ := svc.Org.Departments.Get(ctx, []weibo.DeptID{dev.ID, dev2.ID, test.ID, big.ID})
			if ds[0] != nil || ds[1] != nil || ds[2] == nil || ds[3] == nil {
				t.Fatalf("after cascade: %v", ds)
			}
			if d := userDept(t, svc, a.ID); d != nil {
				t.Fatalf("a still in %v after cascade", d)
			}
			if got := childNames(t, svc, ceo.ID, 10); !slices.Equal(got, []string{"测试部" + tag, "财务中心" + tag}) {
				t.Fatalf("CEO children after cascade = %v", got)
			}
		})
	}
}
