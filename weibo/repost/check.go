package repost

import (
	"context"
	"maps"
	"slices"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/check"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/tables"
)

// The reposts' part of `gateway fsck` (package check):
//
//	pair                      authority                        dependent
//	repost                    the repost's root cell (c:o)     the root's list row in weibo:reposts,
//	                                                           the root's repostCount (c:r)
//
// The content rows are read by fsck's one scan (Run.Content); the list
// rows with one scan of weibo:reposts. A list row whose repost does not
// name its root (IssueListStale) and a repost without its list row
// (IssueListMissing) are settled (RepairRepost, the repairer's own
// settle), and a repostCount that differs from the reposts naming the
// post (IssueCount) is recounted; a dead repost's marker is repaired with
// the other markers.

// Kinds of check.Issue of the reposts.
const (
	IssueListStale   = "repost-list-stale"   // a list row whose repost is gone or names another root: the pair is settled (row deleted)
	IssueListMissing = "repost-list-missing" // a repost missing from its root's list: the pair is settled (row written)
	IssueCount       = "post-repost-count"   // a repostCount that differs from the reposts naming the post: recounted
)

// postCounter is a post's kept repostCount and the newest time of its
// counter cells (the count and its sequence).
type postCounter struct{ n, ts int64 }

// checkRun is one fsck run of the reposts' check.
type checkRun struct {
	s      *Service
	p      *check.Pass
	roots  map[weibo.PostID]weibo.PostID // repost -> its root (stored posts with a root cell)
	ts     map[weibo.PostID]int64        // repost -> newest cell time of its content row
	counts map[weibo.PostID]postCounter  // stored post -> its repostCount cell, where there is one
}

// fsckCheck is the reposts' check, registered by New.
func (s *Service) fsckCheck() check.Check {
	return check.Check{Name: Relation, Start: func(p *check.Pass) check.Run {
		c := &checkRun{s: s, p: p, roots: map[weibo.PostID]weibo.PostID{}, ts: map[weibo.PostID]int64{}, counts: map[weibo.PostID]postCounter{}}
		return check.Run{Content: c.content, Check: c.check}
	}}
}

// content keeps a stored post's root cell and its repostCount.
func (c *checkRun) content(id weibo.PostID, r *hbase.Result) {
	if root, ok := tables.RepostOf(r); ok {
		c.roots[id] = root
		c.ts[id] = check.NewestTS(r)
	}
	var pc postCounter
	found := false
	for _, cell := range r.Family(tables.FamPost) {
		if cell.Qualifier == tables.ColReposts || cell.Qualifier == tables.ColRepostsSeq {
			found = true
			pc.ts = max(pc.ts, cell.Timestamp)
		}
	}
	if found {
		pc.n = tables.PostReposts(r)
		c.counts[id] = pc
	}
}

// check compares the list rows of weibo:reposts with the reposts' root
// cells, and every post's repostCount with the reposts naming it.
func (c *checkRun) check(ctx context.Context) error {
	listed := map[weibo.PostID]bool{} // reposts whose list row names their root
	type row struct {
		root, repost weibo.PostID
		ts           int64
	}
	var stale []row
	err := c.p.Scan(ctx, &hbase.Scan{Table: tables.Reposts}, func(r *hbase.Result) {
		root, repost, ok := tables.DecodeRepostKey(r.Row)
		if !ok {
			return
		}
		if got, ok := c.roots[repost]; ok && got == root {
			listed[repost] = true
			return
		}
		stale = append(stale, row{root, repost, check.NewestTS(r)})
	})
	if err != nil {
		return err
	}
	for _, s := range stale {
		err := c.p.Issue(IssueListStale, s.ts, func() (bool, error) {
			return true, c.s.RepairRepost(ctx, s.root, s.repost)
		}, "post %s lists repost %s, which is gone or reposts another post", s.root, s.repost)
		if err != nil {
			return err
		}
	}
	byRoot := map[weibo.PostID]int64{}
	for _, repost := range slices.SortedFunc(maps.Keys(c.roots), weibo.PostID.Compare) {
		root := c.roots[repost]
		byRoot[root]++
		if listed[repost] {
			continue
		}
		err := c.p.Issue(IssueListMissing, c.ts[repost], func() (bool, error) {
			return true, c.s.RepairRepost(ctx, root, repost)
		}, "repost %s of post %s is missing from its list of reposts", repost, root)
		if err != nil {
			return err
		}
	}
	// Counters: every stored post with a counter cell or reposts naming it.
	posts := map[weibo.PostID]bool{}
	for id := range c.counts {
		posts[id] = true
	}
	for root := range byRoot {
		if c.p.PostExists(root) {
			posts[root] = true
		}
	}
	for _, id := range slices.SortedFunc(maps.Keys(posts), weibo.PostID.Compare) {
		pc := c.counts[id]
		if pc.n == byRoot[id] {
			continue
		}
		fix := c.s.w.RecountOne(ctx, counted.Counter{Kind: RepostCount, Owner: uint64(id.Author), Sub: uint64(id.Millis)})
		if err := c.p.Issue(IssueCount, pc.ts, fix, "post %s has repostCount %d, %d reposts name it", id, pc.n, byRoot[id]); err != nil {
			return err
		}
	}
	return nil
}
