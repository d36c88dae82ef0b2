// Package like is the like of a post (点赞): a counted relation on the
// write protocol (package counted), its likeCount counter, its LIKE
// notifications and its lists — a post's likers and a user's liked posts.
//
// Likes of posts. A like of post P by user U is a counted relation
// (package counted): authority U's like row of P in weibo:likes, whose
// cell holds t, the time of the like; dependents the row of P's likers
// and the row of U's likes, both keyed by t (newest like first); counters
// P's likeCount on its content row and U's likedPostCount on U's users
// row. A deleted post's likes go with it (gone.go). The time names the
// like: the list rows at t are written and deleted only by the writes of
// the like at t (the like that made it and the unlike that undoes it,
// whose markers carry t), each settling them against the like row
// afterwards, so a like made again later, at another time, has list rows
// of its own and never races the old ones.
package like

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/account"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/notify"
	"github.com/weibohbase/gateway/weibo/safety"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Notices sends notifications and learns how to check one kind of them.
// *notify.Service implements it.
type Notices interface {
	SendNotice(ctx context.Context, n notify.Notice, mode notify.NoticeMode) error
	RegisterNoticeCheck(match func(notify.Notice) bool, wanted notify.WantedFunc)
}

// Service is the like relation's API. It is safe for concurrent use.
type Service struct {
	st      hbase.Store
	w       *counted.Protocol
	rel     *counted.Relation
	notices Notices
	log     *slog.Logger
	guard   safety.Blocker // nil: no blocks
	susp    weibo.Suspensions
}

// Users reads users rows: whether a user exists, for the recount of
// their likedPostCount. *account.Service implements it.
type Users interface {
	GetUsers(ctx context.Context, ids []weibo.UserID) ([]*weibo.User, error)
}

// Posts is what likes need of the posts: a hook in every post's
// retraction. *feed.Service implements it.
type Posts interface {
	RegisterDeleteHook(hook feed.DeleteHook)
}

// New returns the likes over st and registers with w the like relation,
// the likeCount and likedPostCount counters and the likes' fsck check
// (check.go), with posts the removal of a deleted post's likes (gone.go),
// and with notices how a LIKE notification is checked (the like row
// exists; while neither it nor the post does, the notification is left as
// it is, as a deleted post's comment's is). The weibo tables must exist
// (tables.Migrate).
func New(st hbase.Store, w *counted.Protocol, users Users, posts Posts, notices Notices) *Service {
	s := &Service{st: st, w: w, notices: notices, log: w.Logger(), susp: weibo.NoSuspensions}
	s.rel = s.likeRelation()
	w.Register(s.rel)
	w.RegisterCheck(s.fsckCheck())
	w.RegisterCounter(feed.PostCounter(st, LikeCount, tables.ColLikes, tables.ColLikesSeq, func(ctx context.Context, post weibo.PostID) (int64, error) {
		return w.CountRows(ctx, &hbase.Scan{Table: tables.Likes, Prefix: tables.LikePrefix(post)}, nil, nil)
	}))
	w.RegisterCounter(account.Counter(users, LikedPostCount, tables.ColLikedPosts, tables.ColLikedPostsSeq, s.countLikedPosts))
	posts.RegisterDeleteHook(s.deleteLikes)
	notices.RegisterNoticeCheck(func(n notify.Notice) bool { return n.Kind == tables.NotifLike }, func(ctx context.Context, n notify.Notice) (bool, bool, error) {
		post, _ := n.Subject.Post()
		rs, err := s.st.GetMany(ctx, []*hbase.Get{
			{Table: tables.Likes, Row: tables.LikeKey(post, n.Actor)},
			{Table: tables.Content, Row: tables.ContentKey(post), Families: []string{tables.FamPost}},
		})
		if err != nil {
			return false, false, err
		}
		liked := rs[0].Exists()
		return liked, liked || tables.PostStored(rs[1]), nil
	})
	return s
}

// LikeCount is a post's likeCount: its like rows. It is kept with
// Increment on the post's content row (family c), so reading a post reads
// its count, and registered with the protocol by New.
const LikeCount counted.CounterKind = "likeCount"

// LikedPostCount is a user's likedPostCount (GraphQL: User.likedPosts'
// totalCount): their like rows, counted by their likes rows that their
// like rows hold (countLikedPosts). It is kept with Increment on the
// users row (family c, tables.ColLikedPosts), so that totalCount is one
// cell, and registered with the protocol by New. A deleted post's likes
// count until its retraction removes them (gone.go); after it there are
// none.
const LikedPostCount counted.CounterKind = "likedPostCount"

// Relation is the like relation's name; its steps are
// counted.Step(Relation, phase).
const Relation = "like"

// PhaseDependents is the like's own phase: in every settle of a like,
// after the list rows, before the re-read.
const PhaseDependents counted.Phase = "dependents"

// Steps of a like's counted write, passed to the protocol's step hook
// (counted.WithStepHook); the relation declares them (Relation.Phases),
// so the registry and the conformance suite know them all.
var (
	StepMarked     = counted.Step(Relation, counted.PhaseMarked)    // after the pending row of a likePost or unlikePost (or of a gone post's like's unlike)
	StepSequenced  = counted.Step(Relation, counted.PhaseSequenced) // after the operation sequences of the post's likeCount and the liker's likedPostCount
	StepDecided    = counted.Step(Relation, counted.PhaseDecided)   // after the like row's CheckAndPut/CheckAndDelete
	StepCounted    = counted.Step(Relation, counted.PhaseCounted)   // after the post's likeCount and the liker's likedPostCount
	StepDependents = counted.Step(Relation, PhaseDependents)        // in every settle of a like: after the list rows, before the re-read
)

// likeRelation is the like of a post: owner its author, other its ms, the
// liker and the like's time in the marker's extra bytes. Its counters are
// the post's likeCount and the liker's likedPostCount — the liker's only
// for the unlike of a deleted post's like (tables.EncodeLikeGoneExtra),
// whose post's counter went with its content row.
func (s *Service) likeRelation() *counted.Relation {
	return &counted.Relation{
		Name:   Relation,
		Marker: tables.PendingLike,
		Phases: []counted.Phase{counted.PhaseDecided, PhaseDependents},
		CountersWith: func(author, ms uint64, extra []byte) []counted.Counter {
			var out []counted.Counter
			if !tables.LikeExtraGone(extra) {
				out = append(out, counted.Counter{Kind: LikeCount, Owner: author, Sub: ms})
			}
			if uid, _, ok := tables.DecodeLikeExtra(extra); ok {
				out = append(out, counted.Counter{Kind: LikedPostCount, Owner: uint64(uid)})
			}
			return out
		},
		Settle: func(ctx context.Context, author, ms uint64, extra []byte) error {
			post := weibo.PostID{Author: weibo.UserID(author), Millis: int64(ms)}
			uid, at, ok := tables.DecodeLikeExtra(extra)
			if !ok {
				// Not a marker this code writes: nothing names the list
				// rows to settle (fsck finds them); the count is recounted.
				s.log.Warn("repair: a like's marker without its liker", "post", post.String())
				return nil
			}
			// A like of a post deleted meanwhile goes with it (the post's
			// retraction may have scanned its likes before the like row
			// was written); the recount that follows counts it out.
			gone, err := s.postGone(ctx, post)
			if err != nil {
				return err
			}
			if gone {
				return s.dropGoneLike(ctx, post, uid, at)
			}
			if err := s.RepairLike(ctx, post, uid, at); err != nil {
				return err
			}
			return s.notices.SendNotice(ctx, likeNotice(post, uid, at), notify.NoticeSync)
		},
	}
}

// Like makes viewer like post and returns the post, its likeCount
// updated by the call. It is idempotent: liking a post already liked
// changes nothing. Errors: NOT_FOUND when the post does not exist,
// FORBIDDEN (safety.ErrForbiddenInteraction) when a block stands between
// viewer and the post's author, either way (read first: nothing is
// written). An unlike is never refused.
//
// Writes, in order (package counted explains why this order survives any
// interleaving and any crash), after one batched read of the post and
// the viewer's like row (a post already liked ends there):
//  1. the weibo:pending row of the write (the marker), carrying the
//     viewer and t, the time of this like;
//  2. the operation sequences of the post's likeCount and the viewer's
//     likedPostCount;
//  3. the like row with CheckAndPut(absent) holding t, the authority —
//     the single point that decides whether this call is the one that
//     likes, so concurrent or repeated calls count once;
//  4. if it did, the post's likeCount and the viewer's likedPostCount +1
//     (within the write's budget);
//  5. the settle of the like at t (settleLike): the post's likers row and
//     the viewer's likes row at t (one PutMany), then a re-read of the
//     like row — the rows deleted again as long as it no longer holds t
//     (a concurrent unlike);
//  6. if it liked, a read of the post again: deleted meanwhile, the like
//     goes as its retraction's would (unlikeGone), the marker is deleted
//     and the call is NOT_FOUND; else the LIKE notification of the post's author (notify.go:
//     a notify write of its own, grouped per post while unread; none for
//     the author's own like);
//  7. the delete of the pending row.
//
// A call that loses the CheckAndPut to a concurrent like of the same
// viewer wrote nothing but its marker and sequence: that like settles its
// own rows. A call that dies anywhere leaves the pending row; the
// repairer settles the like at t, recounts the post's likes after the
// repair grace and makes the notification agree with the like row.
func (s *Service) Like(ctx context.Context, viewer weibo.UserID, post weibo.PostID) (_ *feed.Post, err error) {
	defer weibo.Wrapf(&err, "like %s by %s", post, viewer)
	if err := safety.CheckInteraction(ctx, s.guard, viewer, post.Author); err != nil {
		return nil, err
	}
	p, _, liked, err := s.likeState(ctx, post, viewer)
	if err != nil || liked {
		return p, err
	}
	t := s.w.NowMillis()
	op, err := s.w.BeginWith(ctx, s.rel, uint64(post.Author), uint64(post.Millis), tables.EncodeLikeExtra(viewer, t))
	if err != nil {
		return nil, err
	}
	applied, err := s.st.CheckAndPut(ctx, &hbase.Put{Table: tables.Likes, Row: tables.LikeKey(post, viewer), Values: tables.LikeValues(t)},
		tables.FamLike, tables.ColLikeAt, nil)
	if err == nil {
		err = s.w.Step(ctx, StepDecided)
	}
	if err != nil {
		return nil, err
	}
	if applied {
		if err := s.countLike(ctx, op, p, viewer, +1, t, true); err != nil {
			return nil, err
		}
		// The post may have been deleted since it was read, and its
		// retraction may have scanned its likes before this like row was
		// written: read it again. Gone, the like goes too, as the
		// retraction's would (unlikeGone, counted), before the marker.
		// Found, the like row was written before the post's delete, so
		// the retraction (which comes after it) removes it.
		gone, err := s.postGone(ctx, post)
		if err != nil {
			return nil, err
		}
		if gone {
			if err := s.unlikeGone(ctx, post, viewer, t); err != nil {
				return nil, err
			}
			if err := s.w.End(ctx, op); err != nil {
				return nil, err
			}
			return nil, weibo.NotFound("post %s not found", post)
		}
		if err := s.notices.SendNotice(ctx, likeNotice(post, viewer, t), notify.NoticeAdd); err != nil {
			return nil, err
		}
	}
	return p, s.w.End(ctx, op)
}

// likeNotice is the LIKE notification of uid's like of post at t (ms): to
// the post's author, grouped per post.
func likeNotice(post weibo.PostID, uid weibo.UserID, t int64) notify.Notice {
	return notify.Notice{Kind: tables.NotifLike, Recipient: post.Author, Actor: uid, Subject: tables.PostSubject(post), At: t}
}

// Unlike makes viewer stop liking post and returns the post, its
// likeCount updated by the call. It is idempotent. Errors as for Like.
//
// Writes, in order, as Like's, after the batched read of the post and
// the viewer's like row (a post not liked ends there; else t is the time
// the like row holds): the pending row carrying the viewer and t; the
// operation sequences; the CheckAndDelete of the like row expecting t (the
// authority; it decides whether this call counts); the likeCount and the
// viewer's likedPostCount -1; the
// settle of the like at t — delete of the post's likers row and of the
// viewer's likes row at t, re-read of the like row —; the viewer taken out
// of the LIKE notification (deleted with its last actor); the delete of
// the pending row. A call whose CheckAndDelete fails met another unlike of the
// like at t (which settles its rows), perhaps followed by a new like: it
// counts nothing and settles nothing.
func (s *Service) Unlike(ctx context.Context, viewer weibo.UserID, post weibo.PostID) (_ *feed.Post, err error) {
	defer weibo.Wrapf(&err, "unlike %s by %s", post, viewer)
	p, t, liked, err := s.likeState(ctx, post, viewer)
	if err != nil || !liked {
		return p, err
	}
	op, err := s.w.BeginWith(ctx, s.rel, uint64(post.Author), uint64(post.Millis), tables.EncodeLikeExtra(viewer, t))
	if err != nil {
		return nil, err
	}
	applied, err := s.st.CheckAndDelete(ctx, &hbase.Delete{Table: tables.Likes, Row: tables.LikeKey(post, viewer)},
		tables.FamLike, tables.ColLikeAt, tables.EncodeMillis(t))
	if err == nil {
		err = s.w.Step(ctx, StepDecided)
	}
	if err != nil {
		return nil, err
	}
	if applied {
		if err := s.countLike(ctx, op, p, viewer, -1, t, false); err != nil {
			return nil, err
		}
		if err := s.notices.SendNotice(ctx, likeNotice(post, viewer, t), notify.NoticeRemove); err != nil {
			return nil, err
		}
	}
	return p, s.w.End(ctx, op)
}

// countLike makes steps 4 and 5 of a like or unlike by uid that changed
// the like at t: it adds d to the post's likeCount and sets the new count
// on p (or, past op's budget, leaves it to the repairer), then settles the
// like's list rows from liked, the state the call gave the like row; op's
// marker is kept when the like row kept changing.
func (s *Service) countLike(ctx context.Context, op *counted.Op, p *feed.Post, uid weibo.UserID, d, t int64, liked bool) error {
	vs, err := s.w.Count(ctx, op, d)
	if err != nil {
		return err
	}
	if vs != nil {
		p.LikeCount = vs[0]
	}
	err = s.settleLike(ctx, p.ID, uid, t, &liked)
	if errors.Is(err, counted.ErrUnsettled) {
		return s.w.Keep(ctx, op, nil)
	}
	return err
}

// likeState reads, with one GetMany, post's content row and uid's like
// row of it: the post, and the time of the like when uid likes it.
// Errors: NOT_FOUND when the post does not exist.
func (s *Service) likeState(ctx context.Context, post weibo.PostID, uid weibo.UserID) (*feed.Post, int64, bool, error) {
	rs, err := s.st.GetMany(ctx, []*hbase.Get{
		{Table: tables.Content, Row: tables.ContentKey(post)},
		{Table: tables.Likes, Row: tables.LikeKey(post, uid)},
	})
	if err != nil {
		return nil, 0, false, err
	}
	p := feed.PostFromRow(post, rs[0])
	if p == nil {
		return nil, 0, false, weibo.NotFound("post %s not found", post)
	}
	t, liked := tables.LikeAt(rs[1])
	return p, t, liked, nil
}

// settleLike makes the list rows of uid's like of post at time t — the
// post's likers row and uid's likes row — agree with the like row, the
// authority: present while it holds t, absent otherwise (counted.Settle).
// It settles from state, the like row's state as the caller just wrote
// it (nil to read it); counted.ErrUnsettled when the row kept changing.
// Every write is an idempotent PutMany or DeleteMany.
func (s *Service) settleLike(ctx context.Context, post weibo.PostID, uid weibo.UserID, t int64, state *bool) error {
	key := tables.LikeKey(post, uid)
	read := func(ctx context.Context) (bool, error) {
		r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Likes, Row: key})
		at, ok := tables.LikeAt(r)
		return ok && at == t, err
	}
	var liked bool
	if state != nil {
		liked = *state
	} else {
		var err error
		if liked, err = read(ctx); err != nil {
			return err
		}
	}
	rows := [][]byte{tables.PostLikerKey(post, t, uid), tables.UserLikeKey(uid, t, post)}
	write := func(ctx context.Context, liked bool) error {
		var err error
		if liked {
			puts := make([]*hbase.Put, len(rows))
			for i, k := range rows {
				puts[i] = &hbase.Put{Table: tables.Likes, Row: k, Values: tables.LikeEntryValues()}
			}
			err = s.st.PutMany(ctx, puts)
		} else {
			dels := make([]*hbase.Delete, len(rows))
			for i, k := range rows {
				dels[i] = &hbase.Delete{Table: tables.Likes, Row: k}
			}
			err = s.st.DeleteMany(ctx, dels)
		}
		if err == nil {
			err = s.w.Step(ctx, StepDependents)
		}
		return err
	}
	_, err := counted.Settle(ctx, liked, func(a, b bool) bool { return a == b }, write, read)
	return err
}

// RepairLike settles the list rows of uid's like of post at time t (ms)
// from the like row (see settleLike): present when the like row holds t,
// absent otherwise. It is what the repairer does for a dead like or
// unlike, and what `gateway fsck --repair` does for a list row without its
// like or a like without its list rows. Errors are the store's, or one
// wrapping counted.ErrUnsettled when the like row kept changing.
func (s *Service) RepairLike(ctx context.Context, post weibo.PostID, uid weibo.UserID, t int64) error {
	if err := s.settleLike(ctx, post, uid, t, nil); err != nil {
		return fmt.Errorf("repair like of %s by %s at %d: %w", post, uid, t, err)
	}
	return nil
}
