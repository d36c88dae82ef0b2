package graphiql_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/weibohbase/gateway/internal/browsertest"
	"github.com/weibohbase/gateway/internal/gatewaytest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
)

// seeded is the gateway the browser test talks to and what it holds.
type seeded struct {
	*gatewaytest.Gateway
	alice, bob *weibo.User
	bobsPost   string
	password   string
}

// startSeeded starts the gateway on 127.0.0.1 over an in-memory embedded
// store holding alice, bob and carol: alice follows bob, bob has published.
func startSeeded(t *testing.T) *seeded {
	t.Helper()
	s := &seeded{password: "correct horse", bobsPost: "hello from bob, seen through GraphiQL"}
	s.Gateway = gatewaytest.Start(t, testenv.Embedded(t), gatewaytest.WithSeed(func(ctx context.Context, svc *domain.Domain) error {
		users := map[string]*weibo.User{}
		for _, name := range []string{"alice", "bob", "carol"} {
			u, err := svc.Accounts.Register(ctx, name, s.password)
			if err != nil {
				return fmt.Errorf("register %s: %w", name, err)
			}
			users[name] = u
		}
		s.alice, s.bob = users["alice"], users["bob"]
		if _, err := svc.Follows.Follow(ctx, s.alice.ID, s.bob.ID); err != nil {
			return fmt.Errorf("follow: %w", err)
		}
		for _, p := range []struct {
			author  *weibo.User
			content string
		}{{s.bob, s.bobsPost}, {users["carol"], "carol's post, not in alice's timeline"}} {
			if _, err := svc.Feed.Publish(ctx, p.author.ID, p.content); err != nil {
				return fmt.Errorf("publish: %w", err)
			}
		}
		return svc.FlushFanout(ctx)
	}))
	return s
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

// editorWait bounds one try of a step of typeInto (it tries three times):
// a hang guard, not a speed target.
const editorWait = 20 * time.Second

const (
	queryEditor   = ".graphiql-query-editor"
	headersEditor = ".graphiql-editor-tool .graphiql-editor:not(.hidden)"
	resultWindow  = ".graphiql-response .result-window"
	executeButton = "button.graphiql-execute-button"
)

// typeInto replaces the text of the editor inside selector as a person
// would: once the editor is open, click on its first lines (again while it
// does not take the focus: a re-render may take it back), select all, delete, and
// type text as one insertion (typed key by key, the editor's auto-closing
// brackets would double the typed ones). It fails if the editor does not then
// hold exactly text. Every wait is for a condition of the page, each
// bounded by editorWait, with three tries in all of each step.
func typeInto(selector, text string) chromedp.Action[chromedp.Void] {
	focused := fmt.Sprintf(`(() => { const el = document.querySelector(%q); return !!el && el.contains(document.activeElement); })()`, selector)
	holds := fmt.Sprintf(`%s === %q`, editorValue(selector), text)
	// A point on the editor's first lines, once the editor is what a click
	// there would reach (not a center: the lines' box reaches past the
	// editor's visible part, and its center may be outside the editor).
	point := fmt.Sprintf(`(() => {
  const ed = document.querySelector(%q);
  if (!ed) return null;
  const r = ed.getBoundingClientRect();
  const x = r.left + Math.min(r.width / 2, 200), y = r.top + Math.min(r.height / 2, 12);
  const at = document.elementFromPoint(x, y);
  return at && ed.contains(at) ? [x, y] : null;
})()`, selector+" .monaco-editor")
	click := chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		if _, err := chromedp.ScrollIntoView(chromedp.CSS(selector+" .monaco-editor"))(ctx, t); err != nil {
			return err
		}
		xy, err := chromedp.Poll[[]float64](point, chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(uiWait))(ctx, t)
		if err != nil {
			return fmt.Errorf("editor %s is not there to click: %w", selector, err)
		}
		_, err = chromedp.MouseClickXY(xy[0], xy[1])(ctx, t)
		return err
	})
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		if _, err := browsertest.Until(editorValue(selector)+` !== null`, uiWait)(ctx, t); err != nil {
			return fmt.Errorf("editor %s does not open: %w", selector, err)
		}
		for attempt := 1; ; attempt++ {
			if _, err := click(ctx, t); err != nil {
				return err
			}
			_, err := browsertest.Until(focused, editorWait)(ctx, t)
			if err == nil {
				break
			}
			if attempt == 3 || ctx.Err() != nil {
				return fmt.Errorf("editor %s does not take the focus: %w", selector, err)
			}
		}
		for attempt := 1; ; attempt++ {
			if _, err := chromedp.Steps(
				chromedp.KeyEvent("a", chromedp.KeyModifiers(chromedp.ModifierCtrl)),
				chromedp.KeyEvent(kb.Backspace),
				browsertest.Call(input.InsertText, input.InsertTextParams{Text: text}),
			)(ctx, t); err != nil {
				return err
			}
			_, err := browsertest.Until(holds, editorWait)(ctx, t)
			if err == nil {
				return nil
			}
			if attempt == 3 || ctx.Err() != nil {
				got, _ := chromedp.Evaluate[*string](editorValue(selector))(ctx, t)
				return fmt.Errorf("editor %s holds %q after typing %q: %w", selector, deref(got), text, err)
			}
			if _, err := click(ctx, t); err != nil {
				return err
			}
		}
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
	return browsertest.Screenshot(t, "GRAPHIQL_SCREENSHOTS", name)
}

// TestGraphiQLInChromium loads GraphiQL from the gateway in headless
// Chromium with no network beyond 127.0.0.1, logs in by running the login
// mutation in the editor, puts the token into the Headers tab, runs the home
// timeline query and finds the followee's post in the result pane, then
// starts the timeline subscription and sees a post published afterwards
// arrive over the WebSocket, authenticated by the same headers.
func TestGraphiQLInChromium(t *testing.T) {
	g := startSeeded(t)
	b := browsertest.New(t, browsertest.Options{Allow: []string{g.URL}, Width: 1400, Height: 900})
	ctx := b.Ctx
	defer func() {
		if t.Failed() {
			_ = chromedp.Do(ctx, screenshot(t, "failed"))
			t.Logf("requests: %q\nexceptions: %q", b.Recorded(browsertest.Requests), b.Recorded(browsertest.Errors))
		}
	}()

	// The page and its editors come up with no network.
	if err := chromedp.Do(ctx,
		chromedp.Navigate(g.URL+"/"),
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
	sctx, cancel := context.WithTimeout(ctx, uiWait)
	_, err = b.Await(sctx, browsertest.WSFrames, func(f string) bool { return strings.Contains(f, `"type":"subscribe"`) })
	cancel()
	if err != nil {
		t.Fatalf("no subscribe message on a WebSocket (%v); frames sent: %q", err, b.Recorded(browsertest.WSFrames))
	}
	arrived := ""
	for i := 1; i <= 20 && arrived == ""; i++ {
		content := fmt.Sprintf("live post %d from bob", i)
		if _, err := g.Svc.Feed.Publish(t.Context(), g.bob.ID, content); err != nil {
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
		t.Fatalf("no subscription event reached the result pane; it shows %v; frames sent: %q", deref(raw), b.Recorded(browsertest.WSFrames))
	}
	// The WebSocket carried the Headers tab's token in connection_init.
	var initOK bool
	for _, f := range b.Recorded(browsertest.WSFrames) {
		var m struct {
			Type    string
			Payload map[string]any
		}
		if json.Unmarshal([]byte(f), &m) == nil && m.Type == "connection_init" && m.Payload["Authorization"] == "Bearer "+token {
			initOK = true
		}
	}
	if !initOK {
		t.Errorf("no connection_init with the Headers tab's Authorization among the frames sent: %q", b.Recorded(browsertest.WSFrames))
	}
	_ = chromedp.Do(ctx, execute()) // stop the subscription

	// The page reached for nothing but the gateway, and the request log
	// works.
	b.CheckOnlyAllowed(t)
	if n := len(b.Recorded(browsertest.Requests)); n < 3 {
		t.Errorf("saw %d requests: the request log does not work", n)
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
