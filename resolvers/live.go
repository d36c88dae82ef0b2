package resolvers

import (
	"context"
	"errors"
	"time"

	"github.com/weibohbase/gateway/auth"
	"github.com/weibohbase/gateway/live"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/feed"
)

// homeTimelineUpdates is Subscription.homeTimelineUpdates: the viewer's
// new posts, read when the bus wakes the watcher (polled while the bus is
// away; feed.Service.WatchTimeline), while the token is valid.
func (r *Resolver) homeTimelineUpdates(ctx context.Context) (<-chan *feed.Post, error) {
	viewer := viewerOf(ctx)
	return whileTokenValid(ctx, r, false, func(ctx context.Context) (<-chan *feed.Post, func() error, error) {
		c, err := r.Svc.Feed.WatchTimeline(ctx, viewer, 0)
		return c, nil, err
	})
}

// homeTimelineEvents is Subscription.homeTimelineEvents: the viewer's
// timeline events pushed over the bus (feed.Service.TimelineEvents), while
// the token is valid. A stream that fails (SLOW_CONSUMER) ends the
// subscription with its error.
func (r *Resolver) homeTimelineEvents(ctx context.Context, after *string) (<-chan feed.TimelineEvent, error) {
	viewer := viewerOf(ctx)
	return whileTokenValid(ctx, r, true, func(ctx context.Context) (<-chan feed.TimelineEvent, func() error, error) {
		stream, err := r.Svc.Feed.TimelineEvents(ctx, viewer, after)
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
func (r *Resolver) notificationAdded(ctx context.Context) (<-chan *feed.Notification, error) {
	viewer := viewerOf(ctx)
	return whileTokenValid(ctx, r, true, func(ctx context.Context) (<-chan *feed.Notification, func() error, error) {
		stream, err := r.Svc.Feed.NotificationEvents(ctx, viewer)
		if err != nil {
			return nil, nil, err
		}
		return stream.C, stream.Err, nil
	})
}

// watchPushed is whileTokenValid for a source that delivers to a push
// transport itself and ends itself when the bus is interrupted, while the
// bus carries token endings: nothing waits on the subscription's behalf.
// An ending of the token here runs a check (auth.Issuer.WatchFunc), and so
// does its expiry (a timer); a check that refuses the token fails the
// subscription with UNAUTHENTICATED and ends its source.
func watchPushed[T any](ctx context.Context, r *Resolver, check auth.UserCheck, start func(context.Context) (<-chan T, func() error, error)) (<-chan T, error) {
	sink := &presentingSink{Sink: live.SinkOf(ctx), ctx: ctx}
	inner, cancel := context.WithCancel(live.WithSink(ctx, sink))
	in, _, err := start(inner)
	if err != nil {
		cancel()
		return nil, err
	}
	recheck := func() {
		err := r.Tokens.Recheck(ctx, check) // ended or expired: refused without a read
		if e, ok := errors.AsType[*weibo.Error](err); ok && e.Code == weibo.CodeUnauthenticated {
			sink.Fail(e)
			cancel()
		}
	}
	stopWatch := r.Tokens.WatchFunc(ctx, recheck)
	var expiry *time.Timer
	if t, ok := auth.ViewerToken(ctx); ok {
		expiry = time.AfterFunc(time.Until(t.Expires), recheck)
	}
	context.AfterFunc(inner, func() {
		stopWatch()
		if expiry != nil {
			expiry.Stop()
		}
	})
	return in, nil
}

// presentingSink is a push transport's sink that fails subscriptions with
// *weibo.Error as GraphQL errors, as endSubscription does.
type presentingSink struct {
	live.Sink
	ctx context.Context
}

// Fail implements live.Sink.
func (s *presentingSink) Fail(err error) {
	if e, ok := errors.AsType[*weibo.Error](err); ok {
		s.Sink.Fail(subscriptionError(s.ctx, e))
		return
	}
	s.Sink.Fail(err)
}
