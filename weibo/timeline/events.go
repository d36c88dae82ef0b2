package timeline

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"sync"

	"github.com/weibohbase/gateway/live"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/events"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/paging"
	"github.com/weibohbase/gateway/weibo/safety"
	"github.com/weibohbase/gateway/weibo/tables"
)

// The read side of the home timelines' live events: the subscriptions of
// TimelineEvents listen on the bus to the subjects package feed publishes
// on (package events, home.go: a viewer's home subject, and the author
// subjects of the large accounts it follows).

// TimelineEvent is one change of a home timeline: a PostAdded or a
// PostDeleted.
type TimelineEvent interface{ IsTimelineEvent() }

// PostAdded is a post that reached the viewer's home timeline, with its
// timeline cursor (what HomeTimeline's edge of it has).
type PostAdded struct {
	Post   *feed.Post
	Cursor string
}

// PostDeleted is a post of the viewer's home timeline that was deleted.
type PostDeleted struct {
	PostID weibo.PostID
}

// IsTimelineEvent marks PostAdded as a TimelineEvent.
func (PostAdded) IsTimelineEvent() {}

// IsTimelineEvent marks PostDeleted as a TimelineEvent.
func (PostDeleted) IsTimelineEvent() {}

// timelineCursor is the home-timeline cursor of post id (the same in
// every viewer's timeline: the inbox rowkey suffix).
func timelineCursor(id weibo.PostID) string {
	return paging.EncodeCursor(paging.CursorTimeline, timelineSuffix(id))
}

// timelineSuffix is the inbox rowkey of id after the owner's prefix.
func timelineSuffix(id weibo.PostID) []byte { return tables.InboxKey(0, id)[tables.IDKeyLen:] }

// resumeLimit is the most posts a resume replays; a client further behind
// reads the timeline instead.
const resumeLimit = 1000

// EventStream is a live subscription's events (TimelineEvents).
type EventStream struct {
	// C yields the events in order; it is closed when the subscription's
	// context ends or the stream fails (Err).
	C   <-chan TimelineEvent
	err error // set before C is closed
}

// Err is, once C is closed, why: nil when the context ended,
// events.ErrSlowConsumer when the client fell behind, events.ErrEventsInterrupted when
// the bus lost its connection, or the store's error reading the viewer's
// safety Set again after a change.
func (e *EventStream) Err() error { return e.err }

// TimelineEvents streams the changes of uid's home timeline, oldest first:
// a PostAdded for each post that reaches it (uid's own at publish, a
// followee's once the fan-out has written uid's inbox row, a followed
// large account's at publish), a PostDeleted for each of those deleted.
// Events come over the bus, so while nothing happens the stream reads
// nothing from the store; setting up reads uid's safety row and the large
// accounts uid follows (one home-timeline read of one post).
//
// With after (a home-timeline cursor, of a page or of a PostAdded), the
// stream first replays the timeline's posts newer than after, oldest
// first, then goes live: it listens before it reads, and drops a live
// post already replayed or not newer than after, so nothing is missed or
// repeated across the switch. Posts are deduplicated by id within the
// stream's last 1024.
//
// The stream honours uid's safety Set (package safety), kept current
// with safety.WatchSet (read at the start, read again after each change
// the bus carries, from any instance): a post whose author, or whose
// reposted post's author, uid blocks, is blocked by or mutes is not sent
// (nor the delete of one the stream did not send), nor a post whose text
// matches one of uid's HOME filters that hide; one matching a WARN
// filter is sent with Post.Filtered. Events that arrive after a change's
// message are filtered with the Set after it (safety.Live).
//
// The stream holds at most the queue's events (WithEventQueue) for a
// client that does not take them; past that it ends with
// events.ErrSlowConsumer. When the bus loses its connection (events may be
// missed) it ends with events.ErrEventsInterrupted. The client resumes with
// after either way.
//
// Errors: BAD_USER_INPUT for a malformed after, or more than 1000 posts
// newer than it; the store's, from the setup reads; the bus's, when it
// refuses to subscribe.
func (s *Service) TimelineEvents(ctx context.Context, uid weibo.UserID, after *string) (_ *EventStream, err error) {
	defer weibo.Wrapf(&err, "timeline events of %s", uid)
	from, err := paging.DecodeCursorArg("after", after, paging.CursorTimeline, tables.InboxKeyLen-tables.IDKeyLen, tables.InboxKeyLen-tables.IDKeyLen)
	if err != nil {
		return nil, err
	}
	w := &watcher{s: s, q: events.NewQueue(s.opts.eventQueue), overflow: make(chan struct{}), gap: s.events.Bus().Interrupted(),
		subs: map[string]func(){}, from: from}
	ok := false
	defer func() {
		if !ok {
			w.cancelAll()
		}
	}()
	// The Set first: a change after it is read marks it stale.
	if w.safe, err = safety.WatchSet(ctx, s.st, s.events.Bus(), uid, s.now); err != nil {
		return nil, err
	}
	if err := w.listen(events.HomeSubject(uid)); err != nil {
		return nil, err
	}
	_, followed, err := s.homeTimeline(ctx, uid, weibo.Page{First: new(1)}, readOptions{noCounts: true})
	if err != nil {
		return nil, err
	}
	for a := range followed {
		if err := w.listen(events.AuthorSubject(a)); err != nil {
			return nil, err
		}
	}
	var replay []PostAdded
	if from != nil {
		if replay, err = s.replay(ctx, uid, *after); err != nil {
			return nil, err
		}
	}
	w.out = live.NewOut[TimelineEvent](ctx)
	w.stream = &EventStream{C: w.out.C}
	ok = true
	go w.run(ctx, replay)
	return w.stream, nil
}

// replay reads the posts of uid's timeline newer than cursor, oldest
// first, a page of 100 at a time.
func (s *Service) replay(ctx context.Context, uid weibo.UserID, cursor string) ([]PostAdded, error) {
	var out []PostAdded
	for {
		c, err := s.HomeTimeline(ctx, uid, weibo.Page{Last: new(100), Before: &cursor})
		if err != nil {
			return nil, err
		}
		for i := len(c.Edges) - 1; i >= 0; i-- {
			out = append(out, PostAdded{Post: c.Edges[i].Post, Cursor: c.Edges[i].Cursor})
		}
		if len(out) > resumeLimit {
			return nil, weibo.BadInput("after", "more than %d posts are newer than the cursor: read homeTimeline instead", resumeLimit)
		}
		if !c.PageInfo.HasPreviousPage || c.PageInfo.StartCursor == nil {
			return out, nil
		}
		cursor = *c.PageInfo.StartCursor
	}
}

// watcher is one TimelineEvents subscription: its bus subscriptions feed
// the bounded queue q; run drains it to the client.
type watcher struct {
	s        *Service
	q        *events.Queue
	overflow chan struct{}   // closed when q was full
	gap      <-chan struct{} // closed when the bus was interrupted
	once     sync.Once

	mu     sync.Mutex
	subs   map[string]func() // subject -> cancel
	closed bool              // cancelAll ran: listen no more

	from []byte                 // the resume cursor's suffix, or nil
	seen map[weibo.PostID]uint8 // the last seenMax posts sent: seenAdded or seenDeleted (nil until one is)
	ring []weibo.PostID

	safe *safety.Live // the viewer's Set (nil until TimelineEvents set it)

	out    live.Out[TimelineEvent]
	stream *EventStream // its err is set before out is closed
}

// States of a post in watcher.seen.
const (
	seenAdded   = 1
	seenDeleted = 2
)

const seenMax = 1024

// listen subscribes to subject (once), unless the watcher has ended.
func (w *watcher) listen(subject string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || w.subs[subject] != nil {
		return nil // ended (a follow event delivered late), or listening
	}
	cancel, err := w.s.events.Bus().Subscribe(subject, w.deliver)
	if err != nil {
		return err
	}
	w.subs[subject] = cancel
	return nil
}

// unlisten cancels the subscription to subject.
func (w *watcher) unlisten(subject string) {
	w.mu.Lock()
	cancel := w.subs[subject]
	delete(w.subs, subject)
	w.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// cancelAll cancels every subscription; later listens do nothing.
func (w *watcher) cancelAll() {
	w.mu.Lock()
	subs := w.subs
	w.subs, w.closed = map[string]func(){}, true
	w.mu.Unlock()
	for _, cancel := range subs {
		cancel()
	}
	if w.safe != nil {
		w.safe.Stop()
	}
}

// deliver queues an event without blocking; a full queue marks overflow.
// A follow or unfollow changes the subjects listened to at once, on the
// bus's delivery (with the in-process bus, before Follow returns), not when
// run gets to it.
func (w *watcher) deliver(data []byte) {
	if bytes.HasPrefix(data, followPrefix) || bytes.HasPrefix(data, unfollowPrefix) {
		w.follow(data)
		return
	}
	if !w.q.Push(slices.Clone(data)) {
		w.once.Do(func() { close(w.overflow) })
	}
}

// note records id's state and returns the one it had (0: none).
func (w *watcher) note(id weibo.PostID, state uint8) uint8 {
	prev := w.seen[id]
	if w.seen == nil {
		w.seen = map[weibo.PostID]uint8{}
	}
	w.seen[id] = state
	if prev != 0 {
		return prev
	}
	w.ring = append(w.ring, id)
	if len(w.ring) > seenMax {
		delete(w.seen, w.ring[0])
		w.ring = w.ring[1:]
	}
	return 0
}

// run sends the replay, then the live events, until ctx ends or the queue
// overflows; then it closes out.
//
// Under a push transport it also delivers each event (live.Out), so that
// this is the subscription's one goroutine. While idle it waits in wait, a frame of its
// own: the stack it parks on is small enough for the garbage collector to
// shrink it to the smallest a goroutine has.
func (w *watcher) run(ctx context.Context, replay []PostAdded) {
	events.StreamStarted()
	defer w.end()
	if !w.replay(ctx, replay) {
		return
	}
	for w.drain(ctx) && w.wait(ctx) {
	}
}

// end ends the stream: counted (before the client can learn of the end),
// its bus subscriptions cancelled, out closed.
func (w *watcher) end() {
	events.StreamEnded(w.stream.err)
	w.cancelAll()
	w.out.Close(w.stream.err)
}

// replay sends the posts of a resume that the viewer's Set shows; false
// when the stream ended.
func (w *watcher) replay(ctx context.Context, replay []PostAdded) bool {
	for _, e := range replay {
		set, err := w.safe.Current(ctx)
		if err != nil {
			w.fail(ctx, err)
			return false
		}
		p, show := w.s.screenPost(set, e.Post)
		if !show {
			continue
		}
		e.Post = p
		if w.note(e.Post.ID, seenAdded) == 0 && !w.send(ctx, e) {
			return false
		}
	}
	return true
}

// fail ends the stream with err, unless ctx ended.
func (w *watcher) fail(ctx context.Context, err error) {
	if ctx.Err() == nil {
		w.stream.err = err
	}
}

// screenPost returns p as the owner of set sees it on their home
// timeline — a copy with Filtered set when it matches a WARN filter of
// HOME (p itself may be shared) — and whether it is shown at all: not
// when set hides its author or its reposted post's author, or one of
// the owner's HOME filters hides its text. A post that already carries
// its Filtered (screened by the read that made it) keeps them. A post of
// a suspended author, or reposting one's post, is not shown either.
func (s *Service) screenPost(set *safety.Set, p *feed.Post) (*feed.Post, bool) {
	if s.suspendedPost(p.ID, p.RepostOfID) {
		return nil, false
	}
	if set == nil {
		return p, true
	}
	if set.HidesPost(p.ID, p.RepostOfID) {
		return nil, false
	}
	hide, warn := set.Match(p.Content, safety.ContextHome)
	if hide {
		return nil, false
	}
	if warn != nil && p.Filtered == nil {
		p = p.WithFiltered(warn)
	}
	return p, true
}

// send sends e; false when the stream ended first (stream.err says why,
// nil when ctx ended).
func (w *watcher) send(ctx context.Context, e TimelineEvent) bool {
	select {
	case w.out.C <- e:
		w.out.Sent()
		return true
	case <-ctx.Done():
	case <-w.overflow:
		w.stream.err = events.ErrSlowConsumer
	case <-w.gap:
		w.stream.err = events.ErrEventsInterrupted
	}
	return false
}

// drain sends the queued events; false when the stream ended.
func (w *watcher) drain(ctx context.Context) bool {
	for {
		select {
		case <-w.overflow:
			w.stream.err = events.ErrSlowConsumer
			return false
		default:
		}
		data, ok := w.q.Pop()
		if !ok {
			return true
		}
		e, err := w.event(ctx, data)
		if err != nil {
			w.fail(ctx, err)
			return false
		}
		if e != nil && !w.send(ctx, e) {
			return false
		}
	}
}

// wait waits for a queued event; false when the stream ended instead.
func (w *watcher) wait(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return false
	case <-w.overflow:
		w.stream.err = events.ErrSlowConsumer
		return false
	case <-w.gap:
		w.stream.err = events.ErrEventsInterrupted
		return false
	case <-w.q.Ready():
		return true
	}
}

// The encodings of follow and unfollow events start so (events.HomeEvent's K
// is its first field).
var (
	followPrefix   = []byte(`{"k":"` + events.KindFollow + `"`)
	unfollowPrefix = []byte(`{"k":"` + events.KindUnfollow + `"`)
)

// follow listens to, or stops listening to, the author subject of the
// account a follow or unfollow event names.
func (w *watcher) follow(data []byte) {
	var e events.HomeEvent
	if err := json.Unmarshal(data, &e); err != nil {
		return
	}
	a, err := weibo.ParseUserID(e.A)
	if err != nil {
		return
	}
	if e.K == events.KindUnfollow {
		w.unlisten(events.AuthorSubject(a))
		return
	}
	if err := w.listen(events.AuthorSubject(a)); err != nil {
		w.s.log.Warn("live events: cannot listen to a followed account", "account", e.A, "err", err)
	}
}

// event decodes one queued event into what the client gets (nil: nothing,
// such as a duplicate, a follow or a post the viewer's Set hides).
// Errors: the store's, reading the viewer's Set again after a change.
func (w *watcher) event(ctx context.Context, data []byte) (TimelineEvent, error) {
	var e events.HomeEvent
	if err := json.Unmarshal(data, &e); err != nil {
		w.s.log.Warn("live event dropped: malformed", "err", err)
		return nil, nil
	}
	id, err := weibo.ParsePostID(e.P)
	if err != nil {
		return nil, nil
	}
	set, err := w.safe.Current(ctx)
	if err != nil {
		return nil, err
	}
	return w.screened(set, id, e), nil
}

// screened is event's TimelineEvent of e, about post id, as the owner of
// set sees it.
func (w *watcher) screened(set *safety.Set, id weibo.PostID, e events.HomeEvent) TimelineEvent {
	switch e.K {
	case events.KindAdd:
		if w.from != nil && bytes.Compare(timelineSuffix(id), w.from) >= 0 {
			return nil // the client had it before it resumed
		}
		if w.seen[id] != 0 {
			return nil // sent already, or deleted
		}
		p := &feed.Post{ID: id, Content: e.C, AuthorName: e.N}
		if e.R != "" {
			if root, err := weibo.ParsePostID(e.R); err == nil {
				p.RepostOfID = &root
			}
		}
		p, show := w.s.screenPost(set, p)
		if !show {
			return nil // not noted: hidden, not sent
		}
		w.note(id, seenAdded)
		return PostAdded{Post: p, Cursor: timelineCursor(id)}
	case events.KindDelete:
		if w.seen[id] != seenAdded && (set.HidesAuthor(id.Author) || w.s.suspended(id.Author)) {
			return nil // a post of someone hidden that this stream did not send
		}
		if w.note(id, seenDeleted) == seenDeleted {
			return nil
		}
		return PostDeleted{PostID: id}
	}
	return nil
}
