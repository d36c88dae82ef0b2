package domain_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weibohbase/gateway/fsck"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/org"
)

// TestBulkStorm: concurrent bulk changes of the same users — role
// assignments and revocations, moves between two departments and out of
// any — leave every counter equal to its list once they quiesce (no
// repairer needed: every write finished), and fsck finds nothing, on both
// backends (the embedded store's calls jittered so that they interleave).
func TestBulkStorm(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	const (
		users       = 24
		calls       = 160
		concurrency = 16
	)
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := ownStore(t, b)
			if b.Name == hbase.BackendEmbedded {
				st = jittery{st}
			}
			svc := quietService(st, domain.WithRepairGrace(time.Minute))
			var uids []weibo.UserID
			for i := range users {
				uids = append(uids, mustUser(t, svc, uniq(fmt.Sprintf("bulk%d", i))).ID)
			}
			role, err := svc.Org.Roles.Create(ctx, uniq("bulkrole"))
			if err != nil {
				t.Fatal(err)
			}
			top, err := svc.Org.Departments.Create(ctx, uniq("bulktop"), weibo.RootDept)
			if err != nil {
				t.Fatal(err)
			}
			sub, err := svc.Org.Departments.Create(ctx, "sub", top.ID)
			if err != nil {
				t.Fatal(err)
			}
			depts := []weibo.DeptID{top.ID, sub.ID, weibo.RootDept}
			pick := func() []weibo.UserID {
				n := 1 + rand.IntN(users/2)
				out := make([]weibo.UserID, n)
				for i := range out {
					out[i] = uids[rand.IntN(users)]
				}
				return out
			}
			var (
				wg       sync.WaitGroup
				sem      = make(chan struct{}, concurrency)
				mu       sync.Mutex
				failures = map[string]int{}
			)
			for i := range calls {
				wg.Add(1)
				sem <- struct{}{}
				go func() {
					defer func() { <-sem; wg.Done() }()
					var res *org.BulkResult
					var err error
					switch i % 3 {
					case 0:
						res, err = svc.Org.Bulk.AssignRole(ctx, pick(), role.ID, 1+rand.IntN(org.MaxPriority))
					case 1:
						res, err = svc.Org.Bulk.RevokeRole(ctx, pick(), role.ID)
					default:
						res, err = svc.Org.Bulk.SetDepartment(ctx, 0, pick(), depts[rand.IntN(len(depts))])
					}
					mu.Lock()
					defer mu.Unlock()
					if err != nil {
						failures["call: "+err.Error()]++
						return
					}
					for _, f := range res.Failed {
						// Only a cell that kept changing under the others may refuse.
						if f.Message != "" && f.Code != weibo.CodeBadUserInput {
							failures[f.Code+": "+f.Message]++
						}
					}
				}()
			}
			wg.Wait()
			if len(failures) > 0 {
				t.Fatalf("failures: %v", failures)
			}

			// Every counter equals its list.
			r, err := svc.Org.Roles.Get(ctx, []weibo.RoleID{role.ID})
			if err != nil {
				t.Fatal(err)
			}
			members := 0
			for after := (*string)(nil); ; {
				page, err := svc.Org.Roles.Members(ctx, role.ID, new(weibo.MaxPageSize), after)
				if err != nil {
					t.Fatal(err)
				}
				members += len(page.Edges)
				if !page.PageInfo.HasNextPage {
					break
				}
				after = page.PageInfo.EndCursor
			}
			if r[0].MemberCount != int64(members) {
				t.Errorf("role memberCount %d, members listed %d", r[0].MemberCount, members)
			}
			ds, err := svc.Org.Departments.OfUsers(ctx, uids)
			if err != nil {
				t.Fatal(err)
			}
			in := map[weibo.DeptID]int{}
			for _, d := range ds {
				if d != nil {
					in[d.ID]++
				}
			}
			for _, did := range []weibo.DeptID{top.ID, sub.ID} {
				got, err := svc.Org.Departments.Get(ctx, []weibo.DeptID{did})
				if err != nil {
					t.Fatal(err)
				}
				page, err := svc.Org.Departments.Members(ctx, did, new(weibo.MaxPageSize), nil)
				if err != nil {
					t.Fatal(err)
				}
				if got[0].MemberCount != int64(in[did]) || len(page.Edges) != in[did] {
					t.Errorf("department %s: memberCount %d, members listed %d, users in it %d", did, got[0].MemberCount, len(page.Edges), in[did])
				}
			}
			rep, err := fsck.Run(ctx, svc, fsck.Options{Areas: fsck.AreaOrg})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Issues) != 0 {
				t.Errorf("fsck after the storm: %+v", rep.Issues)
			}
		})
	}
}

// TestDeptMemberCrash: a move between departments that dies at any step
// leaves its markers; the repairer settles both member rows and recounts
// both departments, and fsck then finds nothing.
func TestDeptMemberCrash(t *testing.T) {
	for _, step := range []string{"department:marked", "department:sequenced", org.StepDepartmentSetMember, "department:counted"} {
		for _, b := range testenv.Backends() {
			t.Run(step+"/"+b.Name, func(t *testing.T) {
				ctx := t.Context()
				st := ownStore(t, b)
				var clk clock
				setup := quietService(st, clk.option())
				u := mustUser(t, setup, uniq("mover")).ID
				from, err := setup.Org.Departments.Create(ctx, uniq("from"), weibo.RootDept)
				if err != nil {
					t.Fatal(err)
				}
				to, err := setup.Org.Departments.Create(ctx, uniq("to"), weibo.RootDept)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := setup.Org.Members.Set(ctx, u, from.ID); err != nil {
					t.Fatal(err)
				}
				hook, hit := crashAt(step)
				crashed := quietService(st, clk.option(), domain.WithStepHook(hook))
				if _, err := crashed.Org.Members.Set(ctx, u, to.ID); !errors.Is(err, errCrash) || !hit() {
					t.Fatalf("move: %v, want the injected crash", err)
				}
				clk.advance(2 * counted.DefaultRepairGrace)
				fresh := quietService(st, clk.option())
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
