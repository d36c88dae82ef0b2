package role_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted/countedtest"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/org"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestRoleConformance runs the conformance suite of counted relations
// (countedtest) over the role assignment, through the domain's API, on
// both backends: an assign and a revoke are killed at every step the
// relation declares, at their own steps (the assign's member row, before
// the decision; the revoke's, after its counters) and after their audit
// event, and outlive their budget; after the restart's repair the role's
// memberCount is exact and equals its members listed, the user holds the
// role exactly when the call decided it, and is listed exactly then, and
// fsck finds nothing.
//
// The relation runs no step right after its authority (the user's cell):
// its decided step is the first one after it, the counters' step.
func TestRoleConformance(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := domaintest.OwnStore(t, b)
			steps := domaintest.Declared(st, []tables.PendingKind{tables.PendingRole}, org.StepRoleAssign, org.StepRoleRevoke, org.StepAuditRecorded, org.StepAuditVisible)
			countedtest.Run(t, st, domaintest.DomainModule(tables.PendingRole, org.StepRoleCounted, steps, rolePair))
		})
	}
}

// rolePair is the assignment of a fresh role to a fresh user.
func rolePair(t *testing.T, d *domain.Domain) *countedtest.Pair[*domain.Domain] {
	u := domaintest.MustUser(t, d, domaintest.Uniq("user"))
	r, err := d.Org.Roles.Create(t.Context(), domaintest.Uniq("role"))
	if err != nil {
		t.Fatal(err)
	}
	return &countedtest.Pair[*domain.Domain]{
		Owner: uint64(r.ID), Other: uint64(u.ID),
		Do: func(ctx context.Context, d *domain.Domain) error {
			_, err := d.Org.Roles.Assign(ctx, u.ID, r.ID, 3)
			return err
		},
		Undo: func(ctx context.Context, d *domain.Domain) error {
			_, err := d.Org.Roles.Revoke(ctx, u.ID, r.ID)
			return err
		},
		// The user's roles, and the role's members listed and its
		// memberCount as read: the user alone, 1, exactly when they
		// hold it.
		Present: func(ctx context.Context, d *domain.Domain) (bool, error) {
			as, err := d.Org.Roles.OfUsers(ctx, []weibo.UserID{u.ID})
			if err != nil {
				return false, err
			}
			holds := len(as[0]) == 1 && as[0][0].Role.ID == r.ID
			page, err := d.Org.Roles.Members(ctx, r.ID, nil, nil)
			if err != nil {
				return false, err
			}
			var listed []weibo.UserID
			for _, e := range page.Edges {
				listed = append(listed, e.User)
			}
			got, err := d.Org.Roles.Get(ctx, []weibo.RoleID{r.ID})
			if err != nil {
				return false, err
			}
			if want := map[bool][]weibo.UserID{true: {u.ID}}[holds]; !slices.Equal(listed, want) || got[0].MemberCount != int64(len(want)) {
				return false, fmt.Errorf("role %s: memberCount %d, members listed %v, holders %v", r.Name, got[0].MemberCount, listed, want)
			}
			// The audit log: the assign listed exactly when it committed
			// (the user holds the role, or the revoke took it), the revoke
			// exactly when it committed.
			actions, err := domaintest.AuditActions(ctx, d, org.UserNode(u.ID))
			if err != nil {
				return false, err
			}
			if want := [][]string{{org.ActionRoleRevoke, org.ActionRoleAssign}, {}}; holds {
				if !slices.Equal(actions, []string{org.ActionRoleAssign}) {
					return false, fmt.Errorf("user holds the role; audit log %q, want the assign once", actions)
				}
			} else if !slices.Equal(actions, want[0]) && !slices.Equal(actions, want[1]) {
				return false, fmt.Errorf("user holds no role; audit log %q, want the assign and the revoke, or nothing", actions)
			}
			return holds, nil
		},
	}
}
