package hbase

import (
	"context"
	"sync"
	"time"
)

// callBudget is the shared call timeout of one request's store calls: how
// much of it the request has spent waiting for the store, counting time
// during which at least one of its calls was in flight once (concurrent
// calls do not add up) and time between calls not at all.
type callBudget struct {
	mu        sync.Mutex
	used      time.Duration // waited, up to busySince
	inFlight  int
	busySince time.Time // when inFlight last went from 0 to 1
}

type callBudgetKey struct{}

// ShareCallTimeout returns ctx whose store calls share one call timeout: a
// backend bounds each call by its own call timeout and by what the calls of
// ctx have not spent of it yet — the time at least one of them was waiting
// for the store (remote.Store does; the embedded store has no call
// timeout). The GraphQL layer gives every request one, so that a request
// whose calls find HBase slow or away waits for it about one call timeout
// in all, not one per call, and then answers UNAVAILABLE. Time between
// calls (hashing a password, waiting for a CPU) is not counted, and the
// calls of a healthy request take milliseconds.
func ShareCallTimeout(ctx context.Context) context.Context {
	return context.WithValue(ctx, callBudgetKey{}, &callBudget{})
}

// StartCall begins a store call of ctx under its shared call timeout
// (ShareCallTimeout): it returns the latest deadline the call may have —
// now plus what is left of timeout — and end, to be called once when the
// call returns. ok is false when ctx shares no call timeout.
func StartCall(ctx context.Context, timeout time.Duration) (deadline time.Time, end func(), ok bool) {
	b, ok := ctx.Value(callBudgetKey{}).(*callBudget)
	if !ok {
		return time.Time{}, nil, false
	}
	now := time.Now()
	b.mu.Lock()
	used := b.used
	if b.inFlight == 0 {
		b.busySince = now
	} else {
		used += now.Sub(b.busySince)
	}
	b.inFlight++
	b.mu.Unlock()
	var once sync.Once
	end = func() {
		once.Do(func() {
			b.mu.Lock()
			if b.inFlight--; b.inFlight == 0 {
				b.used += time.Since(b.busySince)
			}
			b.mu.Unlock()
		})
	}
	return now.Add(timeout - used), end, true
}
