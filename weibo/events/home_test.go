package events_test

import (
	"testing"

	"github.com/weibohbase/gateway/bus"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/events"
)

// woken reports whether ch holds a wake-up, taking it.
func woken(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestHub: Notify wakes the watchers of the owners named, once for many
// writes and never blocking; NotifyAuthor wakes the watchers that follow
// the account (as Follow last set); an unsubscribed watcher, or one that
// no longer follows, is not woken; an Emitter has one Hub.
func TestHub(t *testing.T) {
	e := events.NewEmitter(bus.NewLocal(), false, nil)
	h := e.Hub()
	if h != e.Hub() {
		t.Fatal("an Emitter's Hub differs between calls")
	}
	const alice, bob, star weibo.UserID = 1, 2, 3
	a, unsubA := h.Subscribe(alice)
	a2, unsubA2 := h.Subscribe(alice)
	b, unsubB := h.Subscribe(bob)
	defer unsubB()

	h.Notify(alice)
	h.Notify(alice) // the channel is full: does not block
	if !woken(a) || !woken(a2) || woken(a) || woken(b) {
		t.Fatal("Notify(alice) must wake both of alice's watchers once, and not bob's")
	}

	h.Follow(b, nil, map[weibo.UserID]bool{star: true})
	h.NotifyAuthor(star)
	if !woken(b) || woken(a) {
		t.Fatal("NotifyAuthor(star) must wake the watcher following star only")
	}
	h.Follow(b, map[weibo.UserID]bool{star: true}, nil)
	h.NotifyAuthor(star)
	if woken(b) {
		t.Fatal("a watcher that no longer follows star was woken")
	}

	unsubA()
	h.Notify(alice, bob)
	if woken(a) || !woken(a2) || !woken(b) {
		t.Fatal("after alice's first watcher unsubscribed, Notify must wake her second and bob's only")
	}
	unsubA2()
	h.Notify(alice)
	if woken(a2) {
		t.Fatal("an unsubscribed watcher was woken")
	}
}
