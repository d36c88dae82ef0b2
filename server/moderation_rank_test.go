package server_test

import (
	"testing"

	"github.com/weibohbase/gateway/internal/testenv"
)

// TestModerationRankRule checks the rank rule on suspensions, from both
// sides, over HTTP on both backends: a moderator (MANAGE_USERS and
// MANAGE_REPORTS at priority 500) is refused suspendUser, and a report's
// SUSPEND_USER, on an administrator (1000) — FORBIDDEN naming the ranks,
// the administrator not suspended, the report still open — and suspends
// a plain user both ways; an administrator suspends another of equal
// rank.
func TestModerationRankRule(t *testing.T) {
	const suspendQ = `mutation($u: ID!) { suspendUser(userId: $u, reason: "rank test") { id } }`
	const unsuspendQ = `mutation($u: ID!) { unsuspendUser(userId: $u) { id } }`
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startReportGateway(t, b)
			admin, other, mod := g.register(uniqueName("admin")), g.register(uniqueName("admin2")), g.register(uniqueName("mod"))
			plain, reporter := g.register(uniqueName("plain")), g.register(uniqueName("reporter"))
			g.makeAdmin(admin)
			g.makeAdmin(other)
			rid, _ := g.rolePerms(admin.token, uniqueName("moderators"), []string{"MANAGE_USERS", "MANAGE_REPORTS"})
			g.ok(admin.token, assignQ, map[string]any{"u": mod.ID, "r": rid, "p": 500}, nil)

			suspended := func(uid string) bool {
				t.Helper()
				var d struct {
					User struct{ Suspension *struct{ Since string } }
				}
				g.ok(admin.token, `query($id: ID!) { user(id: $id) { suspension { since } } }`, map[string]any{"id": uid}, &d)
				return d.User.Suspension != nil
			}

			q := g.publish(plain.token, "a plain user's post") // before a suspension ends the token

			// suspendUser: refused on the administrator, allowed on a plain user.
			g.forbids(mod.token, "your rank 500 is not above the target's rank 1000", suspendQ, map[string]any{"u": other.ID})
			g.forbids(mod.token, "your rank 500 is not above the target's rank 1000", unsuspendQ, map[string]any{"u": other.ID})
			if suspended(other.ID) {
				t.Fatal("a refused suspendUser suspended the administrator")
			}
			g.ok(mod.token, suspendQ, map[string]any{"u": plain.ID}, nil)
			if !suspended(plain.ID) {
				t.Fatal("the moderator's suspendUser did not suspend the plain user")
			}
			g.ok(mod.token, unsuspendQ, map[string]any{"u": plain.ID}, nil)

			// A report's SUSPEND_USER: the same rule, nothing written when refused.
			p := g.publish(other.token, "an administrator's post")
			rep := g.report(reporter.token, other.ID, []string{p.ID}, nil, "ABUSE")
			g.forbids(mod.token, "your rank 500 is not above the target's rank 1000",
				`mutation($id: ID!) { resolveReport(id: $id, action: SUSPEND_USER) { id } }`, map[string]any{"id": rep.ID})
			if suspended(other.ID) {
				t.Fatal("a refused SUSPEND_USER suspended the administrator")
			}
			if open, _ := g.reportCounts(admin.token); open != 1 {
				t.Fatalf("%d open reports after the refused resolve, want 1", open)
			}
			rep2 := g.report(reporter.token, plain.ID, []string{q.ID}, nil, "SPAM")
			g.moderate(mod.token, "resolveReport", ", action: SUSPEND_USER", map[string]any{"id": rep2.ID})
			if !suspended(plain.ID) {
				t.Fatal("SUSPEND_USER by the moderator did not suspend the plain user")
			}

			// Two administrators of equal rank act on each other.
			g.ok(admin.token, suspendQ, map[string]any{"u": other.ID}, nil)
			if !suspended(other.ID) {
				t.Fatal("an administrator could not suspend another of equal rank")
			}
		})
	}
}
