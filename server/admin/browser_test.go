package admin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/weibohbase/gateway/auth"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/seed"
	"github.com/weibohbase/gateway/server"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/tables"
)

// gateway is the gateway the browser test talks to: the org demo (seed
// 001's roles and departments, the demo admin) on an in-memory embedded
// store.
type gateway struct {
	t     *testing.T
	url   string
	token string // the demo admin's, for checking through GraphQL
}

func startOrgDemo(t *testing.T) *gateway {
	t.Helper()
	ctx := t.Context()
	st := testenv.Embedded(t)
	if err := tables.Migrate(ctx, st); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := domain.New(st, domain.WithLogger(log), domain.WithBcryptCost(4), domain.WithOutboxSweep(0))
	if err := svc.Start(ctx); err != nil {
		t.Fatalf("start: %v", err)
	}
	if err := seed.OrgDemo(ctx, svc); err != nil {
		t.Fatalf("org demo: %v", err)
	}
	ts := httptest.NewServer(server.New(server.Config{
		Svc: svc, Tokens: auth.NewIssuer([]byte("admin-console-test-secret-admin-console"), time.Hour), Logger: log,
	}))
	t.Cleanup(func() {
		ts.Close()
		_ = svc.Close(context.Background())
	})
	g := &gateway{t: t, url: ts.URL}
	var login struct{ Login struct{ Token string } }
	g.gql(&login, `mutation($u: String!, $p: String!) { login(username: $u, password: $p) { token } }`,
		map[string]any{"u": seed.DemoAdminUsername, "p": seed.DefaultPassword})
	g.token = login.Login.Token
	return g
}

// gql runs an operation as the demo admin (once logged in) and decodes its
// data into out; any error fails the test.
func (g *gateway) gql(out any, query string, vars map[string]any) {
	g.t.Helper()
	if err := g.try(out, query, vars); err != nil {
		g.t.Fatal(err)
	}
}

func (g *gateway) try(out any, query string, vars map[string]any) error {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequestWithContext(g.t.Context(), http.MethodPost, g.url+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if g.token != "" {
		req.Header.Set("Authorization", "Bearer "+g.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var res struct {
		Data   json.RawMessage
		Errors []struct {
			Message    string
			Extensions map[string]any
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil {
		return fmt.Errorf("decode the response (HTTP %d): %w", resp.StatusCode, err)
	}
	if len(res.Errors) > 0 {
		return fmt.Errorf("%s: %s %v", strings.Fields(query)[0], res.Errors[0].Message, res.Errors[0].Extensions)
	}
	if out != nil {
		return json.Unmarshal(res.Data, out)
	}
	return nil
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

// browser records what a page asked of the network.
type browser struct {
	mu       sync.Mutex
	local    string               // host:port of the gateway
	requests []string             // every request the page made
	foreign  []string             // the ones to another host: failed, and a test failure
	errors   []string             // uncaught exceptions
	drags    chan *input.DragData // native drags the browser intercepted (dragOnto)
}

func (b *browser) record(list *[]string, s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	*list = append(*list, s)
}

func (b *browser) snapshot(list *[]string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), *list...)
}

// isLocal tells whether raw is the gateway itself, or no network at all.
func (b *browser) isLocal(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	switch u.Scheme {
	case "data", "blob", "about":
		return true
	case "http", "ws":
		return u.Host == b.local
	}
	return false
}

// newBrowser starts headless Chromium (testenv.Chromium: skipped without
// it, except in CI) with every request intercepted: those to the gateway go
// on, any other is failed and recorded. As a second wall, host resolution
// fails for every name, so nothing but 127.0.0.1 is reachable.
func newBrowser(t *testing.T, gateway string) (context.Context, *browser) {
	t.Helper()
	exe := testenv.Chromium(t)
	u, _ := url.Parse(gateway)
	b := &browser{local: u.Host, drags: make(chan *input.DragData, 1)}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.NoSandbox, // tests run as root in containers
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 900),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
	)
	// A bound on the whole browser session, so that a broken page fails the
	// test instead of hanging it; not a speed target.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	t.Cleanup(cancel)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	t.Cleanup(bcancel)

	err := chromedp.Listen(bctx, func(ev any) {
		switch e := ev.(type) {
		case *fetch.EventRequestPaused:
			go func() {
				if b.isLocal(e.Request.URL) {
					_, _ = chromedp.Call(bctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: e.RequestID})
					return
				}
				b.record(&b.foreign, e.Request.URL)
				_, _ = chromedp.Call(bctx, fetch.FailRequest, fetch.FailRequestParams{RequestID: e.RequestID, ErrorReason: network.ErrorReasonBlockedByClient})
			}()
		case *network.EventRequestWillBeSent:
			b.record(&b.requests, e.Request.URL)
			if !b.isLocal(e.Request.URL) {
				b.record(&b.foreign, e.Request.URL)
			}
		case *runtime.EventExceptionThrown:
			b.record(&b.errors, exceptionText(e.ExceptionDetails))
		case *input.EventDragIntercepted:
			select {
			case b.drags <- e.Data:
			default:
			}
		}
	})
	if err == nil {
		err = chromedp.Do(bctx,
			call(network.Enable, network.EnableParams{}),
			call(fetch.Enable, fetch.EnableParams{}),
			call(page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
				Source: `window.__cspViolations = []; document.addEventListener('securitypolicyviolation', e => window.__cspViolations.push(e.blockedURI));`,
			}),
		)
	}
	if err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return bctx, b
}

// call is the protocol command cmd as an action.
func call[P, R any](cmd cdp.Command[P, R], params P) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, cmd, params)
		return err
	})
}

func exceptionText(d *runtime.ExceptionDetails) string {
	if d.Exception != nil && d.Exception.Description != "" {
		return d.Exception.Description
	}
	return fmt.Sprintf("%s (%s:%d)", d.Text, d.URL, d.LineNumber)
}

// uiWait bounds each wait for the page: a hang guard generous enough for a
// loaded CI machine, not a speed target.
const uiWait = 60 * time.Second

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
				shot, err = saveScreenshot(ctx, tg, fmt.Sprintf("failed-%d", time.Now().UnixNano()))
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
func until(js string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](js, chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(uiWait))
}

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
// boolean), trying up to three times, each resting longer on the target
// before the drop: on a loaded machine the drag library may not have
// registered the pointer over the target yet when the drop comes, and the
// drop then lands elsewhere or nowhere.
func (b *browser) dragUntil(from, to, done string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		var last error
		for attempt := 1; attempt <= 3; attempt++ {
			if _, err := b.dragOntoResting(from, to, time.Duration(attempt)*300*time.Millisecond)(ctx, t); err != nil {
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

// dragOntoResting drags the element matching from and drops it on the middle of
// the one matching to, as a person would with the mouse: press, move a few
// pixels (the browser starts a native drag, which it hands to the test:
// Input.setInterceptDrags), move over the target and rest there a moment,
// release. The rest matters: react-dnd reads the pointer's position over a
// target once per animation frame, and a drop that comes before that frame
// lands where the pointer was before. (chromedp.DragAndDrop moves without
// resting.)
// It rests on the target for rest before the drop.
func (b *browser) dragOntoResting(from, to string, rest time.Duration) chromedp.Action[chromedp.Void] {
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
			select {
			case data = <-b.drags:
			case <-time.After(200 * time.Millisecond):
			}
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
			time.Sleep(30 * time.Millisecond)
		}
		for range 3 { // resting on the target
			time.Sleep(rest)
			if err := drag(input.DispatchDragEventTypeDragOver, tx, ty, data); err != nil {
				return err
			}
		}
		time.Sleep(rest)
		if err := drag(input.DispatchDragEventTypeDrop, tx, ty, data); err != nil {
			return err
		}
		return mouse(input.DispatchMouseEventTypeMouseReleased, tx, ty)
	})
}

// screenshot writes the page to $ADMIN_SCREENSHOTS/name.png when that
// variable names a directory (for looking at what the test saw).
func screenshot(t *testing.T, name string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		p, err := saveScreenshot(ctx, tg, name)
		if p != "" {
			t.Logf("screenshot %s", p)
		}
		return err
	})
}

// saveScreenshot writes the page to $ADMIN_SCREENSHOTS/name.png and returns
// its path, or "" when that variable names no directory.
func saveScreenshot(ctx context.Context, tg *chromedp.Target, name string) (string, error) {
	dir := os.Getenv("ADMIN_SCREENSHOTS")
	if dir == "" {
		return "", nil
	}
	png, err := chromedp.CaptureScreenshot()(ctx, tg)
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, name+".png")
	return p, os.WriteFile(p, png, 0o644)
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
			t.Logf("requests: %q\nexceptions: %q", b.snapshot(&b.requests), b.snapshot(&b.errors))
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
	// Content-Security-Policy nor to the network. The probe, an image from
	// another host, shows that such an attempt would be seen both ways.
	const probe = "https://cdn.invalid/probe.png"
	violations, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`new Image().src = '`+probe+`'; new Promise(r => setTimeout(() => r(window.__cspViolations), 500))`,
		chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("read the CSP violations: %v", err)
	}
	if len(violations) != 1 || violations[0] != probe {
		t.Errorf("Content-Security-Policy violations: %q, want only the probe %q", violations, probe)
	}
	foreign := map[string]bool{}
	for _, u := range b.snapshot(&b.foreign) {
		foreign[u] = true
	}
	if len(foreign) != 1 || !foreign[probe] {
		t.Errorf("requests beyond the gateway: %q, want only the probe %q", b.snapshot(&b.foreign), probe)
	}
	if e := b.snapshot(&b.errors); len(e) > 0 {
		t.Errorf("uncaught exceptions in the page: %q", e)
	}
}
