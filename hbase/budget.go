package hbase

import (
	"context"
	"sync"
	"time"
)

// callBudget is the shared call timeout of one request's store calls.
type callBudget struct {
	once     sync.Once
	deadline time.Time
}

type callBudgetKey struct{}

// ShareCallTimeout returns ctx whose store calls share one call timeout,
// counted from the first of them: a backend bounds each call by its own
// call timeout and by what is left of the first call's (remote.Store does;
// the embedded store has no call timeout). The GraphQL layer gives every
// request one, so that a request whose calls find HBase slow or away waits
// for it about one call timeout in all — not one per call — and then
// answers UNAVAILABLE. Calls of a healthy request take milliseconds and
// never feel it.
func ShareCallTimeout(ctx context.Context) context.Context {
	return context.WithValue(ctx, callBudgetKey{}, &callBudget{})
}

// CallDeadline returns the shared deadline of ctx's store calls
// (ShareCallTimeout), which the first call sets to its start plus
// timeout; ok is false when ctx shares none.
func CallDeadline(ctx context.Context, timeout time.Duration) (deadline time.Time, ok bool) {
	b, ok := ctx.Value(callBudgetKey{}).(*callBudget)
	if !ok {
		return time.Time{}, false
	}
	b.once.Do(func() { b.deadline = time.Now().Add(timeout) })
	return b.deadline, true
}
