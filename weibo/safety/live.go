package safety

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/weibohbase/gateway/bus"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/events"
)

// Live is a viewer's Set kept current for a live read (a subscription):
// read once when it starts, and read again, with one Get, at the first
// Current after each change the bus carries on events.SafetySubject of
// the viewer (every block or unblock by or of them, mute, unmute and
// filter change, from any instance). It reads nothing while nothing
// changes.
//
// Order: the bus delivers one subscription's events in the order the
// connection received them, so an event that arrives after the change's
// message is filtered with the Set read after it; one that races it
// across instances may be filtered with the Set before it (the bus's
// latency). While the bus is away (or refused the subscription) changes
// may be missed: every Current then reads the Set, and so does the first
// after the bus is back. Live is safe for concurrent use.
type Live struct {
	st     hbase.Store
	bus    bus.Bus
	owner  weibo.UserID
	now    func() int64
	stale  atomic.Bool // a change came since the last read
	cancel func()      // nil: the bus refused the subscription

	mu   sync.Mutex
	set  *liveSet
	gap  <-chan struct{} // the bus's Interrupted, taken before the last read
	away bool            // the last read was made while the bus was away
}

// liveSet is the Set of a Live with the row it was decoded from and the
// next time (Unix ms; 0: none) one of its timed mutes or filters ends,
// when it is decoded again from that row.
type liveSet struct {
	set  *Set
	row  *hbase.Result
	ends int64
}

// decode decodes owner's Set from row at now.
func decode(owner weibo.UserID, row *hbase.Result, now int64) *liveSet {
	set := FromRow(owner, row, now)
	return &liveSet{set: set, row: row, ends: set.nextEnd()}
}

// nextEnd is the earliest end, after the Set's moment, of its live timed
// mutes and filters (Unix ms); 0 when none has one.
func (s *Set) nextEnd() int64 {
	var end int64
	sooner := func(t int64) {
		if t > s.now && (end == 0 || t < end) {
			end = t
		}
	}
	for i := range s.mutes.Len() {
		sooner(s.mutes.At(i).Expires)
	}
	for i := range s.filters {
		sooner(s.filters[i].Expires)
	}
	return end
}

// WatchSet starts the Live Set of owner: it listens on b to owner's
// safety subject, then reads their Set (one Get), so that no change falls
// between (a bus that refuses the subscription leaves every Current to
// read the Set). now is the clock (Unix ms) that ends timed mutes and
// filters. Errors: the store's. Stop it when the read ends.
func WatchSet(ctx context.Context, st hbase.Store, b bus.Bus, owner weibo.UserID, now func() int64) (*Live, error) {
	l := &Live{st: st, bus: b, owner: owner, now: now}
	if cancel, err := b.Subscribe(events.SafetySubject(owner), func([]byte) { l.stale.Store(true) }); err == nil {
		l.cancel = cancel
	}
	l.stale.Store(true)
	if _, err := l.Current(ctx); err != nil {
		l.Stop()
		return nil, err
	}
	return l, nil
}

// Current returns the owner's Set, read again first (one Get) when a
// change came since the last read, when the bus is away or was
// interrupted since, or when the last read was made while it was away;
// and decoded again from the row read (no store call) once one of its
// timed mutes or filters has ended. Errors: the store's (the next call
// reads again).
func (l *Live) Current(ctx context.Context) (*Set, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	up := l.cancel != nil && l.bus.Connected()
	select {
	case <-l.gap: // nil: never interrupted
		l.stale.Store(true)
	default:
	}
	if !up || l.away {
		l.stale.Store(true)
	}
	if !l.stale.Swap(false) {
		if now := l.now(); l.set.ends != 0 && now >= l.set.ends {
			l.set = decode(l.owner, l.set.row, now)
		}
		return l.set.set, nil
	}
	gap := l.bus.Interrupted()
	r, err := l.st.Get(ctx, RowGet(l.owner))
	if err != nil {
		l.stale.Store(true)
		return nil, err
	}
	l.set, l.gap, l.away = decode(l.owner, r, l.now()), gap, !up
	return l.set.set, nil
}

// Stop stops listening to the owner's changes.
func (l *Live) Stop() {
	if l.cancel != nil {
		l.cancel()
	}
}
