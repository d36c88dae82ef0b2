package domaintest

import (
	"sync/atomic"
	"time"

	"github.com/weibohbase/gateway/weibo/domain"
)

// Clock is a settable clock shared by the services of a test, which moves
// it (past a cache's lifetime, a repair grace) instead of waiting. The
// zero Clock reads time.Now.
type Clock struct{ offset atomic.Int64 }

// Now returns time.Now moved by every Advance so far.
func (c *Clock) Now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

// Advance moves the clock by d.
func (c *Clock) Advance(d time.Duration) { c.offset.Add(int64(d)) }

// Option is the domain option that runs a domain on the clock.
func (c *Clock) Option() domain.Option { return domain.WithClock(c.Now) }
