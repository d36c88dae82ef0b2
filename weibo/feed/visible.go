package feed

import (
	"context"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/safety"
	"github.com/weibohbase/gateway/weibo/tables"
)

// A post and a user's posts as a viewer sees them: across a block, either
// way, the other's post is none (post(id:) answers null, as for a post
// that does not exist) and the other's posts are an empty list. Mutes and
// keyword filters do not hide a post asked for by id or by author.

// PostFor reads post id as viewer sees it: nil when it does not exist or
// a block stands between viewer and its author, either way. It is one
// GetMany of the post's content row and, for a logged-in viewer (not 0)
// other than the author, the viewer's safety row (safety.RowGet).
func (s *Service) PostFor(ctx context.Context, viewer weibo.UserID, id weibo.PostID) (_ *Post, err error) {
	defer weibo.Wrap(&err, "post")
	gets := []*hbase.Get{{Table: tables.Content, Row: tables.ContentKey(id)}}
	check := viewer != 0 && viewer != id.Author
	if check {
		gets = append(gets, safety.RowGet(viewer))
	}
	rs, err := s.st.GetMany(ctx, gets)
	if err != nil {
		return nil, err
	}
	if check && safety.FromRow(viewer, rs[1], s.w.NowMillis()).Blocked(id.Author) {
		return nil, nil
	}
	return PostFromRow(id, rs[0]), nil
}

// UserPostsFor pages through uid's posts newest first, both ways, as
// viewer sees them: UserPosts, or an empty connection (Hidden set, no
// cursors) when a block stands between viewer and uid, either way. For a
// logged-in viewer (not 0) other than uid it reads the viewer's safety row
// first (one Get); a blocked author's posts are not read. Errors:
// BAD_USER_INPUT for bad paging arguments.
func (s *Service) UserPostsFor(ctx context.Context, viewer, uid weibo.UserID, p weibo.Page) (*PostConnection, error) {
	if viewer != 0 && viewer != uid {
		blocked, err := s.blockedAuthor(ctx, viewer, uid, p)
		if err != nil {
			return nil, err
		}
		if blocked {
			return &PostConnection{Edges: []PostEdge{}, Hidden: true}, nil
		}
	}
	return s.UserPosts(ctx, uid, p)
}

// blockedAuthor validates p as a page of uid's posts, then reads viewer's
// safety row and reports whether a block stands between viewer and uid.
func (s *Service) blockedAuthor(ctx context.Context, viewer, uid weibo.UserID, p weibo.Page) (_ bool, err error) {
	defer weibo.Wrap(&err, "posts of a user")
	q := userPostsQuery(uid)
	if _, err := q.Window(p); err != nil {
		return false, err // bad arguments read nothing
	}
	r, err := s.st.Get(ctx, safety.RowGet(viewer))
	if err != nil {
		return false, err
	}
	return safety.FromRow(viewer, r, s.w.NowMillis()).Blocked(uid), nil
}
