package report

import (
	"context"
	"sync"
	"time"

	"github.com/weibohbase/gateway/weibo"
)

// StandInSuspender is a Suspender that only records its calls: the
// stand-in weibo/domain wires until the suspensions (their own package)
// are merged, which then provide the real one. STAND-IN: it suspends
// nobody.
type StandInSuspender struct {
	mu    sync.Mutex
	calls []SuspendCall
}

// SuspendCall is one call a StandInSuspender recorded.
type SuspendCall struct {
	Target weibo.UserID
	Until  *time.Time
	Reason string
}

// Suspend records the call and returns nil.
func (s *StandInSuspender) Suspend(_ context.Context, target weibo.UserID, until *time.Time, reason string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, SuspendCall{Target: target, Until: until, Reason: reason})
	return nil
}

// Calls returns the calls recorded, oldest first.
func (s *StandInSuspender) Calls() []SuspendCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]SuspendCall(nil), s.calls...)
}

// Suspender returns the Suspender the service was built with.
func (s *Service) Suspender() Suspender { return s.suspend }
