package membership_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
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

// TestMembershipMoveConformance runs the suite, as
// TestMembershipConformance does, over a move between two departments:
// the write moves a member of one department to another (two writes of
// the relation, leaving and joining, decided by one write of the user's
// cell), its reverse moves them back. The first restart's repair pass
// must repair both markers (Restarts 1); then both departments'
// memberCounts are exact, the user is in exactly one of them, the new one
// exactly when the call decided so, and fsck finds nothing.
func TestMembershipMoveConformance(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := domaintest.OwnStore(t, b)
			steps := domaintest.Declared(st, []tables.PendingKind{tables.PendingDeptMember}, org.StepDepartmentSetMember)
			m := domaintest.DomainModule(tables.PendingDeptMember, org.StepDepartmentCounted, steps, movePair)
			m.Restarts = 1
			countedtest.Run(t, st, m)
		})
	}
}

// movePair is the membership of a fresh user in a fresh top-level
// department, the user being a member of another fresh one: its write
// moves the user, its reverse moves them back.
func movePair(t *testing.T, d *domain.Domain) *countedtest.Pair[*domain.Domain] {
	ctx := t.Context()
	u := domaintest.MustUser(t, d, domaintest.Uniq("mover"))
	var depts [2]*org.Department
	for i, name := range []string{"from", "to"} {
		dept, err := d.Org.Departments.Create(ctx, domaintest.Uniq(name), weibo.RootDept)
		if err != nil {
			t.Fatal(err)
		}
		depts[i] = dept
	}
	from, to := depts[0], depts[1]
	if _, err := d.Org.Members.Set(ctx, u.ID, from.ID); err != nil {
		t.Fatal(err)
	}
	return &countedtest.Pair[*domain.Domain]{
		Owner: uint64(to.ID), Other: uint64(u.ID),
		// The department left's memberCount.
		Counters: []counted.Counter{{Kind: org.DeptMemberCount, Owner: uint64(from.ID)}},
		Do: func(ctx context.Context, d *domain.Domain) error {
			_, err := d.Org.Members.Set(ctx, u.ID, to.ID)
			return err
		},
		Undo: func(ctx context.Context, d *domain.Domain) error {
			_, err := d.Org.Members.Set(ctx, u.ID, from.ID)
			return err
		},
		// The user's department, and both departments' memberCounts as
		// read: 1 for it, 0 for the other.
		Present: func(ctx context.Context, d *domain.Domain) (bool, error) {
			ds, err := d.Org.Departments.OfUsers(ctx, []weibo.UserID{u.ID})
			if err != nil {
				return false, err
			}
			if ds[0] == nil || (ds[0].ID != from.ID && ds[0].ID != to.ID) {
				return false, fmt.Errorf("user %s in department %v, want %s or %s", u.ID, ds[0], from.ID, to.ID)
			}
			got, err := d.Org.Departments.Get(ctx, []weibo.DeptID{from.ID, to.ID})
			if err != nil {
				return false, err
			}
			moved := ds[0].ID == to.ID
			want := map[bool][]int64{false: {1, 0}, true: {0, 1}}[moved]
			if counts := []int64{got[0].MemberCount, got[1].MemberCount}; !slices.Equal(counts, want) {
				return false, fmt.Errorf("memberCounts %v, want %v (user in %s)", counts, want, ds[0].ID)
			}
			return moved, nil
		},
	}
}
