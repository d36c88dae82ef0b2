package org_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/audit"
	"github.com/weibohbase/gateway/weibo/counted/countedtest"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/org"
)

// change is one audited change of the organisation without counted
// writes, as TestAuditCrashes runs it.
type change struct {
	action string
	// committed are the steps the change reaches past its commit point.
	committed []string
	// setup makes the change's objects through d and returns the change.
	setup func(t *testing.T, d *domain.Domain) *call
}

// call is one change on its fresh objects.
type call struct {
	do func(ctx context.Context, d *domain.Domain) error
	// happened reports, from the org's reads, whether the change is in
	// the store.
	happened func(ctx context.Context, d *domain.Domain) (bool, error)
	// mine picks the change's events out of the events of its action.
	mine func(e *audit.Event) bool
}

// errKilled is what the step hook returns where a call is killed.
var errKilled = errors.New("killed here")

// TestAuditCrashes kills every audited change of roles and departments
// that has no counted writes (create, rename, delete of a role and of a
// department, a department's move, adding and removing a manager) at
// every step it reaches — after its pending audit event, at its own
// step, after its event was listed —, on both backends. After a restart
// past the repair grace and one repair pass: no audit event left pending,
// the change in the store exactly when the call was killed past its
// commit point, and its event listed exactly then, once; a change run
// whole lists its event once too.
func TestAuditCrashes(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := domaintest.OwnStore(t, b)
			var offset atomic.Int64
			now := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
			open := func(hook func(context.Context, string) error) *domain.Domain {
				return domaintest.ConformanceDomain(st, countedtest.Config{Now: now, Grace: countedtest.Grace, Hook: hook})
			}
			for _, c := range changes() {
				t.Run(c.action, func(t *testing.T) {
					ctx := t.Context()
					// The whole call, its steps recorded.
					var trace []string
					cl := c.setup(t, open(nil))
					if err := cl.do(ctx, open(func(_ context.Context, step string) error {
						if !slices.Contains(trace, step) {
							trace = append(trace, step)
						}
						return nil
					})); err != nil {
						t.Fatalf("the call: %v", err)
					}
					t.Logf("steps: %q", trace)
					check(t, c, cl, open(nil), true)
					for _, step := range trace {
						t.Run("@"+step, func(t *testing.T) {
							cl := c.setup(t, open(nil))
							var dead atomic.Bool // a killed process runs nothing more
							err := cl.do(ctx, open(func(_ context.Context, at string) error {
								if at == step || dead.Load() {
									dead.Store(true)
									return errKilled
								}
								return nil
							}))
							if !errors.Is(err, errKilled) {
								t.Fatalf("killed at %s, the call returned %v", step, err)
							}
							offset.Add(int64(countedtest.Grace + time.Second))
							d := open(nil)
							if _, err := d.Writes.Repair(ctx); err != nil {
								t.Fatalf("repair: %v", err)
							}
							check(t, c, cl, d, slices.Contains(c.committed, step))
						})
					}
				})
			}
		})
	}
}

// check requires the store after cl: the change in it as want says, its
// event listed then, once, and not otherwise, and no event pending.
func check(t *testing.T, c change, cl *call, d *domain.Domain, want bool) {
	t.Helper()
	ctx := t.Context()
	if left, err := d.Org.Audit.Log().PendingEvents(ctx, now(d)); err != nil || len(left) > 0 {
		t.Fatalf("pending audit events left: %d, %v", len(left), err)
	}
	got, err := cl.happened(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("change in the store: %v, want %v", got, want)
	}
	n := 0
	var after *string
	for {
		page, err := d.Org.Audit.Page(ctx, audit.Filter{Action: c.action}, new(weibo.MaxPageSize), after)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Edges {
			if cl.mine(e.Event) {
				n++
			}
		}
		if !page.PageInfo.HasNextPage {
			break
		}
		after = page.PageInfo.EndCursor
	}
	if w := map[bool]int{true: 1}[want]; n != w {
		t.Errorf("%s events listed: %d, want %d", c.action, n, w)
	}
}

// now is d's clock, in ms: every event recorded before it.
func now(d *domain.Domain) int64 { return d.Writes.NowMillis() + 1 }

// targets returns a mine that picks the events of target n.
func targets(n weibo.NodeID) func(e *audit.Event) bool {
	return func(e *audit.Event) bool { return e.Target == n }
}

// names returns a mine that picks the events whose state after names name.
func names(name string) func(e *audit.Event) bool {
	return func(e *audit.Event) bool { return strings.Contains(e.After, `"name":"`+name+`"`) }
}

func changes() []change {
	mustRole := func(t *testing.T, d *domain.Domain) *org.Role {
		r, err := d.Org.Roles.Create(t.Context(), domaintest.Uniq("role"))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	mustDept := func(t *testing.T, d *domain.Domain, parent weibo.DeptID) *org.Department {
		dp, err := d.Org.Departments.Create(t.Context(), domaintest.Uniq("dept"), parent)
		if err != nil {
			t.Fatal(err)
		}
		return dp
	}
	role := func(ctx context.Context, d *domain.Domain, rid weibo.RoleID) (*org.Role, error) {
		rs, err := d.Org.Roles.Get(ctx, []weibo.RoleID{rid})
		if err != nil {
			return nil, err
		}
		return rs[0], nil
	}
	dept := func(ctx context.Context, d *domain.Domain, did weibo.DeptID) (*org.Department, error) {
		ds, err := d.Org.Departments.Get(ctx, []weibo.DeptID{did})
		if err != nil {
			return nil, err
		}
		return ds[0], nil
	}
	visible := []string{org.StepAuditVisible}
	return []change{
		{org.ActionRoleCreate, visible, func(t *testing.T, d *domain.Domain) *call {
			name := domaintest.Uniq("created")
			return &call{
				do: func(ctx context.Context, d *domain.Domain) error { _, err := d.Org.Roles.Create(ctx, name); return err },
				happened: func(ctx context.Context, d *domain.Domain) (bool, error) {
					r, err := d.Org.Roles.ByName(ctx, name)
					return r != nil, err
				},
				mine: names(name),
			}
		}},
		{org.ActionRoleRename, visible, func(t *testing.T, d *domain.Domain) *call {
			r, name := mustRole(t, d), domaintest.Uniq("renamed")
			return &call{
				do: func(ctx context.Context, d *domain.Domain) error {
					_, err := d.Org.Roles.Rename(ctx, r.ID, name)
					return err
				},
				happened: func(ctx context.Context, d *domain.Domain) (bool, error) {
					got, err := role(ctx, d, r.ID)
					return got != nil && got.Name == name, err
				},
				mine: targets(org.RoleNode(r.ID)),
			}
		}},
		{org.ActionRolePermissions, visible, func(t *testing.T, d *domain.Domain) *call {
			r := mustRole(t, d)
			want := []org.Permission{org.PermManageReports, org.PermViewAuditLog}
			return &call{
				do: func(ctx context.Context, d *domain.Domain) error {
					_, err := d.Org.Roles.SetPermissions(ctx, r.ID, want)
					return err
				},
				happened: func(ctx context.Context, d *domain.Domain) (bool, error) {
					got, err := role(ctx, d, r.ID)
					return got != nil && slices.Equal(got.Perms.List(), want), err
				},
				mine: targets(org.RoleNode(r.ID)),
			}
		}},
		{org.ActionRoleDelete, append([]string{org.StepRoleDelete}, visible...), func(t *testing.T, d *domain.Domain) *call {
			r := mustRole(t, d)
			return &call{
				do: func(ctx context.Context, d *domain.Domain) error { _, err := d.Org.Roles.Delete(ctx, r.ID); return err },
				happened: func(ctx context.Context, d *domain.Domain) (bool, error) {
					got, err := role(ctx, d, r.ID)
					return got == nil, err
				},
				mine: targets(org.RoleNode(r.ID)),
			}
		}},
		{org.ActionDeptCreate, visible, func(t *testing.T, d *domain.Domain) *call {
			parent, name := mustDept(t, d, weibo.RootDept), domaintest.Uniq("created")
			return &call{
				do: func(ctx context.Context, d *domain.Domain) error {
					_, err := d.Org.Departments.Create(ctx, name, parent.ID)
					return err
				},
				happened: func(ctx context.Context, d *domain.Domain) (bool, error) {
					page, err := d.Org.Departments.Children(ctx, parent.ID, nil, nil)
					if err != nil {
						return false, err
					}
					return len(page.Edges) == 1 && page.Edges[0].Department.Name == name, nil
				},
				mine: names(name),
			}
		}},
		{org.ActionDeptRename, visible, func(t *testing.T, d *domain.Domain) *call {
			dp, name := mustDept(t, d, weibo.RootDept), domaintest.Uniq("renamed")
			return &call{
				do: func(ctx context.Context, d *domain.Domain) error {
					_, err := d.Org.Departments.Rename(ctx, dp.ID, name)
					return err
				},
				happened: func(ctx context.Context, d *domain.Domain) (bool, error) {
					got, err := dept(ctx, d, dp.ID)
					return got != nil && got.Name == name, err
				},
				mine: targets(org.DeptNode(dp.ID)),
			}
		}},
		{org.ActionDeptMove, visible, func(t *testing.T, d *domain.Domain) *call {
			dp, to := mustDept(t, d, weibo.RootDept), mustDept(t, d, weibo.RootDept)
			return &call{
				do: func(ctx context.Context, d *domain.Domain) error {
					_, err := d.Org.Departments.Move(ctx, dp.ID, to.ID)
					return err
				},
				happened: func(ctx context.Context, d *domain.Domain) (bool, error) {
					got, err := dept(ctx, d, dp.ID)
					return got != nil && got.Parent == to.ID, err
				},
				mine: targets(org.DeptNode(dp.ID)),
			}
		}},
		{org.ActionDeptDelete, append([]string{org.StepDepartmentDelete}, visible...), func(t *testing.T, d *domain.Domain) *call {
			dp := mustDept(t, d, weibo.RootDept)
			return &call{
				do: func(ctx context.Context, d *domain.Domain) error {
					_, err := d.Org.Departments.Delete(ctx, dp.ID, false)
					return err
				},
				happened: func(ctx context.Context, d *domain.Domain) (bool, error) {
					got, err := dept(ctx, d, dp.ID)
					return got == nil, err
				},
				mine: targets(org.DeptNode(dp.ID)),
			}
		}},
		{org.ActionDeptAddManager, visible, func(t *testing.T, d *domain.Domain) *call {
			dp, u := mustDept(t, d, weibo.RootDept), domaintest.MustUser(t, d, domaintest.Uniq("mgr"))
			return &call{
				do: func(ctx context.Context, d *domain.Domain) error {
					_, err := d.Org.Departments.AddManager(ctx, dp.ID, u.ID)
					return err
				},
				happened: func(ctx context.Context, d *domain.Domain) (bool, error) {
					ms, err := d.Org.Departments.Managers(ctx, dp.ID)
					return slices.Contains(ms, u.ID), err
				},
				mine: targets(org.DeptNode(dp.ID)),
			}
		}},
		{org.ActionDeptRemoveManager, append([]string{org.StepDepartmentRemoveManager}, visible...), func(t *testing.T, d *domain.Domain) *call {
			dp, u := mustDept(t, d, weibo.RootDept), domaintest.MustUser(t, d, domaintest.Uniq("mgr"))
			if _, err := d.Org.Departments.AddManager(t.Context(), dp.ID, u.ID); err != nil {
				t.Fatal(err)
			}
			return &call{
				do: func(ctx context.Context, d *domain.Domain) error {
					_, err := d.Org.Departments.RemoveManager(ctx, dp.ID, u.ID)
					return err
				},
				happened: func(ctx context.Context, d *domain.Domain) (bool, error) {
					ms, err := d.Org.Departments.Managers(ctx, dp.ID)
					return !slices.Contains(ms, u.ID), err
				},
				mine: targets(org.DeptNode(dp.ID)),
			}
		}},
	}
}
