package server_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/weibohbase/gateway/internal/browsertest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/server"
)

// corsPage is the browser app of TestCORSInChromium, served from another
// origin than the gateway's. callGateway(gateway, token) POSTs a query with
// an Authorization header (which forces a preflight) with fetch, then opens
// a graphql-transport-ws subscription over a plain WebSocket, token in
// connection_init's headers.Authorization, and publishes the viewer's posts
// with fetch until one arrives on it. It resolves to what happened.
const corsPage = `<!doctype html>
<html><head><meta charset="utf-8"><title>another origin</title></head><body>
<script>
async function gql(gateway, token, query, variables) {
  const r = await fetch(gateway + '/graphql', {
    method: 'POST',
    headers: {'Content-Type': 'application/json', 'Authorization': 'Bearer ' + token},
    body: JSON.stringify({query, variables}),
  });
  return {status: r.status, body: await r.json()};
}

function subscribe(gateway, token) {
  return new Promise(resolve => {
    const out = {opened: false, acked: false};
    let ws;
    try {
      ws = new WebSocket(gateway.replace(/^http/, 'ws') + '/graphql', 'graphql-transport-ws');
    } catch (e) {
      resolve(Object.assign(out, {error: String(e)}));
      return;
    }
    ws.onopen = () => {
      out.opened = true;
      ws.send(JSON.stringify({type: 'connection_init', payload: {headers: {Authorization: 'Bearer ' + token}}}));
    };
    ws.onmessage = async ev => {
      const m = JSON.parse(ev.data);
      if (m.type === 'ping') {
        ws.send(JSON.stringify({type: 'pong'}));
      } else if (m.type === 'connection_ack') {
        out.acked = true;
        ws.send(JSON.stringify({id: '1', type: 'subscribe',
          payload: {query: 'subscription { homeTimelineUpdates { content author { id } } }'}}));
        // A post published before the server registered the subscription
        // does not arrive: publish until one does.
        for (let i = 0; i < 100 && !out.next; i++) {
          try {
            await gql(gateway, token, 'mutation($c: String!) { publishPost(content: $c) { id } }', {c: 'from another origin ' + i});
          } catch (e) {
            out.publishError = String(e);
          }
          await new Promise(r => setTimeout(r, 300));
        }
        if (!out.next) out.error = 'no event';
        ws.close();
        resolve(out);
      } else if (m.type === 'next') {
        out.next = m.payload;
      } else {
        out.error = ev.data;
      }
    };
    ws.onerror = () => { out.error = out.error || 'WebSocket error'; };
    ws.onclose = ev => { out.closeCode = ev.code; if (!out.acked) resolve(out); };
  });
}

async function callGateway(gateway, token) {
  const out = {};
  try {
    const r = await gql(gateway, token, '{ me { id username } }');
    out.fetchStatus = r.status;
    out.fetchBody = r.body;
  } catch (e) {
    out.fetchError = String(e);
  }
  out.ws = await subscribe(gateway, token);
  return out;
}
</script>
</body></html>`

// corsResult is what callGateway resolves to.
type corsResult struct {
	FetchStatus int    `json:"fetchStatus"`
	FetchError  string `json:"fetchError"`
	FetchBody   struct {
		Data struct {
			Me *userData `json:"me"`
		} `json:"data"`
		Errors []gqlError `json:"errors"`
	} `json:"fetchBody"`
	WS struct {
		Opened       bool   `json:"opened"`
		Acked        bool   `json:"acked"`
		Error        string `json:"error"`
		PublishError string `json:"publishError"`
		CloseCode    int    `json:"closeCode"`
		Next         *struct {
			Data struct {
				HomeTimelineUpdates struct {
					Content string
					Author  struct{ ID string }
				} `json:"homeTimelineUpdates"`
			} `json:"data"`
		} `json:"next"`
	} `json:"ws"`
}

// accessRecorder keeps the gateway's access log lines as "METHOD path status".
type accessRecorder struct {
	mu    sync.Mutex
	lines []string
}

func (a *accessRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (a *accessRecorder) WithAttrs([]slog.Attr) slog.Handler       { return a }
func (a *accessRecorder) WithGroup(string) slog.Handler            { return a }
func (a *accessRecorder) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "http" {
		return nil
	}
	var method, path string
	var status int64
	r.Attrs(func(at slog.Attr) bool {
		switch at.Key {
		case "method":
			method = at.Value.String()
		case "path":
			path = at.Value.String()
		case "status":
			status = at.Value.Int64()
		}
		return true
	})
	a.mu.Lock()
	a.lines = append(a.lines, fmt.Sprintf("%s %s %d", method, path, status))
	a.mu.Unlock()
	return nil
}

// since returns the lines logged after the first n.
func (a *accessRecorder) since(n int) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.lines[n:])
}

func (a *accessRecorder) len() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.lines)
}

// TestCORSInChromium: a page in headless Chromium, served from another
// origin than the gateway (same host 127.0.0.1, another port), calls the
// gateway with fetch (a POST with Authorization: preflighted) and a
// graphql-transport-ws subscription. From the allowed origin both work: the
// query answers with the viewer, and the viewer's post published by the page
// arrives on the subscription. From an origin not allowed both fail: the
// browser refuses fetch's answer after the preflight (a CORS error, and the
// POST is never sent), and the gateway refuses the WebSocket upgrade (403).
func TestCORSInChromium(t *testing.T) {
	pages := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(corsPage))
	})
	allowedPage, otherPage := httptest.NewServer(pages), httptest.NewServer(pages)
	t.Cleanup(allowedPage.Close)
	t.Cleanup(otherPage.Close)

	access := &accessRecorder{}
	g := startGatewayWith(t, testenv.Embedded(t), func(c *server.Config) {
		c.CORSOrigins = []string{allowedPage.URL}
		c.Logger = slog.New(access)
	})
	a := g.register(uniqueName("browser"))

	// The CORS errors Chromium reports, by URL.
	var mu sync.Mutex
	corsErrors := map[string][]string{}
	urls := map[network.RequestID]string{}
	b := browsertest.New(t, browsertest.Options{
		Allow:   []string{g.url, allowedPage.URL, otherPage.URL},
		Session: 3 * time.Minute,
		Listen: func(ev any) {
			mu.Lock()
			defer mu.Unlock()
			switch e := ev.(type) {
			case *network.EventRequestWillBeSent:
				urls[e.RequestID] = e.Request.URL
			case *network.EventLoadingFailed:
				if e.CorsErrorStatus != nil {
					corsErrors[urls[e.RequestID]] = append(corsErrors[urls[e.RequestID]], string(e.CorsErrorStatus.CorsError))
				}
			}
		},
	})
	bctx := b.Ctx

	call := func(t *testing.T, page string) (corsResult, []string) {
		t.Helper()
		n := access.len()
		if err := chromedp.Do(bctx, chromedp.Navigate(page+"/")); err != nil {
			t.Fatalf("load %s: %v", page, err)
		}
		res, err := chromedp.Run(bctx, chromedp.Evaluate[corsResult](fmt.Sprintf("callGateway(%q, %q)", g.url, a.token), chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("callGateway from %s: %v", page, err)
		}
		t.Logf("from %s: %+v", page, res)
		return res, access.since(n)
	}

	t.Run("allowed origin", func(t *testing.T) {
		res, log := call(t, allowedPage.URL)
		if res.FetchError != "" || res.FetchStatus != http.StatusOK || res.FetchBody.Data.Me == nil || res.FetchBody.Data.Me.ID != a.ID {
			t.Errorf("fetch: status %d, error %q, body %+v; want the viewer %s", res.FetchStatus, res.FetchError, res.FetchBody, a.ID)
		}
		if !slices.Contains(log, "OPTIONS /graphql 204") {
			t.Errorf("no preflight answered with 204 in the access log: %q", log)
		}
		ws := res.WS
		if !ws.Opened || !ws.Acked || ws.Error != "" || ws.PublishError != "" || ws.Next == nil ||
			ws.Next.Data.HomeTimelineUpdates.Author.ID != a.ID || !strings.HasPrefix(ws.Next.Data.HomeTimelineUpdates.Content, "from another origin ") {
			t.Errorf("subscription: %+v; want the viewer's post from the page", ws)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(corsErrors) > 0 {
			t.Errorf("CORS errors in Chromium: %v", corsErrors)
		}
	})

	t.Run("other origin", func(t *testing.T) {
		res, log := call(t, otherPage.URL)
		if res.FetchError == "" || res.FetchStatus != 0 {
			t.Errorf("fetch from an origin not allowed: status %d, body %+v; want a failure", res.FetchStatus, res.FetchBody)
		}
		mu.Lock()
		errs := corsErrors[g.url+"/graphql"]
		mu.Unlock()
		if len(errs) == 0 {
			t.Errorf("Chromium reported no CORS error for %s/graphql", g.url)
		}
		if slices.Contains(log, "POST /graphql 200") {
			t.Errorf("the POST was sent despite the failed preflight: %q", log)
		}
		if ws := res.WS; ws.Opened || ws.Acked || ws.Next != nil || ws.Error == "" {
			t.Errorf("subscription from an origin not allowed: %+v; want it refused", ws)
		}
		if !slices.Contains(log, "GET /graphql 403") {
			t.Errorf("the gateway did not refuse the WebSocket upgrade with 403: %q", log)
		}
	})
}
