package fsck

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/comment"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Comments (weibo:comments) are checked in AreaSocial:
//
//	pair                      authority                        dependent
//	comment                   its comment row                  the post's commentCount (content c:c)
//
// A comment row has no dependent row; its post's counter counts the rows.
// A counter that differs from the rows is recounted (PostCommentCount,
// pending while a counter cell is younger than Options.Grace). Comment
// rows of a post that does not exist — no write of the gateway leaves
// them: addComment reads the post before it writes — are reported and
// deleted (CommentOrphan). Dead addComment and deleteComment writes
// (weibo:pending kind 'c') are reported with the other unfinished writes.

// Kinds of Issue of the comments.
const (
	PostCommentCount = "post-comment-count" // a commentCount that differs from the post's comment rows: recounted
	CommentOrphan    = "comment-orphan"     // comment rows of a post that does not exist: deleted
)

// commentedPost is what checkComments knows of one post.
type commentedPost struct {
	exists    bool  // the content row holds the post's text
	count     int64 // its comment counter
	countTS   int64 // newest cell of the counter and its sequence
	rows      int64 // its comment rows
	rowsTS    int64 // newest cell of its comment rows
	orphanKey [][]byte
}

// checkComments compares every post's comment counter with its comment
// rows: one scan of weibo:content (the counter cells) and one of
// weibo:comments.
func (f *fsck) checkComments(ctx context.Context) error {
	posts := map[weibo.PostID]*commentedPost{}
	get := func(id weibo.PostID) *commentedPost {
		p := posts[id]
		if p == nil {
			p = &commentedPost{}
			posts[id] = p
		}
		return p
	}
	err := f.st.Scan(ctx, &hbase.Scan{Table: tables.Content, Families: []string{tables.FamPost}}, func(r *hbase.Result) error {
		id, ok := tables.DecodeContentKey(r.Row)
		if !ok {
			return nil
		}
		p := get(id)
		p.exists = r.Value(tables.FamPost, tables.ColText) != nil
		p.count = tables.PostCommentCount(r)
		for _, q := range []string{tables.ColComments, tables.ColCommentsSeq} {
			if c := r.Cell(tables.FamPost, q); c != nil {
				p.countTS = max(p.countTS, c.Timestamp)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	err = f.scan(ctx, &hbase.Scan{Table: tables.Comments, Families: []string{tables.FamComment}}, func(r *hbase.Result) {
		id, ok := tables.DecodeCommentKey(r.Row)
		if !ok || !tables.CommentStored(r) {
			return
		}
		p := get(id.Post)
		p.rows++
		p.rowsTS = max(p.rowsTS, newestTS(r))
		if !p.exists {
			p.orphanKey = append(p.orphanKey, bytes.Clone(r.Row))
		}
	})
	if err != nil {
		return err
	}
	ids := slices.SortedFunc(maps.Keys(posts), func(a, b weibo.PostID) int {
		return cmp.Or(cmp.Compare(a.Author, b.Author), cmp.Compare(a.Millis, b.Millis))
	})
	var fixes []counted.Counter
	var issues []int
	for _, id := range ids {
		p := posts[id]
		if !p.exists {
			if p.rows == 0 {
				continue
			}
			if err := f.issue(ctx, CommentOrphan, p.rowsTS, f.deleteOrphans(ctx, id, p.orphanKey),
				"post %s does not exist but has %d comment rows", id, p.rows); err != nil {
				return err
			}
			continue
		}
		if p.count == p.rows {
			continue
		}
		is := Issue{Kind: PostCommentCount, Detail: fmt.Sprintf("post %s has commentCount %d, %d comment rows", id, p.count, p.rows)}
		if f.opt.Grace > 0 && f.now-max(p.countTS, p.rowsTS) < f.opt.Grace.Milliseconds() {
			is.Pending = true
		} else if f.opt.Repair {
			fixes = append(fixes, counted.Counter{Kind: comment.CommentCount, Owner: uint64(id.Author), Sub: uint64(id.Millis)})
			issues = append(issues, len(f.rep.Issues))
		}
		f.rep.Issues = append(f.rep.Issues, is)
	}
	if len(fixes) == 0 {
		return nil
	}
	res, err := f.s.Writes.RecountCounters(ctx, fixes)
	if err != nil {
		return fmt.Errorf("fsck: recount %d comment counters: %w", len(fixes), err)
	}
	for i, r := range res {
		f.rep.Issues[issues[i]].Repaired = r.Done
	}
	return nil
}

// deleteOrphans returns the repair of the comment rows keys of post id,
// which does not exist: read the post again, and delete the rows if it is
// still missing.
func (f *fsck) deleteOrphans(ctx context.Context, id weibo.PostID, keys [][]byte) func() (bool, error) {
	return func() (bool, error) {
		ps, err := f.s.Feed.GetPosts(ctx, []weibo.PostID{id})
		if err != nil || ps[0] != nil {
			return false, err
		}
		dels := make([]*hbase.Delete, len(keys))
		for i, k := range keys {
			dels[i] = &hbase.Delete{Table: tables.Comments, Row: k}
		}
		return true, f.st.DeleteMany(ctx, dels)
	}
}
