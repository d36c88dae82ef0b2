package resolvers

import (
	"context"

	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/org"
)

// setLike is likePost (on) and unlikePost: the viewer's like of post
// postID set or taken back, and the request's likedByViewer of the post
// primed with it.
func (r *Resolver) setLike(ctx context.Context, postID string, on bool) (*feed.Post, error) {
	post, err := parseID[weibo.PostID]("postId", postID)
	if err != nil {
		return nil, err
	}
	change := r.Svc.Likes.Unlike
	if on {
		change = r.Svc.Likes.Like
	}
	p, err := change(ctx, viewerOf(ctx), post)
	if err != nil {
		return nil, err
	}
	primeLiked(ctx, post, on)
	return p, nil
}

// requireAuthorOrAdmin returns nil when the viewer is author, or holds
// MANAGE_REPORTS and outranks the author (the rank rule, Authz.ActOn),
// else the FORBIDDEN naming what is missing (deletePost).
func (r *Resolver) requireAuthorOrAdmin(ctx context.Context, author weibo.UserID) error {
	viewer := viewerOf(ctx)
	if viewer == author {
		return nil
	}
	if err := r.Svc.Org.Authz.RequirePermission(ctx, viewer, org.PermManageReports); err != nil {
		return err
	}
	return r.Svc.Org.Authz.ActOn(ctx, viewer, author)
}
