// Package repost is the repost of a post (转发): a post of the reposter's
// own, published by the feed (feed.Service.PublishRepost), that names its
// root, and the counted pair (root, repost) on the write protocol
// (package counted) — the root's repostCount and its list of reposts —,
// the REPOST notification's check, and the list of a post's reposts.
package repost

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/notify"
	"github.com/weibohbase/gateway/weibo/paging"
	"github.com/weibohbase/gateway/weibo/safety"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Reposts (转发). A repost is a post of the reposter's own, published like
// any post, whose content row also names the ROOT post it reposts (c:o):
// a repost of a repost names the root, as Weibo does, and the reposter's
// comment may carry the chain (Weibo's "//@user: ..." convention). The
// pair (root, repost) is a counted relation: authority the repost's root
// cell, dependent the repost's entry in the root's list (weibo:reposts),
// counter the root's repostCount (c:r on the root's content row).

// RepostCount is a post's repostCount: the content rows whose root cell
// names it. Kept with Increment on the post's content row (family c) and
// registered with the protocol by New.
const RepostCount counted.CounterKind = "repostCount"

// Steps of a repost, passed to the protocol's step hook
// (counted.WithStepHook), besides the publish's own (feed.StepPublishOutbox and
// the rest). "repost:marked", "repost:sequenced" and "repost:counted" are
// the protocol's (counted.Protocol.BeginWith and Count).
var (
	StepMarked    = counted.Step(Relation, counted.PhaseMarked)    // after the pending row of the repost
	StepSequenced = counted.Step(Relation, counted.PhaseSequenced) // after the root's repost-count sequence
	StepCounted   = counted.Step(Relation, counted.PhaseCounted)   // after the root's repost count
	StepListed    = counted.Step(Relation, PhaseListed)            // in every settle of a repost pair: after the list row, before the re-read
)

// Relation is the repost pair's name; its steps are
// counted.Step(Relation, phase).
const Relation = "repost"

// PhaseListed is the repost pair's own phase: in every settle, after the
// list row, before the re-read.
const PhaseListed counted.Phase = "listed"

// EmptyRepostContent is the content of a repost made without a comment,
// the text Weibo shows for one.
const EmptyRepostContent = "转发微博"

// repostRounds bounds the scans of one page of a post's reposts: a page
// whose entries keep turning out stale stops after this many (a shorter
// page with a cursor; the next page goes on after it).
const repostRounds = 9

// repostRelation is the pair (root, repost): owner the root's author,
// other the root's ms, the repost's id in the marker's extra bytes;
// counter the root's repostCount.
func (s *Service) repostRelation() *counted.Relation {
	return &counted.Relation{
		Name:   Relation,
		Marker: tables.PendingRepost,
		Phases: []counted.Phase{PhaseListed},
		Counters: func(author, ms uint64) []counted.Counter {
			return []counted.Counter{{Kind: RepostCount, Owner: author, Sub: ms}}
		},
		Settle: func(ctx context.Context, author, ms uint64, extra []byte) error {
			repost, ok := tables.DecodeRepostExtra(extra)
			if !ok {
				return nil // no pair to settle; the recount still runs
			}
			return s.RepairRepost(ctx, weibo.PostID{Author: weibo.UserID(author), Millis: int64(ms)}, repost)
		},
	}
}

// Posts is what reposts need of the posts: reading them, publishing a
// repost, and a part in every post's write. *feed.Service implements it.
type Posts interface {
	GetPosts(ctx context.Context, ids []weibo.PostID) ([]*feed.Post, error)
	PublishRepost(ctx context.Context, author weibo.UserID, content string, root weibo.PostID) (*feed.Post, error)
	RegisterPostPart(make feed.PartMaker)
}

// Notices learns how the REPOST notification is checked. *notify.Service
// implements it.
type Notices interface {
	RegisterNoticeCheck(match func(notify.Notice) bool, wanted notify.WantedFunc)
}

// Service is the reposts' API. It is safe for concurrent use.
type Service struct {
	st    hbase.Store
	w     *counted.Protocol
	rel   *counted.Relation
	posts Posts
	guard safety.Blocker // nil: no blocks
	susp  weibo.Suspensions
}

// New returns the reposts over st and registers with w the repost pair,
// the repostCount counter and the reposts' fsck check (check.go), with
// posts the pair's part in the write of every repost (its publish and its
// delete), and with notices how a REPOST notification is checked (the
// repost's content row names the root). The weibo tables must exist (tables.Migrate).
func New(st hbase.Store, w *counted.Protocol, posts Posts, notices Notices) *Service {
	s := &Service{st: st, w: w, posts: posts, susp: weibo.NoSuspensions}
	s.rel = s.repostRelation()
	w.Register(s.rel)
	w.RegisterCheck(s.fsckCheck())
	w.RegisterCounter(feed.PostCounter(st, RepostCount, tables.ColReposts, tables.ColRepostsSeq, func(ctx context.Context, root weibo.PostID) (int64, error) {
		return w.CountRows(ctx, &hbase.Scan{Table: tables.Reposts, Prefix: tables.RepostPrefix(root)},
			func(r *hbase.Result) *hbase.Get {
				if _, repost, ok := tables.DecodeRepostKey(r.Row); ok {
					return &hbase.Get{Table: tables.Content, Row: tables.ContentKey(repost), Families: []string{tables.FamPost}}
				}
				return nil
			}, func(r *hbase.Result) bool { return repostState(r, root) })
	}))
	posts.RegisterPostPart(func(_ string, root *weibo.PostID) feed.PostPart {
		if root == nil {
			return nil
		}
		return &repostWrite{s: s, root: *root}
	})
	notices.RegisterNoticeCheck(func(n notify.Notice) bool { return n.Kind == tables.NotifRepost }, func(ctx context.Context, n notify.Notice) (bool, bool, error) {
		post, _ := n.Subject.Post()
		r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Content, Row: tables.ContentKey(weibo.PostID{Author: n.Actor, Millis: n.At}), Families: []string{tables.FamPost}})
		ok := repostState(r, post)
		return ok, ok, err
	})
	return s
}

// repostState reports whether content row r is a stored repost of root:
// the authority of the pair, true while the list row must exist.
func repostState(r *hbase.Result, root weibo.PostID) bool {
	got, ok := tables.RepostOf(r)
	return ok && got == root && r.Cell(tables.FamPost, tables.ColText) != nil
}

// repostContent returns the content of a repost with comment: the comment
// itself, checked like a post's content (validateContent) but on argument
// "comment", or EmptyRepostContent when it is empty — the only case where
// a post may be made without text of its own.
func repostContent(comment string) (string, error) {
	if comment == "" {
		return EmptyRepostContent, nil
	}
	if err := feed.ValidateContent(comment); err != nil {
		if e, ok := errors.AsType[*weibo.Error](err); ok {
			c := *e
			c.Field, c.Message = "comment", strings.Replace(e.Message, "content", "comment", 1)
			return "", &c
		}
		return "", err
	}
	return comment, nil
}

// Repost publishes a repost of post target by author, with comment (may
// be empty: the content is then EmptyRepostContent) as its content, and
// returns it. The repost's root is target, or target's root when target
// is itself a repost. Errors: BAD_USER_INPUT on "comment" (the rules of a
// post's content, validateContent), NOT_FOUND on "postId" when target or
// its root does not exist, FORBIDDEN (safety.ErrForbiddenInteraction)
// when a block stands between author and target's author or its root's,
// either way, UNAUTHENTICATED for an author without a users row; all
// before anything is written.
//
// It is a publish (Publish: the same write order, outbox-driven fan-out
// and postCount) and a counted write of the pair (root, repost); its
// writes, in order:
//  1. the outbox row (the publish's marker), the author's postCount
//     sequence (as Publish);
//  2. the repost's weibo:pending row (kind 's': the root, and the repost's
//     id in p:x), then the root's repostCount sequence (c:sr) — a publish
//     that moves to the next millisecond (Publish, step 3) writes another
//     marker for the new id before it tries that millisecond, so every id
//     whose content row it may write has its marker first;
//  3. the content row with CheckAndPut(absent), carrying the root cell
//     c:o: the authority of both the publish and the repost pair;
//  4. at once, within each write's budget: the own inbox row, the
//     author's postCount, the large-account read (as Publish), and the
//     root's repostCount (c:r);
//  5. the settle of the list row (weibo:reposts): written, the root cell
//     re-read, until they agree (counted.Settle), then the repost's
//     markers deleted (kept when past the budget: the repairer counts);
//  6. the outbox row's counted mark, and the fan-out (as Publish), which
//     sends the REPOST notification of the root's author (and MENTION of
//     the users the comment mentions).
//
// A crash anywhere leaves the outbox row (the sweep fans out and recounts
// postCount) and the pending row (the repairer settles the list row from
// the root cell and recounts repostCount); nothing is counted twice, and
// a repost whose content row was never written leaves no list row behind.
func (s *Service) Repost(ctx context.Context, author weibo.UserID, target weibo.PostID, comment string) (_ *feed.Post, err error) {
	defer weibo.Wrapf(&err, "repost of %s by %s", target, author)
	content, err := repostContent(comment)
	if err != nil {
		return nil, err
	}
	ps, err := s.posts.GetPosts(ctx, []weibo.PostID{target})
	if err != nil {
		return nil, err
	}
	if ps[0] == nil {
		return nil, weibo.NotFoundOn("postId", "post "+target.String()+" not found")
	}
	root := target
	if ps[0].RepostOfID != nil {
		root = *ps[0].RepostOfID
		rs, err := s.posts.GetPosts(ctx, []weibo.PostID{root})
		if err != nil {
			return nil, err
		}
		if rs[0] == nil {
			return nil, weibo.NotFoundOn("postId", "the original of post "+target.String()+", post "+root.String()+", is gone")
		}
	}
	if err := safety.CheckInteraction(ctx, s.guard, author, target.Author, root.Author); err != nil {
		return nil, err
	}
	return s.posts.PublishRepost(ctx, author, content, root)
}

// repostWrite is the repost pair's part of the write of a repost
// (feed.PostPart): its publish, at the points Repost lists, or its
// delete, which takes it out of its root's list and repostCount.
type repostWrite struct {
	s    *Service
	root weibo.PostID
	ops  []*counted.Op // one marker per id tried, the last one the post's
}

// Mark writes the marker of the pair (root, id) and bumps the root's
// repostCount sequence (counted.Protocol.BeginWith), before the content
// row of id is tried.
func (rw *repostWrite) Mark(ctx context.Context, id weibo.PostID) error {
	op, err := rw.s.w.BeginWith(ctx, rw.s.rel, uint64(rw.root.Author), uint64(rw.root.Millis), tables.EncodeRepostExtra(id))
	if err != nil {
		return err
	}
	rw.ops = append(rw.ops, op)
	return nil
}

// Count adds d to the root's repostCount, within the write's budget
// (counted.Protocol.Count).
func (rw *repostWrite) Count(ctx context.Context, d int64) error {
	_, err := rw.s.w.Count(ctx, rw.ops[len(rw.ops)-1], d)
	return err
}

// Settle settles the list row of repost id, stored or deleted as the
// write left its content row, and ends the write's markers. A delete
// whose content row kept changing keeps its marker for the repairer; a
// publish returns the error (its marker stays all the same).
func (rw *repostWrite) Settle(ctx context.Context, id weibo.PostID, stored bool) error {
	_, err := rw.s.settleRepost(ctx, rw.root, id, &stored)
	if !stored && errors.Is(err, counted.ErrUnsettled) {
		err = rw.s.w.Keep(ctx, rw.ops[len(rw.ops)-1], nil)
	}
	if err != nil {
		return err
	}
	return rw.End(ctx)
}

// End ends the write's markers.
func (rw *repostWrite) End(ctx context.Context) error {
	for _, op := range rw.ops {
		if err := rw.s.w.End(ctx, op); err != nil {
			return err
		}
	}
	return nil
}

// settleRepost makes repost's entry in root's list agree with the
// authority, repost's content row naming root (c:o): present while it
// does, absent otherwise. It settles (counted.Settle) from state, the
// authority as the caller just wrote it (nil to read it), and returns the
// state it settled on; counted.ErrUnsettled when the row kept changing.
// Every write is an idempotent Put or Delete.
func (s *Service) settleRepost(ctx context.Context, root, repost weibo.PostID, state *bool) (bool, error) {
	read := func(ctx context.Context) (bool, error) {
		r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Content, Row: tables.ContentKey(repost), Families: []string{tables.FamPost}})
		return repostState(r, root), err
	}
	var stored bool
	if state != nil {
		stored = *state
	} else {
		var err error
		if stored, err = read(ctx); err != nil {
			return false, err
		}
	}
	write := func(ctx context.Context, stored bool) error {
		key := tables.RepostKey(root, repost)
		var err error
		if stored {
			err = s.st.Put(ctx, &hbase.Put{Table: tables.Reposts, Row: key, Values: hbase.Values{tables.FamRepost: {tables.ColRepostEntry: {}}}})
		} else {
			err = s.st.Delete(ctx, &hbase.Delete{Table: tables.Reposts, Row: key})
		}
		if err == nil {
			err = s.w.Step(ctx, StepListed)
		}
		return err
	}
	return counted.Settle(ctx, stored, func(a, b bool) bool { return a == b }, write, read)
}

// RepairRepost settles the pair (root, repost) from repost's content row
// (see settleRepost): root's list of reposts holds repost exactly when
// repost's content row names root. It is what the repairer does for a
// dead repost and what `gateway fsck --repair` does for a list row that
// disagrees. Errors are the store's, or one wrapping counted.ErrUnsettled
// when the pair kept changing.
func (s *Service) RepairRepost(ctx context.Context, root, repost weibo.PostID) error {
	if _, err := s.settleRepost(ctx, root, repost, nil); err != nil {
		return fmt.Errorf("repair repost %s of %s: %w", repost, root, err)
	}
	return nil
}

// Reposts pages through the reposts of post root, newest first: one
// prefix scan of weibo:reposts, each chunk of entries checked with one
// GetMany of the reposts' content rows, which also returns the posts; an
// entry whose repost is gone or names another root (a write still
// settling, or the trace of one that died) is skipped. A repost's own
// list is empty: reposting it reposts its root. The reposts of a
// suspended user are left out (SetSuspensions). Errors: BAD_USER_INPUT
// for bad paging arguments.
func (s *Service) Reposts(ctx context.Context, root weibo.PostID, first *int, after *string) (_ *feed.PostConnection, err error) {
	defer weibo.Wrap(&err, "reposts of a post")
	q := paging.Query{Kind: paging.CursorReposts, RowLen: tables.RepostKeyLen, Rounds: repostRounds,
		Scan: hbase.Scan{Table: tables.Reposts, Prefix: tables.RepostPrefix(root)}}
	edges, info, err := paging.Read(ctx, s.st, q, first, after,
		func(ctx context.Context, rows []*hbase.Result) ([]*feed.Post, error) {
			ids := make([]weibo.PostID, 0, len(rows))
			at := make([]int, 0, len(rows))
			now := s.w.NowMillis()
			for i, r := range rows {
				if _, id, ok := tables.DecodeRepostKey(r.Row); ok && !s.susp.Suspended(id.Author, now) {
					ids = append(ids, id)
					at = append(at, i)
				}
			}
			ps, err := s.posts.GetPosts(ctx, ids)
			if err != nil {
				return nil, err
			}
			out := make([]*feed.Post, len(rows))
			for j, p := range ps {
				if p != nil && p.RepostOfID != nil && *p.RepostOfID == root {
					out[at[j]] = p
				}
			}
			return out, nil
		}, feed.NewPostEdge)
	if err != nil {
		return nil, err
	}
	return &feed.PostConnection{Edges: edges, PageInfo: info}, nil
}
