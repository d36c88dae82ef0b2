package graphiql_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
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
	"github.com/weibohbase/gateway/server"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/tables"
)

// seeded is the gateway the browser test talks to and what it holds.
type seeded struct {
	url        string
	svc        *domain.Domain
	alice, bob *weibo.User
	bobsPost   string
	password   string
}

// startSeeded starts the gateway on 127.0.0.1 over an in-memory embedded
// store holding alice, bob and carol: alice follows bob, bob has published.
func startSeeded(t *testing.T) *seeded {
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
	s := &seeded{svc: svc, password: "correct horse", bobsPost: "hello from bob, seen through GraphiQL"}
	users := map[string]*weibo.User{}
	for _, name := range []string{"alice", "bob", "carol"} {
		u, err := svc.Accounts.Register(ctx, name, s.password)
		if err != nil {
			t.Fatalf("register %s: %v", name, err)
		}
		users[name] = u
	}
	s.alice, s.bob = users["alice"], users["bob"]
	if _, err := svc.Feed.Follow(ctx, s.alice.ID, s.bob.ID); err != nil {
		t.Fatalf("follow: %v", err)
	}
	for _, p := range []struct {
		author  *weibo.User
		content string
	}{{s.bob, s.bobsPost}, {users["carol"], "carol's post, not in alice's timeline"}} {
		if _, err := svc.Feed.Publish(ctx, p.author.ID, p.content); err != nil {
			t.Fatalf("publish: %v", err)
		}
	}
	if err := svc.FlushFanout(ctx); err != nil {
		t.Fatalf("flush fan-out: %v", err)
	}
	ts := httptest.NewServer(server.New(server.Config{
		Svc: svc, Tokens: auth.NewIssuer([]byte("graphiql-test-secret-graphiql-test"), time.Hour), Logger: log,
	}))
	t.Cleanup(func() {
		ts.Close()
		_ = svc.Close(context.Background())
	})
	s.url = ts.URL
	return s
}

// browser records what a page asked of the network.
type browser struct {
	mu       sync.Mutex
	local    string   // host:port of the gateway
	requests []string // every request and WebSocket the page made
	foreign  []string // the ones to another host: failed, and a test failure
	wsFrames []string // WebSocket frames the page sent
	errors   []string // uncaught exceptions
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

// newBrowser starts headless Chromium with every request intercepted: those
// to the gateway go on, any other is failed and recorded. As a second wall,
// host resolution fails for every name (--host-resolver-rules), so nothing
// but 127.0.0.1 is reachable.
func newBrowser(t *testing.T, gateway string) (context.Context, *browser) {
	t.Helper()
	exe := testenv.Chromium(t)
	u, _ := url.Parse(gateway)
	b := &browser{local: u.Host}
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

	// The listener runs in the loop that reads the browser's messages: it
	// only records, and answers paused requests from other goroutines.
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
		case *network.EventWebSocketCreated:
			b.record(&b.requests, e.URL)
			if !b.isLocal(e.URL) {
				b.record(&b.foreign, e.URL)
			}
		case *network.EventWebSocketFrameSent:
			b.record(&b.wsFrames, string(e.Response.PayloadData))
		case *runtime.EventExceptionThrown:
			b.record(&b.errors, exceptionText(e.ExceptionDetails))
		}
	})
	if err == nil {
		err = chromedp.Do(bctx,
			call(network.Enable, network.EnableParams{}),
			call(fetch.Enable, fetch.EnableParams{}),
			// What the page's Content-Security-Policy blocks never reaches
			// the network (nor Fetch): the page keeps a list of it too.
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

// The page's editors are Monaco editors; GraphiQL exposes Monaco as
// globalThis.__MONACO. editorValue reads the text of the editor inside the
// element matching selector.
func editorValue(selector string) string {
	return fmt.Sprintf(`(() => {
  const el = document.querySelector(%q);
  const ed = el && globalThis.__MONACO && __MONACO.editor.getEditors().find(e => el.contains(e.getContainerDomNode()) || e.getContainerDomNode().contains(el));
  return ed ? ed.getModel().getValue() : null;
})()`, selector)
}

// uiWait bounds each wait for the page (chromedp's default is 30 s): a hang
// guard generous enough for a loaded CI machine, not a speed target.
const uiWait = 90 * time.Second

const (
	queryEditor   = ".graphiql-query-editor"
	headersEditor = ".graphiql-editor-tool .graphiql-editor:not(.hidden)"
	resultWindow  = ".graphiql-response .result-window"
	executeButton = "button.graphiql-execute-button"
)

// typeInto replaces the text of the editor inside selector as a person
// would: click into it (again while it does not have the focus yet: an editor
// that is still opening may not take the first click), select all, delete,
// and type text as one insertion (typed key by key, the editor's auto-closing
// brackets would double the typed ones). It fails if the editor does not then
// hold exactly text.
func typeInto(selector, text string) chromedp.Action[chromedp.Void] {
	focused := fmt.Sprintf(`(() => { const el = document.querySelector(%q); return !!el && el.contains(document.activeElement); })()`, selector)
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		for attempt := 0; ; attempt++ {
			if _, err := chromedp.Click(chromedp.CSS(selector+" .view-lines"))(ctx, t); err != nil {
				return err
			}
			ok, err := chromedp.Evaluate[bool](focused)(ctx, t)
			if err != nil {
				return err
			}
			if ok {
				break
			}
			if attempt == 20 {
				return fmt.Errorf("editor %s does not take the focus", selector)
			}
			time.Sleep(250 * time.Millisecond)
		}
		// On a loaded machine the editor may show the text some time after
		// the insertion, or (focus taken back by a re-render) not at all:
		// wait up to 2 s for it, and type again twice before failing.
		var got *string
		for range 3 {
			if _, err := chromedp.Steps(
				chromedp.KeyEvent("a", chromedp.KeyModifiers(chromedp.ModifierCtrl)),
				chromedp.KeyEvent(kb.Backspace),
				call(input.InsertText, input.InsertTextParams{Text: text}),
			)(ctx, t); err != nil {
				return err
			}
			for range 20 {
				var err error
				if got, err = chromedp.Evaluate[*string](editorValue(selector))(ctx, t); err != nil {
					return err
				}
				if got != nil && *got == text {
					return nil
				}
				time.Sleep(100 * time.Millisecond)
			}
			if _, err := chromedp.Click(chromedp.CSS(selector+" .view-lines"))(ctx, t); err != nil {
				return err
			}
		}
		return fmt.Errorf("editor %s holds %q after typing %q", selector, deref(got), text)
	})
}

// typeOperation types the operation named name into the query editor and
// waits until GraphiQL has taken it in: GraphiQL parses the editor's text
// 100 ms after an edit, and until then its run button would run the previous
// operation. The sign, as a person sees it, is the tab taking the name.
func typeOperation(name, text string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		typeInto(queryEditor, text),
		chromedp.Poll[chromedp.Void](fmt.Sprintf(`(() => {
  const tab = document.querySelector('.graphiql-tab[aria-selected="true"]');
  return !!tab && tab.innerText.trim() === %q;
})()`, name), chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(uiWait)),
	)
}

// execute clicks GraphiQL's run button.
func execute() chromedp.Action[chromedp.Void] {
	return chromedp.Click(chromedp.CSS(executeButton))
}

// waitResultContains waits until the result pane shows want (as a person
// sees it: the pane's rendered lines).
func waitResultContains(want string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](fmt.Sprintf(`(() => {
  const el = document.querySelector(%q);
  return !!el && el.innerText.replace(/\u00a0/g, ' ').includes(%q);
})()`, resultWindow+" .view-lines", want), chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(uiWait))
}

// screenshot writes the page to $GRAPHIQL_SCREENSHOTS/name.png when that
// variable names a directory (for looking at what the test saw).
func screenshot(t *testing.T, name string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		dir := os.Getenv("GRAPHIQL_SCREENSHOTS")
		if dir == "" {
			return nil
		}
		png, err := chromedp.CaptureScreenshot()(ctx, tg)
		if err != nil {
			return err
		}
		p := filepath.Join(dir, name+".png")
		t.Logf("screenshot %s", p)
		return os.WriteFile(p, png, 0o644)
	})
}

// TestGraphiQLInChromium loads GraphiQL from the gateway in headless
// Chromium with no network beyond 127.0.0.1, logs in by running the login
// mutation in the editor, puts the token into the Headers tab, runs the home
// timeline query and finds the followee's post in the result pane, then
// starts the timeline subscription and sees a post published afterwards
// arrive over the WebSocket, authenticated by the same headers.
func TestGraphiQLInChromium(t *testing.T) {
	g := startSeeded(t)
	ctx, b := newBrowser(t, g.url)
	defer func() {
		if t.Failed() {
			_ = chromedp.Do(ctx, screenshot(t, "failed"))
			t.Logf("requests: %q\nexceptions: %q", b.snapshot(&b.requests), b.snapshot(&b.errors))
		}
	}()

	// The page and its editors come up with no network.
	if err := chromedp.Do(ctx,
		chromedp.Navigate(g.url+"/"),
		chromedp.WaitVisible(chromedp.CSS(queryEditor+" .monaco-editor .view-lines")),
		chromedp.WaitVisible(chromedp.CSS(resultWindow)),
		screenshot(t, "1-loaded"),
		// The explorer plugin lists the schema's fields (from introspection).
		chromedp.Click(chromedp.CSS(`button[aria-label="Show GraphiQL Explorer"]`)),
		chromedp.Poll[chromedp.Void](`(() => {
  const el = document.querySelector('.graphiql-plugin');
  return !!el && el.innerText.includes('homeTimeline');
})()`, chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(uiWait)),
		screenshot(t, "1-explorer"),
		chromedp.Click(chromedp.CSS(`button[aria-label="Hide GraphiQL Explorer"]`)),
	); err != nil {
		t.Fatalf("load GraphiQL: %v", err)
	}

	// Log in through the editor and read the token from the result pane.
	login := fmt.Sprintf(`mutation LogIn { login(username: %q, password: %q) { token user { username } } }`, g.alice.Username, g.password)
	if err := chromedp.Do(ctx,
		typeOperation("LogIn", login),
		execute(),
		waitResultContains(`"username": "`+g.alice.Username+`"`),
		screenshot(t, "2-login"),
	); err != nil {
		t.Fatalf("login in GraphiQL: %v", err)
	}
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[*string](editorValue(resultWindow)))
	if err != nil || raw == nil {
		t.Fatalf("read the result pane: %v", err)
	}
	var res struct {
		Data struct{ Login struct{ Token string } }
	}
	if err := json.Unmarshal([]byte(*raw), &res); err != nil || res.Data.Login.Token == "" {
		t.Fatalf("no token in the result pane (%v): %s", err, *raw)
	}
	token := res.Data.Login.Token

	// Without the token the timeline is refused; with it in the Headers tab
	// it shows bob's post.
	timeline := `query Timeline { homeTimeline(first: 5) { edges { node { content author { username } } } } }`
	if err := chromedp.Do(ctx,
		typeOperation("Timeline", timeline),
		execute(),
		waitResultContains("UNAUTHENTICATED"),
		chromedp.Click(chromedp.CSS(`button[data-name="headers"]`)),
		chromedp.WaitVisible(chromedp.CSS(headersEditor+" .view-lines")),
		typeInto(headersEditor, `{"Authorization": "Bearer `+token+`"}`),
		execute(),
		waitResultContains(g.bobsPost),
		screenshot(t, "3-timeline"),
	); err != nil {
		t.Fatalf("home timeline in GraphiQL: %v", err)
	}
	if raw, err = chromedp.Run(ctx, chromedp.Evaluate[*string](editorValue(resultWindow))); err != nil || raw == nil {
		t.Fatalf("read the result pane: %v", err)
	}
	if strings.Contains(*raw, "carol's post") || strings.Contains(*raw, `"errors"`) {
		t.Fatalf("home timeline result: %s", *raw)
	}

	// The subscription: once GraphiQL shows it running, publish as bob until
	// a post arrives. A post published before the server registered the
	// subscription is not an update, hence the retries; each post is new.
	if err := chromedp.Do(ctx,
		typeOperation("Live", `subscription Live { homeTimelineUpdates { content author { username } } }`),
		execute(),
		chromedp.WaitReady(chromedp.CSS(executeButton+`[aria-label^="Stop"]`)),
	); err != nil {
		t.Fatalf("start the subscription in GraphiQL: %v", err)
	}
	// The page sends connection_init and subscribe over the WebSocket.
	subscribed := func() bool {
		for _, f := range b.snapshot(&b.wsFrames) {
			if strings.Contains(f, `"type":"subscribe"`) {
				return true
			}
		}
		return false
	}
	for deadline := time.Now().Add(30 * time.Second); !subscribed(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no subscribe message on a WebSocket within 30 s; frames sent: %q", b.snapshot(&b.wsFrames))
		}
	}
	arrived := ""
	for i := 1; i <= 20 && arrived == ""; i++ {
		content := fmt.Sprintf("live post %d from bob", i)
		if _, err := g.svc.Feed.Publish(t.Context(), g.bob.ID, content); err != nil {
			t.Fatalf("publish: %v", err)
		}
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		if err := chromedp.Do(wctx, waitResultContains(content)); err == nil {
			arrived = content
		}
		cancel()
		if ctx.Err() != nil {
			break
		}
	}
	t.Logf("subscription: %q arrived", arrived)
	if err := chromedp.Do(ctx, screenshot(t, "4-subscription")); err != nil {
		t.Fatal(err)
	}
	if arrived == "" {
		raw, _ = chromedp.Run(ctx, chromedp.Evaluate[*string](editorValue(resultWindow)))
		t.Fatalf("no subscription event reached the result pane; it shows %v; frames sent: %q", deref(raw), b.snapshot(&b.wsFrames))
	}
	// The WebSocket carried the Headers tab's token in connection_init.
	var initOK bool
	for _, f := range b.snapshot(&b.wsFrames) {
		var m struct {
			Type    string
			Payload map[string]any
		}
		if json.Unmarshal([]byte(f), &m) == nil && m.Type == "connection_init" && m.Payload["Authorization"] == "Bearer "+token {
			initOK = true
		}
	}
	if !initOK {
		t.Errorf("no connection_init with the Headers tab's Authorization among the frames sent: %q", b.snapshot(&b.wsFrames))
	}
	_ = chromedp.Do(ctx, execute()) // stop the subscription

	// The page reached for nothing but the gateway: neither past its
	// Content-Security-Policy, which keeps it to its own origin, nor to the
	// network. The probe, an image from another host, shows that such an
	// attempt would be seen both ways.
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
	if n := len(b.snapshot(&b.requests)); n < 3 {
		t.Errorf("saw %d requests: the request log does not work", n)
	}
	if e := b.snapshot(&b.errors); len(e) > 0 {
		t.Errorf("uncaught exceptions in the page: %q", e)
	}
}

func exceptionText(d *runtime.ExceptionDetails) string {
	if d.Exception != nil && d.Exception.Description != "" {
		return d.Exception.Description
	}
	return fmt.Sprintf("%s (%s:%d)", d.Text, d.URL, d.LineNumber)
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
