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
// driven by the durable weibo:outbox table.
type fanout struct {
	s    *Service
	jobs chan PostID

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
			for {
				select {
				case <-lctx.Done():
					return
				case <-t.C:
					if err := f.sweep(lctx, iv); err != nil && lctx.Err() == nil {
						f.s.log.Warn("outbox sweep failed", "err", err)
					}
				}
			}
		}()
	}
	return nil
}

// sweep queues every outbox row older than minAge.
func (f *fanout) sweep(ctx context.Context, minAge time.Duration) error {
	cutoff := f.s.nowMillis() - minAge.Milliseconds()
	var found []PostID
	err := f.s.st.Scan(ctx, &hbase.Scan{Table: tables.Outbox}, func(r *hbase.Result) error {
		id, ok := tables.DecodeOutboxKey(r.Row)
		if ok && int64(tables.DecodeU64(r.Value(tables.FamOutbox, tables.ColOutboxAt))) <= cutoff {
			found = append(found, id)
		}
		return nil
	})
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
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		err := f.s.fanOut(ctx, id)
		cancel()
		if err != nil {
			f.s.log.Error("fan-out failed; left in outbox for the next sweep", "post", id.String(), "err", err)
		}
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
// the author, in PutMany batches, then deletes the outbox row. Every write is
// an idempotent put, so running it twice adds nothing.
func (s *Service) fanOut(ctx context.Context, id PostID) error {
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
		s.live.notify(fans...)
	}
	// The post does not exist when publishing failed before storing it.
	return s.st.Delete(ctx, &hbase.Delete{Table: tables.Outbox, Row: tables.OutboxKey(id)})
}
