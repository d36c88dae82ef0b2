// Package events is what the live events of the domain's modules share:
// one Emitter over the bus (package bus) that every write publishes on,
// the bounded queue of one subscription, the errors that end a stream,
// and the Prometheus metrics of streams and publishes. The modules own
// their subjects and wire forms (notifications in package notify, token
// endings in package account), but for the home timeline's (home.go),
// which package feed publishes and package timeline reads, and the
// in-process wake-ups between them (Hub).
package events

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weibohbase/gateway/bus"
	"github.com/weibohbase/gateway/weibo"
)

// DefaultQueue is how many events one subscription holds for a client
// that has not taken them, unless configured otherwise; past that the
// subscription ends with ErrSlowConsumer.
const DefaultQueue = 256

// ErrSlowConsumer ends a subscription whose client fell behind.
var ErrSlowConsumer = &weibo.Error{Code: weibo.CodeSlowConsumer,
	Message: "this subscription fell too far behind and was closed: subscribe again with after: the last cursor received"}

// ErrEventsInterrupted ends a subscription whose bus lost its connection
// (events may have been missed).
var ErrEventsInterrupted = &weibo.Error{Code: weibo.CodeUnavailable, Reason: weibo.ReasonEventsInterrupted,
	Message: "live events were interrupted (the event bus is reconnecting): subscribe again with after: the last cursor received"}

// BusPublishErrors is gateway_bus_publish_errors_total: live events the bus
// did not take (the subscribers resume from the store).
var BusPublishErrors = prometheus.NewCounter(prometheus.CounterOpts{
	Name: "gateway_bus_publish_errors_total",
	Help: "Live events the event bus did not take (bus away or closed); subscribers resume from the store.",
})

// LiveStreams is gateway_live_subscriptions: the TimelineEvents and
// NotificationEvents streams open on this instance.
var LiveStreams = prometheus.NewGauge(prometheus.GaugeOpts{
	Name: "gateway_live_subscriptions",
	Help: "homeTimelineEvents and notificationAdded subscriptions open on this instance.",
})

// LiveStreamsEnded is gateway_live_subscriptions_ended_total{reason}: the
// streams ended by the gateway — slow_consumer (the client fell behind its
// queue) or interrupted (the bus lost its connection). Streams the client
// ends are not counted.
var LiveStreamsEnded = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "gateway_live_subscriptions_ended_total",
	Help: "homeTimelineEvents and notificationAdded subscriptions the gateway ended, by reason: slow_consumer, interrupted.",
}, []string{"reason"})

func init() { prometheus.MustRegister(BusPublishErrors, LiveStreams, LiveStreamsEnded) }

// StreamStarted counts a stream opened (LiveStreams).
func StreamStarted() { LiveStreams.Inc() }

// StreamEnded counts a stream's end, by err, why it ended (nil: the
// client ended it).
func StreamEnded(err error) {
	switch err {
	case ErrSlowConsumer:
		LiveStreamsEnded.WithLabelValues("slow_consumer").Inc()
	case ErrEventsInterrupted:
		LiveStreamsEnded.WithLabelValues("interrupted").Inc()
	}
	LiveStreams.Dec()
}

// Emitter publishes the live events of every module on one bus. It is
// safe for concurrent use.
type Emitter struct {
	bus    bus.Bus
	shared bool
	log    *slog.Logger
	logged atomic.Int64 // the second of the last publish error logged
	hub    Hub
}

// NewEmitter returns an Emitter on b, logging to log. shared tells that b
// is shared with the other instances writing to the store (a NATS bus):
// readers may then rely on its events while it is connected; a bus of
// this process alone (bus.Local) is not.
func NewEmitter(b bus.Bus, shared bool, log *slog.Logger) *Emitter {
	return &Emitter{bus: b, shared: shared, log: log}
}

// Bus returns the bus the events travel on.
func (e *Emitter) Bus() bus.Bus { return e.bus }

// Hub returns the in-process wake-ups of home-timeline watchers (Hub)
// that this Emitter's writers and readers share.
func (e *Emitter) Hub() *Hub { return &e.hub }

// Shared reports whether the bus is shared with the other instances
// (NewEmitter).
func (e *Emitter) Shared() bool { return e.shared }

// Emit sends data on subject; errors are counted (BusPublishErrors) and
// logged at most once a second (a fan-out publishes once per fan), never
// returned: the store has the write, and a subscriber resumes from it.
func (e *Emitter) Emit(subject string, data []byte) {
	if err := e.bus.Publish(subject, data); err != nil {
		BusPublishErrors.Inc()
		now := time.Now().Unix()
		if last := e.logged.Load(); last != now && e.logged.CompareAndSwap(last, now) {
			e.log.Warn("live events not published; subscribers resume from the store (gateway_bus_publish_errors_total counts them)",
				"subject", subject, "err", err)
		}
	}
}

// Queue is the bounded queue of one subscription's events: the bus's
// handlers push, the stream's goroutine pops. It is safe for concurrent
// use; the zero Queue holds nothing (use NewQueue).
type Queue struct {
	mu    sync.Mutex
	items [][]byte
	max   int
	ready chan struct{} // capacity 1: signalled by each push
}

// NewQueue returns a queue of at most n events (at least 1).
func NewQueue(n int) *Queue { return &Queue{max: max(1, n), ready: make(chan struct{}, 1)} }

// Ready is signalled by each Push (capacity 1: one signal for many).
func (q *Queue) Ready() <-chan struct{} { return q.ready }

// Push queues data, unless the queue holds max events (false).
func (q *Queue) Push(data []byte) bool {
	q.mu.Lock()
	if len(q.items) >= q.max {
		q.mu.Unlock()
		return false
	}
	q.items = append(q.items, data)
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
	return true
}

// Pop takes the oldest event; false when there is none.
func (q *Queue) Pop() ([]byte, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.items) == 0 {
		return nil, false
	}
	data := q.items[0]
	q.items[0] = nil
	q.items = q.items[1:]
	if len(q.items) == 0 {
		q.items = nil // the backing array goes too
	}
	return data, true
}

// PopAll takes every queued event, oldest first.
func (q *Queue) PopAll() [][]byte {
	q.mu.Lock()
	defer q.mu.Unlock()
	items := q.items
	q.items = nil
	return items
}
