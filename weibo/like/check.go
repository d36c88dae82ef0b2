package like

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/check"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/tables"
)

// The likes' part of `gateway fsck` (package check):
//
//	pair                      authority                        dependent
//	like                      likes row of (post, user)        the post's likers row and the user's likes
//	                          holding the time of the like     row at that time, the post's likeCount
//
// A like row without its list rows (IssueDependentMissing) and list rows
// without their like row (IssueDependentStale) are settled at the like's
// time (RepairLike); a likeCount that differs from the post's like rows
// (IssueCount) is recounted, all of them in one batch. Like rows and list
// rows of a post that does not exist (IssueOrphan: left by a retraction
// that nothing repairs, or from before likes went with their post) are
// removed as the post's retraction removes them, each like by an unlike
// of a gone post's like (unlikeGone), which counts it out of its liker's
// likedPostCount. A user's likedPostCount that differs from their like
// rows (IssueLikedCount) is recounted, in one batch — a store written
// before the counter was kept has none, and its first repair writes them
// all. Every repair is safe beside live writes.

// Kinds of check.Issue of the likes.
const (
	IssueDependentMissing = "like-dependent-missing" // a like row without its post's likers row or its user's likes row: settled (written)
	IssueDependentStale   = "like-dependent-stale"   // a likers or likes row whose like row is gone or holds another time: settled (deleted)
	IssueCount            = "post-like-count"        // a likeCount that differs from the post's like rows: recounted
	IssueOrphan           = "like-orphan"            // like rows or list rows of a post that does not exist: removed (unlikeGone)
	IssueLikedCount       = "user-liked-count"       // a likedPostCount that differs from the user's like rows: recounted
)

// likeOf names one like: the post, the user, and the time of the like.
type likeOf struct {
	post weibo.PostID
	uid  weibo.UserID
	at   int64
}

// checkRun is one fsck run of the likes' check.
type checkRun struct {
	s *Service
	p *check.Pass
	// From the content rows: each stored post's likeCount and the newest
	// cell of the count and its sequence.
	posts   []weibo.PostID
	counts  map[weibo.PostID]int64
	countTS map[weibo.PostID]int64
	// From weibo:likes.
	likes     map[likeOf]int64 // like rows -> cell time
	postLists map[likeOf]int64 // the posts' likers rows -> cell time
	userLists map[likeOf]int64 // the users' likes rows -> cell time
	rows      map[weibo.PostID]int64
	liked     map[weibo.UserID]int64    // each user's like rows
	likedTS   map[weibo.UserID]int64    // the newest cell of them
	kept      map[weibo.UserID][2]int64 // each user's likedPostCount and the newest cell of it and its sequence (Run.User)
}

// fsckCheck is the likes' check, registered by New.
func (s *Service) fsckCheck() check.Check {
	return check.Check{Name: Relation, Start: func(p *check.Pass) check.Run {
		c := &checkRun{s: s, p: p, counts: map[weibo.PostID]int64{}, countTS: map[weibo.PostID]int64{},
			likes: map[likeOf]int64{}, postLists: map[likeOf]int64{}, userLists: map[likeOf]int64{}, rows: map[weibo.PostID]int64{},
			liked: map[weibo.UserID]int64{}, likedTS: map[weibo.UserID]int64{}, kept: map[weibo.UserID][2]int64{}}
		return check.Run{Content: c.content, User: c.user, Check: c.check}
	}}
}

// content keeps a stored post's likeCount and the time of its cells.
func (c *checkRun) content(id weibo.PostID, r *hbase.Result) {
	c.posts = append(c.posts, id)
	c.counts[id] = tables.PostLikes(r)
	for _, q := range []string{tables.ColLikes, tables.ColLikesSeq} {
		if cell := r.Cell(tables.FamPost, q); cell != nil {
			c.countTS[id] = max(c.countTS[id], cell.Timestamp)
		}
	}
}

// check scans weibo:likes and compares every like row with its two list
// rows, every list row with its like row, every post's likeCount with its
// like rows and every user's likedPostCount with theirs; the rows of a
// post that does not exist are reported as such only.
func (c *checkRun) check(ctx context.Context) error {
	err := c.p.Scan(ctx, &hbase.Scan{Table: tables.Likes}, func(r *hbase.Result) {
		if p, uid, ok := tables.DecodeLikeKey(r.Row); ok {
			at, _ := tables.LikeAt(r)
			ts := check.NewestTS(r)
			c.likes[likeOf{p, uid, at}] = ts
			c.rows[p]++
			c.liked[uid]++
			c.likedTS[uid] = max(c.likedTS[uid], ts)
		} else if p, at, uid, ok := tables.DecodePostLikerKey(r.Row); ok {
			c.postLists[likeOf{p, uid, at}] = check.NewestTS(r)
		} else if uid, at, p, ok := tables.DecodeUserLikeKey(r.Row); ok {
			c.userLists[likeOf{p, uid, at}] = check.NewestTS(r)
		}
	})
	if err != nil {
		return err
	}
	if err := c.checkOrphans(ctx); err != nil {
		return err
	}
	for _, l := range sortedLikes(c.likes) {
		_, inPost := c.postLists[l]
		_, inUser := c.userLists[l]
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
		err := c.p.Issue(IssueDependentMissing, c.likes[l], func() (bool, error) {
			return true, c.s.RepairLike(ctx, l.post, l.uid, l.at)
		}, "user %d likes post %s (at %d) but %v is missing", l.uid, l.post, l.at, lacks)
		if err != nil {
			return err
		}
	}
	stale := map[likeOf]int64{}
	for _, lists := range []map[likeOf]int64{c.postLists, c.userLists} {
		for l, ts := range lists {
			if _, ok := c.likes[l]; !ok {
				stale[l] = max(stale[l], ts)
			}
		}
	}
	for _, l := range sortedLikes(stale) {
		err := c.p.Issue(IssueDependentStale, stale[l], func() (bool, error) {
			return true, c.s.RepairLike(ctx, l.post, l.uid, l.at)
		}, "the lists show user %d liking post %s at %d, which the like rows do not hold", l.uid, l.post, l.at)
		if err != nil {
			return err
		}
	}
	if err := c.checkCounts(ctx); err != nil {
		return err
	}
	return c.checkLikedCounts(ctx)
}

// checkCounts compares every stored post's likeCount with its like rows
// and recounts the ones that differ, in one batch.
func (c *checkRun) checkCounts(ctx context.Context) error {
	var found []check.Found
	var fixes []counted.Counter
	for _, id := range slices.SortedFunc(slices.Values(c.posts), weibo.PostID.Compare) {
		if c.counts[id] == c.rows[id] {
			continue
		}
		found = append(found, check.Found{TS: c.countTS[id], Issue: check.Issue{Kind: IssueCount,
			Detail: fmt.Sprintf("post %s has likeCount %d, %d like rows", id, c.counts[id], c.rows[id])}})
		fixes = append(fixes, counted.Counter{Kind: LikeCount, Owner: uint64(id.Author), Sub: uint64(id.Millis)})
	}
	return c.p.Batch(found, c.s.w.BatchRecount(ctx, fixes))
}

// sortedLikes returns the keys of m by post, user and time.
func sortedLikes(m map[likeOf]int64) []likeOf {
	return slices.SortedFunc(maps.Keys(m), func(a, b likeOf) int {
		return cmp.Or(a.post.Compare(b.post), cmp.Compare(a.uid, b.uid), cmp.Compare(a.at, b.at))
	})
}

// checkOrphans reports, one issue per post, the like rows and list rows
// of posts that do not exist, and takes them out of the maps the other
// comparisons read (a like of a gone post is this issue only). Its repair
// reads the post again and, still gone, removes each like as the post's
// retraction does (unlikeGone: counted out of the liker's
// likedPostCount, its list rows deleted).
func (c *checkRun) checkOrphans(ctx context.Context) error {
	type orphans struct {
		likes, lists int
		ts           int64
		of           map[likeOf]int64 // -> 1 for a like row, 0 for list rows only
	}
	byPost := map[weibo.PostID]*orphans{}
	take := func(m map[likeOf]int64, like bool) {
		for l, ts := range m {
			if c.p.PostExists(l.post) {
				continue
			}
			o := byPost[l.post]
			if o == nil {
				o = &orphans{of: map[likeOf]int64{}}
				byPost[l.post] = o
			}
			if like {
				o.likes++
			} else {
				o.lists++
			}
			o.ts = max(o.ts, ts)
			if like {
				o.of[l] = 1
			} else if _, seen := o.of[l]; !seen {
				o.of[l] = 0
			}
			delete(m, l)
		}
	}
	take(c.likes, true)
	take(c.postLists, false)
	take(c.userLists, false)
	for _, id := range slices.SortedFunc(maps.Keys(byPost), weibo.PostID.Compare) {
		o := byPost[id]
		err := c.p.Issue(IssueOrphan, o.ts, func() (bool, error) {
			gone, err := c.s.postGone(ctx, id)
			if err != nil || !gone {
				return false, err
			}
			for _, l := range sortedLikes(o.of) {
				if err := c.s.unlikeGone(ctx, l.post, l.uid, l.at); err != nil {
					return false, err
				}
				if o.of[l] == 1 {
					c.liked[l.uid]-- // counted out of the liker's counter, by this call or another
				}
			}
			return true, nil
		}, "post %s does not exist but has %d like rows and %d likers or likes rows", id, o.likes, o.lists)
		if err != nil {
			return err
		}
	}
	return nil
}

// user keeps a user's likedPostCount and the newest time of its cells
// (the count and its sequence), from fsck's scan of weibo:users.
func (c *checkRun) user(uid weibo.UserID, r *hbase.Result) {
	var ts int64
	for _, q := range []string{tables.ColLikedPosts, tables.ColLikedPostsSeq} {
		if cell := r.Cell(tables.FamCount, q); cell != nil {
			ts = max(ts, cell.Timestamp)
		}
	}
	c.kept[uid] = [2]int64{tables.CounterValue(r, tables.ColLikedPosts), ts}
}

// checkLikedCounts compares every user's likedPostCount (kept, from fsck's
// scan of weibo:users) with their like rows — a post's that does not
// exist too, until checkOrphans' repair removes them and counts them out
// — and recounts the ones that differ, in one batch.
func (c *checkRun) checkLikedCounts(ctx context.Context) error {
	var found []check.Found
	var fixes []counted.Counter
	for _, uid := range slices.Sorted(maps.Keys(c.kept)) {
		has, cellTS := c.kept[uid][0], c.kept[uid][1]
		if has == c.liked[uid] {
			continue
		}
		found = append(found, check.Found{TS: max(c.likedTS[uid], cellTS), Issue: check.Issue{Kind: IssueLikedCount,
			Detail: fmt.Sprintf("user %d has likedPostCount %d, %d like rows", uid, has, c.liked[uid])}})
		fixes = append(fixes, counted.Counter{Kind: LikedPostCount, Owner: uint64(uid)})
	}
	return c.p.Batch(found, c.s.w.BatchRecount(ctx, fixes))
}
