// Package browsertest runs headless Chromium (chromedp, Debian's chromium:
// testenv.Chromium) for the browser tests of the gateway's pages, walled in
// to 127.0.0.1, and gives them waits on conditions of the page (never on
// time), screenshots, and the check that a page reached for nothing but
// the gateway.
package browsertest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/weibohbase/gateway/internal/testenv"
)

// Options says how New starts the browser.
type Options struct {
	// Allow lists the base URLs (http://host:port) the pages may reach;
	// every request to another origin is failed and recorded as foreign.
	// Data, blob and about URLs are always allowed.
	Allow []string
	// Session bounds the whole browser session, so that a broken page
	// fails the test instead of hanging it (not a speed target); 0 means
	// 5 minutes.
	Session time.Duration
	// Width and Height are the window's size in pixels; 0 means Chromium's
	// default.
	Width, Height int
	// Listen, when not nil, also receives every protocol event (as
	// chromedp.Listen's callback: in the loop that reads the browser's
	// messages, so it must not block).
	Listen func(ev any)
}

// Browser is a headless Chromium whose page's requests, WebSocket frames
// and uncaught exceptions are recorded.
type Browser struct {
	// Ctx is the browser tab's context, for chromedp.Do and chromedp.Run.
	Ctx context.Context

	allow map[string]bool // host:port

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced at each record
	requests []string      // every request and WebSocket the page made
	foreign  []string      // the ones to an origin not allowed: failed
	wsFrames []string      // WebSocket frames the page sent
	errors   []string      // uncaught exceptions
}

// List names one of the lists a Browser records.
type List int

// The lists a Browser records.
const (
	Requests List = iota // every request and WebSocket the page made, by URL
	Foreign              // those to an origin not allowed (failed)
	WSFrames             // the WebSocket frames the page sent, their payloads
	Errors               // the page's uncaught exceptions
)

// New starts headless Chromium (testenv.Chromium: skipped without it,
// except in CI) for the test's duration, with every request intercepted:
// those to an allowed origin go on, any other is failed and recorded. As
// a second wall, host resolution fails for every name
// (--host-resolver-rules), so nothing but 127.0.0.1 is reachable. Each new
// document keeps the Content-Security-Policy violations it sees in
// window.__cspViolations.
func New(t testing.TB, o Options) *Browser {
	t.Helper()
	exe := testenv.Chromium(t)
	b := &Browser{allow: map[string]bool{}, changed: make(chan struct{})}
	for _, a := range o.Allow {
		u, err := url.Parse(a)
		if err != nil {
			t.Fatalf("allowed origin %q: %v", a, err)
		}
		b.allow[u.Host] = true
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.NoSandbox, // tests run as root in containers
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
	)
	if o.Width > 0 && o.Height > 0 {
		opts = append(opts, chromedp.WindowSize(o.Width, o.Height))
	}
	session := o.Session
	if session == 0 {
		session = 5 * time.Minute
	}
	ctx, cancel := context.WithTimeout(t.Context(), session)
	t.Cleanup(cancel)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	t.Cleanup(bcancel)
	b.Ctx = bctx

	// The listener runs in the loop that reads the browser's messages: it
	// only records, and answers paused requests from other goroutines.
	err := chromedp.Listen(bctx, func(ev any) {
		switch e := ev.(type) {
		case *fetch.EventRequestPaused:
			go func() {
				if b.allowed(e.Request.URL) {
					_, _ = chromedp.Call(bctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: e.RequestID})
					return
				}
				b.record(Foreign, e.Request.URL)
				_, _ = chromedp.Call(bctx, fetch.FailRequest, fetch.FailRequestParams{RequestID: e.RequestID, ErrorReason: network.ErrorReasonBlockedByClient})
			}()
		case *network.EventRequestWillBeSent:
			b.record(Requests, e.Request.URL)
			if !b.allowed(e.Request.URL) {
				b.record(Foreign, e.Request.URL)
			}
		case *network.EventWebSocketCreated:
			b.record(Requests, e.URL)
			if !b.allowed(e.URL) {
				b.record(Foreign, e.URL)
			}
		case *network.EventWebSocketFrameSent:
			b.record(WSFrames, string(e.Response.PayloadData))
		case *runtime.EventExceptionThrown:
			b.record(Errors, exceptionText(e.ExceptionDetails))
		}
		if o.Listen != nil {
			o.Listen(ev)
		}
	})
	if err == nil {
		err = chromedp.Do(bctx,
			Call(network.Enable, network.EnableParams{}),
			Call(fetch.Enable, fetch.EnableParams{}),
			// What the page's Content-Security-Policy blocks never reaches
			// the network (nor Fetch): the page keeps a list of it too.
			Call(page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
				Source: `window.__cspViolations = []; document.addEventListener('securitypolicyviolation', e => window.__cspViolations.push(e.blockedURI));`,
			}),
		)
	}
	if err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return b
}

// allowed tells whether raw is an allowed origin, or no network at all.
func (b *Browser) allowed(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	switch u.Scheme {
	case "data", "blob", "about":
		return true
	case "http", "ws":
		return b.allow[u.Host]
	}
	return false
}

func (b *Browser) list(which List) *[]string {
	switch which {
	case Requests:
		return &b.requests
	case Foreign:
		return &b.foreign
	case WSFrames:
		return &b.wsFrames
	default:
		return &b.errors
	}
}

func (b *Browser) record(which List, s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	l := b.list(which)
	*l = append(*l, s)
	close(b.changed)
	b.changed = make(chan struct{})
}

// Recorded returns a copy of the list which (Requests, Foreign, WSFrames,
// Errors) as recorded so far.
func (b *Browser) Recorded(which List) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(*b.list(which))
}

// Await waits until one of the list which's entries satisfies ok, and
// returns it; it returns ctx's error when ctx ends first.
func (b *Browser) Await(ctx context.Context, which List, ok func(string) bool) (string, error) {
	for {
		b.mu.Lock()
		for _, s := range *b.list(which) {
			if ok(s) {
				b.mu.Unlock()
				return s, nil
			}
		}
		changed := b.changed
		b.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

// Call is the protocol command cmd as an action.
func Call[P, R any](cmd cdp.Command[P, R], params P) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, cmd, params)
		return err
	})
}

// Until waits until the JavaScript expression js is true, polling it every
// 100 ms for at most bound (a hang guard, not a speed target).
func Until(js string, bound time.Duration) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](js, chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(bound))
}

// Frames waits until the page has rendered n animation frames: the pace
// of pages that read the pointer or lay out once per frame.
func Frames(n int) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Evaluate[bool](fmt.Sprintf(`new Promise(r => {
  let left = %d;
  const next = () => --left <= 0 ? r(true) : requestAnimationFrame(next);
  requestAnimationFrame(next);
})`, n), chromedp.EvalAwaitPromise)(ctx, t)
		return err
	})
}

// SaveScreenshot writes the page to $env/name.png and returns its path, or
// "" when the environment variable env names no directory.
func SaveScreenshot(ctx context.Context, tg *chromedp.Target, env, name string) (string, error) {
	dir := os.Getenv(env)
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

// Screenshot is SaveScreenshot as an action that logs the path to t.
func Screenshot(t testing.TB, env, name string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		p, err := SaveScreenshot(ctx, tg, env, name)
		if p != "" {
			t.Logf("screenshot %s", p)
		}
		return err
	})
}

// probe is the image CheckOnlyAllowed asks for: another host's.
const probe = "https://cdn.invalid/probe.png"

// CheckOnlyAllowed checks that the page reached for nothing beyond the
// allowed origins: neither past its Content-Security-Policy, which keeps
// it to its own origin, nor to the network; and that it threw no uncaught
// exception. A probe, an image from another host, shows that such an
// attempt would be seen both ways: it waits until the probe is both a CSP
// violation and a foreign request, then wants nothing else in either list.
func (b *Browser) CheckOnlyAllowed(t testing.TB) {
	t.Helper()
	if _, err := chromedp.Run(b.Ctx, chromedp.Evaluate[string](`new Image().src = '`+probe+`'`)); err != nil {
		t.Fatalf("ask for the probe: %v", err)
	}
	ctx, cancel := context.WithTimeout(b.Ctx, 30*time.Second)
	defer cancel()
	seen, err := chromedp.Run(ctx, chromedp.Poll[[]string](`window.__cspViolations.length > 0 && window.__cspViolations`,
		chromedp.WithPollingInterval(50*time.Millisecond)))
	if err != nil {
		t.Fatalf("read the CSP violations: %v", err)
	}
	if _, err := b.Await(ctx, Foreign, func(s string) bool { return s == probe }); err != nil {
		t.Errorf("the probe %s was not seen as a request beyond the gateway: %v", probe, err)
	}
	if len(seen) != 1 || seen[0] != probe {
		t.Errorf("Content-Security-Policy violations: %q, want only the probe %q", seen, probe)
	}
	foreign := map[string]bool{}
	for _, u := range b.Recorded(Foreign) {
		foreign[u] = true
	}
	if len(foreign) != 1 || !foreign[probe] {
		t.Errorf("requests beyond the gateway: %q, want only the probe %q", b.Recorded(Foreign), probe)
	}
	if e := b.Recorded(Errors); len(e) > 0 {
		t.Errorf("uncaught exceptions in the page: %q", e)
	}
}

func exceptionText(d *runtime.ExceptionDetails) string {
	if d.Exception != nil && d.Exception.Description != "" {
		return d.Exception.Description
	}
	return fmt.Sprintf("%s (%s:%d)", d.Text, d.URL, d.LineNumber)
}
