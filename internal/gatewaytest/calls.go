package gatewaytest

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weibohbase/gateway/hbase"
)

// requestHeader carries the id of a request whose store calls the call log
// counts.
const requestHeader = "Gatewaytest-Request"

// handlerBound bounds the wait for a request's handler to return: the
// handler returns right after it wrote the response, so the bound only
// turns a hang into a failure.
const handlerBound = time.Minute

// callLog counts the store calls of each request that carries
// requestHeader, through a counter in the request's context
// (hbase.WithCallCounter) that only that request's work reaches: the
// gateway's background work (fan-out, repairs, token checks of other
// requests) never moves it.
type callLog struct {
	ids  atomic.Int64
	mu   sync.Mutex
	reqs map[string]*request // by id, from the handler's start
}

// request is one counted request.
type request struct {
	calls atomic.Int64
	done  chan struct{} // closed when its handler returned
}

func (c *callLog) next() string { return strconv.FormatInt(c.ids.Add(1), 10) }

// lookup returns request id, or nil when it never reached the handler
// (net/http answered it itself, or the client gave up before sending it).
func (c *callLog) lookup(id string) *request {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reqs[id]
}

func (c *callLog) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(requestHeader)
		if id == "" {
			next.ServeHTTP(w, r)
			return
		}
		rq := &request{done: make(chan struct{})}
		c.mu.Lock()
		c.reqs[id] = rq
		c.mu.Unlock()
		defer close(rq.done)
		ctx := hbase.WithCallCounter(r.Context(), func(context.Context, string, string) { rq.calls.Add(1) })
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// Meter counts the store calls of the requests sent with its Client, and
// of nothing else.
type Meter struct {
	log *callLog
	mu  sync.Mutex
	ids []string
}

// Meter returns a new Meter of g's requests.
func (g *Gateway) Meter() *Meter { return &Meter{log: g.calls} }

// Client returns an HTTP client whose requests m counts (it marks each
// with a request id; the gateway's handler counts by it).
func (m *Meter) Client() *http.Client {
	return &http.Client{Transport: roundTripper(func(req *http.Request) (*http.Response, error) {
		id := m.log.next()
		m.mu.Lock()
		m.ids = append(m.ids, id)
		m.mu.Unlock()
		req = req.Clone(req.Context())
		req.Header.Set(requestHeader, id)
		return http.DefaultTransport.RoundTrip(req)
	})}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// requests returns m's requests that reached the handler.
func (m *Meter) requests() []*request {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*request
	for _, id := range m.ids {
		if rq := m.log.lookup(id); rq != nil {
			out = append(out, rq)
		}
	}
	return out
}

// StoreCalls returns the store calls of m's requests sent so far, once
// each handler has returned (call it after the responses came back); it
// fails when a handler does not return within a minute.
func (m *Meter) StoreCalls() (int, error) {
	n := 0
	for _, rq := range m.requests() {
		select {
		case <-rq.done:
		case <-time.After(handlerBound):
			return 0, fmt.Errorf("a request's handler did not return within %v", handlerBound)
		}
		n += int(rq.calls.Load())
	}
	return n, nil
}

// SettledStoreCalls is StoreCalls once the count has not moved for quiet
// (work a request left behind, in its context, after its handler
// returned); it fails when the count still moves after bound.
func (m *Meter) SettledStoreCalls(quiet, bound time.Duration) (int, error) {
	last, err := m.StoreCalls()
	if err != nil {
		return 0, err
	}
	for deadline := time.Now().Add(bound); time.Now().Before(deadline); {
		time.Sleep(quiet)
		now, _ := m.StoreCalls()
		if now == last {
			return now, nil
		}
		last = now
	}
	return 0, fmt.Errorf("store calls still going %v after the requests ended", bound)
}
