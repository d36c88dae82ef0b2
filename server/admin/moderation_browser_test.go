package admin_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/browsertest"
	"github.com/weibohbase/gateway/internal/gatewaytest"
	"github.com/weibohbase/gateway/seed"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/audit"
	"github.com/weibohbase/gateway/weibo/tables"
)

// as runs an operation with token and decodes its data into out; any
// error fails the test.
func (g *gateway) as(token string, out any, query string, vars map[string]any) {
	g.t.Helper()
	if err := g.Try(g.t.Context(), token, query, vars, out); err != nil {
		g.t.Fatal(err)
	}
}

// suspension is a user's User.suspension as the demo admin reads it.
type suspension struct {
	Since  time.Time
	Until  *time.Time
	Reason *string
}

func (g *gateway) suspension(userID string) *suspension {
	g.t.Helper()
	var d struct {
		User struct{ Suspension *suspension }
	}
	g.gql(&d, `query($id: ID!) { user(id: $id) { suspension { since until reason } } }`, map[string]any{"id": userID})
	return d.User.Suspension
}

// login logs username in through the console's form and waits for the
// viewer's name in the bar.
func login(username, password string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.WaitVisible(chromedp.CSS("#login-username")),
		typeText("#login-username", username),
		typeText("#login-password", password),
		chromedp.Click(chromedp.CSS("#login-submit")),
		textIncludes(`[data-testid="viewer"]`, username),
	)
}

// attr is the JavaScript for an attribute of the element matching
// selector, or null when there is none.
func attr(selector, name string) string {
	return fmt.Sprintf(`(document.querySelector(%q)?.getAttribute(%q) ?? null)`, selector, name)
}

// attrIs waits until the element matching selector has the attribute name
// with the value want.
func attrIs(selector, name, want string) chromedp.Action[chromedp.Void] {
	return until(fmt.Sprintf(`%s === %q`, attr(selector, name), want))
}

// TestModerationConsoleInChromium works a report through to a suspension
// in the console, in headless Chromium on the org demo, step by step (each
// a subtest; a later step builds on the earlier ones):
//
//   - moderator-role: the demo admin (ADMINISTRATOR) creates a role with
//     MANAGE_REPORTS ticked, then adds MANAGE_USERS with the role's
//     permission checkboxes, and gives the role to a new user, mod.
//   - report: through GraphQL, xiaohong posts and xiaoming reports the post
//     (ABUSE); xiaohong then deletes it.
//   - not-offered: mod logs in; the console offers the Reports and Users
//     views but not the Audit log view, and neither the roles' members
//     nor any change of roles (no MANAGE_ROLES).
//   - assign-resolve: in the Reports view, mod opens the report, sees the
//     deleted post as reported, assigns it to themself and resolves it
//     with SUSPEND_USER for 7 days and a note; it leaves the open queue.
//   - user-view: the users filtered to the suspended ones are xiaohong
//     alone, marked; her view shows the suspension; mod unsuspends her,
//     suspends her again for a day with a reason, and unsuspends her once
//     more, and she leaves the list; GraphQL agrees at each step.
//   - rank: mod may not suspend the demo admin (rank 1000 above theirs):
//     the view shows FORBIDDEN and the admin stays unsuspended.
//   - reopen: the resolved queue (status filter) lists the report; mod
//     reopens it; the open queue of reports on xiaohong lists it, that of
//     reports on xiaoming does not.
//   - audit-log: the demo admin finds the moderator's resolution and
//     suspension in the audit log, and the resolution alone with the
//     action filter report.resolve.
//   - provisioned: xiaoming is made a user a provisioning client (okta)
//     manages, with a login name and an externalId, and the client's
//     change of him is in the audit log (both written through the store,
//     as the SCIM writer does): the users list marks him with the client,
//     his view says who provisioned him, under which externalId and login
//     name, and the audit log shows the client where there is no actor;
//     CEO and the moderators' role, given an externalId by the client,
//     say so in the Departments and Roles views.
func TestModerationConsoleInChromium(t *testing.T) {
	g := startOrgDemo(t)
	g.needs(t, "Role.permissions", "Mutation.setRolePermissions", "User.suspension", "Mutation.unsuspendUser",
		"Query.reports", "Mutation.reportContent", "Mutation.resolveReport", "Mutation.reopenReport",
		"User.provisioning", "AuditEvent.client")
	ctx, b := newBrowser(t, g.url)
	defer func() {
		if t.Failed() {
			_ = do(ctx, screenshot(t, "moderation-failed"))
			t.Logf("requests: %q\nexceptions: %q", b.Recorded(browsertest.Requests), b.Recorded(browsertest.Errors))
		}
	}()
	var me struct {
		Me struct {
			Roles []struct {
				Role struct{ Permissions []string }
			}
		}
	}
	g.gql(&me, `{ me { roles { role { permissions } } } }`, nil)
	var held []string
	for _, r := range me.Me.Roles {
		held = append(held, r.Role.Permissions...)
	}
	if !slices.Contains(held, "ADMINISTRATOR") {
		t.Fatalf("the demo admin's roles grant %v, no ADMINISTRATOR", held)
	}

	const modRole, modPriority = "版主", 500
	mod := g.Register("mod")
	xiaohong := g.userID(seed.DemoXiaohong)
	admin := g.userID(seed.DemoAdminUsername)

	t.Run("moderator-role", func(t *testing.T) {
		role := fmt.Sprintf(`[data-testid="role-%s"]`, modRole)
		if err := do(ctx,
			chromedp.Navigate(g.url+"/admin"),
			login(seed.DemoAdminUsername, seed.DefaultPassword),
			textIncludes(`[data-testid="viewer-permissions"]`, "ADMINISTRATOR"),
			chromedp.Click(chromedp.CSS("#tab-roles")),
			typeText("#new-role-name", modRole),
			chromedp.Click(chromedp.CSS("#new-role-permission-MANAGE_REPORTS")),
			chromedp.Click(chromedp.CSS("#create-role")),
			attrIs(role+` [data-testid="role-permissions"]`, "data-permissions", "MANAGE_REPORTS"),
			chromedp.Click(chromedp.CSS(role)),
			textIncludes(`[data-testid="role-title"]`, modRole),
			until(`document.querySelector('#role-permission-MANAGE_REPORTS')?.checked === true`),
			chromedp.Click(chromedp.CSS("#role-permission-MANAGE_USERS")),
			chromedp.Click(chromedp.CSS("#role-permissions-save")),
			textIncludes(`[data-testid="role-status"]`, modRole+" grants MANAGE_USERS, MANAGE_REPORTS"),
			attrIs(role+` [data-testid="role-permissions"]`, "data-permissions", "MANAGE_USERS MANAGE_REPORTS"),
			typeText("#assign-username", mod.Username),
			typeText("#assign-priority", fmt.Sprint(modPriority)),
			chromedp.Click(chromedp.CSS("#assign-submit")),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="role-member-mod"]`)),
			screenshot(t, "m1-moderator-role"),
		); err != nil {
			t.Fatalf("make the moderator role: %v", err)
		}
		var d struct {
			RoleByName struct{ Permissions []string }
		}
		g.gql(&d, `query($n: String!) { roleByName(name: $n) { permissions } }`, map[string]any{"n": modRole})
		if got := d.RoleByName.Permissions; len(got) != 2 || !slices.Contains(got, "MANAGE_USERS") || !slices.Contains(got, "MANAGE_REPORTS") {
			t.Fatalf("through GraphQL, %s grants %v, want MANAGE_USERS and MANAGE_REPORTS", modRole, got)
		}
	})

	const content = "小红的帖子: buy followers here"
	var reportID string
	t.Run("report", func(t *testing.T) {
		xh, xm := g.Login(seed.DemoXiaohong, seed.DefaultPassword), g.Login(seed.DemoXiaoming, seed.DefaultPassword)
		var p struct{ PublishPost struct{ ID string } }
		g.as(xh, &p, `mutation($c: String!) { publishPost(content: $c) { id } }`, map[string]any{"c": content})
		var r struct{ ReportContent struct{ ID, Status string } }
		g.as(xm, &r, `mutation($in: ReportContentInput!) { reportContent(input: $in) { id status } }`, map[string]any{"in": map[string]any{
			"userId": xiaohong, "postIds": []string{p.PublishPost.ID}, "category": "ABUSE", "comment": "spam and insults",
		}})
		if r.ReportContent.Status != "OPEN" {
			t.Fatalf("a new report is %q, want OPEN", r.ReportContent.Status)
		}
		reportID = r.ReportContent.ID
		g.as(xh, nil, `mutation($id: ID!) { deletePost(id: $id) }`, map[string]any{"id": p.PublishPost.ID})
	})
	if reportID == "" {
		t.FailNow()
	}
	row := fmt.Sprintf(`[data-testid="report-row"][data-id=%q]`, reportID)
	detail := `[data-testid="report-detail"]`

	t.Run("not-offered", func(t *testing.T) {
		if err := do(ctx,
			chromedp.Click(chromedp.CSS("#logout")),
			login(mod.Username, gatewaytest.Password),
			textIncludes(`[data-testid="viewer-permissions"]`, "MANAGE_REPORTS"),
			chromedp.WaitVisible(chromedp.CSS("#tab-reports")),
			chromedp.WaitNotPresent(chromedp.CSS("#tab-audit")),
			chromedp.Click(chromedp.CSS("#tab-roles")),
			chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`[data-testid="role-%s"]`, modRole))),
			chromedp.WaitNotPresent(chromedp.CSS("#create-role")),
			chromedp.Click(chromedp.CSS(fmt.Sprintf(`[data-testid="role-%s"]`, modRole))),
			until(`document.querySelector('#role-permission-MANAGE_USERS')?.checked === true`),
			until(`document.querySelector('#role-permission-MANAGE_USERS').disabled`),
			chromedp.WaitNotPresent(chromedp.CSS("#role-permissions-save")),
			chromedp.WaitNotPresent(chromedp.CSS(`[data-testid="role-members"]`)),
			chromedp.Click(chromedp.CSS("#tab-users")),
			chromedp.WaitVisible(chromedp.CSS("#user-search")),
			chromedp.WaitNotPresent(chromedp.CSS("#users-assign-role")),
			screenshot(t, "m2-not-offered"),
		); err != nil {
			t.Fatalf("the moderator's console: %v", err)
		}
	})

	t.Run("assign-resolve", func(t *testing.T) {
		if err := do(ctx,
			chromedp.Click(chromedp.CSS("#tab-reports")),
			chromedp.WaitVisible(chromedp.CSS(row)),
			attrIs(row, "data-target", seed.DemoXiaohong),
			attrIs(row, "data-status", "OPEN"),
			chromedp.Click(chromedp.CSS(row)),
			attrIs(detail, "data-id", reportID),
			textIncludes(detail, "by "+seed.DemoXiaoming),
			textIncludes(`[data-testid="reported-post"]`, content),
			textIncludes(`[data-testid="report-comment"]`, "spam and insults"),
			chromedp.Click(chromedp.CSS("#report-assign")),
			attrIs(detail, "data-assignee", mod.Username),
			attrIs(row, "data-assignee", mod.Username),
			chromedp.Click(chromedp.CSS("#report-action-SUSPEND_USER")),
			typeText("#report-suspend-days", "7"),
			typeText("#report-note", "repeated abuse"),
			screenshot(t, "m3-resolving"),
			chromedp.Click(chromedp.CSS("#report-resolve")),
			attrIs(detail, "data-status", "RESOLVED"),
			attrIs(detail, "data-action", "SUSPEND_USER"),
			textIncludes(`[data-testid="report-resolution"]`, "repeated abuse"),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="suspended-xiaohong"]`)),
			chromedp.WaitNotPresent(chromedp.CSS(row)),
			screenshot(t, "m3-resolved"),
		); err != nil {
			t.Fatalf("work the report: %v", err)
		}
		var d struct {
			Node struct {
				Status, Action string
				AssignedTo     struct{ ID string }
			}
		}
		g.gql(&d, `query($id: ID!) { node(id: $id) { ... on Report { status action assignedTo { id } } } }`, map[string]any{"id": reportID})
		if d.Node.Status != "RESOLVED" || d.Node.Action != "SUSPEND_USER" || d.Node.AssignedTo.ID != mod.ID {
			t.Errorf("through GraphQL, the report is %+v, want RESOLVED by SUSPEND_USER, assigned to %s", d.Node, mod.ID)
		}
		s := g.suspension(xiaohong)
		if s == nil || s.Until == nil {
			t.Fatalf("through GraphQL, xiaohong's suspension is %+v, want one until in 7 days", s)
		}
		if d := time.Until(*s.Until); d < 7*24*time.Hour-time.Hour || d > 7*24*time.Hour+time.Hour {
			t.Errorf("xiaohong is suspended until %v, %v from now: want 7 days", s.Until, d)
		}
	})

	userView := `[data-testid="user-suspension"]`
	t.Run("user-view", func(t *testing.T) {
		if err := do(ctx,
			chromedp.Click(chromedp.CSS("#tab-users")),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="user-row-xiaoming"]`)),
			chromedp.Click(chromedp.CSS("#user-suspended-filter")),
			pick(`[data-testid="suspended-option-true"]`),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="user-row-xiaohong"] [data-testid="suspended-xiaohong"]`)),
			until(`document.querySelectorAll('[data-testid^="user-row-"]').length === 1`),
			chromedp.Click(chromedp.CSS(`[data-testid="user-open-xiaohong"]`)),
			attrIs(userView, "data-suspended", "true"),
			textIncludes(userView, "until"),
			screenshot(t, "m4-user-suspended"),
			chromedp.Click(chromedp.CSS("#user-unsuspend")),
			attrIs(userView, "data-suspended", "false"),
			textIncludes(`[data-testid="user-status"]`, "xiaohong is no longer suspended"),
		); err != nil {
			t.Fatalf("unsuspend xiaohong: %v", err)
		}
		if s := g.suspension(xiaohong); s != nil {
			t.Fatalf("through GraphQL, xiaohong is still suspended: %+v", s)
		}
		if err := do(ctx,
			typeText("#suspend-days", "1"),
			typeText("#suspend-reason", "cooling off"),
			chromedp.Click(chromedp.CSS("#user-suspend")),
			attrIs(userView, "data-suspended", "true"),
			attrIs(userView, "data-reason", "cooling off"),
			screenshot(t, "m4-user-suspended-again"),
		); err != nil {
			t.Fatalf("suspend xiaohong for a day: %v", err)
		}
		s := g.suspension(xiaohong)
		if s == nil || s.Until == nil || s.Reason == nil || *s.Reason != "cooling off" {
			t.Fatalf("through GraphQL, xiaohong's suspension is %+v, want one for a day, cooling off", s)
		}
		if d := time.Until(*s.Until); d < 23*time.Hour || d > 25*time.Hour {
			t.Errorf("xiaohong is suspended until %v, %v from now: want a day", s.Until, d)
		}
		if err := do(ctx,
			chromedp.Click(chromedp.CSS("#user-unsuspend")),
			attrIs(userView, "data-suspended", "false"),
			chromedp.Click(chromedp.CSS("#user-view-close")),
			chromedp.WaitNotPresent(chromedp.CSS(userView)),
			// The list of suspended users no longer has her.
			chromedp.WaitNotPresent(chromedp.CSS(`[data-testid="user-row-xiaohong"]`)),
		); err != nil {
			t.Fatalf("unsuspend xiaohong again: %v", err)
		}
		if s := g.suspension(xiaohong); s != nil {
			t.Fatalf("through GraphQL, xiaohong is still suspended: %+v", s)
		}
	})

	t.Run("rank", func(t *testing.T) {
		if err := do(ctx,
			// The search first (no suspended user is called admin), then
			// any suspension: admin is listed.
			typeText("#user-search", seed.DemoAdminUsername),
			textIncludes(`[data-testid="user-results"]`, "starts with “admin”"),
			chromedp.Click(chromedp.CSS("#user-suspended-filter")),
			pick(`[data-testid="suspended-option-any"]`),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="user-open-admin"]`)),
			chromedp.Click(chromedp.CSS(`[data-testid="user-open-admin"]`)),
			attrIs(userView, "data-suspended", "false"),
			chromedp.Click(chromedp.CSS("#user-suspend")),
			textIncludes(`[data-testid="user-status"]`, "FORBIDDEN"),
			attrIs(userView, "data-suspended", "false"),
			screenshot(t, "m5-rank"),
			chromedp.Click(chromedp.CSS("#user-view-close")),
			chromedp.WaitNotPresent(chromedp.CSS(userView)),
		); err != nil {
			t.Fatalf("suspend the admin as the moderator: %v", err)
		}
		if s := g.suspension(admin); s != nil {
			t.Fatalf("the moderator suspended the admin: %+v", s)
		}
	})

	t.Run("reopen", func(t *testing.T) {
		if err := do(ctx,
			chromedp.Click(chromedp.CSS("#tab-reports")),
			chromedp.WaitVisible(chromedp.CSS("#reports-status")),
			chromedp.Click(chromedp.CSS("#reports-status")),
			pick(`[data-testid="status-option-RESOLVED"]`),
			chromedp.Click(chromedp.CSS("#reports-apply")),
			chromedp.WaitVisible(chromedp.CSS(row)),
			attrIs(row, "data-status", "RESOLVED"),
			chromedp.Click(chromedp.CSS(row)),
			attrIs(detail, "data-status", "RESOLVED"),
			chromedp.Click(chromedp.CSS("#report-reopen")),
			attrIs(detail, "data-status", "OPEN"),
			chromedp.WaitNotPresent(chromedp.CSS(row)),
			screenshot(t, "m6-reopened"),
		); err != nil {
			t.Fatalf("reopen the report: %v", err)
		}
		// The open queue by reported user: xiaohong's has it, xiaoming's not.
		if err := do(ctx,
			chromedp.Click(chromedp.CSS("#reports-status")),
			pick(`[data-testid="status-option-OPEN"]`),
			typeText("#reports-target", seed.DemoXiaohong),
			chromedp.Click(chromedp.CSS("#reports-apply")),
			chromedp.WaitVisible(chromedp.CSS(row)),
			attrIs(row, "data-status", "OPEN"),
			typeText("#reports-target", seed.DemoXiaoming),
			chromedp.Click(chromedp.CSS("#reports-apply")),
			chromedp.WaitNotPresent(chromedp.CSS(row)),
			textIncludes(`[data-testid="report-list"]`, "No reports."),
		); err != nil {
			t.Fatalf("filter the queue by reported user: %v", err)
		}
		var d struct{ Node struct{ Status string } }
		g.gql(&d, `query($id: ID!) { node(id: $id) { ... on Report { status } } }`, map[string]any{"id": reportID})
		if d.Node.Status != "OPEN" {
			t.Errorf("through GraphQL, the reopened report is %q", d.Node.Status)
		}
	})
	t.Run("audit-log", func(t *testing.T) {
		resolved := fmt.Sprintf(`[data-testid="audit-row"][data-action="report.resolve"][data-target=%q][data-actor="mod"]`, reportID)
		suspended := fmt.Sprintf(`[data-testid="audit-row"][data-action="user.suspend"][data-target=%q][data-actor="mod"]`, xiaohong)
		if err := do(ctx,
			chromedp.Click(chromedp.CSS("#logout")),
			login(seed.DemoAdminUsername, seed.DefaultPassword),
			chromedp.Click(chromedp.CSS("#tab-audit")),
			chromedp.WaitVisible(chromedp.CSS(resolved)),
			chromedp.WaitVisible(chromedp.CSS(suspended)),
			chromedp.Click(chromedp.CSS("#audit-action")),
			pick(`[data-testid="action-option-report.resolve"]`),
			chromedp.Click(chromedp.CSS("#audit-apply")),
			chromedp.WaitNotPresent(chromedp.CSS(suspended)),
			chromedp.WaitVisible(chromedp.CSS(resolved)),
			screenshot(t, "m7-audit"),
		); err != nil {
			t.Fatalf("find the moderator's actions in the audit log: %v", err)
		}
	})

	t.Run("provisioned", func(t *testing.T) {
		xiaoming := g.userID(seed.DemoXiaoming)
		uid, err := weibo.ParseUserID(xiaoming)
		if err != nil {
			t.Fatal(err)
		}
		const login, ext = "xiaoming@corp.example", "00u1xiaoming"
		if err := g.Svc.Store().Put(t.Context(), &hbase.Put{Table: tables.Users, Row: tables.UserKey(uid), Values: hbase.Values{tables.FamInfo: {
			tables.ColLoginName:     []byte(login),
			tables.ColExternalID:    []byte(ext),
			tables.ColProvisionedBy: []byte("okta"),
			tables.ColScimVersion:   tables.U64(1),
		}}}); err != nil {
			t.Fatal(err)
		}
		ev := &audit.Event{Action: "user.update", Target: weibo.NodeID{Kind: weibo.NodeUser, User: uid}, After: `{"externalId":"` + ext + `"}`}
		if err := g.Svc.Org.Audit.Log().Record(audit.WithClient(t.Context(), "okta"), ev); err != nil {
			t.Fatal(err)
		}
		var role struct{ RoleByName struct{ ID string } }
		g.gql(&role, `query($n: String!) { roleByName(name: $n) { id } }`, map[string]any{"n": modRole})
		ids, _ := g.departments()
		for _, c := range []struct {
			table string
			row   []byte
		}{{tables.Departments, deptKey(t, ids["CEO"])}, {tables.Roles, roleKey(t, role.RoleByName.ID)}} {
			if err := g.Svc.Store().Put(t.Context(), &hbase.Put{Table: c.table, Row: c.row, Values: hbase.Values{tables.FamInfo: {
				tables.ColExternalID:    []byte("grp-" + c.table),
				tables.ColProvisionedBy: []byte("entra"),
			}}}); err != nil {
				t.Fatal(err)
			}
		}
		prov := `[data-testid="user-provisioning"]`
		byClient := fmt.Sprintf(`[data-testid="audit-row"][data-action="user.update"][data-target=%q][data-actor=""][data-client="okta"]`, xiaoming)
		if err := do(ctx,
			chromedp.Click(chromedp.CSS("#tab-users")),
			typeText("#user-search", seed.DemoXiaoming),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="user-row-xiaoming"] [data-testid="provisioned-xiaoming"][data-client="okta"]`)),
			chromedp.Click(chromedp.CSS(`[data-testid="user-open-xiaoming"]`)),
			attrIs(prov, "data-client", "okta"),
			attrIs(prov, "data-external-id", ext),
			attrIs(prov, "data-login-name", login),
			textIncludes(prov, "Provisioned by okta (externalId "+ext+")"),
			textIncludes(prov, "login name "+login),
			screenshot(t, "m8-provisioned-user"),
			chromedp.Click(chromedp.CSS("#user-view-close")),
			chromedp.WaitNotPresent(chromedp.CSS(prov)),
			chromedp.Click(chromedp.CSS("#tab-audit")),
			chromedp.Click(chromedp.CSS("#audit-reset")),
			chromedp.WaitVisible(chromedp.CSS(byClient)),
			textIncludes(byClient, "SCIM: okta"),
			screenshot(t, "m9-audit-client"),
			chromedp.Click(chromedp.CSS("#tab-departments")),
			chromedp.Click(chromedp.CSS(deptRow("CEO")+" .dept-name")),
			attrIs(`[data-testid="department-provisioning"]`, "data-client", "entra"),
			textIncludes(`[data-testid="department-provisioning"]`, "Provisioned by entra (externalId grp-"+tables.Departments+")"),
			chromedp.Click(chromedp.CSS("#tab-roles")),
			chromedp.Click(chromedp.CSS(fmt.Sprintf(`[data-testid="role-%s"]`, modRole))),
			textIncludes(`[data-testid="role-title"]`, modRole),
			attrIs(`[data-testid="role-provisioning"]`, "data-external-id", "grp-"+tables.Roles),
			textIncludes(`[data-testid="role-provisioning"]`, "Provisioned by entra"),
			screenshot(t, "m10-provisioned-groups"),
		); err != nil {
			t.Fatalf("see who provisioned xiaoming: %v", err)
		}
	})

	b.CheckOnlyAllowed(t)
}

// deptKey is the weibo:departments rowkey of the department of global id id.
func deptKey(t *testing.T, id string) []byte {
	t.Helper()
	did, err := weibo.ParseDeptID(id)
	if err != nil {
		t.Fatal(err)
	}
	return tables.DeptKey(did)
}

// roleKey is the weibo:roles rowkey of the role of global id id.
func roleKey(t *testing.T, id string) []byte {
	t.Helper()
	rid, err := weibo.ParseRoleID(id)
	if err != nil {
		t.Fatal(err)
	}
	return tables.RoleKey(rid)
}
