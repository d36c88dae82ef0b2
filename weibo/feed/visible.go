package feed

import (
	"context"
	"errors"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/safety"
	"github.com/weibohbase/gateway/weibo/tables"
)

// A post and a user's posts as a viewer sees them: across a block, either
// way, the other's post is none (post(id:) answers null, as for a post
// that does not exist) and the other's posts are an empty list. Mutes and
// keyword filters do not hide a post asked for by id or by author. A
// suspended author's posts are none to every other viewer, anonymous ones
// too (SetSuspensions), decided at read time from memory.

// SetSuspensions makes every read of posts hide the posts of the users
// susp says are suspended from everyone but themselves. It must be called
// before any call, while the domain is wired.
func (s *Service) SetSuspensions(susp weibo.Suspensions) { s.susp = susp }

// UserPostsFor pages through uid's posts newest first, both ways, as
// viewer sees them: UserPosts, or an empty connection (Hidden set, no
// cursors) when a block stands between viewer and uid, either way, or uid
// is suspended (and not the viewer). For a
// logged-in viewer (not 0) other than uid the page's first scan reads the
// viewer's safety row too (one ScanMany: no store call of its own).
// Errors: BAD_USER_INPUT for bad paging arguments.
func (s *Service) UserPostsFor(ctx context.Context, viewer, uid weibo.UserID, p weibo.Page) (*PostConnection, error) {
	if viewer != uid && s.susp.Suspended(uid, s.w.NowMillis()) {
		return &PostConnection{Edges: []PostEdge{}, Hidden: true}, nil
	}
	q := userPostsQuery(uid)
	if viewer != 0 && viewer != uid {
		q.With = safety.RowScan(viewer)
		q.WithRows = func(rows []*hbase.Result) error {
			if safety.FromRows(viewer, rows, s.w.NowMillis()).Blocked(uid) {
				return errBlockedAuthor
			}
			return nil
		}
	}
	page, err := s.userPosts(ctx, q, p)
	if errors.Is(err, errBlockedAuthor) {
		return &PostConnection{Edges: []PostEdge{}, Hidden: true}, nil
	}
	return page, err
}

// errBlockedAuthor ends the read of a page of posts whose author is
// blocked either way by the viewer (UserPostsFor).
var errBlockedAuthor = errors.New("author blocked either way")

// PostsFor reads the posts ids as viewer sees them (post(id:), node and
// nodes): nil for a post that does not exist, whose author a block
// stands between with viewer, either way, or whose author (not viewer) is
// suspended. It is one GetMany of the
// content rows and, for a logged-in viewer (not 0) asking for a post of
// another's, the viewer's safety row.
func (s *Service) PostsFor(ctx context.Context, viewer weibo.UserID, ids []weibo.PostID) (_ []*Post, err error) {
	defer weibo.Wrap(&err, "get posts")
	gets := make([]*hbase.Get, len(ids), len(ids)+1)
	others := false
	for i, id := range ids {
		gets[i] = &hbase.Get{Table: tables.Content, Row: tables.ContentKey(id)}
		others = others || id.Author != viewer
	}
	if viewer == 0 || !others {
		viewer = 0 // no Set to read: nothing is hidden
	} else {
		gets = append(gets, safety.RowGet(viewer))
	}
	rs, err := s.st.GetMany(ctx, gets)
	if err != nil {
		return nil, err
	}
	var set *safety.Set
	if viewer != 0 {
		set = safety.FromRow(viewer, rs[len(ids)], s.w.NowMillis())
	}
	out := make([]*Post, len(ids))
	for i, id := range ids {
		if id.Author == viewer || !set.Blocked(id.Author) && !s.susp.Suspended(id.Author, s.w.NowMillis()) {
			out[i] = PostFromRow(id, rs[i])
		}
	}
	return out, nil
}

// Sets answers a viewer's Set from the version cell a page read with its
// own batched read. *safety.Service implements it.
type Sets interface {
	SetForVersion(ctx context.Context, viewer weibo.UserID, version *hbase.Result) (*safety.Set, error)
}

// SetSafety makes home-timeline pages (ResolveEntries) read the viewer's
// Set through sets, by its version. It must be called before any call,
// while the domain is wired (the safety service is built after the feed).
func (s *Service) SetSafety(sets Sets) { s.sets = sets }
