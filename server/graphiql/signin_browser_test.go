package graphiql_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/weibohbase/gateway/internal/browsertest"
)

// The sign-in plugin's pane (src/signin.jsx).
const (
	signInButton = `button[aria-label="Show Sign in"]`
	signInHide   = `button[aria-label="Hide Sign in"]`
	signInForm   = ".weibo-signin-form"
	signInStatus = ".weibo-signin-status"
	signInError  = ".weibo-signin-error"
	signOutBtn   = "button.weibo-signout"
	tokenKey     = "weibo-gateway.graphiql.token"
)

// waitText waits until the element matching selector shows text containing
// want.
func waitText(selector, want string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](fmt.Sprintf(`(() => {
  const el = document.querySelector(%q);
  return !!el && el.innerText.includes(%q);
})()`, selector, want), chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(uiWait))
}

// fill replaces the text of the input matching selector as a person would
// (select all, delete, type), and waits until the input holds text.
func fill(selector, text string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.WaitVisible(chromedp.CSS(selector)),
		chromedp.Focus(chromedp.CSS(selector)),
		chromedp.KeyEvent("a", chromedp.KeyModifiers(chromedp.ModifierCtrl)),
		chromedp.KeyEvent(kb.Backspace),
		chromedp.SendKeys(chromedp.CSS(selector), text),
		chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.querySelector(%q).value === %q`, selector, text),
			chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(uiWait)),
	)
}

// storedToken returns the token the page keeps ("" for none).
func storedToken(ctx context.Context, t *testing.T) string {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[*string](fmt.Sprintf(`localStorage.getItem(%q)`, tokenKey)))
	if err != nil {
		t.Fatalf("read localStorage: %v", err)
	}
	if v == nil {
		return ""
	}
	return *v
}

// TestGraphiQLSignInInChromium signs in with GraphiQL's sign-in plugin in
// headless Chromium (a wrong password first, refused in the pane), sees who
// is signed in, runs the home timeline query without touching the Headers
// tab and finds the followee's post, subscribes and sees a post published
// afterwards arrive over a WebSocket whose connection_init carried the
// token, then signs out: the token is ended on the gateway and forgotten by
// the page, and the same query is UNAUTHENTICATED again.
func TestGraphiQLSignInInChromium(t *testing.T) {
	g := startSeeded(t)
	b := browsertest.New(t, browsertest.Options{Allow: []string{g.URL}, Width: 1400, Height: 900})
	ctx := b.Ctx
	defer func() {
		if t.Failed() {
			_ = chromedp.Do(ctx, screenshot(t, "signin-failed"))
			t.Logf("requests: %q\nexceptions: %q", b.Recorded(browsertest.Requests), b.Recorded(browsertest.Errors))
		}
	}()

	// Sign in: a wrong password is refused in the pane, the right one shows
	// the user.
	if err := chromedp.Do(ctx,
		chromedp.Navigate(g.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS(queryEditor+" .monaco-editor .view-lines")),
		chromedp.Click(chromedp.CSS(signInButton)),
		fill(signInForm+` input[name="username"]`, g.alice.Username),
		fill(signInForm+` input[name="password"]`, "not the password"),
		chromedp.Click(chromedp.CSS(signInForm+` button[type="submit"]`)),
		waitText(signInError, "UNAUTHENTICATED"),
		fill(signInForm+` input[name="password"]`, g.password),
		chromedp.Click(chromedp.CSS(signInForm+` button[type="submit"]`)),
		waitText(signInStatus, "Signed in as "+g.alice.Username),
		screenshot(t, "signin-1-signed-in"),
		// The result pane gets its width back (its lines wrap otherwise).
		chromedp.Click(chromedp.CSS(signInHide)),
	); err != nil {
		t.Fatalf("sign in: %v", err)
	}
	token := storedToken(ctx, t)
	var me struct{ Me struct{ Username string } }
	g.OK(token, `{ me { username } }`, nil, &me)
	if me.Me.Username != g.alice.Username {
		t.Fatalf("the page's token is %q's, want %q's", me.Me.Username, g.alice.Username)
	}

	// The home query, with nothing in the Headers tab.
	if err := chromedp.Do(ctx,
		typeOperation("Timeline", `query Timeline { homeTimeline(first: 5) { edges { node { content author { username } } } } }`),
		execute(),
		waitResultContains(g.bobsPost),
		screenshot(t, "signin-2-timeline"),
	); err != nil {
		t.Fatalf("home timeline signed in: %v", err)
	}
	headers, err := chromedp.Run(ctx, chromedp.Evaluate[*string](editorValue(headersEditor)))
	if err == nil && headers != nil && strings.Contains(*headers, "Bearer") {
		t.Fatalf("the Headers tab holds a token: %s", *headers)
	}

	// The subscription: its connection_init carries the token; posts by bob
	// until one arrives (one published before the server registered the
	// subscription is no update).
	if err := chromedp.Do(ctx,
		typeOperation("Live", `subscription Live { homeTimelineUpdates { content author { username } } }`),
		execute(),
		chromedp.WaitReady(chromedp.CSS(executeButton+`[aria-label^="Stop"]`)),
	); err != nil {
		t.Fatalf("start the subscription: %v", err)
	}
	sctx, cancel := context.WithTimeout(ctx, uiWait)
	_, err = b.Await(sctx, browsertest.WSFrames, func(f string) bool { return strings.Contains(f, `"type":"subscribe"`) })
	cancel()
	if err != nil {
		t.Fatalf("no subscribe message on a WebSocket (%v); frames sent: %q", err, b.Recorded(browsertest.WSFrames))
	}
	arrived := ""
	for i := 1; i <= 20 && arrived == "" && ctx.Err() == nil; i++ {
		content := fmt.Sprintf("live post %d from bob", i)
		if _, err := g.Svc.Feed.Publish(t.Context(), g.bob.ID, content); err != nil {
			t.Fatalf("publish: %v", err)
		}
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		if err := chromedp.Do(wctx, waitResultContains(content)); err == nil {
			arrived = content
		}
		cancel()
	}
	if arrived == "" {
		raw, _ := chromedp.Run(ctx, chromedp.Evaluate[*string](editorValue(resultWindow)))
		t.Fatalf("no subscription event reached the result pane; it shows %v; frames sent: %q", deref(raw), b.Recorded(browsertest.WSFrames))
	}
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
		t.Errorf("no connection_init with the signed-in token among the frames sent: %q", b.Recorded(browsertest.WSFrames))
	}
	if err := chromedp.Do(ctx, screenshot(t, "signin-3-subscription"), execute()); err != nil { // stop it
		t.Fatal(err)
	}

	// Sign out: the form is back, the token forgotten and ended, and the
	// home query refused.
	if err := chromedp.Do(ctx,
		chromedp.WaitReady(chromedp.CSS(executeButton+`[aria-label^="Execute"]`)),
		chromedp.Click(chromedp.CSS(signInButton)),
		waitText(signInStatus, "Signed in as "+g.alice.Username),
		chromedp.Click(chromedp.CSS(signOutBtn)),
		chromedp.WaitVisible(chromedp.CSS(signInForm)),
	); err != nil {
		t.Fatalf("sign out: %v", err)
	}
	if got := storedToken(ctx, t); got != "" {
		t.Errorf("the page still keeps a token after signing out")
	}
	if r := g.Post(token, `{ me { username } }`, nil); len(r.Errors) == 0 || r.Errors[0].Extensions["code"] != "UNAUTHENTICATED" {
		t.Errorf("the signed-out token still works: %s %+v", r.Data, r.Errors)
	}
	if err := chromedp.Do(ctx,
		typeOperation("Timeline2", `query Timeline2 { homeTimeline(first: 5) { edges { node { content } } } }`),
		execute(),
		screenshot(t, "signin-4-signed-out"),
		chromedp.Click(chromedp.CSS(signInHide)),
		waitResultContains("UNAUTHENTICATED"),
	); err != nil {
		t.Fatalf("home timeline signed out: %v", err)
	}
	b.CheckOnlyAllowed(t)
}
