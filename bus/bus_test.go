package bus_test

import (
	"errors"
	"testing"

	"github.com/weibohbase/gateway/bus"
)

// TestLocal: events reach the subject's subscribers in order, not other
// subjects', not after cancel, and a closed bus refuses calls.
func TestLocal(t *testing.T) {
	b := bus.NewLocal()
	var got []string
	cancel, err := b.Subscribe("a.1", func(d []byte) { got = append(got, string(d)) })
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ subject, data string }{{"a.1", "x"}, {"a.2", "y"}, {"a.1", "z"}} {
		if err := b.Publish(tc.subject, []byte(tc.data)); err != nil {
			t.Fatal(err)
		}
	}
	if !b.Interested("a.1") || b.Interested("a.2") {
		t.Error("interest")
	}
	cancel()
	cancel()
	_ = b.Publish("a.1", []byte("late"))
	if len(got) != 2 || got[0] != "x" || got[1] != "z" {
		t.Fatalf("got %q", got)
	}
	if !b.Connected() {
		t.Error("an open Local bus not connected")
	}
	_ = b.Close()
	if b.Connected() {
		t.Error("a closed Local bus connected")
	}
	if err := b.Publish("a.1", nil); !errors.Is(err, bus.ErrClosed) {
		t.Errorf("publish after close: %v", err)
	}
	if _, err := b.Subscribe("a.1", func([]byte) {}); !errors.Is(err, bus.ErrClosed) {
		t.Errorf("subscribe after close: %v", err)
	}
}
