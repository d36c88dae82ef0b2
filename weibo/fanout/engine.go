// Package fanout is the durable inbox fan-out of the seeds (000, 004:
// publishing writes the post's rowkey into every fan's inbox, "另起一个线程"
// off the publishing path): the worker pool driven by weibo:outbox, the
// leases that let several gateway instances share it (lease.go), and the
// hybrid fan-out of large accounts whose posts home timelines merge at
// read time (large.go). The feed (package feed) builds the Engine, queues
// each publish's fan-out and answers what the fan-out asks back through
// Host; the timelines read the large accounts.
package fanout

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/events"
	"github.com/weibohbase/gateway/weibo/tables"
)

// StepWritten is the fan-out's step, passed to the protocol's step hook
// (counted.WithStepHook): after one batch of a fan-out's inbox rows,
// before their re-check. The publish relation declares it.
const StepWritten = "fanout:written"

// Host is what the fan-out asks of the feed. *feed.Service implements it.
type Host interface {
	// Posted sends the notifications of post id, whose content row is r,
	// as a sync (a fan-out run again adds nobody twice), and returns its
	// encoded live event. Errors are the store's.
	Posted(ctx context.Context, id weibo.PostID, r *hbase.Result) ([]byte, error)
	// SettleFollow settles the follow pair a → b from its attends row;
	// an error wrapping counted.ErrUnsettled when it kept changing.
	SettleFollow(ctx context.Context, a, b weibo.UserID) error
	// RecountPosts recounts author's postCount; false when a write of the
	// author was in flight and the recount must wait.
	RecountPosts(ctx context.Context, author weibo.UserID) (bool, error)
	// AnnounceLarge tells the live streams of author's fans that author
	// became large (their posts are merged from then on).
	AnnounceLarge(author weibo.UserID)
}

// Users reads the fan count of an account (a drain's end). *account.Service
// implements it.
type Users interface {
	GetUsers(ctx context.Context, ids []weibo.UserID) ([]*weibo.User, error)
}

// Options are the fan-out's settings; the zero value of a field takes its
// default (see package feed's options, which set them).
type Options struct {
	// Workers is the number of fan-out workers (default 4).
	Workers int
	// Batch is how many inbox rows one fan-out PutMany writes (default 500).
	Batch int
	// Backfill is how many of an account's newest posts a drain copies
	// into each fan's inbox (the backfill window).
	Backfill int
	// SweepInterval is how often the outbox is swept and the protocol's
	// repairer runs; 0 disables both after the pass Start makes.
	SweepInterval time.Duration
	// Lease is how long a fan-out's lease lasts (default 30 s).
	Lease time.Duration
	// Instance names this gateway instance in the leases it takes
	// (default DefaultInstanceName()).
	Instance string
	// Threshold is the fan count from which an author is large; <= 0
	// makes no author large from then on.
	Threshold int
}

// Engine is the fan-out: safe for concurrent use. Create it with New,
// run it with Start, and stop it with Close.
type Engine struct {
	st     hbase.Store
	w      *counted.Protocol
	events *events.Emitter
	users  Users
	host   Host
	log    *slog.Logger
	opts   options
	pool   *fanout
	drains *drains
}

// options are Options under the names the code uses.
type options struct {
	workers, batch, backfill, threshold int
	sweepInterval, fanoutLease          time.Duration
	instance                            string
}

// New returns the fan-out over st, counting on w (whose clock and logger
// it uses), publishing live events with ev, reading fan counts through
// users and asking host what only the feed knows.
func New(st hbase.Store, w *counted.Protocol, ev *events.Emitter, users Users, host Host, o Options) *Engine {
	if o.Workers <= 0 {
		o.Workers = 4
	}
	if o.Batch <= 0 {
		o.Batch = 500
	}
	if o.Lease <= 0 {
		o.Lease = 30 * time.Second
	}
	if o.Instance == "" {
		o.Instance = DefaultInstanceName()
	}
	e := &Engine{st: st, w: w, events: ev, users: users, host: host, log: w.Logger(), opts: options{
		workers: o.Workers, batch: o.Batch, backfill: o.Backfill, threshold: o.Threshold,
		sweepInterval: o.SweepInterval, fanoutLease: o.Lease, instance: o.Instance,
	}}
	e.pool = newFanout(e)
	e.drains = newDrains()
	return e
}

// Start launches the fan-out workers, re-queues the fan-outs left in the
// outbox by an earlier process, runs one pass of the protocol's repairer
// and resumes the drains left; then, every sweep interval, it sweeps the
// outbox, repairs and resumes again, until Close. Errors are the store's,
// from the first pass.
func (s *Engine) Start(ctx context.Context) error { return s.pool.start(ctx) }

// Close stops accepting fan-outs and waits until the queued ones are
// written and the drains stopped, or ctx ends; what is left unwritten
// stays in the outbox for the next start.
func (s *Engine) Close(ctx context.Context) error {
	return errors.Join(s.pool.close(ctx), s.drains.stop(ctx))
}

// Flush waits until every fan-out queued so far has been written.
func (s *Engine) Flush(ctx context.Context) error { return s.pool.flush(ctx) }

// FlushDrains waits until every drain started so far is done.
func (s *Engine) FlushDrains(ctx context.Context) error { return s.drains.wait(ctx) }

// Enqueue queues the fan-out of post id, which ends as end says, unless
// it is queued already or the queue is full (the outbox row stays for a
// later sweep).
func (s *Engine) Enqueue(id weibo.PostID, end End) { s.pool.enqueue(fanoutJob{id: id, end: end}) }

// InboxPut is the Put of post p's entry in owner's inbox.
func InboxPut(owner weibo.UserID, p weibo.PostID) *hbase.Put {
	return &hbase.Put{Table: tables.Inbox, Row: tables.InboxKey(owner, p), Values: inboxValues}
}

// inboxValues is the one cell of every inbox row (shared, read-only: a
// Put never changes its Values).
var inboxValues = hbase.Values{tables.FamInbox: {tables.ColInboxAt: {}}}
