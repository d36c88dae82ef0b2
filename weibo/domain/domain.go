// Package domain wires the gateway's business areas over one store: the
// counted-write protocol (package counted), the accounts (package
// account), the social feed (package feed) and its interactions (packages
// like, comment, repost and topic), and the organisation (package org and
// its subpackages), which reads users through the accounts. Every process
// of the gateway — serve, fsck, seed, admin — and the tests build the
// domain here, so that every counted relation is registered with the one
// protocol the repairer runs, and every module publishes its live events
// on the one bus.
package domain

import (
	"context"
	"log/slog"
	"time"

	"github.com/weibohbase/gateway/bus"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/account"
	"github.com/weibohbase/gateway/weibo/comment"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/events"
	"github.com/weibohbase/gateway/weibo/fanout"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/follow"
	"github.com/weibohbase/gateway/weibo/like"
	"github.com/weibohbase/gateway/weibo/media"
	"github.com/weibohbase/gateway/weibo/moderation/report"
	"github.com/weibohbase/gateway/weibo/moderation/suspend"
	"github.com/weibohbase/gateway/weibo/notify"
	"github.com/weibohbase/gateway/weibo/provision"
	"github.com/weibohbase/gateway/weibo/repost"
	"github.com/weibohbase/gateway/weibo/safety"
	"github.com/weibohbase/gateway/weibo/timeline"
	"github.com/weibohbase/gateway/weibo/topic"
)

// Domain is the wired domain. Its parts are safe for concurrent use.
type Domain struct {
	// Writes is the counted-write protocol both areas write on: Repair,
	// RecountCounters, the registered relations.
	Writes *counted.Protocol
	// Accounts holds the users: registration, login, reads by id and
	// username, tokens that end, profiles.
	Accounts *account.Service
	// Feed is the social feed: follows, posts, their deletes.
	Feed *feed.Service
	// Follows is the follow pair: follow, unfollow, follows and fans.
	Follows *follow.Service
	// Fanout is the feed's inbox fan-out: the outbox workers and leases,
	// the large accounts (hybrid fan-out).
	Fanout *fanout.Engine
	// Timeline is the home timeline: its pages and its live updates.
	Timeline *timeline.Service
	// Notify is the notifications: every module's notify writes, a
	// recipient's list and unread count, live notification events.
	Notify *notify.Service
	// Likes is the like of a post: like, unlike, likers and liked posts.
	Likes *like.Service
	// Comments is the comments on posts: add, delete, a post's list.
	Comments *comment.Service
	// Reposts is the repost of a post: repost, a post's reposts.
	Reposts *repost.Service
	// Topics is the topics of posts: topic pages, top and trending topics.
	Topics *topic.Service
	// Safety is what a user controls of whom and what they see: blocks,
	// mutes, keyword filters, and the viewer's Set every read honours.
	Safety *safety.Service
	// Org is the organisation: roles, departments, memberships,
	// authorization, bulk changes and the audit log.
	Org *Org
	// Media is the pictures of posts: uploads, their variants, the
	// references that keep their bytes.
	Media *media.Service
	// Reports is the reports of content and the moderation queue.
	Reports *report.Service
	// Suspensions suspends users and, from its Registry (loaded by
	// Start), hides their content from every read and refuses their
	// tokens.
	Suspensions *suspend.Service
	// Provision is what an identity provider provisions through SCIM:
	// users, departments and roles with their members.
	Provision *provision.Service
}

type config struct {
	protocol   []counted.Option
	account    []account.Option
	feed       []feed.Option
	timeline   []timeline.Option
	bus        bus.Bus
	eventQueue int
	reload     time.Duration
}

// Option configures a Domain: the options of the protocol, the accounts
// and the feed, each named here as in its own package.
type Option func(*config)

// WithLogger sets the structured logger of every part (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return protocol(counted.WithLogger(l)) }

// WithClock replaces time.Now in every part (tests).
func WithClock(now func() time.Time) Option { return protocol(counted.WithClock(now)) }

// WithRepairGrace sets the protocol's repair grace (counted.WithRepairGrace).
func WithRepairGrace(d time.Duration) Option { return protocol(counted.WithRepairGrace(d)) }

// WithStepHook installs the protocol's fault-injection hook
// (counted.WithStepHook; tests only).
func WithStepHook(fn func(ctx context.Context, step string) error) Option {
	return protocol(counted.WithStepHook(fn))
}

// WithFanoutWorkers sets the feed's fan-out workers (feed.WithFanoutWorkers).
func WithFanoutWorkers(n int) Option { return feedOption(feed.WithFanoutWorkers(n)) }

// WithFanoutBatch sets the rows of one fan-out write (feed.WithFanoutBatch),
// and of one batched read of a recount or bulk change (counted.WithBatch).
func WithFanoutBatch(n int) Option {
	return func(c *config) {
		c.feed = append(c.feed, feed.WithFanoutBatch(n))
		c.protocol = append(c.protocol, counted.WithBatch(n))
	}
}

// WithBackfillLimit sets the feed's backfill window (feed.WithBackfillLimit).
func WithBackfillLimit(n int) Option { return feedOption(feed.WithBackfillLimit(n)) }

// WithOutboxSweep sets the interval of the feed's outbox sweep and of the
// repairer (feed.WithOutboxSweep).
func WithOutboxSweep(d time.Duration) Option { return feedOption(feed.WithOutboxSweep(d)) }

// WithFanoutLease sets the feed's fan-out lease (feed.WithFanoutLease).
func WithFanoutLease(d time.Duration) Option { return feedOption(feed.WithFanoutLease(d)) }

// WithInstanceName names this instance in fan-out leases (feed.WithInstanceName).
func WithInstanceName(name string) Option { return feedOption(feed.WithInstanceName(name)) }

// WithFanoutThreshold sets the fan count from which an author is large
// (feed.WithFanoutThreshold).
func WithFanoutThreshold(n int) Option { return feedOption(feed.WithFanoutThreshold(n)) }

// WithPostCache sizes the post cache of home-timeline pages (feed.WithPostCache).
func WithPostCache(size int, ttl time.Duration) Option {
	return feedOption(feed.WithPostCache(size, ttl))
}

// WithBus sets the bus the live events of every module travel on
// (default: a bus.Local of this domain alone). Given one, readers rely on
// its events while it is connected (events.NewEmitter's shared): the
// instances writing to the store must share it.
func WithBus(b bus.Bus) Option { return func(c *config) { c.bus = b } }

// WithEventQueue sets the queue of one live subscription, of the home
// timeline (timeline.WithEventQueue) or of notifications.
func WithEventQueue(n int) Option {
	return func(c *config) {
		c.eventQueue = n
		c.timeline = append(c.timeline, timeline.WithEventQueue(n))
	}
}

// WithSuspensionReload sets how often each instance scans the
// suspensions table again while its bus is away (suspend.NewRegistry's
// reload; default suspend.DefaultReload).
func WithSuspensionReload(d time.Duration) Option { return func(c *config) { c.reload = d } }

// WithBcryptCost sets the cost of new password hashes (account.WithBcryptCost).
func WithBcryptCost(cost int) Option {
	return func(c *config) { c.account = append(c.account, account.WithBcryptCost(cost)) }
}

func protocol(o counted.Option) Option {
	return func(c *config) { c.protocol = append(c.protocol, o) }
}

func feedOption(o feed.Option) Option {
	return func(c *config) { c.feed = append(c.feed, o) }
}

// New wires the domain over st. The weibo tables must exist
// (tables.Migrate). Call Start to run the fan-out and the repairer, and
// Close to drain them.
func New(st hbase.Store, opts ...Option) *Domain {
	var c config
	for _, o := range opts {
		o(&c)
	}
	w := counted.New(st, c.protocol...)
	b, shared := c.bus, c.bus != nil
	if !shared {
		b = bus.NewLocal()
	}
	ev := events.NewEmitter(b, shared, w.Logger())
	a := account.New(st, w, ev, c.account...)
	n := notify.New(st, w, ev, a, c.eventQueue)
	f := feed.New(st, w, a, n, append(c.feed, feed.WithEvents(ev))...)
	sf := safety.New(st, w, a, f.Follows(), ev)
	f.Follows().SetGuard(sf)
	f.SetSafety(sf) // home pages remember the viewer's Set by its version
	n.SetBlocks(sf) // a mention across a block notifies nobody
	lk := like.New(st, w, a, f, n)
	lk.SetGuard(sf)
	cm := comment.New(st, w, f, f, n)
	cm.SetGuard(sf)
	rp := repost.New(st, w, f, n)
	rp.SetGuard(sf)
	o := newOrg(st, w, a)
	// Suspensions hide at read time, from each instance's registry.
	reg := suspend.NewRegistry(st, b, w.Logger(), c.reload)
	sp := suspend.New(st, w, a, o.Audit, reg)
	a.SetSuspensions(reg)
	f.SetSuspensions(reg)
	n.SetSuspensions(reg)
	lk.SetSuspensions(reg)
	cm.SetSuspensions(reg)
	rp.SetSuspensions(reg)
	tp := topic.New(st, w, f)
	tp.SetSuspensions(reg)
	reports := report.New(st, w, a, f, cm, n, o.Audit, suspender{sp})
	reports.SetRanks(o.Authz)
	// Pictures: uploads, their bytes stored once, referenced by posts and
	// by the open reports of those posts.
	md := media.New(st, w, f)
	reports.SetMedia(md)
	return &Domain{
		Writes:      w,
		Accounts:    a,
		Feed:        f,
		Fanout:      f.Fanout(),
		Follows:     f.Follows(),
		Timeline:    timeline.New(st, f, f.Fanout(), ev, append([]timeline.Option{timeline.WithLogger(w.Logger()), timeline.WithClock(w.NowMillis), timeline.WithSuspensions(reg)}, c.timeline...)...),
		Notify:      n,
		Likes:       lk,
		Comments:    cm,
		Reposts:     rp,
		Topics:      tp,
		Safety:      sf,
		Org:         o,
		Suspensions: sp,
		Reports:     reports,
		Media:       md,
		Provision: provision.New(st, w, provision.Parts{Accounts: a, Roles: o.Roles, Departments: o.Departments,
			Members: o.Members, Authz: o.Authz, Suspensions: sp, Audit: o.Audit}),
	}
}

// Store returns the table API the domain runs on.
func (d *Domain) Store() hbase.Store { return d.Writes.Store() }

// Start loads the suspensions' registry (suspend.Registry.Start: its bus
// subscription, and its scans while the bus is away, run until Close),
// then runs the
// feed's fan-out workers and outbox sweeps and, with each sweep, the
// protocol's repairer (feed.Service.Start).
func (d *Domain) Start(ctx context.Context) error {
	if err := d.Suspensions.Registry().Start(ctx); err != nil {
		return err
	}
	return d.Feed.Start(ctx)
}

// Close drains the fan-out (feed.Service.Close) and stops the
// suspensions' registry.
func (d *Domain) Close(ctx context.Context) error {
	defer d.Suspensions.Registry().Close()
	return d.Feed.Close(ctx)
}

// FlushFanout waits for the fan-outs and drains queued so far
// (feed.Service.FlushFanout).
func (d *Domain) FlushFanout(ctx context.Context) error { return d.Feed.FlushFanout(ctx) }

// suspender is the suspensions' service as the reports' SUSPEND_USER
// calls it (report.Suspender): the suspension made, or the error.
type suspender struct{ s *suspend.Service }

// Suspend suspends target until until (nil: until lifted) for reason.
func (p suspender) Suspend(ctx context.Context, target weibo.UserID, until *time.Time, reason string) error {
	_, err := p.s.Suspend(ctx, target, until, reason)
	return err
}
