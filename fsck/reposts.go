package fsck

import (
	"cmp"
	"context"
	"maps"
	"slices"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/repost"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Reposts are checked in AreaSocial:
//
//	pair                      authority                        dependent
//	repost                    the repost's root cell (c:o)     the root's list row in weibo:reposts,
//	                                                           the root's repostCount (c:r)
//
// The content rows are read once, by loadSocial's scan (noteRepost); the
// list rows with one scan of weibo:reposts. A list row whose repost does
// not name its root (RepostListStale) and a repost without its list row
// (RepostListMissing) are settled through the domain (RepairRepost, the
// repairer's own settle), and a repostCount that differs from the reposts
// naming the post (RepostCount) is recounted (RecountCounters); a dead
// repost's marker is repaired with the other markers (WriteUnfinished).

// Kinds of Issue of the reposts.
const (
	RepostListStale   = "repost-list-stale"   // a list row whose repost is gone or names another root: the pair is settled (row deleted)
	RepostListMissing = "repost-list-missing" // a repost missing from its root's list: the pair is settled (row written)
	RepostCount       = "post-repost-count"   // a repostCount that differs from the reposts naming the post: recounted
)

// repostsLoaded is what noteRepost keeps of the content rows.
type repostsLoaded struct {
	roots  map[weibo.PostID]weibo.PostID // repost -> its root (stored posts with a root cell)
	ts     map[weibo.PostID]int64        // repost -> newest cell time of its content row
	counts map[weibo.PostID]postCounter  // stored post -> its repostCount cell, where there is one
}

// postCounter is a post's kept repostCount and the newest time of its
// counter cells (the count and its sequence).
type postCounter struct{ n, ts int64 }

// noteRepost keeps what the repost checks need of content row r (post id),
// read by loadSocial's scan: its root cell and its repostCount.
func (so *social) noteRepost(id weibo.PostID, r *hbase.Result) {
	rp := &so.reposts
	if rp.roots == nil {
		rp.roots, rp.ts, rp.counts = map[weibo.PostID]weibo.PostID{}, map[weibo.PostID]int64{}, map[weibo.PostID]postCounter{}
	}
	if r.Cell(tables.FamPost, tables.ColText) == nil {
		return // not a post: counter cells alone (an Increment after a delete)
	}
	if root, ok := tables.RepostOf(r); ok {
		rp.roots[id] = root
		rp.ts[id] = newestTS(r)
	}
	var pc postCounter
	found := false
	for _, c := range r.Family(tables.FamPost) {
		if c.Qualifier == tables.ColReposts || c.Qualifier == tables.ColRepostsSeq {
			found = true
			pc.ts = max(pc.ts, c.Timestamp)
		}
	}
	if found {
		pc.n = tables.PostReposts(r)
		rp.counts[id] = pc
	}
}

// checkReposts compares the list rows of weibo:reposts with the reposts'
// root cells, and every post's repostCount with the reposts naming it.
func (f *fsck) checkReposts(ctx context.Context) error {
	rp := &f.so.reposts
	listed := map[weibo.PostID]bool{} // reposts whose list row names their root
	type row struct {
		root, repost weibo.PostID
		ts           int64
	}
	var stale []row
	err := f.scan(ctx, &hbase.Scan{Table: tables.Reposts}, func(r *hbase.Result) {
		root, repost, ok := tables.DecodeRepostKey(r.Row)
		if !ok {
			return
		}
		if got, ok := rp.roots[repost]; ok && got == root {
			listed[repost] = true
			return
		}
		stale = append(stale, row{root, repost, newestTS(r)})
	})
	if err != nil {
		return err
	}
	for _, s := range stale {
		err := f.issue(ctx, RepostListStale, s.ts, func() (bool, error) {
			return true, f.s.Reposts.RepairRepost(ctx, s.root, s.repost)
		}, "post %s lists repost %s, which is gone or reposts another post", s.root, s.repost)
		if err != nil {
			return err
		}
	}
	byRoot := map[weibo.PostID]int64{}
	for _, repost := range slices.SortedFunc(maps.Keys(rp.roots), comparePosts) {
		root := rp.roots[repost]
		byRoot[root]++
		if listed[repost] {
			continue
		}
		err := f.issue(ctx, RepostListMissing, rp.ts[repost], func() (bool, error) {
			return true, f.s.Reposts.RepairRepost(ctx, root, repost)
		}, "repost %s of post %s is missing from its list of reposts", repost, root)
		if err != nil {
			return err
		}
	}
	// Counters: every stored post with a counter cell or reposts naming it.
	posts := map[weibo.PostID]bool{}
	for id := range rp.counts {
		posts[id] = true
	}
	for root := range byRoot {
		if _, ok := f.so.hasPost(root); ok {
			posts[root] = true
		}
	}
	for _, id := range slices.SortedFunc(maps.Keys(posts), comparePosts) {
		pc := rp.counts[id]
		if pc.n == byRoot[id] {
			continue
		}
		c := counted.Counter{Kind: repost.RepostCount, Owner: uint64(id.Author), Sub: uint64(id.Millis)}
		err := f.issue(ctx, RepostCount, pc.ts, func() (bool, error) {
			res, err := f.s.Writes.RecountCounters(ctx, []counted.Counter{c})
			return err == nil && res[0].Done, err
		}, "post %s has repostCount %d, %d reposts name it", id, pc.n, byRoot[id])
		if err != nil {
			return err
		}
	}
	return nil
}

// comparePosts orders post ids by author, then time.
func comparePosts(a, b weibo.PostID) int {
	return cmp.Or(cmp.Compare(a.Author, b.Author), cmp.Compare(a.Millis, b.Millis))
}
