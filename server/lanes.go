package server

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// lanes schedules operations by their measured cost. Heavy ones (at least
// HeavyQueryNodes nodes) execute at most cap(heavy) at a time, and give way
// to light ones: while any light operation executes, each resolver of a
// heavy one waits (up to maxYield) before it runs. A heavy operation runs
// thousands of resolvers in goroutines; left alone they fill the
// scheduler's run queues, and a light request arriving then waits behind
// them. Waiting goroutines are not runnable, so light requests find the
// cores free; heavy ones resume when no light one is left.
type lanes struct {
	heavy chan struct{} // nil: no bound

	mu    sync.Mutex
	light int
	// clear is nil while no light operation executes, else a channel
	// closed when the last one ends.
	clear atomic.Pointer[chan struct{}]
}

// maxYield bounds how long one heavy resolver waits for light operations,
// so that a stream of light ones slows heavy ones but cannot stop them.
const maxYield = 20 * time.Millisecond

type heavyKey struct{}

func (l *lanes) enterLight() {
	l.mu.Lock()
	if l.light == 0 {
		c := make(chan struct{})
		l.clear.Store(&c)
	}
	l.light++
	l.mu.Unlock()
}

func (l *lanes) leaveLight() {
	l.mu.Lock()
	l.light--
	if l.light == 0 {
		close(*l.clear.Swap(nil))
	}
	l.mu.Unlock()
}

// enterHeavy takes a heavy slot, or returns ctx's error when ctx ends first.
func (l *lanes) enterHeavy(ctx context.Context) error {
	if l.heavy == nil {
		return nil
	}
	select {
	case l.heavy <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (l *lanes) leaveHeavy() {
	if l.heavy != nil {
		<-l.heavy
	}
}

// yield makes a resolver of a heavy operation (ctx marked by withHeavy)
// wait while light operations execute, at most maxYield.
func (l *lanes) yield(ctx context.Context) {
	c := l.clear.Load()
	if c == nil || ctx.Value(heavyKey{}) == nil {
		return
	}
	t := time.NewTimer(maxYield)
	defer t.Stop()
	select {
	case <-*c:
	case <-t.C:
	case <-ctx.Done():
	}
}
