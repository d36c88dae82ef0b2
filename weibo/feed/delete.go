package feed

import (
	"context"
	"errors"
	"sync"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Deleting a post. The content row is the authority of a post (Publish's
// commit point); its dependents are the inbox entries its fan-out wrote
// and the author's postCount. A delete is a counted write of its own
// relation ("delete", marker kind tables.PendingPostDelete on (author,
// ms)): the content row goes with one CheckAndDelete, the counter with
// the protocol, and the inbox entries are retracted after the call returns
// — by this process's retraction, or, when it dies, by the repairer that
// finds the marker. Home timelines skip entries whose post is gone, so a
// deleted post is invisible from the moment its content row is deleted;
// the retraction only removes what would otherwise stay unseen. A large
// account's post (hybrid fan-out) was pushed into no fan's inbox: only
// the author's own entry goes.

// Steps of a delete besides the protocol's ("delete:marked",
// "delete:sequenced", "delete:counted").
const (
	StepDeleteContent   = "delete:content"   // after the content row's CheckAndDelete
	StepDeleteRetracted = "delete:retracted" // after one batch of a retraction's inbox deletes
)

// deleteRelation is a post's deletion: authority the content row,
// dependents its inbox entries, counter the author's postCount. It waits
// for the post's fan-out (an outbox row of the post) before it retracts, so
// that no inbox row lands after the retraction.
func (s *Service) deleteRelation() *counted.Relation {
	return &counted.Relation{
		Name:   "delete",
		Marker: tables.PendingPostDelete,
		Counters: func(author, _ uint64) []counted.Counter {
			return []counted.Counter{{Kind: PostCount, Owner: author}}
		},
		Settle: func(ctx context.Context, author, ms uint64, _ []byte) error {
			return s.RetractPost(ctx, weibo.PostID{Author: weibo.UserID(author), Millis: int64(ms)})
		},
		Ready: func(ctx context.Context, author, ms uint64, _ int64) (bool, error) {
			busy, err := s.fanoutPending(ctx, weibo.PostID{Author: weibo.UserID(author), Millis: int64(ms)})
			return !busy, err
		},
	}
}

// DeletePost deletes post id and reports whether this call deleted it:
// false when it was gone already (a repeated call is harmless). The post
// disappears at once from every read; its inbox entries are retracted in
// the background (FlushFanout waits for that). Authorization (the author,
// or an admin) is the caller's. Errors are the store's.
//
// Writes, in order (package counted explains the scheme):
//  1. the weibo:pending row of the delete;
//  2. the operation sequence of the author's postCount;
//  3. the content row's CheckAndDelete expecting the text read (the
//     authority, the commit point: it decides whether this call deletes);
//  4. the counter -1 (within the write's budget);
//  5. the retraction of the inbox entries — unless the post's fan-out is
//     still in the outbox: the repairer then retracts once it is done —;
//  6. the delete of the pending row.
func (s *Service) DeletePost(ctx context.Context, id weibo.PostID) (_ bool, err error) {
	defer weibo.Wrapf(&err, "delete post %s", id)
	op, err := s.w.Begin(ctx, s.deletes, uint64(id.Author), uint64(id.Millis))
	if err != nil {
		return false, err
	}
	cur, err := s.st.Get(ctx, &hbase.Get{Table: tables.Content, Row: tables.ContentKey(id), Families: []string{tables.FamPost}})
	if err != nil {
		return false, err
	}
	text := cur.Value(tables.FamPost, tables.ColText)
	deleted := false
	if text != nil {
		if deleted, err = s.st.CheckAndDelete(ctx, &hbase.Delete{Table: tables.Content, Row: tables.ContentKey(id)},
			tables.FamPost, tables.ColText, text); err != nil {
			return false, err
		}
	}
	if !deleted {
		return false, s.w.End(ctx, op)
	}
	if err := s.w.Step(ctx, StepDeleteContent); err != nil {
		return false, err
	}
	if _, err := s.w.Count(ctx, op, -1); err != nil {
		return false, err
	}
	busy, err := s.fanoutPending(ctx, id)
	if err != nil {
		return false, err
	}
	if busy || op.Kept() {
		return true, nil // the repairer retracts once the fan-out is done
	}
	s.retractions.run(func(ctx context.Context) {
		if err := s.RetractPost(ctx, id); err != nil {
			if !errors.Is(err, context.Canceled) {
				s.log.Warn("retraction failed; the repairer retracts", "post", id.String(), "err", err)
			}
			return
		}
		if err := s.w.End(ctx, op); err != nil {
			s.log.Warn("retraction done, marker kept", "post", id.String(), "err", err)
		}
	})
	return true, nil
}

// RetractPost removes post id's entries from the inboxes, if the post is
// gone (its content row is the authority: a post that exists keeps them):
// the author's own entry and, unless the author is large, each fan's, in
// DeleteMany batches while the fans rows are scanned. Every delete is
// idempotent. It is what the repairer does for a delete that died. Errors
// are the store's.
func (s *Service) RetractPost(ctx context.Context, id weibo.PostID) (err error) {
	defer weibo.Wrapf(&err, "retract post %s", id)
	r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Content, Row: tables.ContentKey(id), Families: []string{tables.FamPost}})
	if err != nil || r.Exists() {
		return err
	}
	if err := s.st.Delete(ctx, &hbase.Delete{Table: tables.Inbox, Row: tables.InboxKey(id.Author, id)}); err != nil {
		return err
	}
	if large, err := s.isLarge(ctx, id.Author); err != nil || large {
		return err
	}
	var dels []*hbase.Delete
	flush := func() error {
		if len(dels) == 0 {
			return nil
		}
		if err := s.st.DeleteMany(ctx, dels); err != nil {
			return err
		}
		dels = dels[:0]
		return s.w.Step(ctx, StepDeleteRetracted)
	}
	err = s.st.Scan(ctx, &hbase.Scan{Table: tables.Relations, Prefix: tables.RelationPrefix(id.Author, tables.Fans)}, func(r *hbase.Result) error {
		if _, _, fan, ok := tables.DecodeRelationKey(r.Row); ok {
			if dels = append(dels, &hbase.Delete{Table: tables.Inbox, Row: tables.InboxKey(fan, id)}); len(dels) >= s.opts.batch {
				return flush()
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}

// fanoutPending reports whether post id's fan-out is in the outbox.
func (s *Service) fanoutPending(ctx context.Context, id weibo.PostID) (bool, error) {
	r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Outbox, Row: tables.OutboxKey(id)})
	return r.Exists(), err
}

// retractions runs the retractions of deleted posts in the background and
// lets FlushFanout and Close wait for them.
type retractions struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newRetractions() *retractions {
	r := &retractions{}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	return r
}

// run runs fn in the background.
func (r *retractions) run(fn func(ctx context.Context)) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		fn(r.ctx)
	}()
}

// wait waits for the retractions started so far, or ctx's end.
func (r *retractions) wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// stop ends the retractions (their markers stay for the repairer) and
// waits for them.
func (r *retractions) stop(ctx context.Context) error {
	r.cancel()
	return r.wait(ctx)
}
