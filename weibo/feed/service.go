// Package feed is the posts of the seeds (000 and 004: weibo:content
// and the "receive-content-email" inbox): publish, a user's posts, post
// reads with a cache, deletes and the retraction of deleted posts, and the
// write side of the home timelines' live events. It builds the parts a
// publish drives: the inbox fan-out (package fanout) and the follow pair
// whose backfill shares the inbox (package follow). Its own counted
// relations — publish and delete (postCount) — are written on package
// counted's protocol and registered with it by New.
//
// The interactions are packages of their own (like, comment, repost,
// topic) that plug into a post's write through small registries:
// RegisterPostPart (a part of every publish and delete), RegisterDeleteHook
// (a step of every retraction); notifications are package notify's, which
// the feed reaches through Notices, and accounts package account's,
// through Users; home timelines are package timeline's.
//
// One file per concern: posts.go (publish and reads), parts.go (the
// post-write registries), delete.go (deleting a post and retracting it),
// entries.go (the posts of timeline entries, for package timeline),
// postcache.go, counted.go (the registered relations and counters, the
// fan-out's Host), events.go (the live events written), postnotices.go
// (the notifications of a post), validate.go (content rules), mentions.go
// (@username).
//
// Errors meant for API callers are *weibo.Error values; every other error
// is an internal store failure, wrapped with the operation it served.
package feed

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/weibohbase/gateway/bus"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/events"
	"github.com/weibohbase/gateway/weibo/fanout"
	"github.com/weibohbase/gateway/weibo/follow"
)

// Service is the feed's API. It is safe for concurrent use. Create it with
// New, call Start to run the fan-out workers, and Close to drain them.
type Service struct {
	st          hbase.Store
	w           *counted.Protocol
	follows     *follow.Service   // the follow pair (package follow), built with the fan-out
	deletes     *counted.Relation // a post's deletion, registered with w
	notices     Notices           // the notify writes (postnotices.go)
	deleteHooks []DeleteHook      // RegisterDeleteHook
	partMakers  []PartMaker       // RegisterPostPart
	mediaCheck  MediaCheck        // RegisterMedia
	mediaPart   MediaPartMaker    // RegisterMedia
	retractions *retractions
	log         *slog.Logger
	fan         *fanout.Engine
	opts        options
	users       Users
	posts       *postCache        // nil: none (WithPostCache)
	sets        Sets              // nil: pages read the viewer's whole safety row (SetSafety)
	susp        weibo.Suspensions // whose posts leave others' reads (SetSuspensions)
	events      *events.Emitter   // live events (events.go) and the watchers' wake-ups (its Hub)
}

type options struct {
	workers       int
	batch         int
	backfill      int
	sweepInterval time.Duration
	fanoutLease   time.Duration
	instance      string
	threshold     int
	postCacheSize int
	postCacheTTL  time.Duration
	bus           bus.Bus
	events        *events.Emitter
}

// Option configures a Service.
type Option func(*options)

// WithFanoutWorkers sets the number of fan-out workers (default 4).
func WithFanoutWorkers(n int) Option { return func(o *options) { o.workers = n } }

// WithFanoutBatch sets how many inbox rows one fan-out PutMany writes (default 500).
func WithFanoutBatch(n int) Option { return func(o *options) { o.batch = n } }

// DefaultBackfillLimit is how many of a followee's newest posts a follow
// copies into the follower's inbox unless WithBackfillLimit says otherwise
// (like seed 004's 1000 versions): the backfill window.
const DefaultBackfillLimit = 1000

// WithBackfillLimit sets how many of a followee's newest posts a follow
// copies into the follower's inbox (default DefaultBackfillLimit).
func WithBackfillLimit(n int) Option { return func(o *options) { o.backfill = n } }

// WithOutboxSweep sets how often the outbox is swept for fan-outs that no
// worker finished (a crashed gateway's) and the protocol's repairer runs
// (counted.Protocol.Repair), default 30 s; 0 disables both after the one
// pass Start makes.
func WithOutboxSweep(d time.Duration) Option { return func(o *options) { o.sweepInterval = d } }

// WithFanoutLease sets how long a fan-out's lease lasts (default 30 s):
// the gateway instance working a post holds it in the post's outbox row and
// renews it every third of this; when the instance dies, another takes the
// post over once the lease has expired (at its next outbox sweep). The
// clocks of the instances must agree to well within this. A dead publish's
// outbox row is repaired once its lease has expired and it is older than
// the protocol's repair grace, so keep the lease shorter than the grace.
func WithFanoutLease(d time.Duration) Option { return func(o *options) { o.fanoutLease = d } }

// WithInstanceName names this gateway instance in the fan-out leases it
// takes (default "HOST:PID:RANDOM"); every instance sharing the tables
// needs its own.
func WithInstanceName(name string) Option { return func(o *options) { o.instance = name } }

// DefaultFanoutThreshold is the default of WithFanoutThreshold.
const DefaultFanoutThreshold = 10000

// WithFanoutThreshold sets the fan count (the kept fanCount counter) from
// which an author is large (default DefaultFanoutThreshold): a large
// author's posts are not pushed into the fans' inboxes, home timelines
// merge them at read time (hybrid fan-out, large.go). n <= 0 makes no
// author large from then on; the accounts already large (row
// tables.LargeKey) stay so until their fan count drops with a threshold
// set again.
func WithFanoutThreshold(n int) Option { return func(o *options) { o.threshold = n } }

// Users reads the accounts the feed shows and counts: the authors of
// posts, the counters' owners, the users mentioned. *account.Service
// implements it.
type Users interface {
	// GetUsers reads users by id in one batch: one entry per id, nil where
	// the user does not exist. Errors are the store's.
	GetUsers(ctx context.Context, ids []weibo.UserID) ([]*weibo.User, error)
}

// New returns the feed over st, writing its counted relations on w (whose
// clock and logger it uses) and registering them there, reading accounts
// through users and sending its notifications with notices (whom it
// tells how they are checked). The weibo tables must exist
// (tables.Migrate).
func New(st hbase.Store, w *counted.Protocol, users Users, notices Notices, opts ...Option) *Service {
	o := options{
		workers: 4, batch: 500, backfill: DefaultBackfillLimit, sweepInterval: 30 * time.Second,
		fanoutLease: 30 * time.Second, threshold: DefaultFanoutThreshold,
		postCacheSize: DefaultPostCacheSize, postCacheTTL: DefaultPostCacheTTL,
	}
	for _, f := range opts {
		f(&o)
	}
	if o.events == nil {
		shared := o.bus != nil
		if !shared {
			o.bus = bus.NewLocal()
		}
		o.events = events.NewEmitter(o.bus, shared, w.Logger())
	}
	s := &Service{st: st, w: w, log: w.Logger(), opts: o, users: users, notices: notices, events: o.events, susp: weibo.NoSuspensions,
		posts: newPostCache(o.postCacheSize, o.postCacheTTL, func() time.Time { return time.UnixMilli(w.NowMillis()) })}
	s.fan = fanout.New(st, w, o.events, users, s, fanout.Options{
		Workers: o.workers, Batch: o.batch, Backfill: o.backfill, SweepInterval: o.sweepInterval,
		Lease: o.fanoutLease, Instance: o.instance, Threshold: o.threshold,
	})
	s.follows = follow.New(st, w, users, notices, s.fan, o.events, follow.Options{Backfill: o.backfill, Batch: o.batch})
	s.retractions = newRetractions()
	s.register()
	s.registerNoticeChecks()
	return s
}

// Store returns the table API the feed runs on.
func (s *Service) Store() hbase.Store { return s.st }

// Start launches the fan-out workers, re-queues the fan-outs left in the
// outbox by an earlier process and runs one pass of the protocol's
// repairer; then, every sweep interval, it sweeps the outbox and repairs
// again. The workers and the sweeps run until Close. Errors are the
// store's, from the first sweep.
func (s *Service) Start(ctx context.Context) error { return s.fan.Start(ctx) }

// Close stops accepting fan-outs and waits until the queued ones are written
// or ctx ends; what is left unwritten stays in the outbox for the next start.
func (s *Service) Close(ctx context.Context) error {
	return errors.Join(s.fan.Close(ctx), s.retractions.stop(ctx))
}

// FlushFanout waits until every fan-out queued so far has been written,
// and every drain of a large account started so far (large.go) is done.
func (s *Service) FlushFanout(ctx context.Context) error {
	if err := s.fan.Flush(ctx); err != nil {
		return err
	}
	if err := s.retractions.wait(ctx); err != nil {
		return err
	}
	return s.fan.FlushDrains(ctx)
}

func (s *Service) NowMillis() int64 { return s.w.NowMillis() }
