// Package weibo is the domain of the gateway: accounts, follow relations,
// posts with inbox fan-out, home timelines, live timeline updates, roles and
// departments, built on the table API of package hbase and the byte layout
// of package weibo/tables. It follows the Weibo table design of the seeds
// (weibo:content, weibo:relations and the "receive-content-email" inbox of
// seed 004, the psn/role and Dep tables of seed 001), with the changes
// documented in docs/schema.md (tall relations and inbox, salted rowkeys, an
// outbox for durable fan-out, both sides of every role and department pair).
//
// One file per concern: accounts.go, relations.go, posts.go and fanout.go,
// large.go (hybrid fan-out: the large accounts), timeline.go, live.go, roles.go, departments.go; paging.go (cursors, page
// start, the verified scan every connection uses), pairs.go (the two-row
// change machinery of roles and departments), repair.go (the writes that
// move a counter: markers, operation sequences, settling, the repairer and
// exact recounts) and errors.go (every error code and reason).
//
// Errors meant for API callers are *Error values with a Code (errors.go);
// every other error is an internal store failure.
//
// Choices made here:
//   - The domain takes a connection's `first` and `after` as the GraphQL
//     arguments arrive and returns the connection types the schema names
//     (UserConnection, PostConnection, ...), which gqlgen binds directly. A
//     cursor is a rowkey suffix that only the domain can interpret, and
//     validating both arguments in one place (paging.go) gives every
//     connection the same BAD_USER_INPUT errors; the resolvers pass them
//     through untouched.
//   - The id types are defined with the byte layout in weibo/tables and
//     aliased here (UserID = tables.UserID), so callers keep weibo.UserID;
//     table creation (tables.Migrate) lives there too, being a property of
//     the layout rather than of the Service.
//   - The offline tools (package fsck, package seed) use the Service's
//     exported reads and the store directly; nothing here exists only for
//     them, and this package does not import the data-set reader.
package weibo

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/weibohbase/gateway/hbase"
)

// Service is the domain API. It is safe for concurrent use. Create it with
// New, call Start to run the fan-out workers, and Close to drain them.
type Service struct {
	st      hbase.Store
	log     *slog.Logger
	now     func() time.Time
	fanout  *fanout
	drains  *drains
	live    liveHub
	opts    options
	bcryptC int
}

type options struct {
	logger        *slog.Logger
	now           func() time.Time
	workers       int
	batch         int
	backfill      int
	sweepInterval time.Duration
	repairGrace   time.Duration
	fanoutLease   time.Duration
	instance      string
	bcryptCost    int
	threshold     int
	// pairHook, when set, is called between the two writes of every
	// two-row change (pairs.go); an error it returns aborts the change
	// there, leaving a half-written pair (tests).
	pairHook func(ctx context.Context, step string) error
}

// Option configures a Service.
type Option func(*options)

// WithLogger sets the structured logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithClock replaces time.Now (tests).
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// WithFanoutWorkers sets the number of fan-out workers (default 4).
func WithFanoutWorkers(n int) Option { return func(o *options) { o.workers = n } }

// WithFanoutBatch sets how many inbox rows one fan-out PutMany writes (default 500).
func WithFanoutBatch(n int) Option { return func(o *options) { o.batch = n } }

// DefaultBackfillLimit is how many of a followee's newest posts a follow
// copies into the follower's inbox unless WithBackfillLimit says otherwise
// (like seed 004's 1000 versions): the backfill window.
const DefaultBackfillLimit = 1000

// DefaultRepairGrace is the default of WithRepairGrace.
const DefaultRepairGrace = 60 * time.Second

// WithBackfillLimit sets how many of a followee's newest posts a follow
// copies into the follower's inbox (default DefaultBackfillLimit).
func WithBackfillLimit(n int) Option { return func(o *options) { o.backfill = n } }

// WithOutboxSweep sets how often the outbox is swept for fan-outs that no
// worker finished (a crashed gateway's) and the repairer runs (repair.go),
// default 30 s; 0 disables both after the one pass Start makes.
func WithOutboxSweep(d time.Duration) Option { return func(o *options) { o.sweepInterval = d } }

// WithRepairGrace sets how old (by the writing process's clock) the
// weibo:pending row of a follow, unfollow, assignRole or revokeRole, or the
// weibo:outbox row of a publish not marked counted, must be before the
// repairer treats the write as dead and repairs what it left (default
// 60 s). A write that is still running after half of it no longer changes
// its counter itself and leaves the recount to the repairer, so the grace
// must be well above the store's worst latency; clocks of the gateways
// sharing a store must agree to well within it. A dead publish's outbox row
// is repaired once its fan-out lease (WithFanoutLease) has expired too, so
// keep the lease shorter than the grace.
func WithRepairGrace(d time.Duration) Option { return func(o *options) { o.repairGrace = d } }

// WithFanoutLease sets how long a fan-out's lease lasts (default 30 s):
// the gateway instance working a post holds it in the post's outbox row and
// renews it every third of this; when the instance dies, another takes the
// post over once the lease has expired (at its next outbox sweep). The
// clocks of the instances must agree to well within this.
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

// WithBcryptCost sets the bcrypt cost of new password hashes (default
// bcrypt.DefaultCost; tests lower it).
func WithBcryptCost(c int) Option { return func(o *options) { o.bcryptCost = c } }

// New returns a Service over st. The weibo tables must exist (tables.Migrate).
func New(st hbase.Store, opts ...Option) *Service {
	o := options{
		logger: slog.Default(), now: time.Now, workers: 4, batch: 500,
		backfill: DefaultBackfillLimit, sweepInterval: 30 * time.Second, repairGrace: DefaultRepairGrace, fanoutLease: 30 * time.Second, bcryptCost: 10,
		threshold: DefaultFanoutThreshold,
	}
	for _, f := range opts {
		f(&o)
	}
	if o.instance == "" {
		o.instance = defaultInstanceName()
	}
	s := &Service{st: st, log: o.logger, now: o.now, opts: o, bcryptC: o.bcryptCost}
	s.fanout = newFanout(s)
	s.drains = newDrains()
	return s
}

// Store returns the table API the service runs on.
func (s *Service) Store() hbase.Store { return s.st }

// Start launches the fan-out workers, re-queues the fan-outs left in the
// outbox by an earlier process and runs one repair pass (repair.go); then,
// every sweep interval, it sweeps the outbox and repairs again. The workers
// and the sweeps run until Close. Errors are the store's, from the first
// sweep.
func (s *Service) Start(ctx context.Context) error { return s.fanout.start(ctx) }

// Close stops accepting fan-outs and waits until the queued ones are written
// or ctx ends; what is left unwritten stays in the outbox for the next start.
func (s *Service) Close(ctx context.Context) error {
	return errors.Join(s.fanout.close(ctx), s.drains.stop(ctx))
}

// FlushFanout waits until every fan-out queued so far has been written,
// and every drain of a large account started so far (large.go) is done.
func (s *Service) FlushFanout(ctx context.Context) error {
	if err := s.fanout.flush(ctx); err != nil {
		return err
	}
	return s.drains.wait(ctx)
}

func (s *Service) nowMillis() int64 { return s.now().UnixMilli() }
