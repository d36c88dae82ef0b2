// Package timeline is the home timeline's reads and its live updates:
// HomeTimeline (the inbox of the "receive-content-email" table, merged at
// read time with the newest posts of the large accounts the viewer
// follows: hybrid fan-out), WatchTimeline (the poller woken by the feed's
// writes and the bus) and TimelineEvents (the events of the bus, with
// replay and resume). The writes it reads — publish, fan-out, delete,
// follow — and their live events are package feed's; the wire form of
// those events and the in-process wake-ups both sides share are package
// events' (home.go).
//
// One file per concern: timeline.go (HomeTimeline and the hybrid merge),
// visible.go (what the viewer's blocks, mutes and filters hide, and the
// reads on past it), live.go (WatchTimeline, BusState) and events.go
// (TimelineEvents).
//
// Errors meant for API callers are *weibo.Error values; every other error
// is an internal store failure, wrapped with the operation it served.
package timeline

import (
	"context"
	"log/slog"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/events"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/safety"
)

// Posts reads the posts of home-timeline entries. *feed.Service
// implements it.
type Posts interface {
	// ResolveEntries reads, in one batched read, the posts ids and owner's
	// attends rows of their authors and of the users extra: the posts, nil
	// for an entry to skip (post gone, author not followed), and for each
	// of extra whether owner follows them. With cached, the posts may come
	// from the post cache, their counters zero. With withSet, owner's
	// safety row is read in the same batch and returned decoded (nil
	// without). Errors are the store's.
	ResolveEntries(ctx context.Context, owner weibo.UserID, ids []weibo.PostID, extra []weibo.UserID, cached, withSet bool) ([]*feed.Post, []bool, *safety.Set, error)
}

// Accounts lists the large accounts (hybrid fan-out), whose posts reach
// no inbox. *feed.Service implements it.
type Accounts interface {
	// LargeAccounts returns the large accounts (true: still draining),
	// with one Get. Errors are the store's.
	LargeAccounts(ctx context.Context) (map[weibo.UserID]bool, error)
}

// Service is the home timeline's API. It is safe for concurrent use.
type Service struct {
	st       hbase.Store
	posts    Posts
	accounts Accounts
	events   *events.Emitter // live events and the watchers' wake-ups (its Hub)
	log      *slog.Logger
	now      func() int64 // Unix ms
	susp     weibo.Suspensions
	opts     options
}

type options struct {
	eventQueue int
	log        *slog.Logger
	now        func() int64
	susp       weibo.Suspensions
}

// Option configures a Service.
type Option func(*options)

// DefaultEventQueue is the default of WithEventQueue.
const DefaultEventQueue = events.DefaultQueue

// WithEventQueue sets how many events one TimelineEvents subscription
// holds for a client that has not taken them (default DefaultEventQueue);
// past that the subscription ends with SLOW_CONSUMER.
func WithEventQueue(n int) Option { return func(o *options) { o.eventQueue = n } }

// WithLogger sets the logger of the watchers' failures (default
// slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// WithClock replaces the clock, in Unix ms, that dates the start of a
// WatchTimeline (default time.Now; the domain passes its protocol's).
func WithClock(nowMillis func() int64) Option { return func(o *options) { o.now = nowMillis } }

// WithSuspensions hides the posts of the users susp says are suspended
// (at the clock's now) from every home timeline, its hybrid merge of
// large accounts and its live events (default: nobody is suspended).
func WithSuspensions(susp weibo.Suspensions) Option {
	return func(o *options) { o.susp = susp }
}

// New returns the home timeline over st: posts and accounts read the
// feed, ev is the Emitter the feed publishes its live events with (its
// bus and its Hub). The weibo tables must exist (tables.Migrate).
func New(st hbase.Store, posts Posts, accounts Accounts, ev *events.Emitter, opts ...Option) *Service {
	o := options{eventQueue: DefaultEventQueue, log: slog.Default(), now: func() int64 { return time.Now().UnixMilli() }, susp: weibo.NoSuspensions}
	for _, f := range opts {
		f(&o)
	}
	return &Service{st: st, posts: posts, accounts: accounts, events: ev, log: o.log, now: o.now, susp: o.susp, opts: o}
}

// suspended reports whether uid is suspended now (WithSuspensions).
func (s *Service) suspended(uid weibo.UserID) bool { return s.susp.Suspended(uid, s.now()) }

// suspendedPost reports whether the post id, a repost of root (nil for an
// original), is by a suspended author or reposts one's post.
func (s *Service) suspendedPost(id weibo.PostID, root *weibo.PostID) bool {
	return s.suspended(id.Author) || root != nil && s.suspended(root.Author)
}
