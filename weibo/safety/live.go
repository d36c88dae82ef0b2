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
// latency). Live is safe for concurrent use.
type Live struct {
	st     hbase.Store
	owner  weibo.UserID
	now    func() int64
	set    atomic.Pointer[liveSet]
	stale  atomic.Bool
	mu     sync.Mutex // serializes reloads
	cancel func()
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
// between. now is the clock (Unix ms) that ends timed mutes and filters.
// onChange, when not nil, is called on the bus's delivery of each change
// (it must not block). Errors: the bus's refusal, the store's. Stop it
// when the read ends.
func WatchSet(ctx context.Context, st hbase.Store, b bus.Bus, owner weibo.UserID, now func() int64, onChange func()) (*Live, error) {
	l := &Live{st: st, owner: owner, now: now}
	cancel, err := b.Subscribe(events.SafetySubject(owner), func([]byte) {
		l.stale.Store(true)
		if onChange != nil {
			onChange()
		}
	})
	if err != nil {
		return nil, err
	}
	l.cancel = cancel
	l.stale.Store(true)
	if _, err := l.Current(ctx); err != nil {
		cancel()
		return nil, err
	}
	return l, nil
}

// Current returns the owner's Set, read again first when a change came
// since the last read (one Get), and decoded again from the row read
// (no store call) once one of its timed mutes or filters has ended.
// Errors: the store's (the next call reads again).
func (l *Live) Current(ctx context.Context) (*Set, error) {
	if !l.stale.Load() {
		if ls := l.set.Load(); ls.ends == 0 || l.now() < ls.ends {
			return ls.set, nil
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if !l.stale.Swap(false) {
		ls := l.set.Load()
		if ls.ends != 0 && now >= ls.ends {
			ls = decode(l.owner, ls.row, now)
			l.set.Store(ls)
		}
		return ls.set, nil
	}
	r, err := l.st.Get(ctx, RowGet(l.owner))
	if err != nil {
		l.stale.Store(true)
		return nil, err
	}
	ls := decode(l.owner, r, l.now())
	l.set.Store(ls)
	return ls.set, nil
}

// Stop stops listening to the owner's changes.
func (l *Live) Stop() { l.cancel() }
