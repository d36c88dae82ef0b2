package seed

import (
	"context"

	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
)

// The demo's likes, loaded by `make run` (gateway serve --demo) through
// LikesDemo, so that GraphiQL shows likeCount, likedByViewer, Post.likes
// and User.likedPosts from the README's first query on.
const (
	// DemoLikesViewer is the demo user whose home timeline's newest posts
	// get liked: the README's first login.
	DemoLikesViewer = "u1"
	// demoLikedPosts is how many of them.
	demoLikedPosts = 6
)

// DemoLikers are the demo users who like those posts (those that exist).
var DemoLikers = []string{"u2", "u3", "u4", "u5", "u6", DemoXiaoming, DemoXiaohong, DemoAdminUsername}

// LikesDemo makes likes through svc: the i-th newest post (from 0) of
// viewer's home timeline, of the first few, is liked by all of likers but
// the last i, and viewer likes every other one of them (the newest, the
// third, ...), so the counts differ and likedByViewer is true on some
// posts only. Users that do not exist are left out; without viewer it
// does nothing. It is idempotent (likes are). Errors are the domain's.
func LikesDemo(ctx context.Context, svc *domain.Domain, viewer string, likers []string) error {
	v, err := svc.Accounts.UserByUsername(ctx, viewer)
	if err != nil || v == nil {
		return err
	}
	var who []weibo.UserID
	for _, name := range likers {
		u, err := svc.Accounts.UserByUsername(ctx, name)
		if err != nil {
			return err
		}
		if u != nil && u.ID != v.ID {
			who = append(who, u.ID)
		}
	}
	page, err := svc.Timeline.HomeTimeline(ctx, v.ID, weibo.Page{First: new(demoLikedPosts)})
	if err != nil {
		return err
	}
	for i, e := range page.Edges {
		fans := who[:max(0, len(who)-i)]
		if i%2 == 0 {
			fans = append([]weibo.UserID{v.ID}, fans...)
		}
		for _, uid := range fans {
			if _, err := svc.Likes.Like(ctx, uid, e.Post.ID); err != nil {
				return err
			}
		}
	}
	return nil
}
