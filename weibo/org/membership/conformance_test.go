package membership_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/audit"
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
// declares, at the set's own step (the member row, before the decision),
// after their pending audit event and after it was listed, and outlive
// their budget; after the restart's repair the department's memberCount
// is exact, the user is in it exactly when the call decided so, the audit
// log lists each change exactly when it committed (auditAgrees) and fsck
// finds nothing.
//
// The relation runs no step right after its authority (the user's cell
// o:dp): its decided step is the first one after it, the counters' step.
func TestMembershipConformance(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := domaintest.OwnStore(t, b)
			steps := domaintest.Declared(st, []tables.PendingKind{tables.PendingDeptMember}, org.StepDepartmentSetMember, org.StepAuditRecorded, org.StepAuditVisible)
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
			in := ds[0] != nil && ds[0].ID == dept.ID
			// The set listed once when the user is in; the set and the
			// unset, or nothing, when not.
			return in, auditAgrees(ctx, d, u.ID, map[bool][]int{true: {1}, false: {0, 2}}[in])
		},
	}
}

// auditAgrees checks user uid's audit log after a repair: no event left
// pending, only setMember events, as many as one of counts says, and the
// newest naming the department the user is in (after's "department").
func auditAgrees(ctx context.Context, d *domain.Domain, uid weibo.UserID, counts []int) error {
	actions, err := domaintest.AuditActions(ctx, d, org.UserNode(uid))
	if err != nil {
		return err
	}
	if !slices.Contains(counts, len(actions)) || slices.ContainsFunc(actions, func(a string) bool { return a != org.ActionDeptSetMember }) {
		return fmt.Errorf("audit log of %s: %q, want %v setMember events", uid, actions, counts)
	}
	if len(actions) == 0 {
		return nil
	}
	target := org.UserNode(uid)
	page, err := d.Org.Audit.Page(ctx, audit.Filter{Target: &target}, new(1), nil)
	if err != nil {
		return err
	}
	ds, err := d.Org.Departments.OfUsers(ctx, []weibo.UserID{uid})
	if err != nil {
		return err
	}
	want := `{"department":null}`
	if ds[0] != nil {
		want = fmt.Sprintf(`{"department":%q}`, ds[0].ID.String())
	}
	if got := page.Edges[0].Event.After; got != want {
		return fmt.Errorf("newest audit event of %s: after %s, want %s", uid, got, want)
	}
	return nil
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
			steps := domaintest.Declared(st, []tables.PendingKind{tables.PendingDeptMember}, org.StepDepartmentSetMember, org.StepAuditRecorded, org.StepAuditVisible)
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
			// The setup's set, then the move listed when the user moved;
			// the move and the move back, or neither, when not.
			return moved, auditAgrees(ctx, d, u.ID, map[bool][]int{true: {2}, false: {1, 3}}[moved])
		},
	}
}
