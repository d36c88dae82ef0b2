// Package bus carries the gateway's live events (a post added to or deleted
// from a home timeline, ...) from the write path to the subscriptions that
// want them: within one process (Local) or, through NATS (package
// natsbus), across gateway instances.
//
// It is core publish/subscribe: at most once, no persistence, no
// acknowledgement. The store stays the authority; a subscriber that may
// have missed events (its bus was away, its queue overflowed) resumes from
// the store (a home-timeline read from its last cursor).
package bus

import "sync"

// Bus publishes events on subjects and delivers them to the subscribers of
// those subjects. Subjects are dot-separated tokens without spaces, `*` or
// `>` (NATS subjects), such as "weibo.home.42". Implementations are safe for
// concurrent use.
type Bus interface {
	// Publish sends data to the subject's current subscribers and returns
	// without waiting for them; publishing to a subject nobody subscribes
	// to does nothing. An error means the bus could not take the event
	// (closed, or away past its reconnect buffer); the caller logs it and
	// goes on. data is not retained after Publish returns.
	Publish(subject string, data []byte) error
	// Subscribe calls fn with each event published on subject from now on,
	// one call at a time, in the order one publisher published them, until
	// cancel is called (cancel is idempotent; after it returns fn is no
	// longer called). fn must not block: it hands the event to a queue.
	// data belongs to fn only for the call. Errors: the bus is closed or
	// refuses the subscription.
	Subscribe(subject string, fn func(data []byte)) (cancel func(), err error)
	// Interrupted returns a channel closed when the bus next loses its
	// connection: events published meanwhile may never reach this
	// instance's subscribers, who resume from the store. Each call after
	// an interruption returns a new channel. nil: the bus is never
	// interrupted.
	Interrupted() <-chan struct{}
	// Connected reports whether the bus delivers events now: false while
	// its connection is away and once it is closed. A subscriber that
	// relies on the bus alone (no polling) takes Interrupted first, then
	// checks Connected, and reads the store again when the channel closes.
	Connected() bool
	// Close ends the bus: later calls fail.
	Close() error
}

// ErrClosed is returned by a closed bus.
var ErrClosed = closedError{}

type closedError struct{}

func (closedError) Error() string { return "bus: closed" }

// Local is a Bus within one process: Publish calls the subject's
// subscribers synchronously (they must not block). It is the default of a
// feed that was given no bus, and what unit tests use.
type Local struct {
	mu     sync.RWMutex
	subs   map[string]map[*localSub]struct{}
	closed bool
}

type localSub struct {
	mu sync.Mutex // serializes calls of fn; held while cancelling
	fn func([]byte)
	on bool
}

// NewLocal returns an empty in-process bus.
func NewLocal() *Local { return &Local{subs: map[string]map[*localSub]struct{}{}} }

// Publish implements Bus: it calls every subscriber of subject in turn.
func (l *Local) Publish(subject string, data []byte) error {
	l.mu.RLock()
	if l.closed {
		l.mu.RUnlock()
		return ErrClosed
	}
	subs := make([]*localSub, 0, len(l.subs[subject]))
	for s := range l.subs[subject] {
		subs = append(subs, s)
	}
	l.mu.RUnlock()
	for _, s := range subs {
		s.mu.Lock()
		if s.on {
			s.fn(data)
		}
		s.mu.Unlock()
	}
	return nil
}

// Subscribe implements Bus.
func (l *Local) Subscribe(subject string, fn func([]byte)) (func(), error) {
	s := &localSub{fn: fn, on: true}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, ErrClosed
	}
	if l.subs[subject] == nil {
		l.subs[subject] = map[*localSub]struct{}{}
	}
	l.subs[subject][s] = struct{}{}
	return func() {
		l.mu.Lock()
		delete(l.subs[subject], s)
		if len(l.subs[subject]) == 0 {
			delete(l.subs, subject)
		}
		l.mu.Unlock()
		s.mu.Lock()
		s.on = false
		s.mu.Unlock()
	}, nil
}

// Interested reports whether subject has a subscriber (tests).
func (l *Local) Interested(subject string) bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return len(l.subs[subject]) > 0
}

// Interrupted implements Bus: an in-process bus loses nothing (nil).
func (l *Local) Interrupted() <-chan struct{} { return nil }

// Connected implements Bus: true until Close.
func (l *Local) Connected() bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return !l.closed
}

// Close implements Bus.
func (l *Local) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	l.subs = map[string]map[*localSub]struct{}{}
	return nil
}
