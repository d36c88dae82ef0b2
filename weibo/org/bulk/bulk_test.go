package bulk_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/weibohbase/gateway/fsck"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
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
			st := domaintest.OwnStore(t, b)
			if b.Name == hbase.BackendEmbedded {
				st = domaintest.Jittery{StoreAdmin: st}
			}
			svc := domaintest.Quiet(st, domain.WithRepairGrace(time.Minute))
			var uids []weibo.UserID
			for i := range users {
				uids = append(uids, domaintest.MustUser(t, svc, domaintest.Uniq(fmt.Sprintf("bulk%d", i))).ID)
			}
			role, err := svc.Org.Roles.Create(ctx, domaintest.Uniq("bulkrole"))
			if err != nil {
				t.Fatal(err)
			}
			top, err := svc.Org.Departments.Create(ctx, domaintest.Uniq("bulktop"), weibo.RootDept)
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
