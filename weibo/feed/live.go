package feed

import (
	"context"
	"sync"
	"time"

	"github.com/weibohbase/gateway/weibo"
)

// Live updates of home timelines. A watcher reads the top of its viewer's
// home timeline (one page, merged with the large accounts' posts) and
// emits the entries it has not seen. It reads when something may have
// changed: woken by this process's writes (a publish, a fan-out batch) to
// its viewer's inbox, and by the events of the bus (events.go) from the
// instances that share it. Given a bus (WithBus), a watcher relies on
// those wake-ups alone while the bus is connected, so an idle one reads
// nothing; it polls on a timer only while the bus is away (and once more
// when it is back), and always when the Service was given no bus (its
// own in-process bus cannot hear other instances). Instances that write
// to the same store must then share the bus, as TimelineEvents needs.

// watchWindow is how many of the newest inbox entries a poll reads. An entry
// is emitted when it is among them and was not in the previous poll, so a
// burst of more than watchWindow entries between two polls loses the oldest
// of the burst for live delivery (the timeline query still has them).
const watchWindow = 50

// liveHub wakes the watchers of a user when this process writes to the
// user's inbox, and the watchers following a large account (hybrid
// fan-out) when this process stores one of its posts.
type liveHub struct {
	mu   sync.Mutex
	subs map[weibo.UserID]map[chan struct{}]struct{}
	// byAuthor: large account -> the wake channels of the watchers whose
	// viewer follows it (as of their last poll).
	byAuthor map[weibo.UserID]map[chan struct{}]struct{}
}

// follow sets the large accounts whose posts wake ch (replacing the set
// given before).
func (h *liveHub) follow(ch chan struct{}, before, now map[weibo.UserID]bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for a := range before {
		if !now[a] {
			delete(h.byAuthor[a], ch)
			if len(h.byAuthor[a]) == 0 {
				delete(h.byAuthor, a)
			}
		}
	}
	for a := range now {
		if h.byAuthor == nil {
			h.byAuthor = map[weibo.UserID]map[chan struct{}]struct{}{}
		}
		if h.byAuthor[a] == nil {
			h.byAuthor[a] = map[chan struct{}]struct{}{}
		}
		h.byAuthor[a][ch] = struct{}{}
	}
}

// notifyAuthor wakes the watchers that follow the large account author; it
// never blocks.
func (h *liveHub) notifyAuthor(author weibo.UserID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.byAuthor[author] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

func (h *liveHub) subscribe(uid weibo.UserID) (chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	if h.subs == nil {
		h.subs = map[weibo.UserID]map[chan struct{}]struct{}{}
	}
	if h.subs[uid] == nil {
		h.subs[uid] = map[chan struct{}]struct{}{}
	}
	h.subs[uid][ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		delete(h.subs[uid], ch)
		if len(h.subs[uid]) == 0 {
			delete(h.subs, uid)
		}
		h.mu.Unlock()
	}
}

// notify wakes the watchers of owners; it never blocks.
func (h *liveHub) notify(owners ...weibo.UserID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, uid := range owners {
		for ch := range h.subs[uid] {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}
}

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
// (WithBus), connected and holding every subject the watcher wants, it
// reads nothing else; otherwise (no bus given, the bus away or closed, a
// subject refused) it also reads every interval, until a read finds the
// bus usable again.
func (s *Service) WatchTimeline(ctx context.Context, uid weibo.UserID, interval time.Duration) (_ <-chan *Post, err error) {
	defer weibo.Wrapf(&err, "watch the timeline of %s", uid)
	if interval <= 0 {
		interval = 2 * time.Second
	}
	since := s.nowMillis() - time.Minute.Milliseconds()
	wake, unsubscribe := s.live.subscribe(uid)
	bw := busWake{s: s, wake: wake, subs: map[string]func(){}}
	// The bus's state is taken before each read: a bus that goes away
	// during the read closes gap, and the watcher reads again.
	gap, pushed := bw.state()
	bw.sync(uid, nil) // listening before the read: nothing falls between
	seen, _, large, err := s.timelineTop(ctx, uid)
	if err != nil {
		unsubscribe()
		bw.stop()
		return nil, err
	}
	s.live.follow(wake, nil, large)
	pushed = bw.sync(uid, large) && pushed
	out := make(chan *Post)
	go func() {
		defer close(out)
		defer func() { s.live.follow(wake, large, nil); unsubscribe(); bw.stop() }()
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			var ticks <-chan time.Time
			var away <-chan struct{}
			if pushed {
				away = gap // nil for a bus that is never interrupted
			} else {
				ticks = tick.C
			}
			select {
			case <-ctx.Done():
				return
			case <-wake:
			case <-ticks:
			case <-away:
			}
			gap, pushed = bw.state()
			top, posts, now, err := s.timelineTop(ctx, uid)
			if err != nil {
				if ctx.Err() == nil {
					s.log.Warn("timeline watch: poll failed", "user", uid.String(), "err", err)
				}
				pushed = false // read again at the next tick
				continue
			}
			s.live.follow(wake, large, now)
			pushed = bw.sync(uid, now) && pushed
			large = now
			var fresh []*Post // newest first, as read
			for _, p := range posts {
				if !seen[p.ID] && p.ID.Millis >= since {
					fresh = append(fresh, p)
				}
			}
			seen = top
			for i := len(fresh) - 1; i >= 0; i-- {
				select {
				case out <- fresh[i]:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out, nil
}

// BusState returns the bus's Interrupted channel, then whether a reader
// may rely on the bus's events instead of polling the store: a bus was
// given (WithBus) and it is connected. In this order, a bus that goes away
// after the call closes the channel.
func (s *Service) BusState() (<-chan struct{}, bool) {
	gap := s.bus.Interrupted()
	return gap, s.busGiven && s.bus.Connected()
}

// busWake wakes a watcher on the events of the bus (events.go) for its
// viewer's home subject and the author subjects of the large accounts it
// follows: writes made through other gateway instances sharing the bus
// wake it at once, not at the next tick.
type busWake struct {
	s    *Service
	wake chan struct{}
	subs map[string]func() // subject -> cancel
}

// state returns the bus's Interrupted channel, then whether the watcher may
// rely on the bus: a bus was given (WithBus) and it is connected. In this
// order, a bus that goes away after the call closes the channel.
func (b *busWake) state() (<-chan struct{}, bool) { return b.s.BusState() }

// sync listens to uid's home subject and to the author subjects of large,
// and to no other. It reports whether the bus holds all of them (a subject
// the bus refuses is left to the ticks), and wakes the watcher when it
// started listening to an author subject: a post of that account stored
// between the read that named it and now woke nobody.
func (b *busWake) sync(uid weibo.UserID, large map[weibo.UserID]bool) bool {
	home := homeSubject(uid)
	want := map[string]bool{home: true}
	for a := range large {
		want[authorSubject(a)] = true
	}
	all := true
	for subject, cancel := range b.subs {
		if !want[subject] {
			cancel()
			delete(b.subs, subject)
		}
	}
	for subject := range want {
		if b.subs[subject] != nil {
			continue
		}
		cancel, err := b.s.bus.Subscribe(subject, func([]byte) {
			select {
			case b.wake <- struct{}{}:
			default:
			}
		})
		if err != nil {
			all = false
			continue
		}
		b.subs[subject] = cancel
		if subject != home {
			select {
			case b.wake <- struct{}{}:
			default:
			}
		}
	}
	return all
}

// stop cancels every subscription.
func (b *busWake) stop() {
	for _, cancel := range b.subs {
		cancel()
	}
}

// timelineTop reads the newest watchWindow posts of uid's home timeline:
// their ids, the posts newest first, and the large accounts uid follows.
func (s *Service) timelineTop(ctx context.Context, uid weibo.UserID) (map[weibo.PostID]bool, []*Post, map[weibo.UserID]bool, error) {
	c, large, err := s.homeTimeline(ctx, uid, weibo.Page{First: new(watchWindow)}, timelineOptions{})
	if err != nil {
		return nil, nil, nil, err
	}
	set := make(map[weibo.PostID]bool, len(c.Edges))
	posts := make([]*Post, len(c.Edges))
	for i, e := range c.Edges {
		set[e.Post.ID] = true
		posts[i] = e.Post
	}
	return set, posts, large, nil
}
