package provision_test

import (
	"testing"

	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/org"
	"github.com/weibohbase/gateway/weibo/provision"
)

// newUsers provisions n users named prefix0.. and returns their ids.
func newUsers(t *testing.T, d *domain.Domain, prefix string, n int) []weibo.UserID {
	t.Helper()
	out := make([]weibo.UserID, n)
	for i := range out {
		u, err := d.Provision.CreateUser(t.Context(), okta, provision.UserInput{UserName: prefix + string(rune('a'+i)) + "@corp.example", Active: true})
		if err != nil {
			t.Fatal(err)
		}
		out[i] = u.ID
	}
	return out
}

// memberIDs are g's members' ids.
func memberIDs(g *provision.Group) []weibo.UserID {
	out := []weibo.UserID{}
	for _, m := range g.Members {
		out = append(out, m.ID)
	}
	return out
}

// counts returns the kept member counter of group g.
func counts(t *testing.T, d *domain.Domain, g *provision.Group) int64 {
	t.Helper()
	n, err := weibo.ParseNodeID(g.ID)
	if err != nil {
		t.Fatal(err)
	}
	if n.Kind == weibo.NodeRole {
		rs := must(d.Org.Roles.Get(t.Context(), []weibo.RoleID{n.Role}))
		return rs[0].MemberCount
	}
	ds := must(d.Org.Departments.Get(t.Context(), []weibo.DeptID{n.Dept}))
	return ds[0].MemberCount
}

func sameIDs(a, b []weibo.UserID) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestGroups creates, changes, lists and deletes departments and roles
// with members, on both backends: member lists and counters exact, the
// user's groups, a clean fsck.
func TestGroups(t *testing.T) {
	eachBackend(t, func(t *testing.T, d *domain.Domain, _ *domaintest.Faults) {
		ctx := t.Context()
		p := d.Provision
		us := newUsers(t, d, "member.", 4)
		top := must(p.CreateGroup(ctx, okta, provision.GroupInput{DisplayName: "Engineering", ExternalID: "grp-eng", Members: us[:2]}))
		if top.Kind != provision.KindDepartment || top.DisplayName != "Engineering" || top.Version != 1 || top.ProvisionedBy != "okta" ||
			!sameIDs(memberIDs(top), us[:2]) || counts(t, d, top) != 2 {
			t.Fatalf("department %+v", top)
		}
		sub := must(p.CreateGroup(ctx, okta, provision.GroupInput{Kind: provision.KindDepartment, DisplayName: "Platform", Parent: top.ID}))
		if sub.Parent != top.ID {
			t.Errorf("sub %+v", sub)
		}
		// Adding a member of Engineering to Platform moves them.
		sub = must(p.PatchGroup(ctx, okta, sub.ID, provision.GroupChange{Add: []weibo.UserID{us[1], us[2]}}, nil))
		top = must(p.GetGroup(ctx, top.ID, true))
		if !sameIDs(memberIDs(sub), us[1:3]) || !sameIDs(memberIDs(top), us[:1]) || counts(t, d, sub) != 2 || counts(t, d, top) != 1 {
			t.Errorf("after the move: sub %v top %v", memberIDs(sub), memberIDs(top))
		}
		if sub.Version != 2 {
			t.Errorf("member change version %d", sub.Version)
		}
		// Removing a user who is not in it changes nothing.
		sub = must(p.PatchGroup(ctx, okta, sub.ID, provision.GroupChange{Remove: []weibo.UserID{us[0], us[1]}}, nil))
		if top = must(p.GetGroup(ctx, top.ID, true)); !sameIDs(memberIDs(top), us[:1]) || !sameIDs(memberIDs(sub), us[2:3]) {
			t.Errorf("remove: top %v sub %v", memberIDs(top), memberIDs(sub))
		}
		// Roles with a priority.
		role := must(p.CreateGroup(ctx, okta, provision.GroupInput{Kind: provision.KindRole, DisplayName: "Support", ExternalID: "grp-sup", Priority: 10, Members: us[:3]}))
		if role.Priority != 10 || !sameIDs(memberIDs(role), us[:3]) || counts(t, d, role) != 3 {
			t.Fatalf("role %+v", role)
		}
		as := must(d.Org.Roles.OfUsers(ctx, us[:1]))
		if len(as[0]) != 1 || as[0][0].Priority != 10 {
			t.Errorf("assignment %+v", as[0])
		}
		u0 := must(p.GetUser(ctx, us[0]))
		if len(u0.Groups) != 2 || u0.Groups[0].ID != top.ID || u0.Groups[1].ID != role.ID || u0.Groups[1].Display != "Support" {
			t.Errorf("user groups %+v", u0.Groups)
		}
		// A new priority assigns the members again.
		v := role.Version
		role = must(p.PatchGroup(ctx, okta, role.ID, provision.GroupChange{Priority: new(20), DisplayName: new("Support L2"), Remove: []weibo.UserID{us[2]}}, &v))
		if role.Priority != 20 || role.DisplayName != "Support L2" || !sameIDs(memberIDs(role), us[:2]) || counts(t, d, role) != 2 {
			t.Errorf("patched role %+v", role)
		}
		if as = must(d.Org.Roles.OfUsers(ctx, us[:1])); as[0][0].Priority != 20 {
			t.Errorf("re-assignment %+v", as[0])
		}
		if _, err := p.PatchGroup(ctx, okta, role.ID, provision.GroupChange{Add: us[3:]}, &v); code(err) != "BAD_USER_INPUT/VERSION_MISMATCH" {
			t.Errorf("stale patch: %v", err)
		}
		// Members alone with If-Match: one version step, made first.
		v = role.Version
		role = must(p.PatchGroup(ctx, okta, role.ID, provision.GroupChange{Add: us[3:]}, &v))
		if role.Version != v+1 || !sameIDs(memberIDs(role), []weibo.UserID{us[0], us[1], us[3]}) {
			t.Errorf("members with If-Match: %+v", role)
		}
		// Replace: exactly these members.
		role = must(p.ReplaceGroup(ctx, okta, role.ID, provision.GroupInput{Kind: provision.KindRole, DisplayName: "Support L2", ExternalID: "grp-sup2", Priority: 20, Members: us[1:]}, nil))
		if !sameIDs(memberIDs(role), us[1:]) || counts(t, d, role) != 3 || role.ExternalID != "grp-sup2" {
			t.Errorf("replaced role %+v", role)
		}
		if _, err := p.ReplaceGroup(ctx, okta, role.ID, provision.GroupInput{Kind: provision.KindDepartment, DisplayName: "x"}, nil); code(err) != "BAD_USER_INPUT/IMMUTABLE" {
			t.Errorf("kind change: %v", err)
		}
		// Reads.
		if got := must(p.GroupsByExternalID(ctx, "grp-sup2")); len(got) != 1 || got[0].ID != role.ID {
			t.Errorf("by externalId %+v", got)
		}
		if got := must(p.GroupsByExternalID(ctx, "grp-sup")); len(got) != 0 {
			t.Errorf("old externalId %+v", got)
		}
		all := must(p.ListGroups(ctx, false))
		if len(all) != 3 || all[0].ID != top.ID || all[1].ID != sub.ID || all[2].ID != role.ID {
			t.Errorf("list %+v", all)
		}
		if _, err := p.GetGroup(ctx, "department:999999", false); code(err) != weibo.CodeNotFound {
			t.Errorf("unknown group: %v", err)
		}
		cleanFsck(t, d)
		// Deletes.
		if err := p.DeleteGroup(ctx, okta, top.ID, nil); code(err) != "BAD_USER_INPUT/"+weibo.ReasonDepartmentNotEmpty {
			t.Errorf("non-empty department: %v", err)
		}
		if err := p.DeleteGroup(ctx, okta, role.ID, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := p.GetGroup(ctx, role.ID, false); code(err) != weibo.CodeNotFound {
			t.Errorf("deleted role: %v", err)
		}
		// Closing a user leaves its department and roles.
		role = must(p.CreateGroup(ctx, okta, provision.GroupInput{Kind: provision.KindRole, DisplayName: "Ops", Members: us[:1]}))
		if err := p.DeleteUser(ctx, okta, us[0], nil); err != nil {
			t.Fatal(err)
		}
		if role = must(p.GetGroup(ctx, role.ID, true)); len(role.Members) != 0 || counts(t, d, role) != 0 {
			t.Errorf("closed user still in the role: %+v", role)
		}
		if top = must(p.GetGroup(ctx, top.ID, true)); len(top.Members) != 0 || counts(t, d, top) != 0 {
			t.Errorf("closed user still in the department: %+v", top)
		}
		cleanFsck(t, d)
	})
}

// TestRankRule checks that a client acts only below its rank, assigns
// only priorities below it and never touches ADMINISTRATOR, and that a
// refused request writes nothing.
func TestRankRule(t *testing.T) {
	eachBackend(t, func(t *testing.T, d *domain.Domain, _ *domaintest.Faults) {
		ctx := t.Context()
		p := d.Provision
		us := newUsers(t, d, "ranked.", 3)
		boss := must(d.Org.Roles.Create(ctx, "boss"))
		must(d.Org.Roles.Assign(ctx, us[0], boss.ID, 500)) // ranked as the client
		if _, err := p.ReplaceUser(ctx, okta, us[0], provision.UserInput{UserName: "x@corp.example", Active: true}, nil); code(err) != weibo.CodeForbidden {
			t.Errorf("replace a user of equal rank: %v", err)
		}
		if err := p.DeleteUser(ctx, okta, us[0], nil); code(err) != weibo.CodeForbidden {
			t.Errorf("close a user of equal rank: %v", err)
		}
		if _, err := p.CreateGroup(ctx, okta, provision.GroupInput{Kind: provision.KindRole, DisplayName: "high", Priority: 500}); code(err) != weibo.CodeForbidden {
			t.Errorf("a role at the client's rank: %v", err)
		}
		dept := must(p.CreateGroup(ctx, okta, provision.GroupInput{DisplayName: "Sales"}))
		// One refused member refuses the whole request.
		if _, err := p.PatchGroup(ctx, okta, dept.ID, provision.GroupChange{Add: []weibo.UserID{us[1], us[0]}}, nil); code(err) != weibo.CodeForbidden {
			t.Errorf("a member of equal rank: %v", err)
		}
		if dept = must(p.GetGroup(ctx, dept.ID, true)); len(dept.Members) != 0 || dept.Version != 1 {
			t.Errorf("a refused request wrote: %+v", dept)
		}
		admin := must(d.Org.Roles.Create(ctx, "admins", org.PermAdministrator))
		if _, err := p.PatchGroup(ctx, okta, org.RoleNode(admin.ID).String(), provision.GroupChange{Add: us[1:2]}, nil); code(err) != weibo.CodeForbidden {
			t.Errorf("a role granting ADMINISTRATOR: %v", err)
		}
		high := provision.Client{Name: "entra", Rank: 900}
		if _, err := p.PatchGroup(ctx, high, dept.ID, provision.GroupChange{Add: []weibo.UserID{us[0]}}, nil); err != nil {
			t.Errorf("a higher client: %v", err)
		}
		cleanFsck(t, d)
	})
}
