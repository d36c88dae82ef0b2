package hbase

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/sony/gobreaker/v2"
)

// This file holds the circuit breaker around a store (WithBreaker), built on
// github.com/sony/gobreaker/v2, and the helpers that find it behind other
// decorators (CheckReady, Available, WaitAvailable).
//
// The breaker is closed while the store answers. When BreakerThreshold data
// calls in a row fail with ErrUnavailable (they ran out of their call
// timeout, or lost their connection), it opens: every data call then fails
// at once with an error wrapping ErrUnavailable, of kind breaker_open,
// without reaching the store. After BreakerOpenFor it is half-open, and
// its own probe — not a caller's request — tests the store: the backend's
// Probe (remote.Store's reconnects with a fresh client) or else Ping. A
// probe that answers closes the breaker; one that fails opens it again.
// While closed, the same loop pings the store every BreakerHealthInterval,
// so that an idle gateway notices an outage too. Admin calls pass through
// unguarded.

// Defaults of WithBreaker.
const (
	// DefaultBreakerThreshold is how many data calls in a row must fail
	// with ErrUnavailable to open the breaker.
	DefaultBreakerThreshold = 3
	// DefaultBreakerOpenFor is how long the breaker stays open before it
	// probes the store.
	DefaultBreakerOpenFor = time.Second
	// DefaultBreakerProbeTimeout bounds one probe or health ping.
	DefaultBreakerProbeTimeout = 2 * time.Second
	// DefaultBreakerHealthInterval is how often a closed breaker pings the store.
	DefaultBreakerHealthInterval = time.Second
)

// BreakerOption configures WithBreaker.
type BreakerOption func(*breakerConfig)

type breakerConfig struct {
	threshold      uint32
	openFor        time.Duration
	probeTimeout   time.Duration
	healthInterval time.Duration
	logger         *slog.Logger
}

// BreakerThreshold sets how many data calls in a row must fail with
// ErrUnavailable to open the breaker (default DefaultBreakerThreshold; at least 1).
func BreakerThreshold(n int) BreakerOption {
	return func(c *breakerConfig) { c.threshold = uint32(max(n, 1)) }
}

// BreakerOpenFor sets how long the breaker stays open before its probe
// (default DefaultBreakerOpenFor).
func BreakerOpenFor(d time.Duration) BreakerOption {
	return func(c *breakerConfig) { c.openFor = d }
}

// BreakerProbeTimeout bounds one probe or health ping (default DefaultBreakerProbeTimeout).
func BreakerProbeTimeout(d time.Duration) BreakerOption {
	return func(c *breakerConfig) { c.probeTimeout = d }
}

// BreakerHealthInterval sets how often a closed breaker pings the store
// (default DefaultBreakerHealthInterval); d <= 0 pings never (an idle
// gateway then notices an outage at its first call).
func BreakerHealthInterval(d time.Duration) BreakerOption {
	return func(c *breakerConfig) { c.healthInterval = d }
}

// BreakerLogger sets where state changes are logged (default slog.Default()).
func BreakerLogger(l *slog.Logger) BreakerOption {
	return func(c *breakerConfig) { c.logger = l }
}

// Prober is implemented by a backend that can test, and re-establish, its
// connection after an outage (remote.Store.Probe); a half-open Breaker
// probes with it, or with Ping when the store has none.
type Prober interface {
	// Probe reports whether the store answers again, reconnecting if it
	// must; an error means it does not.
	Probe(ctx context.Context) error
}

// Breaker is a StoreAdmin behind a circuit breaker; see WithBreaker. Its
// state is exported as the gauge gateway_store_breaker_state.
type Breaker struct {
	StoreAdmin
	cfg   breakerConfig
	cb    *gobreaker.TwoStepCircuitBreaker[struct{}]
	probe func(context.Context) error

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced at every state change
	openedAt time.Time     // when the breaker last opened

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

// WithBreaker returns b behind a circuit breaker (see this file's comment)
// and starts the breaker's probe loop, which runs until Close. Use it for a
// store whose calls can hang while the backend is away (remote): the
// embedded store needs none.
func WithBreaker(b StoreAdmin, opts ...BreakerOption) *Breaker {
	cfg := breakerConfig{
		threshold:      DefaultBreakerThreshold,
		openFor:        DefaultBreakerOpenFor,
		probeTimeout:   DefaultBreakerProbeTimeout,
		healthInterval: DefaultBreakerHealthInterval,
		logger:         slog.Default(),
	}
	for _, o := range opts {
		o(&cfg)
	}
	br := &Breaker{
		StoreAdmin: b, cfg: cfg, probe: b.Ping,
		changed: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{}),
	}
	if p, ok := find[Prober](b); ok {
		br.probe = p.Probe
	}
	br.cb = gobreaker.NewTwoStepCircuitBreaker[struct{}](gobreaker.Settings{
		Name:    "store",
		Timeout: cfg.openFor,
		ReadyToTrip: func(c gobreaker.Counts) bool {
			return c.ConsecutiveFailures >= cfg.threshold
		},
		OnStateChange: br.onStateChange,
	})
	BreakerState.Set(0)
	go br.loop()
	return br
}

// onStateChange runs under gobreaker's lock: it must not call br.cb.
func (br *Breaker) onStateChange(_ string, from, to gobreaker.State) {
	BreakerState.Set(float64(to))
	br.mu.Lock()
	if to == gobreaker.StateOpen {
		br.openedAt = time.Now()
	}
	close(br.changed)
	br.changed = make(chan struct{})
	br.mu.Unlock()
	level := slog.LevelWarn
	if to == gobreaker.StateClosed {
		level = slog.LevelInfo
	}
	br.cfg.logger.Log(context.Background(), level, "store circuit breaker "+to.String(), "from", from.String())
}

// loop probes the store while the breaker is half-open and pings it every
// healthInterval while it is closed.
func (br *Breaker) loop() {
	defer close(br.done)
	tick := min(br.cfg.openFor, br.cfg.healthInterval, 250*time.Millisecond)
	if tick <= 0 {
		tick = 250 * time.Millisecond
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	var lastPing time.Time
	for {
		select {
		case <-br.stop:
			return
		case <-t.C:
		}
		switch br.cb.State() {
		case gobreaker.StateHalfOpen:
			allowed, err := br.cb.Allow()
			if err != nil {
				continue // a probe is running
			}
			ctx, cancel := context.WithTimeout(context.Background(), br.cfg.probeTimeout)
			err = br.probe(ctx)
			cancel()
			allowed(err == nil)
			if err != nil {
				br.cfg.logger.Debug("store probe failed", "err", err)
			}
		case gobreaker.StateClosed:
			if br.cfg.healthInterval <= 0 || time.Since(lastPing) < br.cfg.healthInterval {
				continue
			}
			lastPing = time.Now()
			// The health ping fails on any error, its own probe timeout
			// included: that timeout is shorter than a call's, so a ping
			// to a store that is away ends on it, not as ErrUnavailable.
			ctx, cancel := context.WithTimeout(context.Background(), br.cfg.probeTimeout)
			_ = br.guardWith(ctx, "ping", br.StoreAdmin.Ping, func(err error) bool { return err != nil })
			cancel()
		}
	}
}

// breakerError is the error of a call the breaker refused.
type breakerError struct {
	state      gobreaker.State
	retryAfter time.Duration
}

func (e *breakerError) Error() string {
	return fmt.Sprintf("%v: circuit breaker %s (HBase did not answer; the next probe is in %v)",
		ErrUnavailable, e.state, e.retryAfter.Round(100*time.Millisecond))
}

// Is makes the error match ErrUnavailable.
func (e *breakerError) Is(target error) bool { return target == ErrUnavailable }

// ErrorKind returns KindBreakerOpen.
func (e *breakerError) ErrorKind() string { return KindBreakerOpen }

// RetryAfter is the time until the breaker's next probe.
func (e *breakerError) RetryAfter() time.Duration { return e.retryAfter }

// refused returns the error for a call refused in state st.
func (br *Breaker) refused(st gobreaker.State) error {
	br.mu.Lock()
	wait := time.Until(br.openedAt.Add(br.cfg.openFor))
	br.mu.Unlock()
	return &breakerError{state: st, retryAfter: max(wait, 0)}
}

// guard runs call if the breaker is closed and records whether it failed
// with ErrUnavailable; otherwise it returns the breaker's error at once and
// counts it in gateway_store_errors_total{kind="breaker_open"}. Other
// errors (not found, a conflict) count as answers. A call that ended with
// ctx, the caller's deadline or cancellation, before the store answered or
// its call timeout ran out is not recorded: it says nothing of the store,
// and counting it as an answer would break the run of failures that opens
// the breaker.
func (br *Breaker) guard(ctx context.Context, op string, call func(context.Context) error) error {
	return br.guardWith(ctx, op, call, func(err error) bool { return errors.Is(err, ErrUnavailable) })
}

// guardWith is guard with failed deciding which errors are failures.
func (br *Breaker) guardWith(ctx context.Context, op string, call func(context.Context) error, failed func(error) bool) error {
	var allowed func(bool)
	st := br.cb.State()
	if st == gobreaker.StateClosed {
		var err error
		if allowed, err = br.cb.Allow(); err != nil {
			st = br.cb.State() // it opened meanwhile
		}
	}
	if allowed == nil {
		StoreErrors.WithLabelValues(br.Backend(), op, KindBreakerOpen).Inc()
		return br.refused(st)
	}
	err := call(ctx)
	switch {
	case failed(err):
		allowed(false)
	case err != nil && ctx.Err() != nil:
		// Not recorded: gobreaker counts the call as a request, neither
		// a success nor a failure. Calls get here only while closed, so
		// this never holds up a half-open breaker's single probe.
	default:
		allowed(true)
	}
	return err
}

// Ready reports, without a round trip, whether the breaker lets calls
// through: nil when closed, an error wrapping ErrUnavailable when open or
// half-open (a probe is due or running).
func (br *Breaker) Ready() error {
	if st := br.cb.State(); st != gobreaker.StateClosed {
		return br.refused(st)
	}
	return nil
}

// Available returns a channel closed at the breaker's next state change,
// and Ready's answer.
func (br *Breaker) Available() (changed <-chan struct{}, err error) {
	br.mu.Lock()
	ch := br.changed
	br.mu.Unlock()
	return ch, br.Ready()
}

// Unwrap returns the store behind the breaker.
func (br *Breaker) Unwrap() StoreAdmin { return br.StoreAdmin }

// Close stops the probe loop and closes the store.
func (br *Breaker) Close() error {
	br.closeOnce.Do(func() { close(br.stop) })
	<-br.done
	return br.StoreAdmin.Close()
}

// Ping checks the store through the breaker.
func (br *Breaker) Ping(ctx context.Context) error {
	return br.guard(ctx, "ping", br.StoreAdmin.Ping)
}

// Get reads through the breaker.
func (br *Breaker) Get(ctx context.Context, g *Get) (r *Result, err error) {
	err = br.guard(ctx, "get", func(ctx context.Context) (err error) {
		r, err = br.StoreAdmin.Get(ctx, g)
		return err
	})
	return r, err
}

// GetMany reads through the breaker.
func (br *Breaker) GetMany(ctx context.Context, gets []*Get) (rs []*Result, err error) {
	if len(gets) == 0 {
		return nil, nil
	}
	err = br.guard(ctx, "get_many", func(ctx context.Context) (err error) {
		rs, err = br.StoreAdmin.GetMany(ctx, gets)
		return err
	})
	return rs, err
}

// Put writes through the breaker.
func (br *Breaker) Put(ctx context.Context, p *Put) error {
	return br.guard(ctx, "put", func(ctx context.Context) error { return br.StoreAdmin.Put(ctx, p) })
}

// PutMany writes through the breaker.
func (br *Breaker) PutMany(ctx context.Context, puts []*Put) error {
	if len(puts) == 0 {
		return nil
	}
	return br.guard(ctx, "put_many", func(ctx context.Context) error { return br.StoreAdmin.PutMany(ctx, puts) })
}

// Delete deletes through the breaker.
func (br *Breaker) Delete(ctx context.Context, d *Delete) error {
	return br.guard(ctx, "delete", func(ctx context.Context) error { return br.StoreAdmin.Delete(ctx, d) })
}

// DeleteMany deletes through the breaker.
func (br *Breaker) DeleteMany(ctx context.Context, dels []*Delete) error {
	if len(dels) == 0 {
		return nil
	}
	return br.guard(ctx, "delete_many", func(ctx context.Context) error { return br.StoreAdmin.DeleteMany(ctx, dels) })
}

// Scan scans through the breaker (the whole scan is one call).
func (br *Breaker) Scan(ctx context.Context, s *Scan, fn func(*Result) error) error {
	return br.guard(ctx, "scan", func(ctx context.Context) error { return br.StoreAdmin.Scan(ctx, s, fn) })
}

// CheckAndPut writes through the breaker.
func (br *Breaker) CheckAndPut(ctx context.Context, p *Put, f, q string, exp []byte) (ok bool, err error) {
	err = br.guard(ctx, "check_and_put", func(ctx context.Context) (err error) {
		ok, err = br.StoreAdmin.CheckAndPut(ctx, p, f, q, exp)
		return err
	})
	return ok, err
}

// MutateRow mutates through the breaker.
func (br *Breaker) MutateRow(ctx context.Context, m *RowMutation) error {
	return br.guard(ctx, "mutate_row", func(ctx context.Context) error { return br.StoreAdmin.MutateRow(ctx, m) })
}

// CheckAndDelete deletes through the breaker.
func (br *Breaker) CheckAndDelete(ctx context.Context, d *Delete, f, q string, exp []byte) (ok bool, err error) {
	err = br.guard(ctx, "check_and_delete", func(ctx context.Context) (err error) {
		ok, err = br.StoreAdmin.CheckAndDelete(ctx, d, f, q, exp)
		return err
	})
	return ok, err
}

// Increment counts through the breaker.
func (br *Breaker) Increment(ctx context.Context, inc *Increment) (v int64, err error) {
	err = br.guard(ctx, "increment", func(ctx context.Context) (err error) {
		v, err = br.StoreAdmin.Increment(ctx, inc)
		return err
	})
	return v, err
}

// --- finding a decorator -----------------------------------------------------------

// find returns the first store of the chain st, st.Unwrap(), … that is a T.
func find[T any](st Store) (T, bool) {
	for st != nil {
		if t, ok := st.(T); ok {
			return t, true
		}
		u, ok := st.(interface{ Unwrap() StoreAdmin })
		if !ok {
			break
		}
		st = u.Unwrap()
	}
	var zero T
	return zero, false
}

// CheckReady answers a readiness probe for st: with a Breaker in st's
// chain of decorators, from the breaker's state without a round trip
// (Breaker.Ready); otherwise with st.Ping(ctx).
func CheckReady(ctx context.Context, st Store) error {
	if br, ok := find[*Breaker](st); ok {
		return br.Ready()
	}
	return st.Ping(ctx)
}

// Available reports whether st lets calls through now: with a Breaker in
// st's chain, its Available (a channel closed at its next state change, and
// an error wrapping ErrUnavailable while it is not closed); without one, a
// nil channel and nil (the store is taken to be always there).
func Available(st Store) (changed <-chan struct{}, err error) {
	if br, ok := find[*Breaker](st); ok {
		return br.Available()
	}
	return nil, nil
}

// WaitAvailable returns nil once st lets calls through (at once without a
// Breaker), or ctx's error. Background work (fan-out, sweeps) waits here
// while HBase is away instead of failing call after call.
func WaitAvailable(ctx context.Context, st Store) error {
	for {
		changed, err := Available(st)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		}
	}
}
