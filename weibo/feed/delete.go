package feed

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

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
var (
	StepDeleteContent   = counted.Step(RelationDelete, PhaseContent)   // after the content row's CheckAndDelete
	StepDeleteRetracted = counted.Step(RelationDelete, PhaseRetracted) // after one batch of a retraction's inbox deletes
)

// deleteRelation is a post's deletion: authority the content row,
// dependents its inbox entries, counter the author's postCount. It waits
// for the post's fan-out (an outbox row of the post) before it retracts, so
// that no inbox row lands after the retraction.
func (s *Service) deleteRelation() *counted.Relation {
	return &counted.Relation{
		Name:   RelationDelete,
		Phases: []counted.Phase{PhaseContent, PhaseRetracted},
		Marker: tables.PendingPostDelete,
		Counters: func(author, _ uint64) []counted.Counter {
			return []counted.Counter{{Kind: PostCount, Owner: author}}
		},
		Settle: func(ctx context.Context, author, ms uint64, _ []byte) error {
			return s.RetractPost(ctx, weibo.PostID{Author: weibo.UserID(author), Millis: int64(ms)})
		},
		Ready: func(ctx context.Context, author, ms uint64, _ int64) (bool, error) {
			busy, err := fanoutPending(ctx, s.st, weibo.PostID{Author: weibo.UserID(author), Millis: int64(ms)})
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
//     authority, the commit point: it decides whether this call deletes)
//     — for a repost, after the marker and sequence of the repost pair
//     too (its original's repostCount), and for a post with topics after
//     the marker of the topic pair and its counters' sequences (topics.go);
//  4. the counter -1 (within the write's budget); for a repost, the
//     original's repostCount -1 and the settle of its list row; for a post
//     with topics, each topic's postCount and hour count -1 and the settle
//     of its list entries (deleted), then the end of that marker;
//  5. the retraction of the inbox entries (RetractPost: the author's,
//     the fans', then those of the users with a follow or unfollow of the
//     author in flight), in the background once the post's fan-out (if
//     still in the outbox) is done;
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
	stored := tables.PostStored(cur)
	// A repost leaves its original's list and repostCount too, a post with
	// topics its topics' lists and counts: the modules' parts of the write
	// (RegisterPostPart), marked before the content row goes.
	var parts []PostPart
	if stored {
		var root *weibo.PostID
		if r, ok := tables.RepostOf(cur); ok {
			root = &r
		}
		parts = s.postParts(string(text), root)
		if ids := tables.DecodeMediaIDs(cur.Value(tables.FamPost, tables.ColPostMedia)); len(ids) > 0 && s.mediaPart != nil {
			if part := s.mediaPart(id.Author, ids, false); part != nil {
				parts = append(parts, part)
			}
		}
		for _, part := range parts {
			if err := part.Mark(ctx, id); err != nil {
				return false, err
			}
		}
	}
	deleted := false
	if stored {
		// A post of pictures only has an empty text, which a check would
		// take for an absent cell: it is checked on its author's name.
		q, want := tables.ColText, text
		if len(text) == 0 {
			q, want = tables.ColAuthorName, cur.Value(tables.FamPost, tables.ColAuthorName)
		}
		if deleted, err = s.st.CheckAndDelete(ctx, &hbase.Delete{Table: tables.Content, Row: tables.ContentKey(id)},
			tables.FamPost, q, want); err != nil {
			return false, err
		}
	}
	if !deleted {
		for _, part := range slices.Backward(parts) {
			if err := part.End(ctx); err != nil {
				return false, err
			}
		}
		return false, s.w.End(ctx, op)
	}
	s.posts.forget(id)
	// The author's and the large author's followers' subscriptions hear
	// of it now; the fans' when their entries are retracted.
	s.emitDeleted(id, true, id.Author)
	if err := s.clearContent(ctx, id); err != nil {
		return false, err
	}
	if err := s.w.Step(ctx, StepDeleteContent); err != nil {
		return false, err
	}
	if _, err := s.w.Count(ctx, op, -1); err != nil {
		return false, err
	}
	for _, part := range parts {
		if err := part.Count(ctx, -1); err != nil {
			return false, err
		}
		if err := part.Settle(ctx, id, false); err != nil {
			return false, err
		}
	}
	if op.Kept() {
		return true, nil // past its budget: the repairer retracts
	}
	s.retractions.run(func(ctx context.Context) {
		// The post's fan-out, while it is in the outbox, may still write
		// inbox rows: retract after it (the repairer does, should this
		// wait outlast the fan-out lease).
		if done, err := s.awaitFanout(ctx, id); err != nil || !done {
			return
		}
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

// clearContent deletes what the row delete of post id left: counter cells
// (likeCount, repostCount, ...) whose Increments wrote them a little ahead
// of the clock (at the cell's timestamp + 1 when they come fast), which a
// delete at the current time does not reach — each at its own timestamp.
func (s *Service) clearContent(ctx context.Context, id weibo.PostID) error {
	r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Content, Row: tables.ContentKey(id)})
	if err != nil || !r.Exists() {
		return err
	}
	dels := make([]*hbase.Delete, 0, len(r.Cells))
	for _, c := range r.Cells {
		dels = append(dels, &hbase.Delete{Table: tables.Content, Row: tables.ContentKey(id),
			Values: hbase.Values{c.Family: {c.Qualifier: nil}}, Timestamp: c.Timestamp})
	}
	return s.st.DeleteMany(ctx, dels)
}

// RetractPost removes post id's entries from the inboxes, if the post is
// gone (its content row is the authority: a post that exists keeps them),
// and what the modules keep of it (RegisterDeleteHook: its comments, …):
// the author's own entry and, unless the author is large, each fan's, in
// DeleteMany batches while the fans rows are scanned, then the entry of
// each user with a write of a follow pair of the author in flight
// (follow.Service.InFlight). Every delete is idempotent. It is what the
// repairer does for a delete that died. Errors are the store's.
func (s *Service) RetractPost(ctx context.Context, id weibo.PostID) (err error) {
	defer weibo.Wrapf(&err, "retract post %s", id)
	r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Content, Row: tables.ContentKey(id), Families: []string{tables.FamPost}})
	if err != nil || tables.PostStored(r) {
		return err
	}
	if err := s.st.Delete(ctx, &hbase.Delete{Table: tables.Inbox, Row: tables.InboxKey(id.Author, id)}); err != nil {
		return err
	}
	for _, hook := range s.deleteHooks {
		if err := hook(ctx, id); err != nil {
			return err
		}
	}
	if large, err := s.fan.IsLarge(ctx, id.Author); err != nil || large {
		return err
	}
	var dels []*hbase.Delete
	var fans []weibo.UserID
	flush := func() error {
		if len(dels) == 0 {
			return nil
		}
		if err := s.st.DeleteMany(ctx, dels); err != nil {
			return err
		}
		s.emitDeleted(id, false, fans...)
		dels, fans = dels[:0], fans[:0]
		return s.w.Step(ctx, StepDeleteRetracted)
	}
	retract := func(fan weibo.UserID) error {
		fans = append(fans, fan)
		if dels = append(dels, &hbase.Delete{Table: tables.Inbox, Row: tables.InboxKey(fan, id)}); len(dels) >= s.opts.batch {
			return flush()
		}
		return nil
	}
	err = s.st.Scan(ctx, &hbase.Scan{Table: tables.Relations, Prefix: tables.RelationPrefix(id.Author, tables.Fans)}, func(r *hbase.Result) error {
		if _, _, fan, ok := tables.DecodeRelationKey(r.Row); ok {
			return retract(fan)
		}
		return nil
	})
	if err != nil {
		return err
	}
	// A fan whose fans row an unfollow removed before the scan above may
	// still hold the entry: that unfollow's removal of the author's posts
	// may have read the content rows after this delete and its markers
	// after this retraction's end. Read after the fans, the markers of the
	// author's follow pairs name every such fan whose unfollow is not yet
	// settled to its end; package follow (dropDeleting) takes the entry
	// from the others, which is why this read must come after the scan of
	// the fans.
	moving, err := s.follows.InFlight(ctx, id.Author)
	if err != nil {
		return err
	}
	for _, u := range moving {
		if err := retract(u); err != nil {
			return err
		}
	}
	return flush()
}

// awaitFanout waits until post id's fan-out has left the outbox, polling
// with a backoff for at most twice the fan-out lease; done is false when
// it is still there (or ctx ended).
func (s *Service) awaitFanout(ctx context.Context, id weibo.PostID) (done bool, err error) {
	deadline := time.Now().Add(2 * s.opts.fanoutLease)
	wait := 20 * time.Millisecond
	for {
		busy, err := fanoutPending(ctx, s.st, id)
		if err != nil || !busy {
			return err == nil, err
		}
		if time.Now().After(deadline) {
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Second)
	}
}

// DeleteHook removes what a module keeps of post id, which is gone (its
// content row deleted): it runs in the post's retraction, again when the
// retraction is repaired, so it is idempotent. Errors are the store's.
type DeleteHook func(ctx context.Context, id weibo.PostID) error

// RegisterDeleteHook adds hook to every post's retraction. Modules
// register while the domain is wired, before any call.
func (s *Service) RegisterDeleteHook(hook DeleteHook) {
	s.deleteHooks = append(s.deleteHooks, hook)
}

// fanoutPending reports whether post id's fan-out is in st's outbox.
func fanoutPending(ctx context.Context, st hbase.Store, id weibo.PostID) (bool, error) {
	r, err := st.Get(ctx, &hbase.Get{Table: tables.Outbox, Row: tables.OutboxKey(id)})
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
