package events

import (
	"slices"
	"sync"

	"github.com/weibohbase/gateway/weibo"
)

// Live events of home timelines, pushed from the write path over the bus
// (package bus) to the subscriptions of the home timeline's live reads
// (package timeline), on any gateway instance sharing the bus. The feed
// publishes them (its publish, fan-out, delete and follow); the timeline
// subscribes. Subjects:
//
//   - weibo.home.<uid>: what reaches uid's inbox — uid's own posts at
//     publish, a followee's post when its fan-out batch has written uid's
//     inbox row — the deletes of those posts, and uid's follows and
//     unfollows (so that the subscription listens to the large accounts
//     uid follows);
//   - weibo.author.<uid>: the posts and deletes of uid while it is a large
//     account (hybrid fan-out: its posts reach no fan's inbox; the
//     subscriptions of its followers listen here).
//
// An event is encoded once per post (JSON, HomeEvent) and published to
// each owner's subject: a subject nobody subscribes to costs the bus a
// lookup, no encoding. A publish error is counted and logged, never
// returned to the writer: the store has the write, and a subscriber
// resumes from it.

// HomeSubject is the subject of uid's home-timeline events.
func HomeSubject(uid weibo.UserID) string { return "weibo.home." + uid.String() }

// AuthorSubject is the subject of the posts of uid as a large account.
func AuthorSubject(uid weibo.UserID) string { return "weibo.author." + uid.String() }

// Event kinds of HomeEvent.K.
const (
	KindAdd      = "a" // a post reached the timeline
	KindDelete   = "d" // a post was deleted
	KindFollow   = "f" // the owner followed account A
	KindUnfollow = "u" // the owner unfollowed account A
)

// HomeEvent is the wire form of one home-timeline event (JSON: a few
// hundred bytes). K is its first field: the encodings of follow and
// unfollow events start with it.
type HomeEvent struct {
	K string `json:"k"`
	// P is the post's id (KindAdd, KindDelete).
	P string `json:"p,omitempty"`
	// N, C and R are the added post's author name, text and reposted root.
	N string `json:"n,omitempty"`
	C string `json:"c,omitempty"`
	R string `json:"r,omitempty"`
	// A is the account followed or unfollowed.
	A string `json:"a,omitempty"`
}

// Hub wakes the watchers of a user when this process writes to the
// user's inbox, and the watchers following a large account (hybrid
// fan-out) when this process stores one of its posts: the feed's writes
// call Notify and NotifyAuthor, the home timeline's watchers Subscribe
// and Follow. Its methods are safe for concurrent use; the zero Hub is
// ready (an Emitter owns one: Emitter.Hub).
type Hub struct {
	mu   sync.Mutex
	subs map[weibo.UserID][]chan struct{} // most users have one watcher: a slice is the smallest set
	// byAuthor: large account -> the wake channels of the watchers whose
	// viewer follows it (as of their last poll).
	byAuthor map[weibo.UserID]map[chan struct{}]struct{}
}

// Follow sets the large accounts whose posts wake ch (replacing the set
// given before).
func (h *Hub) Follow(ch chan struct{}, before, now map[weibo.UserID]bool) {
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

// NotifyAuthor wakes the watchers that follow the large account author; it
// never blocks.
func (h *Hub) NotifyAuthor(author weibo.UserID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.byAuthor[author] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// Subscribe returns a wake channel of uid's watcher (capacity 1: one
// wake-up for many writes) and the func that unsubscribes it.
func (h *Hub) Subscribe(uid weibo.UserID) (chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	if h.subs == nil {
		h.subs = map[weibo.UserID][]chan struct{}{}
	}
	h.subs[uid] = append(h.subs[uid], ch)
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		if chs := slices.DeleteFunc(h.subs[uid], func(c chan struct{}) bool { return c == ch }); len(chs) > 0 {
			h.subs[uid] = chs
		} else {
			delete(h.subs, uid)
		}
		h.mu.Unlock()
	}
}

// Notify wakes the watchers of owners; it never blocks.
func (h *Hub) Notify(owners ...weibo.UserID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, uid := range owners {
		for _, ch := range h.subs[uid] {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}
}

// SafetySubject is the subject of the changes of uid's blocks (made by
// uid or of uid), mutes and filters: the live reads of uid's home
// timeline and notifications read uid's Set again on each (package
// safety publishes them; the payload is uid's id).
func SafetySubject(uid weibo.UserID) string { return "weibo.safety." + uid.String() }
