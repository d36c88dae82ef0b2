package membership_test

import (
	"context"
	"testing"

	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted/countedtest"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/org"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestMembershipConformance runs the conformance suite of counted
// relations (countedtest) over the department membership, through the
// domain's API, on both backends: a set (joining a department) and an
// unset (back to no department) are killed at every step the relation
// declares and at the set's own step (the member row, before the
// decision), and outlive their budget; after the restart's repair the
// department's memberCount is exact, the user is in it exactly when the
// call decided so and fsck finds nothing.
//
// The relation runs no step right after its authority (the user's cell
// o:dp): its decided step is the first one after it, the counters' step.
func TestMembershipConformance(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := domaintest.OwnStore(t, b)
			steps := domaintest.Declared(st, []tables.PendingKind{tables.PendingDeptMember}, org.StepDepartmentSetMember)
			countedtest.Run(t, st, domaintest.DomainModule(tables.PendingDeptMember, org.StepDepartmentCounted, steps, memberPair))
		})
	}
}

// memberPair is the membership of a fresh user in a fresh top-level
// department.
func memberPair(t *testing.T, d *domain.Domain) *countedtest.Pair[*domain.Domain] {
	u := domaintest.MustUser(t, d, domaintest.Uniq("user"))
	dept, err := d.Org.Departments.Create(t.Context(), domaintest.Uniq("dept"), weibo.RootDept)
	if err != nil {
		t.Fatal(err)
	}
	return &countedtest.Pair[*domain.Domain]{
		Owner: uint64(dept.ID), Other: uint64(u.ID),
		Do: func(ctx context.Context, d *domain.Domain) error {
			_, err := d.Org.Members.Set(ctx, u.ID, dept.ID)
			return err
		},
		Undo: func(ctx context.Context, d *domain.Domain) error {
			_, err := d.Org.Members.Set(ctx, u.ID, weibo.RootDept)
			return err
		},
		Present: func(ctx context.Context, d *domain.Domain) (bool, error) {
			ds, err := d.Org.Departments.OfUsers(ctx, []weibo.UserID{u.ID})
			if err != nil {
				return false, err
			}
			return ds[0] != nil && ds[0].ID == dept.ID, nil
		},
	}
}
