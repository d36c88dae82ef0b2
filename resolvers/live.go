package resolvers

import (
	"context"

	"github.com/weibohbase/gateway/weibo/feed"
)

// homeTimelineUpdates is Subscription.homeTimelineUpdates: the viewer's
// new posts, read when the bus wakes the watcher (polled while the bus is
// away; feed.Service.WatchTimeline), while the token is valid.
func (r *Resolver) homeTimelineUpdates(ctx context.Context) (<-chan *feed.Post, error) {
	viewer := viewerOf(ctx)
	return whileTokenValid(ctx, r, func(ctx context.Context) (<-chan *feed.Post, func() error, error) {
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
	return whileTokenValid(ctx, r, func(ctx context.Context) (<-chan feed.TimelineEvent, func() error, error) {
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
	return whileTokenValid(ctx, r, func(ctx context.Context) (<-chan *feed.Notification, func() error, error) {
		stream, err := r.Svc.Feed.NotificationEvents(ctx, viewer)
		if err != nil {
			return nil, nil, err
		}
		return stream.C, stream.Err, nil
	})
}
