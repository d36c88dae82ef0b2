package comment

import (
	"bytes"
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

// The comments' part of `gateway fsck` (package check):
//
//	pair                      authority                        dependent
//	comment                   its comment row                  the post's commentCount (content c:c)
//
// A comment row has no dependent row; its post's counter counts the rows.
// A counter that differs from the rows is recounted (IssueCount, pending
// while a counter cell is younger than the grace). Comment rows of a post
// that does not exist — no write of the gateway leaves them: addComment
// reads the post before it writes — are reported and deleted
// (IssueOrphan). Dead addComment and deleteComment writes (weibo:pending
// kind 'c') are reported with the other unfinished writes.

// Kinds of check.Issue of the comments.
const (
	IssueCount  = "post-comment-count" // a commentCount that differs from the post's comment rows: recounted
	IssueOrphan = "comment-orphan"     // comment rows of a post that does not exist: deleted
)

// commentedPost is what the check knows of one post.
type commentedPost struct {
	exists    bool  // the content row holds the post's text
	count     int64 // its comment counter
	countTS   int64 // newest cell of the counter and its sequence
	rows      int64 // its comment rows
	rowsTS    int64 // newest cell of its comment rows
	orphanKey [][]byte
}

// checkRun is one fsck run of the comments' check.
type checkRun struct {
	s     *Service
	p     *check.Pass
	posts map[weibo.PostID]*commentedPost
}

// fsckCheck is the comments' check, registered by New.
func (s *Service) fsckCheck() check.Check {
	return check.Check{Name: Relation, Start: func(p *check.Pass) check.Run {
		c := &checkRun{s: s, p: p, posts: map[weibo.PostID]*commentedPost{}}
		return check.Run{Content: c.content, Check: c.check}
	}}
}

func (c *checkRun) post(id weibo.PostID) *commentedPost {
	p := c.posts[id]
	if p == nil {
		p = &commentedPost{}
		c.posts[id] = p
	}
	return p
}

// content keeps a stored post's comment counter and its time.
func (c *checkRun) content(id weibo.PostID, r *hbase.Result) {
	p := c.post(id)
	p.exists = true
	p.count = tables.PostCommentCount(r)
	for _, q := range []string{tables.ColComments, tables.ColCommentsSeq} {
		if cell := r.Cell(tables.FamPost, q); cell != nil {
			p.countTS = max(p.countTS, cell.Timestamp)
		}
	}
}

// check scans weibo:comments and compares every post's comment counter
// with its comment rows.
func (c *checkRun) check(ctx context.Context) error {
	err := c.p.Scan(ctx, &hbase.Scan{Table: tables.Comments, Families: []string{tables.FamComment}}, func(r *hbase.Result) {
		id, ok := tables.DecodeCommentKey(r.Row)
		if !ok || !tables.CommentStored(r) {
			return
		}
		p := c.post(id.Post)
		p.rows++
		p.rowsTS = max(p.rowsTS, check.NewestTS(r))
		if !p.exists {
			p.orphanKey = append(p.orphanKey, bytes.Clone(r.Row))
		}
	})
	if err != nil {
		return err
	}
	ids := slices.SortedFunc(maps.Keys(c.posts), weibo.PostID.Compare)
	var found []check.Found
	var fixes []counted.Counter
	for _, id := range ids {
		p := c.posts[id]
		if !p.exists {
			if p.rows == 0 {
				continue
			}
			if err := c.p.Issue(IssueOrphan, p.rowsTS, c.deleteOrphans(ctx, id, p.orphanKey),
				"post %s does not exist but has %d comment rows", id, p.rows); err != nil {
				return err
			}
			continue
		}
		if p.count == p.rows {
			continue
		}
		found = append(found, check.Found{TS: max(p.countTS, p.rowsTS), Issue: check.Issue{Kind: IssueCount,
			Detail: fmt.Sprintf("post %s has commentCount %d, %d comment rows", id, p.count, p.rows)}})
		fixes = append(fixes, counted.Counter{Kind: CommentCount, Owner: uint64(id.Author), Sub: uint64(id.Millis)})
	}
	return c.p.Batch(found, c.s.w.BatchRecount(ctx, fixes))
}

// deleteOrphans returns the repair of the comment rows keys of post id,
// which does not exist: read the post's content row again, and delete the
// rows if the post is still missing.
func (c *checkRun) deleteOrphans(ctx context.Context, id weibo.PostID, keys [][]byte) func() (bool, error) {
	return func() (bool, error) {
		r, err := c.s.st.Get(ctx, &hbase.Get{Table: tables.Content, Row: tables.ContentKey(id), Families: []string{tables.FamPost}})
		if err != nil || tables.PostStored(r) {
			return false, err
		}
		dels := make([]*hbase.Delete, len(keys))
		for i, k := range keys {
			dels[i] = &hbase.Delete{Table: tables.Comments, Row: k}
		}
		return true, c.s.st.DeleteMany(ctx, dels)
	}
}
