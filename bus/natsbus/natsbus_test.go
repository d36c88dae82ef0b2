package natsbus_test

import (
	"testing"
	"time"

	"github.com/weibohbase/gateway/bus/natsbus"
)

// TestEmbeddedAndConnected: an embedded server on no port delivers to its
// own subscribers; one listening on 127.0.0.1 carries events between two
// connections, the second connected by URL, each way.
func TestEmbeddedAndConnected(t *testing.T) {
	alone, err := natsbus.Open(natsbus.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer alone.Close()
	if alone.ClientURL() != "" {
		t.Errorf("an embedded server without Listen has URL %q", alone.ClientURL())
	}
	a, err := natsbus.Open(natsbus.Config{Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := natsbus.Open(natsbus.Config{URL: a.ClientURL()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cases := []struct {
		name     string
		from, to interface {
			Publish(string, []byte) error
			Subscribe(string, func([]byte)) (func(), error)
		}
	}{{"alone", alone, alone}, {"a to b", a, b}, {"b to a", b, a}, {"a to a", a, a}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := make(chan string, 1)
			cancel, err := tc.to.Subscribe("weibo.test."+tc.name[:1], func(d []byte) { got <- string(d) })
			if err != nil {
				t.Fatal(err)
			}
			defer cancel()
			// The subscription reaches the server asynchronously: publish
			// until the event arrives.
			deadline := time.After(5 * time.Second)
			for {
				if err := tc.from.Publish("weibo.test."+tc.name[:1], []byte("hello")); err != nil {
					t.Fatal(err)
				}
				select {
				case s := <-got:
					if s != "hello" {
						t.Fatalf("got %q", s)
					}
					return
				case <-time.After(50 * time.Millisecond):
				case <-deadline:
					t.Fatal("no event")
				}
			}
		})
	}
	// The server of a goes away: b's bus is interrupted, a's own too.
	gapB, gapAlone := b.Interrupted(), alone.Interrupted()
	if !b.Connected() || !alone.Connected() {
		t.Fatal("a bus not connected before its server stopped")
	}
	_ = a.Close()
	select {
	case <-gapB:
	case <-time.After(5 * time.Second):
		t.Fatal("b not interrupted when its server stopped")
	}
	if b.Connected() {
		t.Error("b connected while its server is gone")
	}
	if !alone.Connected() {
		t.Error("an unrelated bus disconnected")
	}
	select {
	case <-gapAlone:
		t.Fatal("an unrelated bus interrupted")
	default:
	}
	if b.Interrupted() == gapB {
		t.Error("Interrupted returns the closed channel again")
	}
	if _, err := natsbus.Open(natsbus.Config{URL: "nats://127.0.0.1:1"}); err == nil {
		t.Error("connecting to a closed port succeeded")
	}
}

// TestSubscribeWithinAnEvent: a subscriber's function may subscribe and
// cancel other subscriptions (as a live stream does on a follow event)
// while the bus's one dispatching goroutine runs it; after cancel returns
// its function is not called again.
func TestSubscribeWithinAnEvent(t *testing.T) {
	b, err := natsbus.Open(natsbus.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	got := make(chan string, 16)
	var cancelB func()
	subscribed := make(chan struct{})
	cancelA, err := b.Subscribe("t.a", func([]byte) {
		c, err := b.Subscribe("t.b", func(d []byte) { got <- string(d) })
		if err != nil {
			t.Error(err)
		}
		cancelB = c
		close(subscribed)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cancelA()
	if err := b.Publish("t.a", nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-subscribed:
	case <-time.After(5 * time.Second):
		t.Fatal("the event of t.a was not dispatched")
	}
	if err := b.Publish("t.b", []byte("one")); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		if s != "one" {
			t.Fatalf("got %q", s)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a subscription made within an event got nothing")
	}
	cancelB()
	_ = b.Publish("t.b", []byte("two"))
	time.Sleep(200 * time.Millisecond)
	select {
	case s := <-got:
		t.Fatalf("got %q after cancel", s)
	default:
	}
}
