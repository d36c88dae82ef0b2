package domaintest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weibohbase/gateway/weibo/domain"
)

// ErrCrash is what a CrashAt hook returns: the write stops there, as if
// the process had been killed (nothing after the step is written).
var ErrCrash = errors.New("killed here")

// Clock is a settable clock shared by a crashed and a restarted service:
// the restart moves it past the repair grace instead of waiting. The zero
// Clock reads time.Now.
type Clock struct{ offset atomic.Int64 }

// Now returns time.Now moved by every Advance so far.
func (c *Clock) Now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

// Advance moves the clock by d.
func (c *Clock) Advance(d time.Duration) { c.offset.Add(int64(d)) }

// Option is the domain option that runs a domain on the clock.
func (c *Clock) Option() domain.Option { return domain.WithClock(c.Now) }

// CrashAt returns a step hook (domain.WithStepHook) that fails with
// ErrCrash the first time step is reached, and a function telling whether
// it was.
func CrashAt(step string) (func(ctx context.Context, step string) error, func() bool) {
	var mu sync.Mutex
	hit := false
	return func(_ context.Context, s string) error {
			mu.Lock()
			defer mu.Unlock()
			if s == step && !hit {
				hit = true
				return ErrCrash
			}
			return nil
		}, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return hit
		}
}
