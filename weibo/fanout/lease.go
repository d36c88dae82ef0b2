package fanout

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Fan-out leases: several gateway instances share one HBase and one
// weibo:outbox, and each instance's sweep finds the others' outbox rows. So
// that two instances never work one post at a time, and a post of an
// instance that died is not stranded, a worker takes a post only under a
// lease kept in the post's outbox row (cell o:l, tables.EncodeLease: owner
// and expiry):
//
//   - take (acquire): CheckAndPut our lease where none is; where one is,
//     read it: a lease of another instance that has not expired means the
//     post is being worked, skip it; an expired or our own lease is taken
//     over with CheckAndPut expecting it exactly as read. Of two instances
//     racing, one wins. A row without its request time (o:t) is a finished
//     fan-out: skip it.
//   - renew: every third of the lease, CheckAndPut a later expiry
//     expecting our current lease; finding another's instead means ours
//     had expired (this instance was stalled) and the post was taken over:
//     the worker stops at once.
//   - finish: runFanout deletes the row with CheckAndDelete on our lease,
//     or, when the row must stay (its publish may still be running, or a
//     recount could not be done yet), deletes only our lease cell, with
//     CheckAndDelete on it (release). A worker whose fan-out failed for
//     good releases the lease too, so that the next sweep of any instance
//     retries at once rather than after the lease expires.
//
// The lease is taken in the worker, off the publishing path; Publish's
// writes are unchanged. A worker that fails leaves its lease to expire, and
// the post to the next sweep (of any instance) after that. Fan-out writes
// are idempotent puts, so even a worker that goes on after losing its lease
// only repeats them.

// errLeaseLost ends a fan-out whose lease another instance took over.
var errLeaseLost = errors.New("fan-out lease taken over by another instance")

// DefaultInstanceName is "HOST:PID:RANDOM".
func DefaultInstanceName() string {
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s:%d:%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// lease is a lease this instance holds on one post's fan-out.
type lease struct {
	mu  sync.Mutex
	cur []byte // the cell's value as last written by us
}

func (l *lease) value() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cur
}

// release gives the lease on post id up, leaving the outbox row otherwise
// as it is: it deletes the lease cell if it still holds l.
func (l *lease) release(ctx context.Context, st hbase.Store, id weibo.PostID) error {
	_, err := st.CheckAndDelete(ctx, &hbase.Delete{Table: tables.Outbox, Row: tables.OutboxKey(id),
		Values: hbase.Values{tables.FamOutbox: {tables.ColOutboxLease: nil}}}, tables.FamOutbox, tables.ColOutboxLease, l.value())
	return err
}

// heldElsewhere reports whether v, an outbox row's lease cell, is a lease
// of another instance that has not expired at now (ms).
func (f *fanout) heldElsewhere(v []byte, now int64) bool {
	owner, exp, ok := tables.DecodeLease(v)
	return ok && owner != f.s.opts.instance && exp > now
}

// acquire takes the lease of post id; nil (and no error) when the fan-out
// is done or another instance holds the post.
//
// It first tries for a post nobody has leased yet, the common case:
// CheckAndPut(lease absent). Success proves nobody holds the post now, but
// not that its row is still there — another instance may have finished it
// and deleted the row since this one queued it, and the put then made a
// row holding only our lease — so a Get checks for the row's request time
// (ColOutboxAt); without it the fan-out is done and our lease is deleted
// again. Failure means a lease exists: it is read, and taken over with
// CheckAndPut(that lease) if it is ours or has expired.
func (f *fanout) acquire(ctx context.Context, id weibo.PostID) (*lease, error) {
	row := tables.OutboxKey(id)
	now := f.s.w.NowMillis()
	next := tables.EncodeLease(f.s.opts.instance, now+f.s.opts.fanoutLease.Milliseconds())
	put := &hbase.Put{Table: tables.Outbox, Row: row, Values: hbase.Values{tables.FamOutbox: {tables.ColOutboxLease: next}}}
	ok, err := f.s.st.CheckAndPut(ctx, put, tables.FamOutbox, tables.ColOutboxLease, nil)
	if err != nil {
		return nil, err
	}
	if ok {
		r, err := f.s.st.Get(ctx, &hbase.Get{Table: tables.Outbox, Row: row})
		if err != nil {
			return nil, err // the lease expires; a later sweep retries
		}
		if r.Value(tables.FamOutbox, tables.ColOutboxAt) == nil {
			FanoutLeases.WithLabelValues("done").Inc()
			_, err := f.s.st.CheckAndDelete(ctx, &hbase.Delete{Table: tables.Outbox, Row: row},
				tables.FamOutbox, tables.ColOutboxLease, next)
			return nil, err
		}
		FanoutLeases.WithLabelValues("acquired").Inc()
		return &lease{cur: next}, nil
	}
	r, err := f.s.st.Get(ctx, &hbase.Get{Table: tables.Outbox, Row: row})
	if err != nil {
		return nil, err
	}
	cur := r.Value(tables.FamOutbox, tables.ColOutboxLease)
	switch {
	case r.Value(tables.FamOutbox, tables.ColOutboxAt) == nil:
		FanoutLeases.WithLabelValues("done").Inc()
		return nil, nil
	case cur == nil || f.heldElsewhere(cur, now):
		// cur == nil: the row was deleted and re-made meanwhile; leave it
		// to the next sweep.
		FanoutLeases.WithLabelValues("held").Inc()
		return nil, nil
	}
	if ok, err = f.s.st.CheckAndPut(ctx, put, tables.FamOutbox, tables.ColOutboxLease, cur); err != nil || !ok {
		if err == nil {
			FanoutLeases.WithLabelValues("held").Inc()
		}
		return nil, err
	}
	FanoutLeases.WithLabelValues("acquired").Inc()
	return &lease{cur: next}, nil
}

// renew keeps l alive every third of the lease until ctx ends; when another
// instance has taken the post over it cancels the work with errLeaseLost.
// A renewal that fails on a store error is retried at the next tick (the
// lease may expire meanwhile; the work then ends at the next renewal).
func (f *fanout) renew(ctx context.Context, cancel context.CancelCauseFunc, id weibo.PostID, l *lease) {
	t := time.NewTicker(max(f.s.opts.fanoutLease/3, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		cur := l.value()
		next := tables.EncodeLease(f.s.opts.instance, f.s.w.NowMillis()+f.s.opts.fanoutLease.Milliseconds())
		ok, err := f.s.st.CheckAndPut(ctx, &hbase.Put{Table: tables.Outbox, Row: tables.OutboxKey(id),
			Values: hbase.Values{tables.FamOutbox: {tables.ColOutboxLease: next}}}, tables.FamOutbox, tables.ColOutboxLease, cur)
		switch {
		case err != nil:
			continue
		case !ok:
			FanoutLeases.WithLabelValues("lost").Inc()
			cancel(errLeaseLost)
			return
		}
		l.mu.Lock()
		l.cur = next
		l.mu.Unlock()
	}
}

// run works one queued post: it waits while the store is unavailable, takes
// the post's lease, fans out under it, and — when the store went away
// meanwhile — waits and tries again, until the fan-out is done, another
// instance holds the post, it fails otherwise (the post stays in the
// outbox for a later sweep), or the pool closes.
func (f *fanout) run(job fanoutJob) {
	id := job.id
	paused := false
	for {
		if err := hbase.WaitAvailable(f.waitCtx, f.s.st); err != nil {
			return // closing: the post stays in the outbox
		}
		err := f.leased(job)
		switch {
		case err == nil:
			if paused {
				f.s.log.Info("fan-out resumed after the store came back", "post", id.String())
			}
			return
		case errors.Is(err, errLeaseLost):
			f.s.log.Warn("fan-out taken over by another instance (this one's lease expired)", "post", id.String())
			return
		case errors.Is(err, hbase.ErrUnavailable) && f.waitCtx.Err() == nil:
			if !paused {
				f.s.log.Warn("fan-out paused: the store is unavailable", "post", id.String(), "err", err)
			}
			paused = true
			// Without a breaker to wait for, pause a little before retrying.
			if _, berr := hbase.Available(f.s.st); berr == nil {
				select {
				case <-f.waitCtx.Done():
				case <-time.After(time.Second):
				}
			}
		default:
			f.s.log.Error("fan-out failed; left in outbox for the next sweep", "post", id.String(), "err", err)
			return
		}
	}
}

// leased takes the lease of job's post and, if it got it, fans out under it
// and ends the job (runFanout).
func (f *fanout) leased(job fanoutJob) error {
	id := job.id
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	ctx, stop := context.WithTimeout(ctx, 5*time.Minute)
	defer stop()
	l, err := f.acquire(ctx, id)
	if err != nil || l == nil {
		return err
	}
	f.s.log.Debug("fan-out leased", "post", id.String(), "instance", f.s.opts.instance)
	renewing := make(chan struct{})
	rctx, stopRenew := context.WithCancel(ctx)
	go func() { defer close(renewing); f.renew(rctx, cancel, id, l) }()
	ended, err := f.s.runFanout(ctx, job, l)
	stopRenew()
	<-renewing
	if cause := context.Cause(ctx); errors.Is(cause, errLeaseLost) {
		return errLeaseLost
	}
	switch {
	case err != nil && !errors.Is(err, hbase.ErrUnavailable):
		// Failed for good (run leaves the post to a later sweep): give the
		// post up at once rather than when the lease expires. (While the
		// store is unavailable run keeps the post, and its lease, and
		// retries.)
		rctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_ = l.release(rctx, f.s.st, id)
		cancel()
	case err == nil && ended:
		f.s.log.Debug("fan-out done", "post", id.String(), "instance", f.s.opts.instance)
	case err == nil:
		f.s.log.Debug("fan-out written; outbox row kept for the repairer", "post", id.String(), "instance", f.s.opts.instance)
	}
	return err
}
