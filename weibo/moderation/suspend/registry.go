package suspend

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weibohbase/gateway/bus"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/tables"
)

// subject is the bus subject of every change of a suspension: the
// payload is the user's id (weibo.UserID.String); each instance reads
// that user's row again on it, so that changes heard out of order still
// leave the store's last word.
const subject = "weibo.suspensions"

// DefaultReload is how often a Registry scans the table again while its
// bus is away, the fallback for changes the bus did not deliver.
const DefaultReload = 3 * time.Second

// Registry is one gateway instance's memory of weibo:suspensions: every
// suspended user's row, loaded whole at Start, read again for one user
// on each change heard over the bus (and made through this instance), and
// scanned again every reload interval while the bus is away (and once
// when it is back). Suspended answers from it without a store call; an
// idle instance whose bus is connected reads nothing. It is safe for concurrent use; its zero value is not
// usable (NewRegistry).
type Registry struct {
	st     hbase.Store
	bus    bus.Bus
	log    *slog.Logger
	reload time.Duration

	rows atomic.Pointer[map[weibo.UserID]tables.SuspensionCells]
	mu   sync.Mutex // serializes the reads that replace rows: the last read applied is the last made

	stop   context.CancelFunc
	done   chan struct{}
	cancel func() // the bus subscription's
}

// NewRegistry returns an empty registry over st, hearing changes on b
// (nil: none, the periodic scan alone) and scanning the table every
// reload (0: DefaultReload) while b is away. b must be shared by every
// instance writing suspensions to st. Call Start to load it.
func NewRegistry(st hbase.Store, b bus.Bus, log *slog.Logger, reload time.Duration) *Registry {
	if reload <= 0 {
		reload = DefaultReload
	}
	if log == nil {
		log = slog.Default()
	}
	r := &Registry{st: st, bus: b, log: log, reload: reload}
	r.rows.Store(&map[weibo.UserID]tables.SuspensionCells{})
	return r
}

// Start subscribes to the changes on the bus, scans the table once
// (its error is Start's) and then keeps the registry up to date until
// Close (watch). A bus that refuses the subscription is logged: the
// table is then scanned every reload interval. Start once: a second call
// does nothing.
func (r *Registry) Start(ctx context.Context) error {
	if r.stop != nil {
		return nil // started already
	}
	loopCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	r.stop = stop
	if r.bus != nil {
		cancel, err := r.bus.Subscribe(subject, func(data []byte) {
			if uid, err := weibo.ParseUserID(string(data)); err == nil {
				go r.heard(loopCtx, uid)
			}
		})
		if err != nil {
			r.log.Warn("suspensions: changes of other instances not heard over the bus; scanned every interval instead", "err", err)
		} else {
			r.cancel = cancel
		}
	}
	if err := r.Load(ctx); err != nil {
		r.Close()
		r.stop, r.cancel = nil, nil
		return err
	}
	r.done = make(chan struct{})
	go func() {
		defer close(r.done)
		r.watch(loopCtx)
	}()
	return nil
}

// watch keeps the registry up to date until ctx ends: while the bus
// delivers the changes (subscribed and connected) it waits for the bus to
// be interrupted, reading nothing; while it does not, it scans the table
// every reload interval, and once more when the bus is back (changes made
// while it was away were not heard).
func (r *Registry) watch(ctx context.Context) {
	t := time.NewTicker(r.reload)
	defer t.Stop()
	away := false
	for {
		if r.cancel != nil {
			gap := r.bus.Interrupted() // taken before Connected: an interruption after it closes gap
			if r.bus.Connected() {
				if away {
					r.load(ctx)
					away = false
				}
				if gap == nil {
					<-ctx.Done() // a bus never interrupted (one instance's)
					return
				}
				select {
				case <-ctx.Done():
					return
				case <-gap:
				}
			}
		}
		away = true
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.load(ctx)
		}
	}
}

// heard reads uid's row again on a change heard over the bus, retrying
// a failed read (the store away) every reload interval until it succeeds
// or ctx ends: while the bus is connected no scan would read it.
func (r *Registry) heard(ctx context.Context, uid weibo.UserID) {
	for {
		rctx, done := context.WithTimeout(ctx, 10*time.Second)
		err := r.Refresh(rctx, uid)
		done()
		if err == nil || ctx.Err() != nil {
			return
		}
		r.log.Warn("suspensions: a change heard over the bus was not read; trying again", "user", uid.String(), "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(r.reload):
		}
	}
}

// load is Load for watch: an error is logged, the registry keeps its rows.
func (r *Registry) load(ctx context.Context) {
	if err := r.Load(ctx); err != nil && ctx.Err() == nil {
		r.log.Warn("suspensions: scan failed; the registry keeps its last", "err", err)
	}
}

// Close stops the periodic scan and the bus subscription.
func (r *Registry) Close() {
	if r.cancel != nil {
		r.cancel()
	}
	if r.stop != nil {
		r.stop()
		if r.done != nil {
			<-r.done
		}
	}
}

// Load scans weibo:suspensions whole and replaces the registry's rows
// with the suspensions it holds (rows that do not decode count as none:
// gateway fsck reports them). Errors are the store's; the registry then
// keeps its rows.
func (r *Registry) Load(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := map[weibo.UserID]tables.SuspensionCells{}
	err := r.st.Scan(ctx, &hbase.Scan{Table: tables.Suspensions}, func(row *hbase.Result) error {
		uid, ok := tables.DecodeSuspensionKey(row.Row)
		if !ok {
			return nil
		}
		if c, ok := tables.DecodeSuspension(row); ok {
			m[uid] = c
		}
		return nil
	})
	if err != nil {
		return err
	}
	r.rows.Store(&m)
	return nil
}

// Refresh reads uid's row again (one Get) and puts what it holds into
// the registry. Errors are the store's.
func (r *Registry) Refresh(ctx context.Context, uid weibo.UserID) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	row, err := r.st.Get(ctx, &hbase.Get{Table: tables.Suspensions, Row: tables.SuspensionKey(uid)})
	if err != nil {
		return err
	}
	c, ok := tables.DecodeSuspension(row)
	old := *r.rows.Load()
	if cur, had := old[uid]; had == ok && cur == c {
		return nil
	}
	m := make(map[weibo.UserID]tables.SuspensionCells, len(old)+1)
	for k, v := range old {
		m[k] = v
	}
	if ok {
		m[uid] = c
	} else {
		delete(m, uid)
	}
	r.rows.Store(&m)
	return nil
}

// Suspended reports whether uid is suspended at nowMillis: the registry
// holds their suspension and its end, if any, is after nowMillis. It
// makes no store call (weibo.Suspensions).
func (r *Registry) Suspended(uid weibo.UserID, nowMillis int64) bool {
	m := *r.rows.Load()
	if len(m) == 0 {
		return false
	}
	c, ok := m[uid]
	return ok && live(c, nowMillis)
}

// Of returns uid's suspension in force at nowMillis, and false when none.
func (r *Registry) Of(uid weibo.UserID, nowMillis int64) (tables.SuspensionCells, bool) {
	c, ok := (*r.rows.Load())[uid]
	if !ok || !live(c, nowMillis) {
		return tables.SuspensionCells{}, false
	}
	return c, true
}

// SuspendedUntil reports whether uid is suspended at nowMillis and, when
// so, the suspension's end in ms (0: until lifted).
func (r *Registry) SuspendedUntil(uid weibo.UserID, nowMillis int64) (untilMillis int64, suspended bool) {
	c, ok := r.Of(uid, nowMillis)
	return c.Until, ok
}

// Users returns the users suspended at nowMillis, in no order.
func (r *Registry) Users(nowMillis int64) []weibo.UserID {
	var out []weibo.UserID
	for uid, c := range *r.rows.Load() {
		if live(c, nowMillis) {
			out = append(out, uid)
		}
	}
	return out
}

// publish tells every instance sharing the bus that uid's suspension
// changed; an error is logged: the others read it at their next scan.
func (r *Registry) publish(uid weibo.UserID) {
	if r.bus == nil {
		return
	}
	if err := r.bus.Publish(subject, []byte(uid.String())); err != nil {
		r.log.Warn("suspensions: a change was not published; other instances read it at their next scan", "user", uid.String(), "err", err)
	}
}

// live reports whether c is in force at now.
func live(c tables.SuspensionCells, now int64) bool { return c.Until == 0 || now < c.Until }
