package weibo

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo/tables"
)

// fanout is the worker pool that writes a post's rowkey into every fan's
// inbox (seed 000/004: the fan-out "另起一个线程" off the publishing path),
// driven by the durable weibo:outbox table. Several gateway instances share
// the outbox: a worker works a post only under its lease (lease.go). While
// the store is unavailable (hbase.Available) workers and sweeps wait, and
// resume by themselves when it is back.
type fanout struct {
	s    *Service
	jobs chan PostID
	// waitCtx ends at close: workers waiting for the store give up then.
	waitCtx  context.Context
	stopWait context.CancelFunc

	mu       sync.Mutex
	cond     *sync.Cond
	pending  map[PostID]bool // queued or running
	closed   bool
	started  bool
	workers  sync.WaitGroup
	stopLoop context.CancelFunc
}

func newFanout(s *Service) *fanout {
	f := &fanout{s: s, jobs: make(chan PostID, 4096), pending: map[PostID]bool{}}
	f.waitCtx, f.stopWait = context.WithCancel(context.Background())
	f.cond = sync.NewCond(&f.mu)
	return f
}

func (f *fanout) start(ctx context.Context) error {
	f.mu.Lock()
	if f.started {
		f.mu.Unlock()
		return nil
	}
	f.started = true
	f.mu.Unlock()
	for i := 0; i < f.s.opts.workers; i++ {
		f.workers.Add(1)
		go f.work()
	}
	// Re-queue what an earlier process left in the outbox.
	if err := f.sweep(ctx, 0); err != nil {
		return err
	}
	if iv := f.s.opts.sweepInterval; iv > 0 {
		lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		f.stopLoop = cancel
		go func() {
			t := time.NewTicker(iv)
			defer t.Stop()
			paused := false
			for {
				// While the store is unavailable, wait; sweep at once when
				// it is back (fan-outs may have failed meanwhile).
				changed, err := hbase.Available(f.s.st)
				if err != nil {
					paused = true
					select {
					case <-lctx.Done():
						return
					case <-changed:
					}
					continue
				}
				if !paused {
					select {
					case <-lctx.Done():
						return
					case <-changed:
						continue
					case <-t.C:
					}
				}
				paused = false
				if err := f.sweep(lctx, iv); err != nil && lctx.Err() == nil && !errors.Is(err, hbase.ErrUnavailable) {
					f.s.log.Warn("outbox sweep failed", "err", err)
				}
			}
		}()
	}
	return nil
}

// sweep queues every outbox row older than minAge whose lease, if any, is
// this instance's or has expired, and sets gateway_outbox_depth to the
// number of rows.
func (f *fanout) sweep(ctx context.Context, minAge time.Duration) error {
	now := f.s.nowMillis()
	cutoff := now - minAge.Milliseconds()
	var found []PostID
	rows := 0
	err := f.s.st.Scan(ctx, &hbase.Scan{Table: tables.Outbox}, func(r *hbase.Result) error {
		rows++
		id, ok := tables.DecodeOutboxKey(r.Row)
		if ok && int64(tables.DecodeU64(r.Value(tables.FamOutbox, tables.ColOutboxAt))) <= cutoff &&
			!f.heldElsewhere(r.Value(tables.FamOutbox, tables.ColOutboxLease), now) {
			found = append(found, id)
		}
		return nil
	})
	if err == nil {
		OutboxDepth.Set(float64(rows))
	}
	for _, id := range found {
		f.enqueue(id)
	}
	if len(found) > 0 {
		f.s.log.Info("outbox: re-queued fan-outs", "count", len(found))
	}
	return err
}

// enqueue queues a fan-out unless it is queued already, the pool is closed
// or the queue is full; in the last two cases the outbox row stays and a
// later sweep picks it up.
func (f *fanout) enqueue(id PostID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed || f.pending[id] {
		return
	}
	select {
	case f.jobs <- id:
		f.pending[id] = true
	default:
		f.s.log.Warn("fan-out queue full; left in outbox", "post", id.String())
	}
}

func (f *fanout) work() {
	defer f.workers.Done()
	for id := range f.jobs {
		f.run(id)
		f.mu.Lock()
		delete(f.pending, id)
		f.cond.Broadcast()
		f.mu.Unlock()
	}
}

func (f *fanout) flush(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		f.mu.Lock()
		for len(f.pending) > 0 && ctx.Err() == nil {
			f.cond.Wait()
		}
		f.mu.Unlock()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		f.mu.Lock()
		f.cond.Broadcast()
		f.mu.Unlock()
		<-done
		return ctx.Err()
	}
}

func (f *fanout) close(ctx context.Context) error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil
	}
	f.closed = true
	close(f.jobs)
	started := f.started
	f.mu.Unlock()
	f.stopWait()
	if f.stopLoop != nil {
		f.stopLoop()
	}
	if !started {
		return nil
	}
	done := make(chan struct{})
	go func() { f.workers.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return errors.Join(errors.New("fan-out workers still running; their posts stay in the outbox"), ctx.Err())
	}
}

// fanOut writes post id into the inbox of its author and of every fan of
// the author, in PutMany batches, then deletes the outbox row if it still
// holds l, this instance's lease (another instance that took the post over
// deletes it itself). Every write is an idempotent put, so running it twice
// adds nothing.
func (s *Service) fanOut(ctx context.Context, id PostID, l *lease) error {
	exists, err := s.st.Get(ctx, &hbase.Get{Table: tables.Content, Row: tables.ContentKey(id), Families: []string{tables.FamPost}})
	if err != nil {
		return err
	}
	if exists.Exists() {
		var fans []UserID
		err = scanWrite(ctx, s.st, &hbase.Scan{Table: tables.Relations, Prefix: tables.RelationPrefix(id.Author, tables.Fans)}, s.opts.batch,
			[]*hbase.Put{inboxPut(id.Author, id)}, func(r *hbase.Result) (*hbase.Put, bool) {
				_, _, fan, ok := tables.DecodeRelationKey(r.Row)
				if !ok {
					return nil, false
				}
				fans = append(fans, fan)
				return inboxPut(fan, id), true
			}, s.st.PutMany)
		if err != nil {
			return err
		}
		FanoutLag.Observe(max(float64(s.nowMillis()-id.Millis)/1000, 0))
		s.live.notify(fans...)
	}
	// The post does not exist when publishing failed before storing it.
	_, err = s.st.CheckAndDelete(ctx, &hbase.Delete{Table: tables.Outbox, Row: tables.OutboxKey(id)},
		tables.FamOutbox, tables.ColOutboxLease, l.value())
	return err
}
