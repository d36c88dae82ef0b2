package org_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/org"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestCleanName checks the name rule of roles and departments: trimmed,
// 1 to max characters (not bytes) of valid UTF-8 without control
// characters, or a BAD_USER_INPUT error on the field that says why.
func TestCleanName(t *testing.T) {
	for _, c := range []struct {
		in, want, err string // err: a part of the error's message
	}{
		{in: "editors", want: "editors"},
		{in: "  editors\t", want: "editors"},
		{in: "编辑部", want: "编辑部"},
		{in: strings.Repeat("名", 8), want: strings.Repeat("名", 8)}, // 8 characters, 24 bytes
		{in: strings.Repeat("a", 9), err: "at most 8 characters, got 9"},
		{in: "", err: "must not be empty"},
		{in: " \n ", err: "must not be empty"},
		{in: "a\x00b", err: "control characters"},
		{in: "a\u0085b", err: "control characters"},
		{in: "a\xffb", err: "not valid UTF-8"},
	} {
		got, err := org.CleanName("name", c.in, 8)
		if c.err == "" {
			if err != nil || got != c.want {
				t.Errorf("CleanName(%q) = %q, %v; want %q", c.in, got, err, c.want)
			}
			continue
		}
		e, ok := err.(*weibo.Error)
		if !ok || e.Code != weibo.CodeBadUserInput || e.Field != "name" || !strings.Contains(e.Message, c.err) {
			t.Errorf("CleanName(%q) = %q, %#v; want BAD_USER_INPUT on name saying %q", c.in, got, err, c.err)
		}
	}
}

// TestCheckPriority checks the bounds of a role assignment's priority.
func TestCheckPriority(t *testing.T) {
	for p, ok := range map[int]bool{
		org.MinPriority - 1: false, org.MinPriority: true, 500: true,
		org.MaxPriority: true, org.MaxPriority + 1: false, -7: false,
	} {
		err := org.CheckPriority(p)
		if ok != (err == nil) {
			t.Errorf("CheckPriority(%d) = %v, want ok %v", p, err, ok)
		}
		if err != nil && (weibo.CodeOf(err) != weibo.CodeBadUserInput || err.(*weibo.Error).Field != "priority") {
			t.Errorf("CheckPriority(%d) = %#v, want BAD_USER_INPUT on priority", p, err)
		}
	}
}

// TestRowDecoders decodes role, department and manager cells as the
// store returns them, and a row without a name as no role or department.
func TestRowDecoders(t *testing.T) {
	cell := func(fam, qual string, v []byte) *hbase.Cell {
		return &hbase.Cell{Family: fam, Qualifier: qual, Value: v}
	}
	role := &hbase.Result{Row: []byte("r"), Cells: []*hbase.Cell{
		cell(tables.FamCount, tables.ColMemberCount, tables.EncodeCounter(3)),
		cell(tables.FamInfo, tables.ColCreated, tables.EncodeMillis(1_700_000_000_123)),
		cell(tables.FamInfo, tables.ColRoleName, []byte("editors")),
	}}
	r := org.RoleFromRow(7, role)
	if r == nil || r.ID != 7 || r.Name != "editors" || r.MemberCount != 3 || r.CreatedAt.UnixMilli() != 1_700_000_000_123 {
		t.Errorf("RoleFromRow = %+v", r)
	}
	dept := &hbase.Result{Row: []byte("d"), Cells: []*hbase.Cell{
		cell(tables.FamInfo, tables.ColDeptName, []byte("研发")),
		cell(tables.FamInfo, tables.ColParent, tables.EncodeID(weibo.DeptID(4))),
	}}
	d := org.DepartmentFromRow(9, dept)
	if d == nil || d.ID != 9 || d.Name != "研发" || d.Parent != 4 {
		t.Errorf("DepartmentFromRow = %+v", d)
	}
	nameless := &hbase.Result{Row: []byte("x"), Cells: []*hbase.Cell{cell(tables.FamCount, tables.ColMemberCount, tables.EncodeCounter(1))}}
	if r := org.RoleFromRow(7, nameless); r != nil {
		t.Errorf("RoleFromRow of a row without a name = %+v, want nil", r)
	}
	if d := org.DepartmentFromRow(9, nameless); d != nil {
		t.Errorf("DepartmentFromRow of a row without a name = %+v, want nil", d)
	}
	user := &hbase.Result{Row: []byte("u"), Cells: []*hbase.Cell{
		cell(tables.FamOrg, tables.ManagerQualifier(12), []byte{}),
		cell(tables.FamOrg, tables.ColUserDept, tables.EncodeID(weibo.DeptID(5))),
		cell(tables.FamOrg, tables.ManagerQualifier(3), []byte{}),
	}}
	if got := org.ManagedIn(user); !slices.Equal(got, []weibo.DeptID{3, 12}) {
		t.Errorf("ManagedIn = %v, want [3 12]", got)
	}
}

// TestVerifyChain checks a department's chain of parents as read for its
// path: from the top level down to its parent, each the parent of the
// next.
func TestVerifyChain(t *testing.T) {
	dept := func(id, parent weibo.DeptID) *org.Department { return &org.Department{ID: id, Parent: parent} }
	top, mid := dept(1, weibo.RootDept), dept(2, 1)
	leaf := dept(3, 2)
	for name, c := range map[string]struct {
		up   []*org.Department
		want bool
	}{
		"whole":          {[]*org.Department{top, mid}, true},
		"empty":          {nil, false},
		"gone":           {[]*org.Department{top, nil}, false},
		"not from top":   {[]*org.Department{mid}, false},
		"broken link":    {[]*org.Department{top, dept(2, 9)}, false},
		"another parent": {[]*org.Department{top, dept(4, 1)}, false},
	} {
		if got := org.VerifyChain(leaf, c.up); got != c.want {
			t.Errorf("%s: VerifyChain = %v, want %v", name, got, c.want)
		}
	}
	if !org.VerifyChain(mid, []*org.Department{top}) {
		t.Error("a child of a top-level department: VerifyChain = false")
	}
}
