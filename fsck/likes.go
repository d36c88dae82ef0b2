package fsck

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/like"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Likes of posts: the like rows of weibo:likes are the authority; the
// posts' likers rows and the users' likes rows, keyed by the time of the
// like, depend on them, and so does each post's likeCount. A repair
// settles a like at one time from its like row (Feed.RepairLike) or
// recounts the post's likes (RecountCounters), both safe beside live
// writes.

// Kinds of Issue of likes.
const (
	LikeDependentMissing = "like-dependent-missing" // a like row without its post's likers row or its user's likes row: settled (written)
	LikeDependentStale   = "like-dependent-stale"   // a likers or likes row whose like row is gone or holds another time: settled (deleted)
	PostLikeCount        = "post-like-count"        // a likeCount that differs from the post's like rows: recounted
)

// likeOf names one like: the post, the user, and the time of the like.
type likeOf struct {
	post weibo.PostID
	uid  weibo.UserID
	at   int64
}

// likeRows is what the scan of weibo:likes found.
type likeRows struct {
	likes      map[likeOf]int64 // like rows -> cell time
	postLists  map[likeOf]int64 // the posts' likers rows -> cell time
	userLists  map[likeOf]int64 // the users' likes rows -> cell time
	likesCount map[weibo.PostID]int64
}

// loadLikes scans weibo:likes.
func (f *fsck) loadLikes(ctx context.Context) (*likeRows, error) {
	lr := &likeRows{likes: map[likeOf]int64{}, postLists: map[likeOf]int64{}, userLists: map[likeOf]int64{}, likesCount: map[weibo.PostID]int64{}}
	err := f.scan(ctx, &hbase.Scan{Table: tables.Likes}, func(r *hbase.Result) {
		if p, uid, ok := tables.DecodeLikeKey(r.Row); ok {
			at, _ := tables.LikeAt(r)
			lr.likes[likeOf{p, uid, at}] = newestTS(r)
			lr.likesCount[p]++
		} else if p, at, uid, ok := tables.DecodePostLikerKey(r.Row); ok {
			lr.postLists[likeOf{p, uid, at}] = newestTS(r)
		} else if uid, at, p, ok := tables.DecodeUserLikeKey(r.Row); ok {
			lr.userLists[likeOf{p, uid, at}] = newestTS(r)
		}
	})
	return lr, err
}

// checkLikes compares every like row with its two list rows, every list
// row with its like row, and every post's likeCount with its like rows.
func (f *fsck) checkLikes(ctx context.Context) error {
	lr, err := f.loadLikes(ctx)
	if err != nil {
		return err
	}
	for _, l := range sortedLikes(lr.likes) {
		_, inPost := lr.postLists[l]
		_, inUser := lr.userLists[l]
		if inPost && inUser {
			continue
		}
		var lacks []string
		if !inPost {
			lacks = append(lacks, "the post's likers row")
		}
		if !inUser {
			lacks = append(lacks, "the user's likes row")
		}
		err := f.issue(ctx, LikeDependentMissing, lr.likes[l], func() (bool, error) {
			return true, f.s.Likes.RepairLike(ctx, l.post, l.uid, l.at)
		}, "user %d likes post %s (at %d) but %v is missing", l.uid, l.post, l.at, lacks)
		if err != nil {
			return err
		}
	}
	stale := map[likeOf]int64{}
	for _, lists := range []map[likeOf]int64{lr.postLists, lr.userLists} {
		for l, ts := range lists {
			if _, ok := lr.likes[l]; !ok {
				stale[l] = max(stale[l], ts)
			}
		}
	}
	for _, l := range sortedLikes(stale) {
		err := f.issue(ctx, LikeDependentStale, stale[l], func() (bool, error) {
			return true, f.s.Likes.RepairLike(ctx, l.post, l.uid, l.at)
		}, "the lists show user %d liking post %s at %d, which the like rows do not hold", l.uid, l.post, l.at)
		if err != nil {
			return err
		}
	}
	return f.checkLikeCounts(ctx, lr)
}

// checkLikeCounts compares every stored post's likeCount with its like
// rows and recounts the ones that differ, in one batch.
func (f *fsck) checkLikeCounts(ctx context.Context, lr *likeRows) error {
	var fixes []counted.Counter
	var issues []int
	for _, author := range slices.Sorted(maps.Keys(f.so.posts)) {
		for _, p := range f.so.posts[author] {
			id := weibo.PostID{Author: author, Millis: p.millis}
			if p.likes == lr.likesCount[id] {
				continue
			}
			is := Issue{Kind: PostLikeCount, Detail: fmt.Sprintf("post %s has likeCount %d, %d like rows", id, p.likes, lr.likesCount[id])}
			if f.opt.Grace > 0 && f.now-p.likesTS < f.opt.Grace.Milliseconds() {
				is.Pending = true
			} else if f.opt.Repair {
				fixes = append(fixes, counted.Counter{Kind: like.LikeCount, Owner: uint64(author), Sub: uint64(p.millis)})
				issues = append(issues, len(f.rep.Issues))
			}
			f.rep.Issues = append(f.rep.Issues, is)
		}
	}
	if len(fixes) == 0 {
		return nil
	}
	res, err := f.s.Writes.RecountCounters(ctx, fixes)
	if err != nil {
		return fmt.Errorf("fsck: recount %d like counters: %w", len(fixes), err)
	}
	for i, r := range res {
		f.rep.Issues[issues[i]].Repaired = r.Done
	}
	return nil
}

// postCells reads a content row's cells: the time of the post's own
// cells, and its like count with the time of its counter cells.
func postCells(r *hbase.Result) (ts, likes, likesTS int64) {
	for _, c := range r.Cells {
		if c.Family == tables.FamPost && (c.Qualifier == tables.ColLikes || c.Qualifier == tables.ColLikesSeq) {
			likesTS = max(likesTS, c.Timestamp)
		} else {
			ts = max(ts, c.Timestamp)
		}
	}
	return ts, tables.PostLikes(r), likesTS
}

// sortedLikes returns the keys of m by post, user and time.
func sortedLikes(m map[likeOf]int64) []likeOf {
	return slices.SortedFunc(maps.Keys(m), func(a, b likeOf) int {
		return cmp.Or(cmp.Compare(a.post.Author, b.post.Author), cmp.Compare(a.post.Millis, b.post.Millis),
			cmp.Compare(a.uid, b.uid), cmp.Compare(a.at, b.at))
	})
}
