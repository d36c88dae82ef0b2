package authz_test

import (
	"testing"

	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/org"
)

// TestDecideAs checks ActOnAs and AssignmentsAs, the rank rule for a
// caller that is no user, on both backends: a standing of rank 500
// without ADMINISTRATOR acts on a user ranked 10 but not on one ranked
// 500, assigns priority 499 but not 500, and is refused a role granting
// ADMINISTRATOR whatever its users.
func TestDecideAs(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			d := domaintest.Quiet(domaintest.OwnStore(t, b))
			low, high := domaintest.MustUser(t, d, "low").ID, domaintest.MustUser(t, d, "high").ID
			plain, err := d.Org.Roles.Create(ctx, "plain")
			if err != nil {
				t.Fatal(err)
			}
			admins, err := d.Org.Roles.Create(ctx, "admins", org.PermAdministrator)
			if err != nil {
				t.Fatal(err)
			}
			for u, p := range map[weibo.UserID]int{low: 10, high: 500} {
				if _, err := d.Org.Roles.Assign(ctx, u, plain.ID, p); err != nil {
					t.Fatal(err)
				}
			}
			perms, _ := org.PermsOf("", []org.Permission{org.PermManageUsers, org.PermManageRoles, org.PermManageDepartments})
			v := org.Standing{Rank: 500, Perms: perms}
			errs, err := d.Org.Authz.ActOnAs(ctx, v, []weibo.UserID{low, high})
			if err != nil {
				t.Fatal(err)
			}
			if errs[0] != nil || weibo.CodeOf(errs[1]) != weibo.CodeForbidden {
				t.Errorf("ActOnAs = %v", errs)
			}
			for p, want := range map[int]string{499: "", 500: weibo.CodeForbidden} {
				if _, err := d.Org.Authz.AssignmentsAs(ctx, v, nil, plain.ID, &p); weibo.CodeOf(err) != want {
					t.Errorf("AssignmentsAs(priority %d) = %v, want %q", p, err, want)
				}
			}
			if _, err := d.Org.Authz.AssignmentsAs(ctx, v, []weibo.UserID{low}, admins.ID, nil); weibo.CodeOf(err) != weibo.CodeForbidden {
				t.Errorf("AssignmentsAs(ADMINISTRATOR role) = %v", err)
			}
			errs, err = d.Org.Authz.AssignmentsAs(ctx, v, []weibo.UserID{low, high}, plain.ID, new(5))
			if err != nil || errs[0] != nil || weibo.CodeOf(errs[1]) != weibo.CodeForbidden {
				t.Errorf("AssignmentsAs(users) = %v, %v", errs, err)
			}
		})
	}
}
