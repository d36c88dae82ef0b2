package membership_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/weibohbase/gateway/fsck"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/org"
)

// TestDeptMemberCrash: a move between departments that dies at any step
// leaves its markers; the repairer settles both member rows and recounts
// both departments, and fsck then finds nothing.
func TestDeptMemberCrash(t *testing.T) {
	for _, step := range []string{org.StepDepartmentMarked, org.StepDepartmentSequenced, org.StepDepartmentSetMember, org.StepDepartmentCounted} {
		for _, b := range testenv.Backends() {
			t.Run(step+"/"+b.Name, func(t *testing.T) {
				ctx := t.Context()
				st := domaintest.OwnStore(t, b)
				var clk domaintest.Clock
				setup := domaintest.Quiet(st, clk.Option())
				u := domaintest.MustUser(t, setup, domaintest.Uniq("mover")).ID
				from, err := setup.Org.Departments.Create(ctx, domaintest.Uniq("from"), weibo.RootDept)
				if err != nil {
					t.Fatal(err)
				}
				to, err := setup.Org.Departments.Create(ctx, domaintest.Uniq("to"), weibo.RootDept)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := setup.Org.Members.Set(ctx, u, from.ID); err != nil {
					t.Fatal(err)
				}
				hook, hit := domaintest.CrashAt(step)
				crashed := domaintest.Quiet(st, clk.Option(), domain.WithStepHook(hook))
				if _, err := crashed.Org.Members.Set(ctx, u, to.ID); !errors.Is(err, domaintest.ErrCrash) || !hit() {
					t.Fatalf("move: %v, want the injected crash", err)
				}
				clk.Advance(2 * counted.DefaultRepairGrace)
				fresh := domaintest.Quiet(st, clk.Option())
				rep, err := fresh.Writes.Repair(ctx)
				if err != nil || rep.Dead == 0 || rep.Repaired != rep.Dead {
					t.Fatalf("repair: %+v, %v", rep, err)
				}
				frep, err := fsck.Run(ctx, fresh, fsck.Options{Areas: fsck.AreaOrg})
				if err != nil {
					t.Fatal(err)
				}
				if len(frep.Issues) != 0 {
					t.Fatalf("fsck after the repair: %+v", frep.Issues)
				}
				got, err := fresh.Org.Departments.Get(ctx, []weibo.DeptID{from.ID, to.ID})
				if err != nil {
					t.Fatal(err)
				}
				ds, err := fresh.Org.Departments.OfUsers(ctx, []weibo.UserID{u})
				if err != nil {
					t.Fatal(err)
				}
				counts := []int64{got[0].MemberCount, got[1].MemberCount}
				want := []int64{1, 0}
				if ds[0] != nil && ds[0].ID == to.ID {
					want = []int64{0, 1}
				}
				if !slices.Equal(counts, want) {
					t.Fatalf("memberCounts %v, want %v (user in %v)", counts, want, ds[0])
				}
			})
		}
	}
}
