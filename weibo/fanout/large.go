package fanout

import (
	"bytes"
	"context"
	"errors"
	"sync"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Hybrid fan-out (docs/schema.md, "Large accounts"). An author whose fan
// count (the kept fanCount) reaches the threshold (WithFanoutThreshold) is
// large: its posts are not pushed into its fans' inboxes; every home
// timeline page merges the inbox with the newest posts of the large
// accounts the viewer follows (package timeline). The large accounts are the
// columns of one row, tables.LargeKey, each in one of two states:
//
//   - LargeOn: posts are not pushed (Publish and fanOut read the state
//     after the post's content row is written);
//   - LargeDraining: the account dropped below the threshold; posts are
//     pushed again, and a drain copies its newest posts (the backfill
//     window) into every fan's inbox; readers keep merging them until the
//     drain ends and deletes the column.
//
// Transitions, made by the follow or unfollow whose counter Increment
// crosses the threshold (best effort: a follow that dies before leaves the
// author pushed, which is always correct):
//
//	absent or Draining -> On    (follow: fanCount >= threshold)  CheckAndPut expecting the state read
//	On -> Draining              (unfollow: fanCount < threshold) CheckAndPut expecting the state read, then the drain
//	Draining -> absent (or On)  (the drain, once every fan is backfilled) CheckAndDelete expecting Draining
//
// Why nothing is lost: each side writes before it reads the other's row.
// A post is not pushed only if its publish (or fan-out) read On after
// writing the content row; a drain writes Draining before it reads the
// author's posts, so it sees every such post and copies it. A follow skips
// its backfill only if it read On after writing its fans row; a drain reads
// the fans after writing Draining, so it backfills that follower too.
// Readers merge an account in either state, so until the drain ends the
// posts are read from weibo:content; duplicates (a post both in an inbox
// and merged, e.g. pushed before the account became large) are removed by
// PostID in the merge.

// largeCell is one column of row tables.LargeKey.
type largeCell struct {
	state tables.LargeState
	since int64  // ms, when the state was entered
	raw   []byte // the cell's value as read (for CheckAndPut)
}

// largeAccounts reads row tables.LargeKey (one Get).
func (s *Engine) largeAccounts(ctx context.Context) (map[weibo.UserID]largeCell, error) {
	r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Users, Row: tables.LargeKey, Families: []string{tables.FamInfo}})
	if err != nil {
		return nil, err
	}
	return decodeLargeRow(r), nil
}

func decodeLargeRow(r *hbase.Result) map[weibo.UserID]largeCell {
	cells := r.Family(tables.FamInfo)
	if len(cells) == 0 {
		return nil
	}
	out := make(map[weibo.UserID]largeCell, len(cells))
	for _, c := range cells {
		uid, ok := tables.DecodeLargeQualifier(c.Qualifier)
		st, since, ok2 := tables.DecodeLarge(c.Value)
		if ok && ok2 {
			out[uid] = largeCell{state: st, since: since, raw: c.Value}
		}
	}
	return out
}

// LargeAccounts returns the large accounts (hybrid fan-out) and whether
// each is still being drained (true) after dropping below the threshold:
// one Get of row tables.LargeKey. The posts of every account listed are
// merged into home timelines at read time. Errors are the store's.
func (s *Engine) LargeAccounts(ctx context.Context) (_ map[weibo.UserID]bool, err error) {
	defer weibo.Wrap(&err, "large accounts")
	cells, err := s.largeAccounts(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[weibo.UserID]bool, len(cells))
	for uid, c := range cells {
		out[uid] = c.state == tables.LargeDraining
	}
	return out, nil
}

// IsLarge reports whether author's posts are not to be pushed (state On).
func (s *Engine) IsLarge(ctx context.Context, author weibo.UserID) (bool, error) {
	cells, err := s.largeAccounts(ctx)
	return cells[author].state == tables.LargeOn, err
}

// Crossed is called by a follow (d > 0) or an unfollow (d < 0) with the
// followee's fan count its Increment returned: at or above the threshold
// after a follow, the followee becomes large; below it after an unfollow, a
// large followee starts draining. Failures are logged, not returned: the
// follow or unfollow itself is done, and an author left pushed is correct.
func (s *Engine) Crossed(ctx context.Context, author weibo.UserID, fans int64, d int64) {
	t := int64(s.opts.threshold)
	var err error
	switch {
	case t <= 0:
		return
	case d > 0 && fans >= t:
		err = s.becomeLarge(ctx, author)
	case d < 0 && fans < t:
		err = s.becomeSmall(ctx, author)
	}
	if err != nil {
		s.log.Warn("hybrid fan-out: state change failed", "user", author.String(), "fans", fans, "err", err)
	}
}

// becomeLarge sets author's state to On unless it is On already.
func (s *Engine) becomeLarge(ctx context.Context, author weibo.UserID) error {
	q := tables.LargeQualifier(author)
	for range counted.SettleRounds {
		cells, err := s.largeAccounts(ctx)
		if err != nil {
			return err
		}
		c, ok := cells[author]
		if ok && c.state == tables.LargeOn {
			return nil
		}
		applied, err := s.st.CheckAndPut(ctx, &hbase.Put{Table: tables.Users, Row: tables.LargeKey,
			Values: hbase.Values{tables.FamInfo: {q: tables.EncodeLarge(tables.LargeOn, s.w.NowMillis())}}}, tables.FamInfo, q, c.raw)
		if err != nil || applied {
			if applied {
				s.log.Info("hybrid fan-out: account became large", "user", author.String())
				s.host.AnnounceLarge(author)
			}
			return err
		}
	}
	return counted.ErrUnsettled
}

// becomeSmall moves author from On to Draining and starts the drain; an
// author that is not On is left alone.
func (s *Engine) becomeSmall(ctx context.Context, author weibo.UserID) error {
	cells, err := s.largeAccounts(ctx)
	if err != nil {
		return err
	}
	c, ok := cells[author]
	if !ok || c.state != tables.LargeOn {
		return nil
	}
	q := tables.LargeQualifier(author)
	v := tables.EncodeLarge(tables.LargeDraining, s.w.NowMillis())
	applied, err := s.st.CheckAndPut(ctx, &hbase.Put{Table: tables.Users, Row: tables.LargeKey,
		Values: hbase.Values{tables.FamInfo: {q: v}}}, tables.FamInfo, q, c.raw)
	if err != nil || !applied {
		return err
	}
	s.log.Info("hybrid fan-out: account dropped below the threshold; draining", "user", author.String())
	s.drains.start(s, author, v)
	return nil
}

// drain copies author's newest posts (the backfill window) into the inbox
// of every fan, then ends the Draining state raw: the column is deleted, or
// set On again when the fan count is back at the threshold meanwhile. Each
// batch of fans is settled like a fan-out: their attends rows are read
// after the writes, and the pair of every fan who no longer follows is
// settled from its authority (settleFollow). Every write is idempotent, so
// a drain run twice (a resumed one) adds nothing.
func (s *Engine) drain(ctx context.Context, author weibo.UserID, raw []byte) error {
	posts, err := hbase.ScanAll(ctx, s.st, &hbase.Scan{Table: tables.Content, Prefix: tables.ContentPrefix(author),
		Families: []string{tables.FamPost}, Limit: s.opts.backfill})
	if err != nil {
		return err
	}
	ids := make([]weibo.PostID, 0, len(posts))
	for _, r := range posts {
		if id, ok := tables.DecodeContentKey(r.Row); ok && tables.PostStored(r) {
			ids = append(ids, id)
		}
	}
	var fans []weibo.UserID
	flush := func() error {
		if len(fans) == 0 {
			return nil
		}
		var puts []*hbase.Put
		for _, fan := range fans {
			for _, id := range ids {
				if puts = append(puts, InboxPut(fan, id)); len(puts) >= s.opts.batch {
					if err := s.st.PutMany(ctx, puts); err != nil {
						return err
					}
					puts = nil
				}
			}
		}
		if err := s.st.PutMany(ctx, puts); err != nil {
			return err
		}
		gets := make([]*hbase.Get, len(fans))
		for i, fan := range fans {
			gets[i] = &hbase.Get{Table: tables.Relations, Row: tables.RelationKey(fan, tables.Attends, author)}
		}
		rs, err := s.st.GetMany(ctx, gets)
		if err != nil {
			return err
		}
		for i, r := range rs {
			if !r.Exists() {
				if err := s.host.SettleFollow(ctx, fans[i], author); err != nil && !errors.Is(err, counted.ErrUnsettled) {
					return err
				}
			}
		}
		s.events.Hub().Notify(fans...)
		fans = fans[:0]
		return nil
	}
	err = s.st.Scan(ctx, &hbase.Scan{Table: tables.Relations, Prefix: tables.RelationPrefix(author, tables.Fans)}, func(r *hbase.Result) error {
		if _, _, fan, ok := tables.DecodeRelationKey(r.Row); ok {
			if fans = append(fans, fan); len(fans) >= max(1, s.opts.batch/max(1, len(ids))) {
				return flush()
			}
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return err
	}
	// End the drain: back to On if the fans came back meanwhile.
	us, err := s.users.GetUsers(ctx, []weibo.UserID{author})
	if err != nil {
		return err
	}
	q := tables.LargeQualifier(author)
	if us[0] != nil && s.opts.threshold > 0 && us[0].FanCount >= int64(s.opts.threshold) {
		applied, err := s.st.CheckAndPut(ctx, &hbase.Put{Table: tables.Users, Row: tables.LargeKey,
			Values: hbase.Values{tables.FamInfo: {q: tables.EncodeLarge(tables.LargeOn, s.w.NowMillis())}}}, tables.FamInfo, q, raw)
		if applied {
			s.host.AnnounceLarge(author)
		}
		return err
	}
	ok, err := s.st.CheckAndDelete(ctx, &hbase.Delete{Table: tables.Users, Row: tables.LargeKey,
		Values: hbase.Values{tables.FamInfo: {q: nil}}}, tables.FamInfo, q, raw)
	if ok {
		s.log.Info("hybrid fan-out: drain done; account pushed again", "user", author.String(), "posts", len(ids))
	}
	return err
}

// resumeDrains starts the drain of every account left Draining for longer
// than the repair grace (the process draining it died, or is slow: drains
// are idempotent). The outbox sweep calls it.
func (s *Engine) resumeDrains(ctx context.Context) error {
	cells, err := s.largeAccounts(ctx)
	if err != nil {
		return err
	}
	now := s.w.NowMillis()
	for uid, c := range cells {
		if c.state == tables.LargeDraining && now-c.since > s.w.GraceMillis() {
			s.drains.start(s, uid, c.raw)
		}
	}
	return nil
}

// drains tracks the drains this process runs.
type drains struct {
	ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex
	cond   *sync.Cond
	run    map[weibo.UserID][]byte // author -> the Draining value being drained
}

func newDrains() *drains {
	d := &drains{run: map[weibo.UserID][]byte{}}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	d.cond = sync.NewCond(&d.mu)
	return d
}

// start runs the drain of author (state raw) unless one runs already.
func (d *drains) start(s *Engine, author weibo.UserID, raw []byte) {
	d.mu.Lock()
	if v, ok := d.run[author]; ok && bytes.Equal(v, raw) || d.ctx.Err() != nil {
		d.mu.Unlock()
		return
	}
	d.run[author] = raw
	d.mu.Unlock()
	go func() {
		if err := s.drain(d.ctx, author, raw); err != nil && d.ctx.Err() == nil {
			s.log.Warn("hybrid fan-out: drain failed; the outbox sweep resumes it", "user", author.String(), "err", err)
		}
		d.mu.Lock()
		delete(d.run, author)
		d.cond.Broadcast()
		d.mu.Unlock()
	}()
}

// wait waits until no drain runs, or ctx ends.
func (d *drains) wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		d.mu.Lock()
		for len(d.run) > 0 && ctx.Err() == nil {
			d.cond.Wait()
		}
		d.mu.Unlock()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		d.mu.Lock()
		d.cond.Broadcast()
		d.mu.Unlock()
		<-done
		return ctx.Err()
	}
}

// stop cancels the running drains and waits for them (or ctx).
func (d *drains) stop(ctx context.Context) error {
	d.cancel()
	return d.wait(ctx)
}
