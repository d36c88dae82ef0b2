package resolvers

import (
	"context"
	"errors"
	"time"

	"github.com/weibohbase/gateway/auth"
	"github.com/weibohbase/gateway/live"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/notify"
	"github.com/weibohbase/gateway/weibo/timeline"
)

// homeTimelineUpdates is Subscription.homeTimelineUpdates: the viewer's
// new posts, read when the bus wakes the watcher (polled while the bus is
// away; timeline.Service.WatchTimeline), while the token is valid.
func (r *Resolver) homeTimelineUpdates(ctx context.Context) (<-chan *feed.Post, error) {
	viewer := viewerOf(ctx)
	return whileTokenValid(ctx, r, func(ctx context.Context, poll func(bool)) (<-chan *feed.Post, func() error, error) {
		c, err := r.Svc.Timeline.WatchTimeline(ctx, viewer, 0, poll)
		return c, nil, err
	})
}

// homeTimelineEvents is Subscription.homeTimelineEvents: the viewer's
// timeline events pushed over the bus (timeline.Service.TimelineEvents),
// while the token is valid. A stream that fails (SLOW_CONSUMER) ends the
// subscription with its error.
func (r *Resolver) homeTimelineEvents(ctx context.Context, after *string) (<-chan timeline.TimelineEvent, error) {
	viewer := viewerOf(ctx)
	// The stream ends itself when the bus is interrupted: it needs no poll.
	return whileTokenValid(ctx, r, func(ctx context.Context, _ func(bool)) (<-chan timeline.TimelineEvent, func() error, error) {
		stream, err := r.Svc.Timeline.TimelineEvents(ctx, viewer, after)
		if err != nil {
			return nil, nil, err
		}
		return stream.C, stream.Err, nil
	})
}

// notificationAdded is Subscription.notificationAdded: the viewer's
// notifications pushed over the bus (feed.Service.NotificationEvents),
// while the token is valid. A stream that fails (SLOW_CONSUMER,
// UNAVAILABLE) ends the subscription with its error.
func (r *Resolver) notificationAdded(ctx context.Context) (<-chan *notify.Notification, error) {
	viewer := viewerOf(ctx)
	return whileTokenValid(ctx, r, func(ctx context.Context, _ func(bool)) (<-chan *notify.Notification, func() error, error) {
		stream, err := r.Svc.Notify.NotificationEvents(ctx, viewer)
		if err != nil {
			return nil, nil, err
		}
		return stream.C, stream.Err, nil
	})
}

// watchPushed is whileTokenValid for a source that delivers to a push
// transport itself, while the bus carries token endings: nothing waits on
// the subscription's behalf. An ending of the token here runs a check
// (auth.Issuer.WatchFunc), and so does its expiry (a timer). While the bus
// is away the source's poll hook (called before each of its reads, on its
// ticks) checks the token every read (at most one users-row read per
// recheck window), and the first poll that finds the bus back reads the
// row afresh; a source that ends itself when the bus is interrupted never
// polls. A check that refuses the token ends the subscription (live.Sink.End)
// with UNAUTHENTICATED.
func watchPushed[T any](ctx context.Context, r *Resolver, check auth.UserCheck, start func(context.Context, func(bool)) (<-chan T, func() error, error)) (<-chan T, error) {
	sink := live.SinkOf(ctx)
	end := func(err error) bool {
		if e, ok := errors.AsType[*weibo.Error](err); ok && e.Code == weibo.CodeUnauthenticated {
			sink.End(e)
		}
		return err == nil
	}
	// Ended or expired: refused without a read.
	recheck := func() { end(r.Tokens.Recheck(ctx, check)) }
	away := false // touched by the source's goroutine alone
	poll := func(busUp bool) {
		switch {
		case !busUp:
			away = true
			end(r.Tokens.Recheck(ctx, check))
		case away:
			away = !end(r.Tokens.RecheckNow(ctx, check)) // the endings the bus missed
		}
	}
	in, _, err := start(ctx, poll)
	if err != nil {
		return nil, err
	}
	stopWatch := r.Tokens.WatchFunc(ctx, recheck)
	var expiry *time.Timer
	if t, ok := auth.ViewerToken(ctx); ok {
		expiry = time.AfterFunc(time.Until(t.Expires), recheck)
	}
	context.AfterFunc(ctx, func() { // the operation's end
		stopWatch()
		if expiry != nil {
			expiry.Stop()
		}
	})
	return in, nil
}
