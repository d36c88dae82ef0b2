package events_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/weibohbase/gateway/bus"
	"github.com/weibohbase/gateway/weibo/events"
)

// TestQueue checks a subscription's queue: it holds at most its bound
// (at least 1), refusing a push beyond it, hands events out oldest first,
// and signals Ready once for many pushes.
func TestQueue(t *testing.T) {
	for _, c := range []struct{ n, bound int }{{3, 3}, {1, 1}, {0, 1}, {-5, 1}} {
		q := events.NewQueue(c.n)
		for i := range c.bound {
			if !q.Push(fmt.Appendf(nil, "e%d", i)) {
				t.Fatalf("NewQueue(%d): push %d refused below the bound %d", c.n, i, c.bound)
			}
		}
		if q.Push([]byte("over")) {
			t.Errorf("NewQueue(%d): a push past the bound %d was queued", c.n, c.bound)
		}
		select {
		case <-q.Ready():
		default:
			t.Errorf("NewQueue(%d): no Ready signal after pushes", c.n)
		}
		select {
		case <-q.Ready():
			t.Errorf("NewQueue(%d): two Ready signals", c.n)
		default:
		}
		if got, ok := q.Pop(); !ok || string(got) != "e0" {
			t.Errorf("NewQueue(%d): Pop = %q, %v; want e0", c.n, got, ok)
		}
		if !q.Push([]byte("after")) {
			t.Errorf("NewQueue(%d): a push after a Pop refused", c.n)
		}
		var want []string
		for i := 1; i < c.bound; i++ {
			want = append(want, fmt.Sprintf("e%d", i))
		}
		want = append(want, "after")
		var got []string
		for _, e := range q.PopAll() {
			got = append(got, string(e))
		}
		if !slices.Equal(got, want) {
			t.Errorf("NewQueue(%d): PopAll = %q, want %q", c.n, got, want)
		}
		if e, ok := q.Pop(); ok {
			t.Errorf("NewQueue(%d): Pop of an empty queue = %q", c.n, e)
		}
	}
}

// TestEmitterErrors emits on a closed bus: every failed publish is
// counted (gateway_bus_publish_errors_total), none is returned, and the
// log gets at most one line a second; on an open bus nothing is counted
// and the subscriber gets the event.
func TestEmitterErrors(t *testing.T) {
	b := bus.NewLocal()
	var logged bytes.Buffer
	e := events.NewEmitter(b, false, slog.New(slog.NewTextHandler(&logged, nil)))
	var got []string
	unsub, err := b.Subscribe("s", func(d []byte) { got = append(got, string(d)) })
	if err != nil {
		t.Fatal(err)
	}
	defer unsub()
	before := testutil.ToFloat64(events.BusPublishErrors)
	e.Emit("s", []byte("hello"))
	if n := testutil.ToFloat64(events.BusPublishErrors) - before; n != 0 {
		t.Errorf("an open bus: %v publish errors counted", n)
	}
	if !slices.Equal(got, []string{"hello"}) {
		t.Errorf("the subscriber got %q", got)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		e.Emit("s", []byte("lost"))
	}
	if n := testutil.ToFloat64(events.BusPublishErrors) - before; n != 5 {
		t.Errorf("a closed bus: %v publish errors counted, want 5", n)
	}
	if lines := strings.Count(logged.String(), "live events not published"); lines < 1 || lines > 2 {
		t.Errorf("%d log lines for 5 errors within a second or so, want 1 (2 across a second's edge):\n%s", lines, logged.String())
	}
}
