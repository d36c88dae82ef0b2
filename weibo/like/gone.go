package like

import (
	"context"
	"errors"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Likes go with their post. A deleted post's like rows, its likers rows
// and each liker's likes row of it are removed by the post's retraction
// (deleteLikes, a delete hook of the feed, which the repairer runs again
// for a retraction that died). Each like goes by an unlike of its own —
// unlikeGone: a counted write of the like relation whose marker
// (tables.EncodeLikeGoneExtra) names the liker's likedPostCount only, the
// post's likeCount having gone with its content row — so a crash anywhere
// is repaired to exact counts: the repairer settles the like (its Settle
// drops the like of a post that is gone, dropGoneLike) and recounts the
// liker's counter. A like that lands after the retraction scanned the
// post's likes is dropped by the like itself (Like reads the post again)
// or by its repair; `gateway fsck` reports any left (IssueOrphan).

// postGone reports whether post does not exist: its content row holds no
// text (one Get of family c).
func (s *Service) postGone(ctx context.Context, post weibo.PostID) (bool, error) {
	r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Content, Row: tables.ContentKey(post), Families: []string{tables.FamPost}})
	return err == nil && !tables.PostStored(r), err
}

// deleteLikes removes the likes of post id, which is gone (feed's
// DeleteHook): a prefix scan of its like rows, then, for each, the unlike
// of a gone post's like (unlikeGone). It is idempotent. Errors are the
// store's or the step hook's.
func (s *Service) deleteLikes(ctx context.Context, id weibo.PostID) error {
	type liked struct {
		uid weibo.UserID
		at  int64
	}
	var likes []liked
	err := s.st.Scan(ctx, &hbase.Scan{Table: tables.Likes, Prefix: tables.LikePrefix(id)}, func(r *hbase.Result) error {
		_, uid, ok := tables.DecodeLikeKey(r.Row)
		at, held := tables.LikeAt(r)
		if ok && held {
			likes = append(likes, liked{uid, at})
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, l := range likes {
		if err := s.unlikeGone(ctx, id, l.uid, l.at); err != nil {
			return err
		}
	}
	return nil
}

// unlikeGone removes uid's like of post, made at t, the post being gone:
// the like relation's counted write with the marker of a gone post's
// like (BeginWith tables.EncodeLikeGoneExtra: the sequence of uid's
// likedPostCount), the like row's CheckAndDelete expecting t (the
// authority: it decides whether this call counts, so the retraction, its
// repair and a like that found its post gone count it once), uid's
// likedPostCount -1, the settle of the like at t (both list rows
// deleted, the like row re-read), and the marker's delete. The LIKE
// notification is left as a deleted post's comment's is. Errors are the
// store's or the step hook's.
func (s *Service) unlikeGone(ctx context.Context, post weibo.PostID, uid weibo.UserID, t int64) error {
	op, err := s.w.BeginWith(ctx, s.rel, uint64(post.Author), uint64(post.Millis), tables.EncodeLikeGoneExtra(uid, t))
	if err != nil {
		return err
	}
	applied, err := s.st.CheckAndDelete(ctx, &hbase.Delete{Table: tables.Likes, Row: tables.LikeKey(post, uid)},
		tables.FamLike, tables.ColLikeAt, tables.EncodeMillis(t))
	if err == nil {
		err = s.w.Step(ctx, StepDecided)
	}
	if err != nil {
		return err
	}
	if applied {
		if _, err := s.w.Count(ctx, op, -1); err != nil {
			return err
		}
	}
	liked := false
	err = s.settleLike(ctx, post, uid, t, &liked)
	if errors.Is(err, counted.ErrUnsettled) {
		return s.w.Keep(ctx, op, nil)
	}
	if err != nil {
		return err
	}
	return s.w.End(ctx, op)
}

// dropGoneLike is the repair of a like or unlike of post, which is gone,
// by uid at t: the like row deleted if it holds t (not counted: the
// repairer recounts the write's counters next), its list rows settled
// (deleted).
func (s *Service) dropGoneLike(ctx context.Context, post weibo.PostID, uid weibo.UserID, t int64) error {
	if _, err := s.st.CheckAndDelete(ctx, &hbase.Delete{Table: tables.Likes, Row: tables.LikeKey(post, uid)},
		tables.FamLike, tables.ColLikeAt, tables.EncodeMillis(t)); err != nil {
		return err
	}
	return s.RepairLike(ctx, post, uid, t)
}

// countLikedPosts counts uid's likes, the rows its likedPostCount counts:
// uid's likes rows whose like row holds the row's time (one GetMany of
// like rows per batch), whether or not the post still exists — a deleted
// post's likes count until its retraction removes them, which takes them
// out of the counter as it deletes them.
func (s *Service) countLikedPosts(ctx context.Context, uid weibo.UserID) (int64, error) {
	var n int64
	var gets []*hbase.Get
	var at []int64
	check := func() error {
		if len(gets) == 0 {
			return nil
		}
		rs, err := s.st.GetMany(ctx, gets)
		for i, r := range rs {
			if t, ok := tables.LikeAt(r); ok && t == at[i] {
				n++
			}
		}
		gets, at = gets[:0], at[:0]
		return err
	}
	err := s.st.Scan(ctx, &hbase.Scan{Table: tables.Likes, Prefix: tables.UserLikesPrefix(uid)}, func(r *hbase.Result) error {
		u, t, p, ok := tables.DecodeUserLikeKey(r.Row)
		if !ok || u != uid {
			return nil
		}
		gets = append(gets, &hbase.Get{Table: tables.Likes, Row: tables.LikeKey(p, uid)})
		if at = append(at, t); len(gets) >= s.w.Batch() {
			return check()
		}
		return nil
	})
	if err == nil {
		err = check()
	}
	return n, err
}
