package server

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// reqState is what the parts of one HTTP request tell its transport: the
// longest Retry-After any throttle asked for.
type reqState struct {
	mu   sync.Mutex
	wait time.Duration
}

type stateKey struct{}

// withRequestState gives each request a reqState.
func withRequestState(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), stateKey{}, &reqState{})))
	})
}

// stateOf returns ctx's reqState; nil (which ignores everything) outside
// an HTTP request.
func stateOf(ctx context.Context) *reqState {
	s, _ := ctx.Value(stateKey{}).(*reqState)
	return s
}

// retryAfter records that the request was throttled for d.
func (s *reqState) retryAfter(d time.Duration) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.wait = max(s.wait, d)
	s.mu.Unlock()
}

// retry returns the longest wait recorded, 0 when none.
func (s *reqState) retry() time.Duration {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.wait
}
