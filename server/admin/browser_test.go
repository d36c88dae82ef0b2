package admin_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/weibohbase/gateway/internal/browsertest"
	"github.com/weibohbase/gateway/internal/gatewaytest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/seed"
)

// gateway is the gateway the browser test talks to: the org demo (seed
// 001's roles and departments, the demo admin) on an in-memory embedded
// store.
type gateway struct {
	*gatewaytest.Gateway
	t     *testing.T
	url   string
	token string // the demo admin's, for checking through GraphQL
}

func startOrgDemo(t *testing.T) *gateway {
	t.Helper()
	gt := gatewaytest.Start(t, testenv.Embedded(t), gatewaytest.WithSeed(seed.OrgDemo))
	return &gateway{Gateway: gt, t: t, url: gt.URL, token: gt.Login(seed.DemoAdminUsername, seed.DefaultPassword)}
}

// gql runs an operation as the demo admin and decodes its data into out;
// any error fails the test.
func (g *gateway) gql(out any, query string, vars map[string]any) {
	g.t.Helper()
	if err := g.Try(g.t.Context(), g.token, query, vars, out); err != nil {
		g.t.Fatal(err)
	}
}

// departments returns the ids of every department by name and the name of
// each one's parent ("" at the top), read through GraphQL with the API that
// predates the console (topDepartments, Department.children).
func (g *gateway) departments() (ids, parents map[string]string) {
	g.t.Helper()
	ids, parents = map[string]string{}, map[string]string{}
	type conn struct {
		Edges []struct{ Node struct{ ID, Name string } }
	}
	var top struct{ TopDepartments conn }
	g.gql(&top, `{ topDepartments(first: 100) { edges { node { id name } } } }`, nil)
	queue := []string{}
	for _, e := range top.TopDepartments.Edges {
		ids[e.Node.Name], parents[e.Node.Name] = e.Node.ID, ""
		queue = append(queue, e.Node.Name)
	}
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		var d struct{ Department struct{ Children conn } }
		g.gql(&d, `query($id: ID!) { department(id: $id) { children(first: 100) { edges { node { id name } } } } }`,
			map[string]any{"id": ids[name]})
		for _, e := range d.Department.Children.Edges {
			ids[e.Node.Name], parents[e.Node.Name] = e.Node.ID, name
			queue = append(queue, e.Node.Name)
		}
	}
	return ids, parents
}

func (g *gateway) userID(username string) string {
	g.t.Helper()
	var d struct{ UserByUsername *struct{ ID string } }
	g.gql(&d, `query($u: String!) { userByUsername(username: $u) { id } }`, map[string]any{"u": username})
	if d.UserByUsername == nil {
		g.t.Fatalf("no user %s", username)
	}
	return d.UserByUsername.ID
}

// lacks returns those of fields ("Type.field") that the gateway's schema
// does not have (asked by introspection).
func (g *gateway) lacks(fields ...string) []string {
	g.t.Helper()
	var missing []string
	for _, f := range fields {
		typ, name, _ := strings.Cut(f, ".")
		var d struct {
			Type *struct{ Fields []struct{ Name string } } `json:"__type"`
		}
		g.gql(&d, `query($t: String!) { __type(name: $t) { fields(includeDeprecated: true) { name } } }`, map[string]any{"t": typ})
		found := false
		if d.Type != nil {
			for _, fd := range d.Type.Fields {
				found = found || fd.Name == name
			}
		}
		if !found {
			missing = append(missing, f)
		}
	}
	return missing
}

// needs fails t at once when the gateway lacks any of fields: the step
// needs the admin dashboards' API.
func (g *gateway) needs(t *testing.T, fields ...string) {
	t.Helper()
	if m := g.lacks(fields...); len(m) > 0 {
		t.Fatalf("this step needs the admin dashboards' API; the gateway lacks %s", strings.Join(m, ", "))
	}
}

// browser is headless Chromium on the console, with the native drags it
// intercepted (dragOnto).
type browser struct {
	*browsertest.Browser
	drags chan *input.DragData
}

// newBrowser starts headless Chromium (browsertest.New) walled in to the
// gateway.
func newBrowser(t *testing.T, gateway string) (context.Context, *browser) {
	t.Helper()
	drags := make(chan *input.DragData, 1)
	b := browsertest.New(t, browsertest.Options{Allow: []string{gateway}, Width: 1400, Height: 900, Listen: func(ev any) {
		if e, ok := ev.(*input.EventDragIntercepted); ok {
			select {
			case drags <- e.Data:
			default:
			}
		}
	}})
	return b.Ctx, &browser{Browser: b, drags: drags}
}

// uiWait bounds each wait for the page: a hang guard generous enough for a
// loaded CI machine, not a speed target.
const uiWait = 60 * time.Second

// dragWait bounds the waits of one drag (dragUntil tries three): a hang
// guard, not a speed target.
const dragWait = 15 * time.Second

// do runs steps one after the other, each bounded by uiWait, and names the
// step that failed (1-based) in its error, so that a hang shows where it
// was instead of exhausting the whole session's bound.
func do(ctx context.Context, steps ...chromedp.Action[chromedp.Void]) error {
	for i, step := range steps {
		sctx, cancel := context.WithTimeout(ctx, uiWait)
		err := chromedp.Do(sctx, step)
		cancel()
		if err != nil {
			sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			var shot string
			_ = chromedp.Do(sctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) (err error) {
				shot, err = browsertest.SaveScreenshot(ctx, tg, screenshots, fmt.Sprintf("failed-%d", time.Now().UnixNano()))
				return err
			}))
			cancel()
			if shot != "" {
				err = fmt.Errorf("%w (screenshot %s)", err, shot)
			}
			return fmt.Errorf("step %d of %d: %w", i+1, len(steps), err)
		}
	}
	return nil
}

// until waits until the JavaScript expression js is true.
func until(js string) chromedp.Action[chromedp.Void] { return browsertest.Until(js, uiWait) }

// textIncludes waits until the element matching selector shows want.
func textIncludes(selector, want string) chromedp.Action[chromedp.Void] {
	return until(fmt.Sprintf(`(() => { const el = document.querySelector(%q); return !!el && el.innerText.includes(%q); })()`, selector, want))
}

// typeText replaces the text of the input matching selector as a person
// would: click, select all, delete, type.
func typeText(selector, text string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.Click(chromedp.CSS(selector)),
		chromedp.KeyEvent("a", chromedp.KeyModifiers(chromedp.ModifierCtrl)),
		chromedp.KeyEvent(kb.Backspace),
		chromedp.SendKeys(chromedp.CSS(selector), text),
	)
}

// pick clicks the menu option matching option and waits until the menu has
// closed. It clicks only once the menu's opening transition (MUI's Grow:
// scale and opacity) has ended: a press and release on an option that moves
// between them land on two elements, which is no click, and the menu stays
// open with nothing picked.
func pick(option string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.WaitVisible(chromedp.CSS(option)),
		until(fmt.Sprintf(`(() => {
  const paper = document.querySelector(%q)?.closest('.MuiPaper-root');
  if (!paper) return false;
  const st = getComputedStyle(paper);
  return st.transform === 'none' && st.opacity === '1';
})()`, option)),
		chromedp.Click(chromedp.CSS(option)),
		chromedp.WaitNotPresent(chromedp.CSS(option)),
	)
}

// Selectors of the department tree's rows (the Departments view's tree).
func deptRow(name string) string {
	return fmt.Sprintf(`[data-testid="dept-tree"] .dept-row[data-name=%q]`, name)
}

// rowParent is the JavaScript for the parent id a tree row shows, or null
// when the row is not shown.
func rowParent(name string) string {
	return fmt.Sprintf(`(() => { const el = document.querySelector(%q); return el ? el.dataset.parent : null; })()`, deptRow(name))
}

// openDept opens a department in the tree (when closed) and waits for its
// sub-departments' rows.
func openDept(name, id string, children ...string) chromedp.Action[chromedp.Void] {
	steps := []chromedp.Action[chromedp.Void]{
		chromedp.WaitVisible(chromedp.CSS(deptRow(name))),
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			open, err := chromedp.Evaluate[bool](fmt.Sprintf(`document.querySelector(%q).dataset.open === 'true'`, deptRow(name)))(ctx, t)
			if err != nil || open {
				return err
			}
			_, err = chromedp.Click(chromedp.CSS(fmt.Sprintf(`[data-testid="dept-toggle-%s"]`, id)))(ctx, t)
			return err
		}),
	}
	for _, c := range children {
		steps = append(steps, until(fmt.Sprintf(`%s === %q`, rowParent(c), id)))
	}
	return chromedp.Steps(steps...)
}

// dragUntil drags from onto to until the page shows done (a JavaScript
// boolean), trying up to three times.
func (b *browser) dragUntil(from, to, done string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		var last error
		for attempt := 1; attempt <= 3; attempt++ {
			if _, err := b.dragOnto(from, to)(ctx, t); err != nil {
				last = err
				continue
			}
			_, err := chromedp.Poll[chromedp.Void](done, chromedp.WithPollingInterval(100*time.Millisecond),
				chromedp.WithPollingTimeout(10*time.Second))(ctx, t)
			if err == nil {
				return nil
			}
			last = fmt.Errorf("attempt %d: %w", attempt, err)
		}
		return last
	})
}

// dragOnto drags the element matching from and drops it on the middle of
// the one matching to, as a person would with the mouse: press, move a few
// pixels (the browser starts a native drag, which it hands to the test:
// Input.setInterceptDrags), move over the target and stay there until the
// tree marks it as the drop's target (react-arborist's willReceiveDrop,
// the row's class drop-target), release. The wait matters: react-dnd reads
// the pointer's position over a target once per animation frame, and a
// drop that comes before that frame lands where the pointer was before.
// (chromedp.DragAndDrop moves without waiting.) Every wait is for the page:
// an animation frame, the intercepted drag, the target's mark.
func (b *browser) dragOnto(from, to string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) (err error) {
		center := func(sel string) (x, y float64, err error) {
			if _, err := chromedp.ScrollIntoView(chromedp.CSS(sel))(ctx, t); err != nil {
				return 0, 0, err
			}
			p, err := chromedp.Evaluate[[]float64](fmt.Sprintf(`(() => {
  const r = document.querySelector(%q).getBoundingClientRect();
  return [r.x + r.width / 2, r.y + r.height / 2];
})()`, sel))(ctx, t)
			if err != nil || len(p) != 2 {
				return 0, 0, fmt.Errorf("the center of %s: %v", sel, err)
			}
			return p[0], p[1], nil
		}
		fx, fy, err := center(from)
		if err != nil {
			return err
		}
		tx, ty, err := center(to)
		if err != nil {
			return err
		}
		mouse := func(typ input.DispatchMouseEventType, x, y float64) error {
			p := input.DispatchMouseEventParams{Type: typ, X: x, Y: y, Button: input.MouseButtonLeft, Buttons: 1, ClickCount: 1}
			if typ == input.DispatchMouseEventTypeMouseReleased {
				p.Buttons = 0
			}
			_, err := cdp.Call(ctx, t, input.DispatchMouseEvent, p)
			return err
		}
		drag := func(typ input.DispatchDragEventType, x, y float64, data *input.DragData) error {
			_, err := cdp.Call(ctx, t, input.DispatchDragEvent, input.DispatchDragEventParams{Type: typ, X: x, Y: y, Data: data})
			return err
		}
		if _, err := cdp.Call(ctx, t, input.SetInterceptDrags, input.SetInterceptDragsParams{Enabled: true}); err != nil {
			return err
		}
		defer func() {
			_, off := cdp.Call(context.WithoutCancel(ctx), t, input.SetInterceptDrags, input.SetInterceptDragsParams{Enabled: false})
			if err == nil {
				err = off
			}
		}()
		for len(b.drags) > 0 {
			<-b.drags
		}
		if err := mouse(input.DispatchMouseEventTypeMousePressed, fx, fy); err != nil {
			return err
		}
		var data *input.DragData
		for i := 1; i <= 5 && data == nil; i++ {
			if err := mouse(input.DispatchMouseEventTypeMouseMoved, fx, fy+float64(2*i)); err != nil {
				return err
			}
			if _, err := browsertest.Frames(1)(ctx, t); err != nil {
				return err
			}
			select {
			case data = <-b.drags:
			default:
			}
		}
		if data == nil {
			// The browser may hand the drag over a little after the frame.
			wctx, cancel := context.WithTimeout(ctx, dragWait)
			select {
			case data = <-b.drags:
			case <-wctx.Done():
			}
			cancel()
		}
		if data == nil {
			_ = mouse(input.DispatchMouseEventTypeMouseReleased, fx, fy)
			return fmt.Errorf("dragging %s started no drag", from)
		}
		const steps = 8
		sx, sy := fx, fy+10
		if err := drag(input.DispatchDragEventTypeDragEnter, sx, sy, data); err != nil {
			return err
		}
		for i := 1; i <= steps; i++ {
			x, y := sx+(tx-sx)*float64(i)/steps, sy+(ty-sy)*float64(i)/steps
			if err := drag(input.DispatchDragEventTypeDragOver, x, y, data); err != nil {
				return err
			}
			if _, err := browsertest.Frames(1)(ctx, t); err != nil {
				return err
			}
		}
		// Over the target until the tree marks it, then one frame more.
		marked := fmt.Sprintf(`!!document.querySelector(%q)?.classList.contains('drop-target')`, to)
		for deadline := time.Now().Add(dragWait); ; {
			if err := drag(input.DispatchDragEventTypeDragOver, tx, ty, data); err != nil {
				return err
			}
			if _, err := browsertest.Frames(1)(ctx, t); err != nil {
				return err
			}
			ok, err := chromedp.Evaluate[bool](marked)(ctx, t)
			if err != nil {
				return err
			}
			if ok {
				break
			}
			if time.Now().After(deadline) {
				_ = drag(input.DispatchDragEventTypeDragCancel, tx, ty, data)
				_ = mouse(input.DispatchMouseEventTypeMouseReleased, tx, ty)
				return fmt.Errorf("%s not marked as the drop's target within %v", to, dragWait)
			}
		}
		if err := drag(input.DispatchDragEventTypeDragOver, tx, ty, data); err != nil {
			return err
		}
		if _, err := browsertest.Frames(1)(ctx, t); err != nil {
			return err
		}
		if err := drag(input.DispatchDragEventTypeDrop, tx, ty, data); err != nil {
			return err
		}
		return mouse(input.DispatchMouseEventTypeMouseReleased, tx, ty)
	})
}

// screenshots names the environment variable of the directory the test
// writes its screenshots to (for looking at what the test saw).
const screenshots = "ADMIN_SCREENSHOTS"

// screenshot writes the page to $ADMIN_SCREENSHOTS/name.png when that
// variable names a directory.
func screenshot(t *testing.T, name string) chromedp.Action[chromedp.Void] {
	return browsertest.Screenshot(t, screenshots, name)
}

// TestAdminConsoleInChromium drives the console in headless Chromium with no
// network beyond 127.0.0.1, on the org demo, step by step (each a subtest;
// a later step builds on the earlier ones):
//
//   - login: a wrong password is refused, the demo admin logs in.
//   - tree: the tree opens lazily: CEO, then 开发部's sub-departments.
//   - drag-move: 大数据部 dragged onto 测试部 moves there (UI and GraphQL).
//   - refused-cycle: after 测试部 was moved under 开发部 behind the page's
//     back, dragging 开发部 onto 测试部 is refused (DEPARTMENT_CYCLE): the
//     error is shown and the tree and the store stay as they were.
//   - department-members: 开发1's members.
//   - roles: the roles with their member counts; a new role; assign and
//     revoke on a role's members.
//
// The rest needs the admin dashboards' API (schema additions of
// Department.subDepartments and memberCount, Query.users and auditLog,
// assignRoleToUsers):
//
//   - member-counts: the tree's and the member list's counts.
//   - bulk-role: users found by the prefix "xiao", both selected and given
//     the new role at once.
//   - audit-log: the move and both assignments, newest first, also with
//     the action filter.
func TestAdminConsoleInChromium(t *testing.T) {
	g := startOrgDemo(t)
	ctx, b := newBrowser(t, g.url)
	defer func() {
		if t.Failed() {
			_ = do(ctx, screenshot(t, "failed"))
			t.Logf("requests: %q\nexceptions: %q", b.Recorded(browsertest.Requests), b.Recorded(browsertest.Errors))
		}
	}()
	ids, _ := g.departments()
	const newRole = "班长"

	t.Run("login", func(t *testing.T) {
		if err := do(ctx,
			chromedp.Navigate(g.url+"/admin"),
			chromedp.WaitVisible(chromedp.CSS("#login-username")),
			typeText("#login-username", seed.DemoAdminUsername),
			typeText("#login-password", "not the password"),
			chromedp.Click(chromedp.CSS("#login-submit")),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="login-error"]`)),
			typeText("#login-password", seed.DefaultPassword),
			chromedp.Click(chromedp.CSS("#login-submit")),
			textIncludes(`[data-testid="viewer"]`, seed.DemoAdminUsername),
			screenshot(t, "1-login"),
		); err != nil {
			t.Fatalf("log in: %v", err)
		}
		token, err := chromedp.Run(ctx, chromedp.Evaluate[string](`sessionStorage.getItem('weibo-admin-token') || ''`))
		if err != nil || strings.Count(token, ".") != 2 {
			t.Fatalf("token in sessionStorage: %q, %v", token, err)
		}
	})

	t.Run("tree", func(t *testing.T) {
		if err := do(ctx,
			chromedp.Click(chromedp.CSS("#tab-departments")),
			until(fmt.Sprintf(`%s === ''`, rowParent("CEO"))),
			openDept("CEO", ids["CEO"], "开发部", "测试部", "财务部"),
			openDept("开发部", ids["开发部"], "开发1", "开发2", "大数据部"),
			screenshot(t, "2-tree"),
		); err != nil {
			t.Fatalf("open the tree: %v", err)
		}
	})

	t.Run("drag-move", func(t *testing.T) {
		if err := do(ctx,
			b.dragUntil(deptRow("大数据部"), deptRow("测试部"),
				`(() => { const el = document.querySelector('[data-testid="tree-status"]'); return !!el && el.innerText.includes("Moved 大数据部 under 测试部"); })()`),
			until(fmt.Sprintf(`%s === %q`, rowParent("大数据部"), ids["测试部"])),
			screenshot(t, "3-moved"),
		); err != nil {
			rows, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="dept-tree"] .dept-row')].map(r => r.dataset.name + '@' + r.dataset.parent + ' ' + r.getAttribute('style'))`))
			t.Fatalf("drag 大数据部 onto 测试部: %v\nrows: %q", err, rows)
		}
		if _, parents := g.departments(); parents["大数据部"] != "测试部" {
			t.Fatalf("through GraphQL, 大数据部's parent is %q, want 测试部", parents["大数据部"])
		}
	})

	t.Run("refused-cycle", func(t *testing.T) {
		// Another admin moves 测试部 under 开发部; the page still shows them
		// side by side, so it lets 开发部 be dragged onto 测试部.
		g.gql(nil, `mutation($id: ID!, $p: ID) { moveDepartment(id: $id, parentId: $p) { id } }`,
			map[string]any{"id": ids["测试部"], "p": ids["开发部"]})
		if err := do(ctx,
			b.dragUntil(deptRow("开发部"), deptRow("测试部"),
				`(() => { const el = document.querySelector('[data-testid="tree-error"]'); return !!el && el.innerText.includes("DEPARTMENT_CYCLE"); })()`),
			screenshot(t, "4-cycle"),
		); err != nil {
			t.Fatalf("drag 开发部 onto 测试部: %v", err)
		}
		for name, want := range map[string]string{"开发部": ids["CEO"], "测试部": ids["CEO"], "大数据部": ids["测试部"]} {
			got, err := chromedp.Run(ctx, chromedp.Evaluate[*string](rowParent(name)))
			if err != nil || got == nil || *got != want {
				shown := "no row"
				if got != nil {
					shown = *got
				}
				t.Errorf("after the refusal the tree shows %s under %q (%v), want %s", name, shown, err, want)
			}
		}
		if _, parents := g.departments(); parents["开发部"] != "CEO" || parents["测试部"] != "开发部" {
			t.Errorf("through GraphQL, 开发部 is under %q and 测试部 under %q: want CEO and 开发部", parents["开发部"], parents["测试部"])
		}
		// Put 测试部 back, and show the tree as it is.
		g.gql(nil, `mutation($id: ID!, $p: ID) { moveDepartment(id: $id, parentId: $p) { id } }`,
			map[string]any{"id": ids["测试部"], "p": ids["CEO"]})
		if err := do(ctx,
			chromedp.Click(chromedp.CSS("#tree-reload")),
			openDept("CEO", ids["CEO"], "开发部", "测试部", "财务部"),
		); err != nil {
			t.Fatalf("reload the tree: %v", err)
		}
	})

	t.Run("department-members", func(t *testing.T) {
		if err := do(ctx,
			openDept("开发部", ids["开发部"], "开发1"),
			chromedp.Click(chromedp.CSS(deptRow("开发1")+" .dept-name")),
			textIncludes(`[data-testid="department-path"]`, "CEO › 开发部 › 开发1"),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="member-xiaoming"]`)),
			screenshot(t, "5-members"),
		); err != nil {
			t.Fatalf("开发1's members: %v", err)
		}
	})

	roleCount := func(role string, n int) chromedp.Action[chromedp.Void] {
		return until(fmt.Sprintf(`(() => {
  const el = document.querySelector('[data-testid="role-%s"] [data-testid="role-member-count"]');
  return !!el && el.innerText.trim() === '%d';
})()`, role, n))
	}
	t.Run("roles", func(t *testing.T) {
		if err := do(ctx,
			chromedp.Click(chromedp.CSS("#tab-roles")),
			roleCount("体育委员", 2), roleCount("劳动委员", 2), roleCount("学习委员", 1), roleCount("admin", 1),
			typeText("#new-role-name", newRole),
			chromedp.Click(chromedp.CSS("#create-role")),
			roleCount(newRole, 0),
			chromedp.Click(chromedp.CSS(`[data-testid="role-学习委员"]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="role-member-xiaohong"]`)),
			typeText("#assign-username", seed.DemoXiaoming),
			typeText("#assign-priority", "5"),
			chromedp.Click(chromedp.CSS("#assign-submit")),
			textIncludes(`[data-testid="role-status"]`, "xiaoming holds 学习委员 with priority 5"),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="role-member-xiaoming"]`)),
			roleCount("学习委员", 2),
			screenshot(t, "6-roles"),
			chromedp.Click(chromedp.CSS(`[data-testid="revoke-xiaoming"]`)),
			textIncludes(`[data-testid="role-status"]`, "xiaoming no longer holds 学习委员"),
			chromedp.WaitNotPresent(chromedp.CSS(`[data-testid="role-member-xiaoming"]`)),
			roleCount("学习委员", 1),
		); err != nil {
			t.Fatalf("roles: %v", err)
		}
	})

	// From here on, the admin dashboards' API.

	t.Run("member-counts", func(t *testing.T) {
		g.needs(t, "Department.subDepartments", "Department.memberCount", "DepartmentMemberConnection.totalCount")
		count := func(name string, n int) chromedp.Action[chromedp.Void] {
			return until(fmt.Sprintf(`(() => {
  const el = document.querySelector(%q);
  return !!el && el.innerText.trim() === '%d';
})()`, deptRow(name)+` [data-testid="member-count"]`, n))
		}
		if err := do(ctx,
			chromedp.Click(chromedp.CSS("#tab-departments")),
			openDept("CEO", ids["CEO"], "开发部", "测试部"),
			count("CEO", 1), count("开发部", 0), count("测试部", 0),
			openDept("开发部", ids["开发部"], "开发1"),
			count("开发1", 1),
			chromedp.Click(chromedp.CSS(deptRow("开发1")+" .dept-name")),
			textIncludes(`[data-testid="department-path"]`, "1 member"),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="member-xiaoming"]`)),
			screenshot(t, "9-departments"),
		); err != nil {
			t.Fatalf("member counts: %v", err)
		}
	})

	t.Run("bulk-role", func(t *testing.T) {
		g.needs(t, "Query.users", "Mutation.assignRoleToUsers")
		if err := do(ctx,
			chromedp.Click(chromedp.CSS("#tab-users")),
			typeText("#user-search", "xiao"),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="user-row-xiaoming"]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="user-row-xiaohong"]`)),
			chromedp.WaitNotPresent(chromedp.CSS(`[data-testid="user-row-admin"]`)),
			chromedp.Click(chromedp.CSS(`[data-testid="user-check-xiaoming"]`)),
			chromedp.Click(chromedp.CSS(`[data-testid="user-check-xiaohong"]`)),
			textIncludes(`[data-testid="selected-count"]`, "2 selected"),
			chromedp.Click(chromedp.CSS("#users-assign-role")),
			chromedp.WaitVisible(chromedp.CSS("#assign-role-select")),
			chromedp.Click(chromedp.CSS("#assign-role-select")),
			pick(fmt.Sprintf(`[data-testid="role-option-%s"]`, newRole)),
			typeText("#assign-role-priority", "20"),
			screenshot(t, "7-bulk-dialog"),
			chromedp.Click(chromedp.CSS("#assign-role-confirm")),
			textIncludes(`[data-testid="bulk-summary"]`, "2 users given "+newRole+" (priority 20)"),
			screenshot(t, "7-bulk-done"),
		); err != nil {
			t.Fatalf("give two users a role: %v", err)
		}
		if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid^="bulk-failure-"]').length`)); err != nil || n != 0 {
			t.Errorf("%d failures shown (%v), want none", n, err)
		}
		var role struct {
			RoleByName struct {
				Members struct {
					TotalCount int
					Edges      []struct {
						Priority int
						Node     struct{ Username string }
					}
				}
			}
		}
		g.gql(&role, `query($n: String!) { roleByName(name: $n) { members(first: 10) { totalCount edges { priority node { username } } } } }`,
			map[string]any{"n": newRole})
		got := map[string]int{}
		for _, e := range role.RoleByName.Members.Edges {
			got[e.Node.Username] = e.Priority
		}
		if len(got) != 2 || got["xiaoming"] != 20 || got["xiaohong"] != 20 {
			t.Errorf("through GraphQL, %s's members are %v, want xiaoming and xiaohong with priority 20", newRole, got)
		}
	})

	t.Run("audit-log", func(t *testing.T) {
		g.needs(t, "Query.auditLog")
		row := func(action, target string) string {
			return fmt.Sprintf(`[data-testid="audit-row"][data-action=%q][data-target=%q][data-actor="admin"]`, action, target)
		}
		moved, xiaoming, xiaohong := row("department.move", ids["大数据部"]), row("role.assign", g.userID("xiaoming")), row("role.assign", g.userID("xiaohong"))
		if err := do(ctx,
			chromedp.Click(chromedp.CSS("#tab-audit")),
			chromedp.WaitVisible(chromedp.CSS(moved)),
			chromedp.WaitVisible(chromedp.CSS(xiaoming)),
			chromedp.WaitVisible(chromedp.CSS(xiaohong)),
			screenshot(t, "8-audit"),
		); err != nil {
			t.Fatalf("find the changes in the audit log: %v", err)
		}
		// Newest first: the assignments come before the move.
		order, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](fmt.Sprintf(`(() => {
  const rows = [...document.querySelectorAll('[data-testid="audit-row"]')];
  return [%q, %q, %q].map(s => rows.indexOf(document.querySelector(s)));
})()`, moved, xiaoming, xiaohong)))
		if err != nil || len(order) != 3 || order[1] > order[0] || order[2] > order[0] {
			t.Errorf("rows of the move and the assignments at %v (%v): want the assignments first", order, err)
		}
		// Filtered by action, only the assignments remain.
		if err := do(ctx,
			chromedp.Click(chromedp.CSS("#audit-action")),
			pick(`[data-testid="action-option-role.assign"]`),
			chromedp.Click(chromedp.CSS("#audit-apply")),
			chromedp.WaitNotPresent(chromedp.CSS(moved)),
			chromedp.WaitVisible(chromedp.CSS(xiaoming)),
		); err != nil {
			t.Fatalf("filter the audit log by action: %v", err)
		}
		others, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="audit-row"]:not([data-action="role.assign"])').length`))
		if err != nil || others != 0 {
			t.Errorf("%d rows of other actions with the filter role.assign (%v)", others, err)
		}
	})

	// The page reached for nothing but the gateway: neither past its
	// Content-Security-Policy nor to the network.
	b.CheckOnlyAllowed(t)
}
