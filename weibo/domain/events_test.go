package domain_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weibohbase/gateway/bus"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/events"
	"github.com/weibohbase/gateway/weibo/tables"
	"github.com/weibohbase/gateway/weibo/timeline"
)

// nextEvent returns the stream's next event, failing after 10 s.
func nextEvent(t *testing.T, s *timeline.EventStream) timeline.TimelineEvent {
	t.Helper()
	select {
	case e, ok := <-s.C:
		if !ok {
			t.Fatalf("stream closed: %v", s.Err())
		}
		return e
	case <-time.After(10 * time.Second):
		t.Fatal("no event in 10 s")
	}
	return nil
}

// TestTimelineEventsOnTheLocalBus runs TimelineEvents on the feed's own
// in-process bus: a large account followed after the stream started
// (hybrid fan-out: its posts reach no inbox) is heard at its publish, its
// delete too; an ordinary followee's post after its fan-out; and a stream
// whose reader takes nothing ends with SLOW_CONSUMER past its queue.
func TestTimelineEventsOnTheLocalBus(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := b.Open(t)
			if err := tables.Migrate(ctx, st); err != nil {
				t.Fatal(err)
			}
			svc := domaintest.Quiet(st, domain.WithFanoutThreshold(2), domain.WithEventQueue(2))
			if err := svc.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer svc.Close(ctx)
			tag := fmt.Sprintf("%d_%d", time.Now().UnixNano()%1e9, rand.IntN(1000))
			var users []weibo.UserID
			for _, n := range []string{"viewer", "star", "fan", "friend"} {
				u, err := svc.Accounts.Register(ctx, n+"_"+tag, "correct horse")
				if err != nil {
					t.Fatal(err)
				}
				users = append(users, u.ID)
			}
			viewer, star, fan, friend := users[0], users[1], users[2], users[3]
			if _, err := svc.Follows.Follow(ctx, fan, star); err != nil {
				t.Fatal(err)
			}
			stream, err := svc.Timeline.TimelineEvents(ctx, viewer, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range []weibo.UserID{star, friend} { // star now has 2 fans: large
				if _, err := svc.Follows.Follow(ctx, viewer, f); err != nil {
					t.Fatal(err)
				}
			}
			if err := svc.FlushFanout(ctx); err != nil {
				t.Fatal(err)
			}
			for _, tc := range []struct {
				name   string
				author weibo.UserID
			}{{"large account", star}, {"followee", friend}, {"own", viewer}} {
				p, err := svc.Feed.Publish(ctx, tc.author, tc.name+" post")
				if err != nil {
					t.Fatal(err)
				}
				e, ok := nextEvent(t, stream).(timeline.PostAdded)
				if !ok || e.Post.ID != p.ID || e.Post.Content != p.Content || e.Cursor == "" {
					t.Fatalf("%s: event %+v, want PostAdded %s", tc.name, e, p.ID)
				}
				if tc.author == star {
					if _, err := svc.Feed.DeletePost(ctx, p.ID); err != nil {
						t.Fatal(err)
					}
					if d, ok := nextEvent(t, stream).(timeline.PostDeleted); !ok || d.PostID != p.ID {
						t.Fatalf("event %+v, want PostDeleted %s", d, p.ID)
					}
				}
			}

			// Nobody reads: the queue of 2 overflows.
			for i := range 6 {
				if _, err := svc.Feed.Publish(ctx, viewer, fmt.Sprintf("unread %d", i)); err != nil {
					t.Fatal(err)
				}
			}
			for range stream.C {
			}
			if !errors.Is(stream.Err(), events.ErrSlowConsumer) || weibo.CodeOf(stream.Err()) != weibo.CodeSlowConsumer {
				t.Fatalf("stream ended with %v, want SLOW_CONSUMER", stream.Err())
			}
		})
	}
}

// TestWritesSucceedWithTheBusAway: with a bus that takes nothing (closed),
// follows, publishes with their fan-out, and deletes succeed and reach the
// inbox; the lost events are counted.
func TestWritesSucceedWithTheBusAway(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := b.Open(t)
			if err := tables.Migrate(ctx, st); err != nil {
				t.Fatal(err)
			}
			away := bus.NewLocal()
			_ = away.Close()
			svc := domaintest.Quiet(st, domain.WithBus(away))
			if err := svc.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer svc.Close(ctx)
			before := testutil.ToFloat64(events.BusPublishErrors)
			tag := fmt.Sprintf("%d_%d", time.Now().UnixNano()%1e9, rand.IntN(1000))
			author, err := svc.Accounts.Register(ctx, "author_"+tag, "correct horse")
			if err != nil {
				t.Fatal(err)
			}
			fan, err := svc.Accounts.Register(ctx, "fan_"+tag, "correct horse")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := svc.Follows.Follow(ctx, fan.ID, author.ID); err != nil {
				t.Fatal(err)
			}
			p, err := svc.Feed.Publish(ctx, author.ID, "while the bus is away")
			if err != nil {
				t.Fatal(err)
			}
			if err := svc.FlushFanout(ctx); err != nil {
				t.Fatal(err)
			}
			if n := domaintest.InboxHas(t, svc, fan.ID, p.ID); n != 1 {
				t.Fatalf("the fan's inbox has the post %d times, want 1", n)
			}
			if _, err := svc.Feed.DeletePost(ctx, p.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := svc.Timeline.TimelineEvents(ctx, fan.ID, nil); err == nil {
				t.Error("a subscription on a closed bus started")
			}
			if got := testutil.ToFloat64(events.BusPublishErrors) - before; got < 3 {
				t.Errorf("%v publish errors counted, want the follow's, the publish's and the fan-out's at least", got)
			}
		})
	}
}

// TestTimelineEventsHearANewLargeAccount: a stream that started while a
// followee was pushed (not large) hears the followee's posts after another
// follow makes it large (its posts then reach no inbox).
func TestTimelineEventsHearANewLargeAccount(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := b.Open(t)
			if err := tables.Migrate(ctx, st); err != nil {
				t.Fatal(err)
			}
			svc := domaintest.Quiet(st, domain.WithFanoutThreshold(2))
			if err := svc.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer svc.Close(ctx)
			tag := fmt.Sprintf("%d_%d", time.Now().UnixNano()%1e9, rand.IntN(1000))
			var users []weibo.UserID
			for _, n := range []string{"viewer", "star", "fan"} {
				u, err := svc.Accounts.Register(ctx, n+"_"+tag, "correct horse")
				if err != nil {
					t.Fatal(err)
				}
				users = append(users, u.ID)
			}
			viewer, star, fan := users[0], users[1], users[2]
			if _, err := svc.Follows.Follow(ctx, viewer, star); err != nil {
				t.Fatal(err)
			}
			stream, err := svc.Timeline.TimelineEvents(ctx, viewer, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := svc.Follows.Follow(ctx, fan, star); err != nil { // 2 fans: large
				t.Fatal(err)
			}
			if err := svc.FlushFanout(ctx); err != nil {
				t.Fatal(err)
			}
			draining, err := svc.Fanout.LargeAccounts(ctx)
			if _, large := draining[star]; err != nil || !large || draining[star] {
				t.Fatalf("star not large (On): %v %v", draining, err)
			}
			p, err := svc.Feed.Publish(ctx, star, "now large")
			if err != nil {
				t.Fatal(err)
			}
			if e, ok := nextEvent(t, stream).(timeline.PostAdded); !ok || e.Post.ID != p.ID {
				t.Fatalf("event %+v, want PostAdded %s", e, p.ID)
			}
			if n := domaintest.InboxHas(t, svc, viewer, p.ID); n != 0 {
				t.Fatalf("the large account's post is in the viewer's inbox %d times: not large?", n)
			}
		})
	}
}

// TestWatchTimelineWokenByTheBus: homeTimelineUpdates' watcher (polling
// once an hour here) is woken by another instance's fan-out through the
// bus the two share, and by a followed large account's post.
func TestWatchTimelineWokenByTheBus(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := b.Open(t)
			if err := tables.Migrate(ctx, st); err != nil {
				t.Fatal(err)
			}
			shared := bus.NewLocal()
			one := domaintest.Quiet(st, domain.WithBus(shared), domain.WithFanoutThreshold(2))
			other := domaintest.Quiet(st, domain.WithBus(shared), domain.WithFanoutThreshold(2))
			for _, svc := range []*domain.Domain{one, other} {
				if err := svc.Start(ctx); err != nil {
					t.Fatal(err)
				}
				defer svc.Close(ctx)
			}
			tag := fmt.Sprintf("%d_%d", time.Now().UnixNano()%1e9, rand.IntN(1000))
			var users []weibo.UserID
			for _, n := range []string{"viewer", "friend", "star", "fan"} {
				u, err := one.Accounts.Register(ctx, n+"_"+tag, "correct horse")
				if err != nil {
					t.Fatal(err)
				}
				users = append(users, u.ID)
			}
			viewer, friend, star, fan := users[0], users[1], users[2], users[3]
			for _, f := range [][2]weibo.UserID{{viewer, friend}, {viewer, star}, {fan, star}} { // star: 2 fans, large
				if _, err := one.Follows.Follow(ctx, f[0], f[1]); err != nil {
					t.Fatal(err)
				}
			}
			if err := one.FlushFanout(ctx); err != nil {
				t.Fatal(err)
			}
			posts, err := other.Timeline.WatchTimeline(ctx, viewer, time.Hour, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, author := range []weibo.UserID{friend, star} {
				p, err := one.Feed.Publish(ctx, author, "through the other instance")
				if err != nil {
					t.Fatal(err)
				}
				select {
				case got := <-posts:
					if got.ID != p.ID {
						t.Fatalf("watcher got %s, want %s", got.ID, p.ID)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("the watcher was not woken for %s's post", author)
				}
			}
		})
	}
}
