package server_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/weibohbase/gateway/fsck"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/org"
	"github.com/weibohbase/gateway/weibo/tables"
)

// raceHook is a step hook that runs a move of its own at the first
// department:marked step after it is armed: inside a manager's move,
// after its authorization read the user's department and before its
// write of the user's cell.
type raceHook struct {
	armed atomic.Bool
	mu    sync.Mutex
	race  func(ctx context.Context) error
	err   error // race's
}

func (h *raceHook) hook(ctx context.Context, step string) error {
	if step != counted.StepsOf(org.RelationDepartment).Marked || !h.armed.CompareAndSwap(true, false) {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.err = h.race(ctx)
	return nil
}

// arm makes race run at the next department:marked step.
func (h *raceHook) arm(race func(ctx context.Context) error) {
	h.mu.Lock()
	h.race, h.err = race, nil
	h.mu.Unlock()
	h.armed.Store(true)
}

// ran returns whether the armed race ran, and its error.
func (h *raceHook) ran() (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return !h.armed.Load(), h.err
}

// TestMoveDecidedWithTheMove: a manager M of departments D1, D3 and T
// moves user U from D1 to T (setUserDepartment, and setUsersDepartment),
// and between the authorization of the move and its write an admin moves
// U to D2, which M does not manage. M's move must not be made on the
// stale decision: it fails with FORBIDDEN (in the bulk result's failures)
// and U stays in D2. When the admin moves U to D3 instead, which M does
// manage, M's move is decided again and made. Member counts are exact and
// fsck finds nothing, on both backends.
func TestMoveDecidedWithTheMove(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			h := &raceHook{}
			g := startGateway(t, b.OpenOwn(t, tables.Namespace, "moverace"), domain.WithStepHook(h.hook))
			tag := strings.ToLower(uniqueName("race"))
			boss, mgr := g.register(tag+"boss"), g.register(tag+"mgr")
			g.makeAdmin(boss)
			d1, d2, d3, to := g.createDept(boss.token, "D1", nil), g.createDept(boss.token, "D2", nil),
				g.createDept(boss.token, "D3", nil), g.createDept(boss.token, "T", nil)
			for _, d := range []deptData{d1, d3, to} {
				g.ok(boss.token, `mutation($d: ID!, $u: ID!) { addDepartmentManager(departmentId: $d, userId: $u) { id } }`,
					map[string]any{"d": d.ID, "u": mgr.ID}, nil)
			}
			const setDept = `mutation($u: ID!, $d: ID) { setUserDepartment(userId: $u, departmentId: $d) { id } }`
			const setDepts = `mutation($u: [ID!]!, $d: ID) { setUsersDepartment(userIds: $u, departmentId: $d) { ` + bulkFields + ` } }`
			deptOf := func(u account) string {
				t.Helper()
				var d struct {
					User struct{ Department *struct{ ID string } }
				}
				g.ok(boss.token, `query($id: ID!) { user(id: $id) { department { id } } }`, map[string]any{"id": u.ID}, &d)
				if d.User.Department == nil {
					return ""
				}
				return d.User.Department.ID
			}

			// Without a race M moves a member of D1 to T.
			control := g.register(tag + "control")
			g.ok(boss.token, setDept, map[string]any{"u": control.ID, "d": d1.ID}, nil)
			g.ok(mgr.token, setDept, map[string]any{"u": control.ID, "d": to.ID}, nil)

			for _, c := range []struct {
				name    string
				bulk    bool
				raceTo  deptData
				allowed bool // M may move U out of raceTo
			}{
				{"single into D2", false, d2, false},
				{"bulk into D2", true, d2, false},
				{"single into D3", false, d3, true},
			} {
				u := g.register(tag + strings.ReplaceAll(c.name, " ", ""))
				g.ok(boss.token, setDept, map[string]any{"u": u.ID, "d": d1.ID}, nil)
				h.arm(func(ctx context.Context) error {
					return g.gt.Try(ctx, boss.token, setDept, map[string]any{"u": u.ID, "d": c.raceTo.ID}, nil)
				})
				var code string // M's move's extensions.code, "" for done
				if c.bulk {
					var res struct{ SetUsersDepartment bulkResult }
					g.ok(mgr.token, setDepts, map[string]any{"u": []string{u.ID}, "d": to.ID}, &res)
					if f := res.SetUsersDepartment.Failed; len(f) == 1 {
						code = f[0].Code
					}
				} else if r := g.post(mgr.token, setDept, map[string]any{"u": u.ID, "d": to.ID}); len(r.Errors) > 0 {
					code, _ = r.Errors[0].Extensions["code"].(string)
				}
				if ran, err := h.ran(); !ran || err != nil {
					t.Fatalf("%s: the admin's move ran %v, %v", c.name, ran, err)
				}
				wantCode, wantDept := "FORBIDDEN", c.raceTo.ID
				if c.allowed {
					wantCode, wantDept = "", to.ID
				}
				if code != wantCode {
					t.Errorf("%s: M's move answered code %q, want %q", c.name, code, wantCode)
				}
				if got := deptOf(u); got != wantDept {
					t.Errorf("%s: U is in department %q, want %q", c.name, got, wantDept)
				}
			}
			for _, d := range []struct {
				dept deptData
				n    int
			}{{d1, 0}, {d2, 2}, {d3, 0}, {to, 2}} {
				if mc, total, members := g.deptCount(boss.token, d.dept.ID); mc != d.n || total != d.n || len(members) != d.n {
					t.Errorf("%s: memberCount %d, totalCount %d, members %v; want %d", d.dept.Name, mc, total, members, d.n)
				}
			}
			rep, err := fsck.Run(t.Context(), g.svc, fsck.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Issues) > 0 {
				t.Errorf("fsck: %+v", rep.Issues)
			}
		})
	}
}
