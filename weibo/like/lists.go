package like

import (
	"context"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/paging"
	"github.com/weibohbase/gateway/weibo/tables"
)

// IsLiked reports, with one batched GetMany of viewer's like rows, whether
// viewer likes each of posts.
func (s *Service) IsLiked(ctx context.Context, viewer weibo.UserID, posts []weibo.PostID) (_ []bool, err error) {
	defer weibo.Wrap(&err, "likes")
	gets := make([]*hbase.Get, len(posts))
	for i, p := range posts {
		gets[i] = &hbase.Get{Table: tables.Likes, Row: tables.LikeKey(p, viewer)}
	}
	rs, err := s.st.GetMany(ctx, gets)
	if err != nil {
		return nil, err
	}
	out := make([]bool, len(posts))
	for i, r := range rs {
		_, out[i] = tables.LikeAt(r)
	}
	return out, nil
}

// PostLikes pages through the users who like post, newest like first
// (ties in one millisecond by user id): a prefix scan of the post's
// likers rows, each verified against its like row with one batched read
// per chunk (a row whose like is gone or was made at another time is
// skipped: a like or unlike in flight), and so is a suspended user's
// like (SetSuspensions; the post's likeCount still counts it). Errors:
// BAD_USER_INPUT for a bad first or after.
func (s *Service) PostLikes(ctx context.Context, post weibo.PostID, first *int, after *string) (_ *weibo.UserConnection, err error) {
	defer weibo.Wrap(&err, "likes of a post")
	q := paging.Query{Kind: paging.CursorLikers, RowLen: tables.LikeListKeyLen,
		Scan: hbase.Scan{Table: tables.Likes, Prefix: tables.PostLikersPrefix(post)}}
	edges, info, err := paging.Read(ctx, s.st, q, first, after,
		func(ctx context.Context, rows []*hbase.Result) ([]*weibo.UserID, error) {
			out := make([]*weibo.UserID, len(rows))
			gets := make([]*hbase.Get, len(rows))
			at := make([]int64, len(rows))
			for i, r := range rows {
				p, t, uid, ok := tables.DecodePostLikerKey(r.Row)
				if !ok || p != post {
					uid = 0 // never a user: its like row does not exist
				}
				out[i], at[i] = &uid, t
				gets[i] = &hbase.Get{Table: tables.Likes, Row: tables.LikeKey(post, uid)}
			}
			rs, err := s.st.GetMany(ctx, gets)
			if err != nil {
				return nil, err
			}
			now := s.w.NowMillis()
			for i, r := range rs {
				if t, ok := tables.LikeAt(r); !ok || t != at[i] || s.susp.Suspended(*out[i], now) {
					out[i] = nil
				}
			}
			return out, nil
		}, weibo.NewUserEdge)
	if err != nil {
		return nil, err
	}
	return &weibo.UserConnection{Edges: edges, PageInfo: info}, nil
}

// LikedPosts pages through the posts uid likes, newest like first: a
// prefix scan of uid's likes rows, each verified with one batched read per
// chunk of the like rows and the posts' content rows (a row whose like is
// gone or was made at another time is skipped, and so is the like of a
// post that no longer exists). A suspended user's likes are none, and so
// are the posts of suspended authors (SetSuspensions). Errors:
// BAD_USER_INPUT for a bad first or after.
func (s *Service) LikedPosts(ctx context.Context, uid weibo.UserID, first *int, after *string) (_ *feed.PostConnection, err error) {
	defer weibo.Wrap(&err, "posts a user likes")
	if s.susp.Suspended(uid, s.w.NowMillis()) {
		if _, err := paging.Size(first); err != nil {
			return nil, err
		}
		return &feed.PostConnection{Edges: []feed.PostEdge{}}, nil
	}
	q := paging.Query{Kind: paging.CursorLikedPosts, RowLen: tables.LikeListKeyLen,
		Scan: hbase.Scan{Table: tables.Likes, Prefix: tables.UserLikesPrefix(uid)}}
	edges, info, err := paging.Read(ctx, s.st, q, first, after,
		func(ctx context.Context, rows []*hbase.Result) ([]*feed.Post, error) {
			return s.verifyLikedPosts(ctx, uid, rows)
		}, feed.NewPostEdge)
	if err != nil {
		return nil, err
	}
	return &feed.PostConnection{Edges: edges, PageInfo: info}, nil
}

// CountLikedPosts returns how many posts uid likes: their kept
// likedPostCount, one Get of a cell of their users row (0 for a user
// without one). It counts likes of a post deleted but not yet retracted,
// which LikedPosts no longer shows (see LikedPostCount).
func (s *Service) CountLikedPosts(ctx context.Context, uid weibo.UserID) (_ int64, err error) {
	defer weibo.Wrap(&err, "count the posts a user likes")
	r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Users, Row: tables.UserKey(uid), Families: []string{tables.FamCount}})
	if err != nil {
		return 0, err
	}
	return tables.CounterValue(r, tables.ColLikedPosts), nil
}

// verifyLikedPosts resolves rows of uid's likes with one GetMany of their
// like rows and content rows: the post of each row whose like row holds
// the row's time and whose post exists, nil for the others.
func (s *Service) verifyLikedPosts(ctx context.Context, uid weibo.UserID, rows []*hbase.Result) ([]*feed.Post, error) {
	out := make([]*feed.Post, len(rows))
	if len(rows) == 0 {
		return out, nil
	}
	ids := make([]weibo.PostID, len(rows))
	at := make([]int64, len(rows))
	gets := make([]*hbase.Get, 0, 2*len(rows))
	for i, r := range rows {
		u, t, p, ok := tables.DecodeUserLikeKey(r.Row)
		if !ok || u != uid {
			u = 0 // never a user: its like row does not exist
		}
		ids[i], at[i] = p, t
		gets = append(gets, &hbase.Get{Table: tables.Likes, Row: tables.LikeKey(p, u)}, &hbase.Get{Table: tables.Content, Row: tables.ContentKey(p)})
	}
	rs, err := s.st.GetMany(ctx, gets)
	if err != nil {
		return nil, err
	}
	now := s.w.NowMillis()
	for i := range rows {
		if t, ok := tables.LikeAt(rs[2*i]); ok && t == at[i] && !s.susp.Suspended(ids[i].Author, now) {
			out[i] = feed.PostFromRow(ids[i], rs[2*i+1])
		}
	}
	return out, nil
}
