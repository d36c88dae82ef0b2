package feed

import (
	"context"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/fanout"
	"github.com/weibohbase/gateway/weibo/paging"
	"github.com/weibohbase/gateway/weibo/safety"
	"github.com/weibohbase/gateway/weibo/tables"
	"github.com/weibohbase/gateway/weibo/topic/hashtag"
)

// MaxPostLength is the longest post content, in user-perceived characters (grapheme clusters; see validateContent).
const MaxPostLength = 10000

// Post is one row of weibo:content.
type Post struct {
	// ID is the post's id (author and creation time).
	ID weibo.PostID
	// CommentCount is the post's kept comment count (its content row's
	// c:c), read with the post.
	CommentCount int64
	// Content is the text as written.
	Content string
	// AuthorName is the author's username, stored with the post.
	AuthorName string
	// LikeCount is the post's kept like count (its content row's c:l),
	// read with the post.
	LikeCount int64
	// RepostOfID is, for a repost, the root post it reposts (its content
	// row's c:o, reposts.go); nil for an original post.
	RepostOfID *weibo.PostID
	// RepostCount is the post's kept repost count (its content row's c:r),
	// read with the post.
	RepostCount int64
	// Media are the post's pictures in order (its content row's c:pi,
	// media.go); nil for a post without.
	Media []weibo.MediaID
	// MentionRefs are the users the text mentions, resolved when it was
	// written (its content row's c:m, mentions.go).
	MentionRefs []tables.Mention
	// Filtered are the viewer's WARN keyword filters the post matched on
	// the page that returned it (GraphQL Post.filtered), nil when none:
	// set on a copy (WithFiltered), never on a post the cache shares.
	Filtered []safety.FilterResult
	// author, when set, is what Author returns (postFromRow).
	author *weibo.User
}

// WithFiltered returns a copy of p with Filtered set to fr (p itself may
// be shared by the post cache and other requests).
func (p *Post) WithFiltered(fr []safety.FilterResult) *Post {
	c := *p
	c.Filtered = fr
	return &c
}

// CreatedAt is the post's creation time (ms precision).
func (p *Post) CreatedAt() time.Time { return time.UnixMilli(p.ID.Millis) }

// Mentions returns the users the text mentions, in order of first
// mention: id and username only (Complete is false).
func (p *Post) Mentions() []*weibo.User { return MentionUsers(p.MentionRefs) }

// Publish stores a post by author and returns it once it is stored; the
// fan-out into the fans' inboxes runs on the worker pool. Content must be 1
// to 10,000 characters of valid UTF-8, at most 64 KiB, with a visible
// character (validateContent; BAD_USER_INPUT otherwise); an author without a users row gives
// UNAUTHENTICATED (a token for a user that is gone).
//
// Writes, in order (package counted explains the scheme):
//  1. the outbox row (the durable fan-out request, and the marker of this
//     write), holding the time it was requested;
//  2. the operation sequence of the author's postCount;
//  3. for a post with topics (package weibo/topic), the marker of the
//     topic pair (kind 'h', the topics' names in p:x) and the sequences of
//     the topics' postCount and hour counts (topics.go) — before every
//     content row tried, as a repost's marker (Repost) —;
//  4. the content row with CheckAndPut(absent) — a post of the same author
//     in the same millisecond moves to the next millisecond: it writes that
//     millisecond's outbox row, then deletes its own row of the one before
//     (outbox rows are written with CheckAndPut(absent), so a row of
//     another post's fan-out is never overwritten; its millisecond is
//     skipped) —;
//  5. the author's own inbox row and, within the write's budget, the post
//     counter and the topics' counters (+1 each), and the read of the
//     author's large-account state (large.go; all at once, after the
//     content row: a drain that starts later sees the post);
//  6. for a post with topics, the settle of its list entries
//     (weibo:topicposts: written, the content row re-read, until they
//     agree), then the delete of the topic marker;
//  7. the outbox row's counted mark — or, for a large author (hybrid
//     fan-out: nothing is pushed, home timelines merge the post at read
//     time), the delete of the outbox row, the publish being counted and
//     its fan-out empty, unless the post notifies (mentions, or a
//     repost): then its fan-out runs all the same, to send them.
//
// The users the content mentions are resolved before step 1 (mentions.go:
// two GetMany when it has an '@', none otherwise) and stored in the
// content row. Fan-out workers then send the post's notifications
// (notify.go: MENTION to each user mentioned, REPOST to a repost's
// original's author), write one inbox row per fan and delete the outbox
// row. A gateway that dies first leaves the outbox row, which any
// gateway's sweep picks up: it re-runs the fan-out (inbox writes are
// idempotent puts, so a repeated fan-out adds no duplicate), and when the
// row carries no counted mark and is older than the repair grace, it
// recounts the author's posts before deleting it.
//
// With pictures (media, in order), the content row lists them
// (tables.ColPostMedia, Post.Media) and the media module's part attaches
// them (RegisterMedia); content may then be empty, and the media check
// refusing them is BAD_USER_INPUT (field "mediaIds").
func (s *Service) Publish(ctx context.Context, author weibo.UserID, content string, media ...weibo.MediaID) (_ *Post, err error) {
	defer weibo.Wrapf(&err, "publish by %s", author)
	if content != "" || len(media) == 0 {
		if err := ValidateContent(content); err != nil {
			return nil, err
		}
	}
	if len(media) > 0 {
		if s.mediaCheck == nil || s.mediaPart == nil {
			return nil, errNoMedia
		}
		if err := s.mediaCheck(ctx, author, media); err != nil {
			return nil, err
		}
	}
	return s.publish(ctx, author, content, nil, media)
}

// PublishRepost publishes, as Publish does, a post by author with content
// that reposts root: its content row names root (c:o) and its fan-out
// sends the REPOST notification of root's author. The repost module
// (package weibo/repost) calls it once it has checked its arguments; its
// counted pair (root, repost) is the module's PostPart. Errors as for
// Publish, without the content check.
func (s *Service) PublishRepost(ctx context.Context, author weibo.UserID, content string, root weibo.PostID) (_ *Post, err error) {
	defer weibo.Wrapf(&err, "repost of %s by %s", root, author)
	return s.publish(ctx, author, content, &root, nil)
}

// publish makes Publish's writes; a root, when not nil, makes the post a
// repost of it, and media its pictures. The registered modules' parts
// (RegisterPostPart: a repost's pair, a post's topics; RegisterMedia: the
// attach of its pictures) are written at the points Publish lists.
func (s *Service) publish(ctx context.Context, author weibo.UserID, content string, root *weibo.PostID, media []weibo.MediaID) (*Post, error) {
	us, err := s.users.GetUsers(ctx, []weibo.UserID{author})
	if err != nil {
		return nil, err
	}
	if us[0] == nil {
		return nil, weibo.ErrUnauthenticated
	}
	op := s.w.StartOp()
	p := &Post{ID: weibo.PostID{Author: author, Millis: op.Start}, Content: content, AuthorName: us[0].Username}
	cells := map[string][]byte{tables.ColText: []byte(content), tables.ColAuthorName: []byte(p.AuthorName)}
	if p.MentionRefs, err = s.ResolveMentions(ctx, content); err != nil {
		return nil, err
	}
	if len(p.MentionRefs) > 0 {
		cells[tables.ColMentions] = tables.EncodeMentions(p.MentionRefs)
	}
	if root != nil {
		p.RepostOfID = root
		cells[tables.ColRepostOf] = tables.EncodeRepostOf(*root)
	}
	if len(media) > 0 {
		p.Media = media
		cells[tables.ColPostMedia] = tables.EncodeMediaIDs(media)
	}
	postCount := counted.Counter{Kind: PostCount, Owner: uint64(author)}
	parts := s.postParts(content, root)
	if len(media) > 0 {
		parts = append(parts, s.mediaPart(author, media, true))
	}
	var marked, markedAt []byte // our outbox row of the millisecond tried before, if any, and its o:t
	sequenced := false
	for {
		at := tables.EncodeMillis(s.NowMillis())
		mine, err := s.st.CheckAndPut(ctx, &hbase.Put{Table: tables.Outbox, Row: tables.OutboxKey(p.ID),
			Values: hbase.Values{tables.FamOutbox: {tables.ColOutboxAt: at}}}, tables.FamOutbox, tables.ColOutboxAt, nil)
		if err != nil {
			return nil, err
		}
		if !mine {
			// Another post's fan-out request holds this millisecond: leave
			// it alone and take the next one.
			p.ID.Millis++
			continue
		}
		if marked != nil {
			// The row of the millisecond tried before is ours and no
			// longer needed; the one just written is the marker now.
			if _, err := s.st.CheckAndDelete(ctx, &hbase.Delete{Table: tables.Outbox, Row: marked}, tables.FamOutbox, tables.ColOutboxAt, markedAt); err != nil {
				return nil, err
			}
		}
		marked, markedAt = tables.OutboxKey(p.ID), at
		if !sequenced {
			sequenced = true
			if err := s.w.Step(ctx, StepPublishOutbox); err != nil {
				return nil, err
			}
			if _, err := s.w.Increments(ctx, s.w.SeqIncrement(postCount)); err != nil {
				return nil, err
			}
			if err := s.w.Step(ctx, StepPublishSequenced); err != nil {
				return nil, err
			}
		}
		for _, part := range parts {
			if err := part.Mark(ctx, p.ID); err != nil {
				return nil, err
			}
		}
		// Absent checked on the author's name, never empty: a check of
		// an empty value matches an absent cell (HBase's rule), so a post
		// of pictures only, whose text is empty, would look absent.
		ok, err := s.st.CheckAndPut(ctx, &hbase.Put{Table: tables.Content, Row: tables.ContentKey(p.ID), Values: hbase.Values{
			tables.FamPost: cells,
		}}, tables.FamPost, tables.ColAuthorName, nil)
		if err != nil {
			return nil, err
		}
		if ok {
			break
		}
		// An earlier post of this millisecond, its fan-out done, holds it.
		p.ID.Millis++
	}
	if err := s.w.Step(ctx, StepPublishContent); err != nil {
		return nil, err
	}
	counted := s.w.InBudget(op)
	large := false
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return s.st.Put(gctx, fanout.InboxPut(author, p.ID)) })
	if counted {
		g.Go(func() error { _, err := s.st.Increment(gctx, s.w.Increment(postCount, 1)); return err })
	}
	g.Go(func() (err error) { large, err = s.fan.IsLarge(gctx, author); return err })
	for _, part := range parts {
		g.Go(func() error { return part.Count(gctx, 1) })
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if err := s.w.Step(ctx, StepPublishCounted); err != nil {
		return nil, err
	}
	for _, part := range parts {
		if err := part.Settle(ctx, p.ID, true); err != nil {
			return nil, err
		}
	}
	if large {
		// Nothing to push; the followers' watchers read the post at once.
		s.events.Hub().Notify(author)
		s.events.Hub().NotifyAuthor(author)
		s.emitPosted(p, true)
		if !counted {
			// Past its budget: the fan-out's sweep recounts (and pushes nothing).
			s.fan.Enqueue(p.ID, fanout.EndKeep)
			return p, nil
		}
		if !notifies(cells) {
			return p, s.st.Delete(ctx, &hbase.Delete{Table: tables.Outbox, Row: tables.OutboxKey(p.ID)})
		}
		// Its fan-out pushes nothing but sends its notifications (notify.go).
	}
	end := fanout.EndKeep // past its budget: the repair counts it
	if counted {
		if err := s.st.Put(ctx, &hbase.Put{Table: tables.Outbox, Row: tables.OutboxKey(p.ID),
			Values: hbase.Values{tables.FamOutbox: {tables.ColOutboxCounted: {}}}}); err != nil {
			return nil, err
		}
		end = fanout.EndDelete
	}
	if !large {
		s.events.Hub().Notify(author)
		s.emitPosted(p, false)
	}
	s.fan.Enqueue(p.ID, end)
	return p, nil
}

// GetPosts reads posts by id with one batched GetMany; one entry per id, nil
// where the post does not exist.
func (s *Service) GetPosts(ctx context.Context, ids []weibo.PostID) (_ []*Post, err error) {
	defer weibo.Wrap(&err, "get posts")
	gets := make([]*hbase.Get, len(ids))
	for i, id := range ids {
		gets[i] = &hbase.Get{Table: tables.Content, Row: tables.ContentKey(id)}
	}
	rs, err := s.st.GetMany(ctx, gets)
	if err != nil {
		return nil, err
	}
	out := make([]*Post, len(ids))
	for i, r := range rs {
		out[i] = PostFromRow(ids[i], r)
	}
	return out, nil
}

func PostFromRow(id weibo.PostID, r *hbase.Result) *Post {
	text := r.Cell(tables.FamPost, tables.ColText)
	if text == nil {
		return nil
	}
	// Two allocations a post (a page reads 50): the text and the username
	// in one string, the post and its author in one postWithAuthor.
	name := r.Value(tables.FamPost, tables.ColAuthorName)
	var sb strings.Builder
	sb.Grow(len(text.Value) + len(name))
	sb.Write(text.Value)
	sb.Write(name)
	s := sb.String()
	pa := &postWithAuthor{post: Post{ID: id, Content: s[:len(text.Value)], AuthorName: s[len(text.Value):], LikeCount: tables.PostLikes(r), RepostCount: tables.PostReposts(r)}}
	if root, ok := tables.RepostOf(r); ok {
		pa.root = root
		pa.post.RepostOfID = &pa.root
	}
	pa.author = weibo.User{ID: id.Author, Username: pa.post.AuthorName}
	pa.post.author = &pa.author
	pa.post.CommentCount = tables.PostCommentCount(r)
	if m := r.Value(tables.FamPost, tables.ColMentions); m != nil {
		pa.post.MentionRefs = tables.DecodeMentions(m)
	}
	pa.post.Media = tables.DecodeMediaIDs(r.Value(tables.FamPost, tables.ColPostMedia))
	return &pa.post
}

// postWithAuthor is a post and the User its Author returns (and a
// repost's root id), allocated together.
type postWithAuthor struct {
	post   Post
	author weibo.User
	root   weibo.PostID // what post.RepostOfID points at, for a repost
}

// PostEdge is one edge of a PostConnection.
type PostEdge struct {
	// Post is the edge's node.
	Post *Post
	// Cursor is the edge's opaque cursor.
	Cursor string
}

// PostConnection is one page of a list of posts (a user's posts or a home
// timeline), newest first.
type PostConnection struct {
	// Edges are the page's edges, newest first.
	Edges []PostEdge
	// PageInfo is the Relay page info.
	PageInfo weibo.PageInfo
	// TotalCount is the length of a user's whole list of posts from the
	// kept counter (postCount). The GraphQL layer fills it in when a query
	// asks for it; the domain leaves it 0 (a timeline has no counter).
	TotalCount int
	// Hidden tells a user's posts left empty because a block stands
	// between the viewer and the user (UserPostsFor): their totalCount is
	// 0 as well.
	Hidden bool
}

// NewPostEdge makes the PostEdge of a post (for paging.Read).
func NewPostEdge(p *Post, cursor string) PostEdge { return PostEdge{Post: p, Cursor: cursor} }

// UserPosts pages through uid's posts newest first, both ways (Page): one
// prefix scan of weibo:content on salt(uid)|uid (seed 000/004's
// "查看自己发布的微博"), reversed for Last/Before.
// Errors: BAD_USER_INPUT for bad paging arguments.
func (s *Service) UserPosts(ctx context.Context, uid weibo.UserID, p weibo.Page) (*PostConnection, error) {
	return s.userPosts(ctx, userPostsQuery(uid), p)
}

// userPosts reads the page p of the posts q lists (userPostsQuery).
func (s *Service) userPosts(ctx context.Context, q paging.Query, p weibo.Page) (_ *PostConnection, err error) {
	defer weibo.Wrap(&err, "posts of a user")
	edges, info, err := paging.ReadBoth(ctx, s.st, q, p,
		func(_ context.Context, rows []*hbase.Result) ([]*Post, error) {
			out := make([]*Post, len(rows))
			for i, r := range rows {
				if id, ok := tables.DecodeContentKey(r.Row); ok {
					out[i] = PostFromRow(id, r)
				}
			}
			return out, nil
		}, NewPostEdge)
	if err != nil {
		return nil, err
	}
	return &PostConnection{Edges: edges, PageInfo: info}, nil
}

// userPostsQuery is the paging of uid's posts: their content rows.
func userPostsQuery(uid weibo.UserID) paging.Query {
	return paging.Query{Kind: paging.CursorPosts, RowLen: tables.ContentKeyLen,
		Scan: hbase.Scan{Table: tables.Content, Prefix: tables.ContentPrefix(uid)}}
}

// NodeID returns p's global id.
func (p *Post) NodeID() weibo.NodeID { return weibo.NodeID{Kind: weibo.NodePost, Post: p.ID} }

// Topics returns the post's topics (the topic rule on its content, in
// order of first appearance), their counts not read: no store call.
func (p *Post) Topics() []*weibo.Topic {
	names := hashtag.Extract(p.Content)
	out := make([]*weibo.Topic, len(names))
	for i, n := range names {
		out[i] = &weibo.Topic{Name: n}
	}
	return out
}
