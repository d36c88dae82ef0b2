package membership_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/weibohbase/gateway/fsck"
	"github.com/weibohbase/gateway/internal/orgtest"
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
				st := orgtest.OwnStore(t, b)
				var clk orgtest.Clock
				setup := orgtest.Quiet(st, clk.Option())
				u := orgtest.MustUser(t, setup, orgtest.Uniq("mover")).ID
				from, err := setup.Org.Departments.Create(ctx, orgtest.Uniq("from"), weibo.RootDept)
				if err != nil {
					t.Fatal(err)
				}
				to, err := setup.Org.Departments.Create(ctx, orgtest.Uniq("to"), weibo.RootDept)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := setup.Org.Members.Set(ctx, u, from.ID); err != nil {
					t.Fatal(err)
				}
				hook, hit := orgtest.CrashAt(step)
				crashed := orgtest.Quiet(st, clk.Option(), domain.WithStepHook(hook))
				if _, err := crashed.Org.Members.Set(ctx, u, to.ID); !errors.Is(err, orgtest.ErrCrash) || !hit() {
					t.Fatalf("move: %v, want the injected crash", err)
				}
				clk.Advance(2 * counted.DefaultRepairGrace)
				fresh := orgtest.Quiet(st, clk.Option())
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
