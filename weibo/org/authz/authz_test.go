package authz_test

import (
	"strings"
	"testing"

	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/org"
)

// forbidden checks that err is a FORBIDDEN *weibo.Error whose message
// holds want ("" for nil).
func forbidden(t *testing.T, what string, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Errorf("%s: %v, want allowed", what, err)
	case want != "" && (weibo.CodeOf(err) != weibo.CodeForbidden || !strings.Contains(err.Error(), want)):
		t.Errorf("%s: %v, want FORBIDDEN saying %q", what, err, want)
	}
}

// TestAuthorize checks the org's authorization through the domain's
// wiring, on both backends, over the tree A → A1 → A11 and B: an admin
// may change any department and move anyone anywhere; a manager of A may
// change A and what lies under it, and move users between departments of
// its subtree, but not touch B or the top level, nor move users in or
// out of its subtree, and loses A1's subtree once A1 moves under B; a
// user who manages nothing is refused for want of MANAGE_DEPARTMENTS.
func TestAuthorize(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			d := domaintest.Quiet(domaintest.OwnStore(t, b))
			user := func(name string) weibo.UserID { return domaintest.MustUser(t, d, name).ID }
			dept := func(name string, parent weibo.DeptID) weibo.DeptID {
				x, err := d.Org.Departments.Create(ctx, name, parent)
				if err != nil {
					t.Fatal(err)
				}
				return x.ID
			}
			admin, mgr, nobody := user("admin"), user("manager"), user("nobody")
			r, err := d.Org.Roles.Create(ctx, org.AdminRole, org.PermAdministrator)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := d.Org.Roles.Assign(ctx, admin, r.ID, 1); err != nil {
				t.Fatal(err)
			}
			a := dept("A", weibo.RootDept)
			a1 := dept("A1", a)
			a11 := dept("A11", a1)
			bd := dept("B", weibo.RootDept)
			if _, err := d.Org.Departments.AddManager(ctx, a, mgr); err != nil {
				t.Fatal(err)
			}
			inA11, inB, inNone := user("in_a11"), user("in_b"), user("in_none")
			for u, did := range map[weibo.UserID]weibo.DeptID{inA11: a11, inB: bd} {
				if _, err := d.Org.Members.Set(ctx, u, did); err != nil {
					t.Fatal(err)
				}
			}

			if ok, err := d.Org.Authz.HasRole(ctx, admin, org.AdminRole); err != nil || !ok {
				t.Errorf("HasRole(admin) = %v, %v", ok, err)
			}
			forbidden(t, "RequireRole(manager, admin)", d.Org.Authz.RequireRole(ctx, mgr, org.AdminRole), `the role "admin"`)
			forbidden(t, "RequireRole(admin, admin)", d.Org.Authz.RequireRole(ctx, admin, org.AdminRole), "")

			notManager := "management of department"
			for _, c := range []struct {
				viewer weibo.UserID
				dids   []weibo.DeptID
				want   string
			}{
				{mgr, []weibo.DeptID{a}, ""},
				{mgr, []weibo.DeptID{a1, a11}, ""},
				{mgr, []weibo.DeptID{bd}, notManager},
				{mgr, []weibo.DeptID{a11, bd}, notManager},
				{mgr, []weibo.DeptID{weibo.RootDept}, "the top level of the department tree needs the permission MANAGE_DEPARTMENTS"},
				{nobody, []weibo.DeptID{a1}, "needs the permission MANAGE_DEPARTMENTS"},
				{admin, []weibo.DeptID{a, a11, bd, weibo.RootDept}, ""},
			} {
				forbidden(t, "Departments", d.Org.Authz.Departments(ctx, c.viewer, c.dids...), c.want)
			}

			moves := func(viewer weibo.UserID, to weibo.DeptID, want map[weibo.UserID]string) {
				t.Helper()
				var uids []weibo.UserID
				for u := range want {
					uids = append(uids, u)
				}
				errs, err := d.Org.Authz.Memberships(ctx, viewer, uids, to)
				if err != nil {
					t.Fatal(err)
				}
				for i, u := range uids {
					forbidden(t, "Memberships of "+u.String()+" into "+to.String(), errs[i], want[u])
				}
			}
			// Within the subtree only: not from B, not from no department.
			moves(mgr, a1, map[weibo.UserID]string{inA11: "", inB: notManager, inNone: "top level of the department tree needs"})
			moves(mgr, a, map[weibo.UserID]string{inA11: ""})
			moves(mgr, bd, map[weibo.UserID]string{inA11: notManager})
			moves(mgr, weibo.RootDept, map[weibo.UserID]string{inA11: "top level of the department tree needs"})
			moves(nobody, a1, map[weibo.UserID]string{inA11: "needs the permission MANAGE_DEPARTMENTS"})
			moves(admin, bd, map[weibo.UserID]string{inA11: "", inB: "", inNone: ""})
			moves(admin, weibo.RootDept, map[weibo.UserID]string{inA11: "", inB: ""})

			// A1 moves under B: its subtree leaves A's manager.
			if _, err := d.Org.Departments.Move(ctx, a1, bd); err != nil {
				t.Fatal(err)
			}
			forbidden(t, "Departments(A11 under B)", d.Org.Authz.Departments(ctx, mgr, a11), notManager)
			forbidden(t, "Departments(A)", d.Org.Authz.Departments(ctx, mgr, a), "")
			moves(mgr, a, map[weibo.UserID]string{inA11: notManager})
		})
	}
}

// TestMoveGuard checks the authorization of a move decided with the move,
// on both backends: Moves gives each decision with the department it was
// made against, and the Guard built from it answers that decision for
// that department and decides again for any other — refusing a manager
// of A the move of a user who has meanwhile gone to B, allowing it when
// the user has gone to A1, under A — through the store, not the
// decision.
func TestMoveGuard(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			d := domaintest.Quiet(domaintest.OwnStore(t, b))
			mgr, u := domaintest.MustUser(t, d, "manager").ID, domaintest.MustUser(t, d, "mover").ID
			dept := func(name string, parent weibo.DeptID) weibo.DeptID {
				x, err := d.Org.Departments.Create(ctx, name, parent)
				if err != nil {
					t.Fatal(err)
				}
				return x.ID
			}
			a, bd := dept("A", weibo.RootDept), dept("B", weibo.RootDept)
			a1, a2 := dept("A1", a), dept("A2", a)
			if _, err := d.Org.Departments.AddManager(ctx, a, mgr); err != nil {
				t.Fatal(err)
			}
			if _, err := d.Org.Members.Set(ctx, u, a1); err != nil {
				t.Fatal(err)
			}
			seen, err := d.Org.Authz.Moves(ctx, mgr, []weibo.UserID{u}, a2)
			if err != nil {
				t.Fatal(err)
			}
			if seen[0].From != a1 || seen[0].Err != nil {
				t.Fatalf("Moves = %+v, want from %s, allowed", seen[0], a1)
			}
			guard := d.Org.Authz.Guard(mgr, a2, seen[0])
			forbidden(t, "Guard(A1)", guard(ctx, a1), "")
			forbidden(t, "Guard(B)", guard(ctx, bd), "management of department")
			forbidden(t, "Guard(none)", guard(ctx, weibo.RootDept), "top level of the department tree needs")
			forbidden(t, "Guard(A)", guard(ctx, a), "")
			// A refused decision stays refused for its department.
			refused := d.Org.Authz.Guard(mgr, a2, org.MoveDecision{From: bd, Err: weibo.Forbidden("refused")})
			forbidden(t, "Guard(refused B)", refused(ctx, bd), "refused")
			forbidden(t, "Guard(refused, A1)", refused(ctx, a1), "")
		})
	}
}
