package timeline

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/weibohbase/gateway/live"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/events"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/safety"
)

// Live updates of home timelines. A watcher reads the top of its viewer's
// home timeline (one page, merged with the large accounts' posts) and
// emits the entries it has not seen. It reads when something may have
// changed: woken by this process's writes (a publish, a fan-out batch) to
// its viewer's inbox, and by the events of the bus (package events,
// home.go) from the instances that share it. Given a bus (feed.WithBus,
// domain.WithBus), a watcher relies on those wake-ups alone while the bus
// is connected, so an idle one reads nothing; it polls on a timer only
// while the bus is away (and once more when it is back), and always when
// the feed was given no bus (its own in-process bus cannot hear other
// instances). Instances that write to the same store must then share the
// bus, as TimelineEvents needs.

// watchWindow is how many of the newest inbox entries a poll reads. An entry
// is emitted when it is among them and was not in the previous poll, so a
// burst of more than watchWindow entries between two polls loses the oldest
// of the burst for live delivery (the timeline query still has them).
const watchWindow = 50

// WatchTimeline streams the posts that arrive in uid's home timeline from
// now on (uid's own and, after fan-out, their followees'; the posts of
// large accounts uid follows as soon as they are stored), oldest first,
// until ctx ends; the channel is then closed. Posts older than a minute when
// they arrive (a follow's backfill) are not emitted. interval is the polling
// period of the fallback (0: 2 s). Errors of a read are logged and the next
// wake-up or tick retries.
//
// A read takes the top of the merged home timeline (HomeTimeline, first
// watchWindow). It is woken at once by this process's writes to uid's
// inbox, and — hybrid fan-out, whose posts reach no inbox — by this
// process's publishes of the large accounts uid followed at the last read
// (by followee: a publish wakes only the watchers of that account's
// followers, found without reading its fans) — and likewise by the bus
// events of other gateway instances sharing the bus. With a bus given
// (feed.WithBus, domain.WithBus), connected and holding every subject the
// watcher wants, it reads nothing else; otherwise (no bus given, the bus
// away or closed, a subject refused) it also reads every interval, until
// a read finds the bus usable again.
//
// The posts sent honour uid's safety Set, kept current with
// safety.WatchSet (read at the start, read again at the first read after
// a change the bus carries, from any instance): a post whose author, or
// whose reposted post's author, uid blocks, is blocked by or mutes is not
// sent, nor one whose text one of uid's HOME filters hides; one matching
// a WARN filter is sent with Post.Filtered.
//
// poll, when not nil, is called by the watcher before each read with
// whether the bus is connected: the caller's own work while the bus is
// away (a token check) runs on the watcher's ticks. With a push
// transport's sink in ctx (live.Take), the watcher's goroutine delivers
// each post itself, and is the subscription's one goroutine.
func (s *Service) WatchTimeline(ctx context.Context, uid weibo.UserID, interval time.Duration, poll func(busUp bool)) (_ <-chan *feed.Post, err error) {
	defer weibo.Wrapf(&err, "watch the timeline of %s", uid)
	if interval <= 0 {
		interval = 2 * time.Second
	}
	w := &timelineWatch{s: s, uid: uid, since: s.now() - time.Minute.Milliseconds(), interval: interval, poll: poll}
	if w.safe, err = safety.WatchSet(ctx, s.st, s.events.Bus(), uid, s.now); err != nil {
		return nil, err
	}
	w.wake, w.unsubscribe = s.events.Hub().Subscribe(uid)
	w.bw = busWake{s: s, wake: w.wake}
	// The bus's state is taken before each read: a bus that goes away
	// during the read closes gap, and the watcher reads again.
	var pushed bool
	w.gap, pushed = w.bw.state()
	w.bw.sync(uid, nil) // listening before the read: nothing falls between
	w.seen, _, w.large, err = s.timelineTop(ctx, uid, w.since)
	if err != nil {
		w.unsubscribe()
		w.bw.stop()
		w.safe.Stop()
		return nil, err
	}
	s.events.Hub().Follow(w.wake, nil, w.large)
	w.pushed = w.bw.sync(uid, w.large) && pushed
	w.out = live.NewOut[*feed.Post](ctx)
	go w.run(ctx)
	return w.out.C, nil
}

// timelineWatch is one WatchTimeline watcher.
type timelineWatch struct {
	s           *Service
	uid         weibo.UserID
	since       int64 // the oldest post time emitted, Unix ms
	interval    time.Duration
	poll        func(busUp bool)
	wake        chan struct{}
	unsubscribe func()
	bw          busWake
	gap         <-chan struct{}
	pushed      bool
	tick        *time.Ticker   // made when first polled
	seen        []weibo.PostID // the last read's since since, sorted (seenPost)
	large       map[weibo.UserID]bool
	safe        *safety.Live // the viewer's Set
	out         live.Out[*feed.Post]
}

// run reads when woken until ctx ends, then closes out. It waits in wait,
// a frame of its own, so that the stack it parks on is small enough for
// the garbage collector to shrink to the smallest a goroutine has.
func (w *timelineWatch) run(ctx context.Context) {
	defer w.end()
	for w.wait(ctx) && w.read(ctx) {
	}
}

// end stops the watch and closes out.
func (w *timelineWatch) end() {
	w.s.events.Hub().Follow(w.wake, w.large, nil)
	w.unsubscribe()
	w.bw.stop()
	w.safe.Stop()
	if w.tick != nil {
		w.tick.Stop()
	}
	w.out.Close(nil)
}

// wait waits for a wake-up, a tick while the bus is not relied on, or the
// bus going away; false when ctx ended.
func (w *timelineWatch) wait(ctx context.Context) bool {
	var ticks <-chan time.Time
	var away <-chan struct{}
	if w.pushed {
		away = w.gap // nil for a bus that is never interrupted
	} else {
		if w.tick == nil {
			w.tick = time.NewTicker(w.interval)
		}
		ticks = w.tick.C
	}
	select {
	case <-ctx.Done():
		return false
	case <-w.wake:
	case <-ticks:
	case <-away:
	}
	return true
}

// read reads the top of the timeline and sends the posts not seen before;
// false when ctx ended during the sends.
func (w *timelineWatch) read(ctx context.Context) bool {
	w.gap, w.pushed = w.bw.state()
	if w.poll != nil {
		w.poll(w.pushed)
	}
	set, err := w.safe.Current(ctx)
	var top []weibo.PostID
	var posts []*feed.Post
	var now map[weibo.UserID]bool
	if err == nil {
		top, posts, now, err = w.s.timelineTop(ctx, w.uid, w.since)
	}
	if err != nil {
		if ctx.Err() == nil {
			w.s.log.Warn("timeline watch: poll failed", "user", w.uid.String(), "err", err)
		}
		w.pushed = false // read again at the next tick
		return true
	}
	w.s.events.Hub().Follow(w.wake, w.large, now)
	w.pushed = w.bw.sync(w.uid, now) && w.pushed
	w.large = now
	var fresh []*feed.Post // newest first, as read
	for _, p := range posts {
		if !seenPost(w.seen, p.ID) && p.ID.Millis >= w.since {
			if p, show := w.s.screenPost(set, p); show {
				fresh = append(fresh, p)
			}
		}
	}
	w.seen = top
	for i := len(fresh) - 1; i >= 0; i-- {
		select {
		case w.out.C <- fresh[i]:
			w.out.Sent()
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// BusState returns the bus's Interrupted channel, then whether a reader
// may rely on the bus's events instead of polling the store: a bus was
// given (feed.WithBus, domain.WithBus) and it is connected. In this
// order, a bus that goes away after the call closes the channel.
func (s *Service) BusState() (<-chan struct{}, bool) {
	gap := s.events.Bus().Interrupted()
	return gap, s.events.Shared() && s.events.Bus().Connected()
}

// busWake wakes a watcher on the events of the bus (package events,
// home.go) for its viewer's home subject and the author subjects of the
// large accounts it follows: writes made through other gateway instances sharing the bus
// wake it at once, not at the next tick.
type busWake struct {
	s    *Service
	wake chan struct{}
	subs []subjectSub // a slice: a watcher listens to its home subject and few more
}

// state returns the bus's Interrupted channel, then whether the watcher may
// rely on the bus: a bus was given (feed.WithBus, domain.WithBus) and it
// is connected. In this order, a bus that goes away after the call closes
// the channel.
func (b *busWake) state() (<-chan struct{}, bool) { return b.s.BusState() }

// sync listens to uid's home subject and to the author subjects of large,
// and to no other. It reports whether the bus holds all of them (a subject
// the bus refuses is left to the ticks), and wakes the watcher when it
// started listening to an author subject: a post of that account stored
// between the read that named it and now woke nobody.
func (b *busWake) sync(uid weibo.UserID, large map[weibo.UserID]bool) bool {
	home := events.HomeSubject(uid)
	want := map[string]bool{home: true}
	for a := range large {
		want[events.AuthorSubject(a)] = true
	}
	b.subs = slices.DeleteFunc(b.subs, func(sub subjectSub) bool {
		if want[sub.subject] {
			delete(want, sub.subject) // listening already
			return false
		}
		sub.cancel()
		return true
	})
	all := true
	for subject := range want {
		cancel, err := b.s.events.Bus().Subscribe(subject, func([]byte) {
			select {
			case b.wake <- struct{}{}:
			default:
			}
		})
		if err != nil {
			all = false
			continue
		}
		b.subs = append(b.subs, subjectSub{subject, cancel})
		if subject != home {
			select {
			case b.wake <- struct{}{}:
			default:
			}
		}
	}
	return all
}

// subjectSub is a bus subscription of a busWake.
type subjectSub struct {
	subject string
	cancel  func()
}

// stop cancels every subscription.
func (b *busWake) stop() {
	for _, sub := range b.subs {
		sub.cancel()
	}
}

// timelineTop reads the newest watchWindow posts of uid's home timeline:
// the ids of those created at since (Unix ms) or later (sorted, for
// seenPost; older ones are never emitted, so an idle watcher keeps few),
// the posts newest first, and the large accounts uid follows.
func (s *Service) timelineTop(ctx context.Context, uid weibo.UserID, since int64) ([]weibo.PostID, []*feed.Post, map[weibo.UserID]bool, error) {
	c, large, err := s.homeTimeline(ctx, uid, weibo.Page{First: new(watchWindow)}, readOptions{})
	if err != nil {
		return nil, nil, nil, err
	}
	var ids []weibo.PostID
	posts := make([]*feed.Post, len(c.Edges))
	for i, e := range c.Edges {
		if e.Post.ID.Millis >= since {
			ids = append(ids, e.Post.ID)
		}
		posts[i] = e.Post
	}
	slices.SortFunc(ids, comparePostIDs)
	return ids, posts, large, nil
}

// comparePostIDs orders post ids by author, then time.
func comparePostIDs(a, b weibo.PostID) int {
	if c := cmp.Compare(a.Author, b.Author); c != 0 {
		return c
	}
	return cmp.Compare(a.Millis, b.Millis)
}

// seenPost reports whether id is in ids, sorted by comparePostIDs.
func seenPost(ids []weibo.PostID, id weibo.PostID) bool {
	_, ok := slices.BinarySearchFunc(ids, id, comparePostIDs)
	return ok
}
