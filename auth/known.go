package auth

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weibohbase/gateway/weibo"
)

// maxKnown bounds each of knownTokens' maps (about 100 bytes an entry).
const maxKnown = 100_000

// knownTokens is what an Issuer remembers of tokens: the ones found good
// recently (a request within the window skips its users-row read), the
// ones this instance ended (refused at once, whatever was found before,
// until they expire), and the subscriptions watching tokens.
//
// The endings are facts, not times: a token id ended, or a user's tokens
// below a generation ended. A check that read the row before the ending's
// write and records the token as good afterwards (add) is refused by them,
// so an ending on this instance is never undone by a read in flight.
type knownTokens struct {
	window time.Duration // how long a token found good counts as checked; <= 0: not at all
	life   time.Duration // the longest a token lives (the Issuer's ttl)
	epoch  atomic.Uint64 // moved by every ending, for Viewer's cheap test

	mu       sync.Mutex
	good     map[weibo.TokenID]goodToken
	ended    map[weibo.TokenID]time.Time // the token's expiry: kept until then
	floors   map[weibo.UserID]genFloor
	watchers map[weibo.UserID][]*watcher // a slice: most users have a watcher or two
}

// goodToken is a token found good, and when.
type goodToken struct {
	user         weibo.UserID
	created, gen int64
	at           time.Time
}

// genFloor says that the user's tokens below gen were ended here; kept
// until every token issued before the ending has expired.
type genFloor struct {
	gen   int64
	until time.Time
}

// watcher is a subscription's watch of its token.
type watcher struct {
	tok Token
	ch  chan struct{}
	fn  func() // run instead of closing ch, when set
}

// fire tells w its token ended.
func (w *watcher) fire() {
	if w.fn != nil {
		go w.fn() // not under knownTokens.mu: fn may check the token
		return
	}
	close(w.ch)
}

// Answers of knownTokens.state.
const (
	knownNothing = iota // check the row
	knownGood           // found good within the window
	knownEnded          // ended here
)

func newKnownTokens(window time.Duration) *knownTokens {
	return &knownTokens{window: window, good: map[weibo.TokenID]goodToken{}, ended: map[weibo.TokenID]time.Time{},
		floors: map[weibo.UserID]genFloor{}, watchers: map[weibo.UserID][]*watcher{}}
}

// endedLocked reports whether this instance ended t. k.mu is held.
func (k *knownTokens) endedLocked(t Token) bool {
	if _, ok := k.ended[t.ID]; ok {
		return true
	}
	f, ok := k.floors[t.User]
	return ok && t.Generation < f.gen
}

// isEnded reports whether this instance ended t.
func (k *knownTokens) isEnded(t Token) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.endedLocked(t)
}

// state says what is known of t at now.
func (k *knownTokens) state(t Token, now time.Time) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.endedLocked(t) {
		return knownEnded
	}
	g, ok := k.good[t.ID]
	if ok && g.user == t.User && g.created == t.Created && g.gen == t.Generation && now.Sub(g.at) < k.window {
		return knownGood
	}
	return knownNothing
}

// add records t as found good at now (the time taken before its row was
// read, or its issue), unless this instance ended it.
func (k *knownTokens) add(t Token, now time.Time) {
	if k.window <= 0 {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.endedLocked(t) {
		return
	}
	if len(k.good) >= maxKnown {
		for id, g := range k.good {
			if now.Sub(g.at) >= k.window {
				delete(k.good, id)
			}
		}
		if len(k.good) >= maxKnown {
			clear(k.good)
		}
	}
	k.good[t.ID] = goodToken{user: t.User, created: t.Created, gen: t.Generation, at: now}
}

// end records that t was ended here at now, and closes its watchers.
func (k *knownTokens) end(t Token, now time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.ended) >= maxKnown {
		for id, exp := range k.ended {
			if !now.Before(exp) {
				delete(k.ended, id)
			}
		}
		if len(k.ended) >= maxKnown {
			clear(k.ended) // a burst of logouts beyond the bound: other instances' window applies
		}
	}
	k.ended[t.ID] = t.Expires
	delete(k.good, t.ID)
	k.epoch.Add(1)
	k.closeLocked(t.User, func(w Token) bool { return w.ID == t.ID })
}

// endAll records that uid's tokens below generation gen were ended here at
// now, and closes their watchers.
func (k *knownTokens) endAll(uid weibo.UserID, gen int64, now time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.floors) >= maxKnown {
		for u, f := range k.floors {
			if !now.Before(f.until) {
				delete(k.floors, u)
			}
		}
		if len(k.floors) >= maxKnown {
			clear(k.floors)
		}
	}
	if f := k.floors[uid]; gen > f.gen {
		k.floors[uid] = genFloor{gen: gen, until: now.Add(k.life)}
	}
	k.epoch.Add(1)
	k.closeLocked(uid, func(w Token) bool { return w.Generation < gen })
}

// closeLocked closes and forgets the watchers of uid whose token ends.
// k.mu is held.
func (k *knownTokens) closeLocked(uid weibo.UserID, ends func(Token) bool) {
	ws := slices.DeleteFunc(k.watchers[uid], func(w *watcher) bool {
		if ends(w.tok) {
			w.fire()
			return true
		}
		return false
	})
	if len(ws) == 0 {
		delete(k.watchers, uid)
	} else {
		k.watchers[uid] = ws
	}
}

// watch returns a channel closed when t is ended here (at once if it was),
// and the function that stops the watch. With fn, fn runs instead and the
// channel is nil.
func (k *knownTokens) watch(t Token, fn func()) (<-chan struct{}, func()) {
	w := &watcher{tok: t, fn: fn}
	if fn == nil {
		w.ch = make(chan struct{})
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.endedLocked(t) {
		w.fire()
		return w.ch, func() {}
	}
	k.watchers[t.User] = append(k.watchers[t.User], w)
	return w.ch, func() {
		k.mu.Lock()
		defer k.mu.Unlock()
		if ws := slices.DeleteFunc(k.watchers[t.User], func(x *watcher) bool { return x == w }); len(ws) > 0 {
			k.watchers[t.User] = ws
		} else {
			delete(k.watchers, t.User)
		}
	}
}
