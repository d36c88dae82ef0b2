package notify

import (
	"context"
	"slices"
	"sync"

	"github.com/weibohbase/gateway/live"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/events"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Live notifications, pushed over the bus (package bus) to the
// subscriptions of NotificationEvents on any gateway instance. Subject
// weibo.notify.<uid>: the id of each of uid's notifications that a notify
// write created or moved to a newer time (a new actor joined it while
// unread), as its GraphQL id text, published right after the write of its
// head (touch.go). A notification whose last actor left, or that was
// marked read, sends nothing. As with the timeline's events, a publish
// error is counted and never fails the write: the notifications list holds
// everything.

// notifySubject is the subject of uid's notification events.
func notifySubject(uid weibo.UserID) string { return "weibo.notify." + uid.String() }

// emitNotification publishes the event of notification id, just created
// or moved to a newer time.
func (s *Service) emitNotification(id weibo.NotificationID) {
	b, _ := id.AppendText(nil)
	s.events.Emit(notifySubject(id.Recipient), b)
}

// NotificationStream is a live subscription's notifications
// (NotificationEvents).
type NotificationStream struct {
	// C yields each notification as it is created or gains an actor,
	// oldest first, read when its event arrives; it is closed when the
	// subscription's context ends or the stream fails (Err).
	C   <-chan *Notification
	err error // set before C is closed
}

// Err is, once C is closed, why: nil when the context ended,
// events.ErrSlowConsumer when the client fell behind, events.ErrEventsInterrupted when
// the bus lost its connection, or the store's error reading a
// notification.
func (e *NotificationStream) Err() error { return e.err }

// NotificationEvents streams uid's notifications as notify writes create
// them or add an actor to them while unread (Notification, as read from
// its group row when the event arrives: one GetMany per batch of events
// queued; an event whose notification is gone or read by then yields
// nothing). While nothing happens the stream reads nothing from the
// store.
//
// Each notification is screened as uid's list screens it (screen.go),
// with uid's safety Set read in that same GetMany: from the moment a
// block, a mute or a filter is written, on any instance, the events
// after it leave out the actors and texts it hides; a notification left
// with none, or whose newest actor (the one whose join the event tells
// of) is hidden, sends nothing.
//
// The stream holds at most the queue's events (WithEventQueue) for a
// client that does not take them; past that it ends with events.ErrSlowConsumer.
// When the bus loses its connection it ends with events.ErrEventsInterrupted;
// the client then reads notifications(first:) to catch up. Errors: the
// bus's, when it refuses to subscribe.
func (s *Service) NotificationEvents(ctx context.Context, uid weibo.UserID) (_ *NotificationStream, err error) {
	defer weibo.Wrapf(&err, "notification events of %s", uid)
	q := events.NewQueue(s.queue)
	overflow := make(chan struct{})
	var once sync.Once
	cancel, err := s.events.Bus().Subscribe(notifySubject(uid), func(data []byte) {
		if !q.Push(slices.Clone(data)) {
			once.Do(func() { close(overflow) })
		}
	})
	if err != nil {
		return nil, err
	}
	n := &notifyWatch{s: s, uid: uid, q: q, overflow: overflow, gap: s.events.Bus().Interrupted(), cancel: cancel,
		out: live.NewOut[*Notification](ctx)} // under a push transport n.run delivers (watcher.run)
	n.stream = &NotificationStream{C: n.out.C}
	go n.run(ctx)
	return n.stream, nil
}

// notifyWatch is one NotificationEvents stream.
type notifyWatch struct {
	s        *Service
	uid      weibo.UserID
	q        *events.Queue
	overflow <-chan struct{} // closed when q was full
	gap      <-chan struct{} // closed when the bus was interrupted
	out      live.Out[*Notification]
	stream   *NotificationStream
	cancel   func() // the bus subscription's
}

// run sends the notifications the bus names until the stream ends, then
// closes out. It waits in wait, a frame of its own (watcher.run).
func (n *notifyWatch) run(ctx context.Context) {
	events.StreamStarted()
	defer n.end()
	for n.wait(ctx) && n.drain(ctx) {
	}
}

// end counts the stream's end, cancels its bus subscription and closes
// out.
func (n *notifyWatch) end() {
	events.StreamEnded(n.stream.err)
	n.cancel()
	n.out.Close(n.stream.err)
}

// stop records why the stream ends: nil when ctx ended, else
// events.ErrSlowConsumer or events.ErrEventsInterrupted, as the channels say.
func (n *notifyWatch) stop(ctx context.Context) {
	select {
	case <-n.overflow:
		n.stream.err = events.ErrSlowConsumer
	case <-n.gap:
		if ctx.Err() == nil {
			n.stream.err = events.ErrEventsInterrupted
		}
	default:
	}
}

// wait waits for a queued id; false when the stream ended instead.
func (n *notifyWatch) wait(ctx context.Context) bool {
	select {
	case <-ctx.Done():
	case <-n.overflow:
	case <-n.gap:
	case <-n.q.Ready():
		return true
	}
	n.stop(ctx)
	return false
}

// drain sends the notifications of the queued ids that are still unread
// and that the viewer sees, read with one GetMany of all the ids queued
// and the viewer's safety row (liveNotifications); false when the stream
// ended.
func (n *notifyWatch) drain(ctx context.Context) bool {
	for {
		queued := n.q.PopAll()
		if len(queued) == 0 {
			return true
		}
		ids := make([]weibo.NotificationID, 0, len(queued))
		for _, data := range queued {
			if id, err := tables.ParseNotificationID(string(data)); err == nil && id.Recipient == n.uid {
				ids = append(ids, id)
			}
		}
		if len(ids) == 0 {
			continue
		}
		ns, err := n.s.liveNotifications(ctx, n.uid, ids)
		if err != nil {
			if ctx.Err() == nil {
				n.stream.err = err
			}
			return false
		}
		for _, x := range ns {
			if x != nil && !x.Read && !n.send(ctx, x) {
				return false
			}
		}
	}
}

// send sends x; false when the stream ended first.
func (n *notifyWatch) send(ctx context.Context, x *Notification) bool {
	select {
	case n.out.C <- x:
		n.out.Sent()
		return true
	case <-ctx.Done():
	case <-n.overflow:
		n.stop(ctx)
	case <-n.gap:
		n.stop(ctx)
	}
	return false
}
