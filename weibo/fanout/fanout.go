package fanout

import (
	"context"
	"errors"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/events"
	"github.com/weibohbase/gateway/weibo/tables"
)

// End says what a fan-out does with its outbox row once the inbox rows
// are written.
type End int

const (
	// EndDelete: the publish counted the post (it ran in this process, or
	// the row is marked counted): delete the row.
	EndDelete End = iota
	// EndKeep: the row is not marked counted and is younger than the
	// repair grace, so its publish may still be running: keep the row.
	EndKeep
	// EndRecount: the row is not marked counted and older than the grace:
	// its publish died (or outlived its budget) before counting. Recount
	// the author's posts, then delete the row.
	EndRecount
)

// fanoutJob is one queued fan-out.
type fanoutJob struct {
	id  weibo.PostID
	end End
}

// fanout is the worker pool that writes a post's rowkey into every fan's
// inbox (seed 000/004: the fan-out "另起一个线程" off the publishing path),
// driven by the durable weibo:outbox table. Several gateway instances share
// the outbox: a worker works a post only under its lease (lease.go). While
// the store is unavailable (hbase.Available) workers and sweeps wait, and
// resume by themselves when it is back.
type fanout struct {
	s    *Engine
	jobs chan fanoutJob
	// waitCtx ends at close: workers waiting for the store give up then.
	waitCtx  context.Context
	stopWait context.CancelFunc

	mu       sync.Mutex
	cond     *sync.Cond
	pending  map[weibo.PostID]bool // queued or running
	closed   bool
	started  bool
	workers  sync.WaitGroup
	stopLoop context.CancelFunc
}

func newFanout(s *Engine) *fanout {
	f := &fanout{s: s, jobs: make(chan fanoutJob, 4096), pending: map[weibo.PostID]bool{}}
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
	// Re-queue what an earlier process left in the outbox, and repair
	// what its dead writes left.
	if err := f.sweep(ctx, 0); err != nil {
		return err
	}
	if _, err := f.s.w.Repair(ctx); err != nil {
		return err
	}
	if err := f.s.resumeDrains(ctx); err != nil {
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
				if _, err := f.s.w.Repair(lctx); err != nil && lctx.Err() == nil && !errors.Is(err, hbase.ErrUnavailable) {
					f.s.log.Warn("repair pass failed", "err", err)
				}
				if err := f.s.resumeDrains(lctx); err != nil && lctx.Err() == nil && !errors.Is(err, hbase.ErrUnavailable) {
					f.s.log.Warn("resuming drains failed", "err", err)
				}
			}
		}()
	}
	return nil
}

// sweep queues the fan-out of every outbox row older than minAge, and of
// every row that is not marked counted and is older than the repair grace
// (a dead publish: its fan-out ends with a recount, see End), unless
// another live instance holds its lease; it sets gateway_outbox_depth to the
// number of rows.
func (f *fanout) sweep(ctx context.Context, minAge time.Duration) error {
	now := f.s.w.NowMillis()
	cutoff := now - minAge.Milliseconds()
	var found []fanoutJob
	rows := 0
	err := f.s.st.Scan(ctx, &hbase.Scan{Table: tables.Outbox}, func(r *hbase.Result) error {
		rows++
		id, ok := tables.DecodeOutboxKey(r.Row)
		if !ok || f.heldElsewhere(r.Value(tables.FamOutbox, tables.ColOutboxLease), now) {
			return nil
		}
		at := tables.OutboxAt(r)
		job := fanoutJob{id: id, end: EndDelete}
		if r.Value(tables.FamOutbox, tables.ColOutboxCounted) == nil {
			job.end = EndKeep
			if now-at > f.s.w.GraceMillis() {
				job.end = EndRecount
			}
		}
		if at <= cutoff || job.end == EndRecount {
			found = append(found, job)
		}
		return nil
	})
	if err == nil {
		OutboxDepth.Set(float64(rows))
	}
	for _, job := range found {
		f.enqueue(job)
	}
	if len(found) > 0 {
		f.s.log.Info("outbox: re-queued fan-outs", "count", len(found))
	}
	return err
}

// enqueue queues a fan-out unless it is queued already, the pool is closed
// or the queue is full; in the last two cases the outbox row stays and a
// later sweep picks it up.
func (f *fanout) enqueue(job fanoutJob) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed || f.pending[job.id] {
		return
	}
	select {
	case f.jobs <- job:
		f.pending[job.id] = true
	default:
		f.s.log.Warn("fan-out queue full; left in outbox", "post", job.id.String())
	}
}

func (f *fanout) work() {
	defer f.workers.Done()
	for job := range f.jobs {
		f.run(job)
		f.mu.Lock()
		delete(f.pending, job.id)
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

// runFanout runs one queued fan-out under l, this instance's lease on it
// (lease.go), and ends it as job.end says: it deletes the outbox row if the
// row still holds l (another instance that took the post over ends it
// itself) and reports ended; when the row must stay (its publish may still
// be running, or the recount could not be done yet) it gives the lease up
// and reports !ended.
func (s *Engine) runFanout(ctx context.Context, job fanoutJob, l *lease) (ended bool, err error) {
	if err := s.fanOut(ctx, job.id); err != nil {
		return false, err
	}
	switch job.end {
	case EndKeep:
		return false, l.release(ctx, s.st, job.id)
	case EndRecount:
		done, err := s.host.RecountPosts(ctx, job.id.Author)
		if err != nil {
			return false, err
		}
		if !done {
			return false, l.release(ctx, s.st, job.id) // not yet: the next sweep tries again
		}
	}
	ended, err = s.st.CheckAndDelete(ctx, &hbase.Delete{Table: tables.Outbox, Row: tables.OutboxKey(job.id)},
		tables.FamOutbox, tables.ColOutboxLease, l.value())
	return ended, err
}

// RepairFanout runs the fan-out of post id at once, recounts its author's
// posts and deletes its outbox row, as the sweep does for the outbox row of
// a publish that died; it reports false when a write of the author was in
// flight and the row was kept for a later pass. It is what `gateway fsck
// --repair` does for an outbox row older than the repair grace. Errors are
// the store's.
func (s *Engine) RepairFanout(ctx context.Context, id weibo.PostID) (_ bool, err error) {
	defer weibo.Wrapf(&err, "repair fan-out of %s", id)
	if err := s.fanOut(ctx, id); err != nil {
		return false, err
	}
	done, err := s.host.RecountPosts(ctx, id.Author)
	if err != nil || !done {
		return false, err
	}
	return true, s.st.Delete(ctx, &hbase.Delete{Table: tables.Outbox, Row: tables.OutboxKey(id)})
}

// fanOut writes post id into the inbox of its author and of every fan of
// the author, in PutMany batches (up to the number of fan-out workers in
// flight at once), and settles each batch (settleFanout). It
// leaves the outbox row alone (runFanout ends it). Every write is an
// idempotent put or delete, so running it twice adds nothing. A post that
// does not exist (its publish failed before storing it) writes nothing. The
// post of a large author (large.go: state read after the content row is
// known to exist) goes into the author's own inbox only; home timelines
// merge it at read time. Before the fans' rows it sends the post's
// notifications (Host.Posted), for a large author too.
func (s *Engine) fanOut(ctx context.Context, id weibo.PostID) error {
	exists, err := s.st.Get(ctx, &hbase.Get{Table: tables.Content, Row: tables.ContentKey(id), Families: []string{tables.FamPost}})
	if err != nil || !tables.PostStored(exists) {
		return err
	}
	if err := s.st.Put(ctx, InboxPut(id.Author, id)); err != nil {
		return err
	}
	// The post's notifications (mentions, its root's author for a repost):
	// sent again by a fan-out run again, which adds nobody twice; and its
	// live event, encoded once for all the fans (or the author subject).
	event, err := s.host.Posted(ctx, id, exists)
	if err != nil {
		return err
	}
	if large, err := s.IsLarge(ctx, id.Author); err != nil || large {
		if large {
			s.events.Hub().NotifyAuthor(id.Author)
			s.events.Emit(events.AuthorSubject(id.Author), event)
		}
		return err
	}
	// Batches are written and settled by up to `workers` goroutines at
	// once while the fans list is scanned (they are independent: each
	// settles its own fans).
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(1, s.opts.workers))
	flush := func(fans []weibo.UserID) {
		if len(fans) == 0 {
			return
		}
		g.Go(func() error {
			puts := make([]*hbase.Put, len(fans))
			for i, fan := range fans {
				puts[i] = InboxPut(fan, id)
			}
			err := s.st.PutMany(gctx, puts)
			if err == nil {
				err = s.w.Step(gctx, StepWritten)
			}
			if err == nil {
				err = s.settleFanout(gctx, id, fans)
			}
			s.events.Hub().Notify(fans...)
			if err == nil {
				for _, fan := range fans {
					s.events.Emit(events.HomeSubject(fan), event)
				}
			}
			return err
		})
	}
	var fans []weibo.UserID
	err = s.st.Scan(gctx, &hbase.Scan{Table: tables.Relations, Prefix: tables.RelationPrefix(id.Author, tables.Fans)}, func(r *hbase.Result) error {
		if _, _, fan, ok := tables.DecodeRelationKey(r.Row); ok {
			if fans = append(fans, fan); len(fans) >= s.opts.batch {
				flush(fans)
				fans = make([]weibo.UserID, 0, s.opts.batch)
			}
		}
		return nil
	})
	if err == nil {
		flush(fans)
	}
	if err := errors.Join(err, g.Wait()); err != nil {
		return err
	}
	FanoutLag.Observe(max(float64(s.w.NowMillis()-id.Millis)/1000, 0))
	return nil
}

// settleFanout settles the inbox rows of post id just written for fans
// (in rowkey order, as the fans scan read them): the fans list was read
// before the rows were written, so a fan may have unfollowed the author
// meanwhile (and that unfollow's removal of the author's posts may have
// run before this write).
//
// First it scans the author's fans rows again over the batch's range (one
// sequential scan, not a read per fan). A fan whose fans row is still
// there after the write needs nothing: the last write to that fans row
// before the scan read it was a Put by a settleFollow round that took the
// pair for followed (package counted, step 5; the importer writes both sides at
// once). If the pair is not followed at that point or later, the settle
// or the repairer (its marker stays until the pair is settled) writes the
// fans row again the other way — after this scan, since the Put was the
// last write before it — and only then removes the author's posts from the
// fan's inbox (settleFollow deletes the fans row before the unbackfill):
// that removal lands after this fan-out's write and deletes it. (So an
// unfollow that died between its attends row and its fans row leaves this
// post in the fan's inbox until the repairer settles the pair, as it
// leaves the author's older posts; home timelines skip them meanwhile.) A
// fan whose fans row is gone is settled from its authority, the attends row:
// it reads their attends rows (one GetMany), deletes the rows of those
// who no longer follow, reads those again, writes back the rows of any
// who follow again, and so on until the reads agree with the writes (at
// most counted.SettleRounds rounds; counted.ErrUnsettled otherwise, and the outbox row
// stays for the sweep).
func (s *Engine) settleFanout(ctx context.Context, id weibo.PostID, fans []weibo.UserID) error {
	if len(fans) == 0 {
		return nil
	}
	// Both lists are in rowkey order, which for one author's fans rows is
	// fan id order: walk them side by side.
	var todo []weibo.UserID
	next := 0
	err := s.st.Scan(ctx, &hbase.Scan{Table: tables.Relations,
		Start: tables.RelationKey(id.Author, tables.Fans, fans[0]),
		Stop:  append(tables.RelationKey(id.Author, tables.Fans, fans[len(fans)-1]), 0)}, func(r *hbase.Result) error {
		_, _, fan, ok := tables.DecodeRelationKey(r.Row)
		if !ok {
			return nil
		}
		for ; next < len(fans) && fans[next] < fan; next++ {
			todo = append(todo, fans[next]) // its fans row is gone
		}
		if next < len(fans) && fans[next] == fan {
			next++
		}
		return nil
	})
	if err != nil {
		return err
	}
	todo = append(todo, fans[next:]...)
	if len(todo) == 0 {
		return nil
	}
	present := make(map[weibo.UserID]bool, len(todo))
	for _, fan := range todo {
		present[fan] = true
	}
	for range counted.SettleRounds {
		gets := make([]*hbase.Get, len(todo))
		for i, fan := range todo {
			gets[i] = &hbase.Get{Table: tables.Relations, Row: tables.RelationKey(fan, tables.Attends, id.Author)}
		}
		rs, err := s.st.GetMany(ctx, gets)
		if err != nil {
			return err
		}
		var flipped []weibo.UserID
		var puts []*hbase.Put
		var dels []*hbase.Delete
		for i, r := range rs {
			fan := todo[i]
			if r.Exists() == present[fan] {
				continue
			}
			present[fan] = r.Exists()
			flipped = append(flipped, fan)
			if r.Exists() {
				puts = append(puts, InboxPut(fan, id))
			} else {
				dels = append(dels, &hbase.Delete{Table: tables.Inbox, Row: tables.InboxKey(fan, id)})
			}
		}
		if len(flipped) == 0 {
			return nil
		}
		if len(puts) > 0 {
			if err := s.st.PutMany(ctx, puts); err != nil {
				return err
			}
		}
		if len(dels) > 0 {
			if err := s.st.DeleteMany(ctx, dels); err != nil {
				return err
			}
		}
		todo = flipped
	}
	return counted.ErrUnsettled
}
