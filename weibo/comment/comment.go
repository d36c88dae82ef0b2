// Package comment is the comments on posts (评论): a counted relation on
// the write protocol (package counted), the post's commentCount, the
// COMMENT, REPLY and MENTION notifications of a comment, a post's comment
// list, and the deletion of a deleted post's comments (a delete hook of
// the feed).
package comment

import (
	"context"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/notify"
	"github.com/weibohbase/gateway/weibo/paging"
	"github.com/weibohbase/gateway/weibo/safety"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Comments on posts (评论). A comment is one row of weibo:comments, under
// its post's content rowkey, so a post's comments are one prefix scan,
// newest first. The row is the comment's authority (the comment exists
// while the row holds its text; a deleted comment leaves a tombstone that
// reads skip) and nothing depends on it; the post's commentCount (its content row's c:c) counts the rows. An
// addComment or a deleteComment is a write of the counted relation
// "comment" (marker kind 'c', the pair (post, comment): the marker names
// the post in its rowkey and the comment in its extra bytes).

// CommentCount is a post's commentCount: its comment rows. It is kept with
// Increment on the post's content row (family c) and registered with the
// protocol by New.
const CommentCount counted.CounterKind = "commentCount"

// Steps of a comment's counted write, passed to the protocol's step hook
// (counted.WithStepHook); "comment:marked", "comment:sequenced" and
// "comment:counted" are the protocol's (counted.Protocol.BeginWith and
// Count).
var (
	StepMarked    = counted.Step(Relation, counted.PhaseMarked)    // after the pending row of an addComment or deleteComment
	StepSequenced = counted.Step(Relation, counted.PhaseSequenced) // after the post's operation sequence
	StepDecided   = counted.Step(Relation, counted.PhaseDecided)   // after the comment row's CheckAndPut/CheckAndDelete
	StepCounted   = counted.Step(Relation, counted.PhaseCounted)   // after the post's comment counter, before the marker is deleted
)

// Relation is the comment relation's name; its steps are
// counted.Step(Relation, phase).
const Relation = "comment"

// Comment is one row of weibo:comments.
type Comment struct {
	// ID is the comment's id (post, creation time, author).
	ID weibo.CommentID
	// Content is the text as written.
	Content string
	// AuthorName is the commenter's username, stored with the comment.
	AuthorName string
	// ReplyTo is the comment of the same post this one replies to; nil
	// for none. That comment may have been deleted since.
	ReplyTo *weibo.CommentID
	// MentionRefs are the users the text mentions, resolved when it was
	// written (its row's c:m, mentions.go).
	MentionRefs []tables.Mention
}

// Mentions returns the users the text mentions, in order of first
// mention: id and username only (Complete is false).
func (c *Comment) Mentions() []*weibo.User { return feed.MentionUsers(c.MentionRefs) }

// CreatedAt is the comment's creation time (ms precision).
func (c *Comment) CreatedAt() time.Time { return time.UnixMilli(c.ID.Millis) }

// Author is the commenter as the comment row knows them: id and username
// only (Complete is false; the users row is read when more is asked for).
func (c *Comment) Author() *weibo.User {
	return &weibo.User{ID: c.ID.Author, Username: c.AuthorName}
}

// NodeID returns c's global id.
func (c *Comment) NodeID() weibo.NodeID { return weibo.NodeID{Kind: weibo.NodeComment, Comment: c.ID} }

// CommentEdge is one edge of a CommentConnection.
type CommentEdge struct {
	// Comment is the edge's node.
	Comment *Comment
	// Cursor is the edge's opaque cursor.
	Cursor string
}

// CommentConnection is one page of a post's comments, newest first.
type CommentConnection struct {
	// Edges are the page's edges, newest first.
	Edges []CommentEdge
	// PageInfo is the Relay page info.
	PageInfo weibo.PageInfo
	// TotalCount is the number of the post's comments from its kept
	// counter (commentCount). The GraphQL layer fills it in from the post;
	// the domain leaves it 0.
	TotalCount int
}

// Posts is what comments need of the posts: a hook in every post's
// retraction. *feed.Service implements it.
type Posts interface {
	RegisterDeleteHook(hook feed.DeleteHook)
}

// Accounts resolves the @username mentions of a text. *feed.Service
// implements it.
type Accounts interface {
	ResolveMentions(ctx context.Context, text string) ([]tables.Mention, error)
}

// Notices sends notifications and learns how to check those of comments.
// *notify.Service implements it.
type Notices interface {
	SendNotices(ctx context.Context, ns []notify.Notice, mode notify.NoticeMode) error
	RegisterNoticeCheck(match func(notify.Notice) bool, wanted notify.WantedFunc)
}

// Service is the comments' API. It is safe for concurrent use.
type Service struct {
	st       hbase.Store
	w        *counted.Protocol
	rel      *counted.Relation
	accounts Accounts
	notices  Notices
	guard    safety.Blocker // nil: no blocks
	susp     weibo.Suspensions
}

// New returns the comments over st and registers with w the comment
// relation, the commentCount counter and the comments' fsck check
// (check.go), with the feed (notices) how the
// notifications of a comment are checked (the comment row exists and
// sends them), and with posts the deletion of a deleted post's comments.
// The weibo tables must exist (tables.Migrate).
func New(st hbase.Store, w *counted.Protocol, posts Posts, accounts Accounts, notices Notices) *Service {
	s := &Service{st: st, w: w, accounts: accounts, notices: notices, susp: weibo.NoSuspensions}
	s.rel = &counted.Relation{
		Name:   Relation,
		Marker: tables.PendingComment,
		Phases: []counted.Phase{counted.PhaseDecided},
		Counters: func(author, ms uint64) []counted.Counter {
			return []counted.Counter{{Kind: CommentCount, Owner: author, Sub: ms}}
		},
		// Nothing depends on a comment row (its post's list is the rows
		// themselves): the pair is settled as it stands, and the recount
		// that follows is the rest of the repair. A comment on a post
		// deleted meanwhile is deleted (the post's retraction may have
		// scanned its comments before the row was written); a stored
		// comment's notifications are sent again (a sync: nobody twice).
		Settle: func(ctx context.Context, author, ms uint64, extra []byte) error {
			id, ok := tables.DecodeCommentRef(weibo.PostID{Author: weibo.UserID(author), Millis: int64(ms)}, extra)
			if !ok {
				return nil
			}
			if orphan, err := s.dropOrphanComment(ctx, id); err != nil || orphan {
				return err
			}
			cs, err := s.GetComments(ctx, []weibo.CommentID{id})
			if err != nil || cs[0] == nil {
				return err
			}
			return s.notices.SendNotices(ctx, commentNotices(cs[0], id.Post.Author), notify.NoticeSync)
		},
	}
	s.w.Register(s.rel)
	w.RegisterCheck(s.fsckCheck())
	w.RegisterCounter(feed.PostCounter(st, CommentCount, tables.ColComments, tables.ColCommentsSeq, func(ctx context.Context, post weibo.PostID) (int64, error) {
		return w.CountRows(ctx, &hbase.Scan{Table: tables.Comments, Prefix: tables.CommentsPrefix(post)}, nil, tables.CommentStored)
	}))
	notices.RegisterNoticeCheck(func(n notify.Notice) bool { _, ok := n.Subject.Comment(); return ok }, s.noticeWanted)
	posts.RegisterDeleteHook(s.deleteComments)
	return s
}

// commentOp begins the counted write of comment c (BeginWith: the marker
// names the post in its rowkey and the comment in its extra bytes).
func (s *Service) commentOp(ctx context.Context, c weibo.CommentID) (*counted.Op, error) {
	return s.w.BeginWith(ctx, s.rel, uint64(c.Post.Author), uint64(c.Post.Millis), tables.EncodeCommentRef(c))
}

// AddComment stores a comment by author on post, replying to replyTo when
// not nil, and returns it. Content follows the post content rules
// (validateContent). Errors: BAD_USER_INPUT for bad content or a replyTo
// of another post; NOT_FOUND when the post or the comment replied to does
// not exist; FORBIDDEN (safety.ErrForbiddenInteraction) when a block
// stands between author and the post's author, or the replied comment's
// author, either way; UNAUTHENTICATED when author has no users row (a
// token for a user that is gone). A refused call writes nothing.
//
// The post, the author's users row and the comment replied to are read
// with one GetMany. A comment is never older than its post, and a reply is
// newer than the comment it replies to, whatever the gateways' clocks.
// Writes, in order (package counted explains the scheme):
//  1. the weibo:pending row of the write (the marker), naming the comment;
//  2. the operation sequence of the post's commentCount;
//  3. the comment row with CheckAndPut (username cell absent), the
//     authority — a comment of the same author on the same post in the
//     same millisecond holds it, or the tombstone of a deleted one: nothing
//     was written, so the marker is deleted and the write starts again at
//     the next millisecond (a comment id names one comment, ever);
//     then the post read again: deleted meanwhile, the comment row is
//     deleted, the marker too, and the call is NOT_FOUND (the post's
//     retraction may have scanned its comments before the row was
//     written);
//  4. the post's comment counter, +1 (within the write's budget);
//  5. the settle, which has nothing to write: no row depends on a
//     comment;
//  6. its notifications (notify.go: REPLY to the author of the comment
//     replied to, COMMENT to the post's author, MENTION to each user the
//     text mentions — one each, none to the commenter), each a notify
//     write of its own;
//  7. the delete of the pending row.
//
// A call that dies anywhere leaves the pending row; the repairer recounts
// the post's comments after the repair grace and sends the notifications
// of the comment, if it was stored, again (nobody twice).
func (s *Service) AddComment(ctx context.Context, author weibo.UserID, post weibo.PostID, content string, replyTo *weibo.CommentID) (_ *Comment, err error) {
	defer weibo.Wrapf(&err, "comment by %s on %s", author, post)
	if err := feed.ValidateContent(content); err != nil {
		return nil, err
	}
	if replyTo != nil && replyTo.Post != post {
		return nil, weibo.BadInput("replyToId", "comment %s is on post %s, not on %s", replyTo, replyTo.Post, post)
	}
	blockers := []weibo.UserID{post.Author}
	if replyTo != nil {
		blockers = append(blockers, replyTo.Author)
	}
	if err := safety.CheckInteraction(ctx, s.guard, author, blockers...); err != nil {
		return nil, err
	}
	gets := []*hbase.Get{
		{Table: tables.Content, Row: tables.ContentKey(post), Families: []string{tables.FamPost}},
		{Table: tables.Users, Row: tables.UserKey(author), Families: []string{tables.FamInfo}},
	}
	if replyTo != nil {
		gets = append(gets, &hbase.Get{Table: tables.Comments, Row: tables.CommentKey(*replyTo)})
	}
	rs, err := s.st.GetMany(ctx, gets)
	if err != nil {
		return nil, err
	}
	if rs[0].Value(tables.FamPost, tables.ColText) == nil {
		return nil, weibo.NotFoundOn("postId", "post "+post.String()+" not found")
	}
	name := rs[1].Value(tables.FamInfo, tables.ColUsername)
	if name == nil {
		return nil, weibo.ErrUnauthenticated
	}
	if replyTo != nil && !tables.CommentStored(rs[2]) {
		return nil, weibo.NotFoundOn("replyToId", "comment "+replyTo.String()+" not found")
	}
	// Not before the post, whatever the clocks of the gateways, and a
	// reply after the comment it replies to (so it lists before it).
	ms := max(s.w.NowMillis(), post.Millis)
	if replyTo != nil {
		ms = max(ms, replyTo.Millis+1)
	}
	c := &Comment{ID: weibo.CommentID{Post: post, Millis: ms, Author: author},
		Content: content, AuthorName: string(name), ReplyTo: replyTo}
	if c.MentionRefs, err = s.accounts.ResolveMentions(ctx, content); err != nil {
		return nil, err
	}
	var op *counted.Op
	for {
		if op, err = s.commentOp(ctx, c.ID); err != nil {
			return nil, err
		}
		ok, err := s.st.CheckAndPut(ctx, &hbase.Put{Table: tables.Comments, Row: tables.CommentKey(c.ID),
			Values: tables.CommentValues(content, c.AuthorName, replyTo, c.MentionRefs)}, tables.FamComment, tables.ColCommentAuthorName, nil)
		if err != nil {
			return nil, err
		}
		if ok {
			break
		}
		// Another comment of this author holds the millisecond, or held
		// it: a deleted comment's tombstone keeps its id.
		if err := s.w.End(ctx, op); err != nil {
			return nil, err
		}
		c.ID.Millis++
	}
	if err := s.w.Step(ctx, StepDecided); err != nil {
		return nil, err
	}
	// The post may have been deleted since it was read, and its
	// retraction may have scanned its comments before this row was
	// written: read it again. Found, the row was written before the
	// post's delete, so a retraction (which comes after it) deletes it.
	orphan, err := s.dropOrphanComment(ctx, c.ID)
	if err != nil {
		return nil, err
	}
	if orphan {
		if err := s.w.End(ctx, op); err != nil {
			return nil, err
		}
		return nil, weibo.NotFoundOn("postId", "post "+post.String()+" not found")
	}
	if _, err := s.w.Count(ctx, op, +1); err != nil {
		return nil, err
	}
	if err := s.notices.SendNotices(ctx, commentNotices(c, post.Author), notify.NoticeAdd); err != nil {
		return nil, err
	}
	return c, s.w.End(ctx, op)
}

// DeleteComment deletes comment id as viewer and reports whether this
// call deleted it (false when it was already gone). The comment's author
// and the post's author may delete it (both are in the id, so no read
// decides it); anyone else gets FORBIDDEN. Replies to it stay (their
// replyTo then resolves to nothing).
//
// Writes, in order, as AddComment's, after one Get of the comment row
// (gone: false, nothing written): the pending row; the operation sequence
// of the post's commentCount; the CheckAndDelete of the comment row
// expecting the text read (the authority; it decides whether this call
// counts, so concurrent deletes count once), which removes the text and
// the reply cell and keeps the username cell as the tombstone; the
// counter, -1; the settle (nothing to write); the delete of the pending
// row.
func (s *Service) DeleteComment(ctx context.Context, viewer weibo.UserID, id weibo.CommentID) (_ bool, err error) {
	defer weibo.Wrapf(&err, "delete comment %s by %s", id, viewer)
	if viewer != id.Author && viewer != id.Post.Author {
		return false, weibo.Forbidden("only the comment's author or the post's author may delete a comment")
	}
	key := tables.CommentKey(id)
	cur, err := s.st.Get(ctx, &hbase.Get{Table: tables.Comments, Row: key, Families: []string{tables.FamComment}})
	if err != nil {
		return false, err
	}
	text := cur.Value(tables.FamComment, tables.ColCommentText)
	if text == nil {
		return false, nil
	}
	op, err := s.commentOp(ctx, id)
	if err != nil {
		return false, err
	}
	deleted, err := s.st.CheckAndDelete(ctx, &hbase.Delete{Table: tables.Comments, Row: key, Values: tables.CommentDeleted()},
		tables.FamComment, tables.ColCommentText, text)
	if err == nil {
		err = s.w.Step(ctx, StepDecided)
	}
	if err != nil {
		return false, err
	}
	if deleted {
		if _, err := s.w.Count(ctx, op, -1); err != nil {
			return false, err
		}
	}
	return deleted, s.w.End(ctx, op)
}

// GetComments reads comments by id with one batched GetMany; one entry per
// id, nil where the comment does not exist.
func (s *Service) GetComments(ctx context.Context, ids []weibo.CommentID) (_ []*Comment, err error) {
	defer weibo.Wrap(&err, "get comments")
	gets := make([]*hbase.Get, len(ids))
	for i, id := range ids {
		gets[i] = &hbase.Get{Table: tables.Comments, Row: tables.CommentKey(id)}
	}
	rs, err := s.st.GetMany(ctx, gets)
	if err != nil {
		return nil, err
	}
	out := make([]*Comment, len(ids))
	for i, r := range rs {
		out[i] = commentFromRow(ids[i], r)
	}
	return out, nil
}

// commentFromRow decodes comment id's row; nil when it is not a comment.
func commentFromRow(id weibo.CommentID, r *hbase.Result) *Comment {
	if !tables.CommentStored(r) {
		return nil
	}
	c := &Comment{ID: id, Content: string(r.Value(tables.FamComment, tables.ColCommentText)),
		AuthorName: string(r.Value(tables.FamComment, tables.ColCommentAuthorName))}
	if to, ok := tables.CommentReplyTo(id.Post, r); ok {
		c.ReplyTo = &to
	}
	if m := r.Value(tables.FamComment, tables.ColMentions); m != nil {
		c.MentionRefs = tables.DecodeMentions(m)
	}
	return c
}

// PostComments pages through post's comments newest first, both ways, as
// an anonymous viewer sees them: PostCommentsFor with viewer 0.
func (s *Service) PostComments(ctx context.Context, post weibo.PostID, p weibo.Page) (*CommentConnection, error) {
	return s.PostCommentsFor(ctx, 0, post, p)
}

// commentRounds bounds the scans of one page of a post's comments for a
// logged-in viewer: a page whose rows keep turning out out of the
// viewer's sight (or deleted) stops after this many scans of at most the
// page and one more row each (a shorter page whose end cursor goes on
// after the rows read).
const commentRounds = 9

// PostCommentsFor pages through post's comments newest first, both ways
// (Page), as viewer sees them: one prefix scan of weibo:comments on the
// post's content rowkey, reversed for Last/Before, reading on past the
// rows it skips (deleted comments). A missing post has no comments.
//
// For a logged-in viewer (not 0) the first scan reads the viewer's safety
// row too (one ScanMany: no store call of its own), and the page leaves
// out the comments by a user blocked either way and those a COMMENTS
// filter with action HIDE matches; a page reads on past them within
// commentRounds scans. Every viewer's page leaves out the comments of a
// suspended user (SetSuspensions). Comments carry no filter results, so a
// WARN filter leaves a comment as it is. Errors: BAD_USER_INPUT for bad
// paging arguments.
func (s *Service) PostCommentsFor(ctx context.Context, viewer weibo.UserID, post weibo.PostID, p weibo.Page) (_ *CommentConnection, err error) {
	defer weibo.Wrap(&err, "comments of a post")
	q := paging.Query{Kind: paging.CursorComments, RowLen: tables.CommentKeyLen,
		Scan: hbase.Scan{Table: tables.Comments, Prefix: tables.CommentsPrefix(post)}}
	var set *safety.Set
	if viewer != 0 {
		q.Rounds, q.With = commentRounds, safety.RowScan(viewer)
		q.WithRows = func(rows []*hbase.Result) error {
			set = safety.FromRows(viewer, rows, s.w.NowMillis())
			return nil
		}
	}
	edges, info, err := paging.ReadBoth(ctx, s.st, q, p,
		func(_ context.Context, rows []*hbase.Result) ([]*Comment, error) {
			out := make([]*Comment, len(rows))
			for i, r := range rows {
				if id, ok := tables.DecodeCommentKey(r.Row); ok {
					if c := commentFromRow(id, r); c != nil && !hidden(set, c) && !s.suspendedFor(viewer, c) {
						out[i] = c
					}
				}
			}
			return out, nil
		}, func(c *Comment, cursor string) CommentEdge { return CommentEdge{Comment: c, Cursor: cursor} })
	if err != nil {
		return nil, err
	}
	return &CommentConnection{Edges: edges, PageInfo: info}, nil
}

// suspendedFor reports whether c's author is suspended and not viewer.
func (s *Service) suspendedFor(viewer weibo.UserID, c *Comment) bool {
	return c.ID.Author != viewer && s.susp.Suspended(c.ID.Author, s.w.NowMillis())
}

// hidden reports whether set's viewer does not see comment c: its author
// blocked either way, or a COMMENTS filter hiding its text (nil set: no).
func hidden(set *safety.Set, c *Comment) bool {
	if set == nil {
		return false
	}
	if set.Blocked(c.ID.Author) {
		return true
	}
	hide, _ := set.Match(c.Content, safety.ContextComments)
	return hide
}

// dropOrphanComment reads comment id's post and, when it is gone, deletes
// the comment row (its post's retraction may have scanned the comments
// before the row was written) and reports orphan.
func (s *Service) dropOrphanComment(ctx context.Context, id weibo.CommentID) (orphan bool, err error) {
	r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Content, Row: tables.ContentKey(id.Post), Families: []string{tables.FamPost}})
	if err != nil || tables.PostStored(r) {
		return false, err
	}
	return true, s.st.Delete(ctx, &hbase.Delete{Table: tables.Comments, Row: tables.CommentKey(id)})
}
