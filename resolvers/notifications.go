package resolvers

import (
	"context"
	"slices"

	"github.com/99designs/gqlgen/graphql"
	"golang.org/x/sync/errgroup"

	"github.com/weibohbase/gateway/internal/gqlfield"
	"github.com/weibohbase/gateway/loaders"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/comment"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/notify"
	"github.com/weibohbase/gateway/weibo/tables"
)

// notifications is Query.notifications: the viewer's page, with what its
// edges lead to prefetched (prefetchNotifications).
func (r *Resolver) notifications(ctx context.Context, first *int, after *string) (*notify.NotificationConnection, error) {
	page, err := r.Svc.Notify.Notifications(ctx, viewerOf(ctx), first, after)
	if err != nil {
		return nil, err
	}
	return page, r.prefetchNotifications(ctx, page)
}

// unreadNotificationCount is Query.unreadNotificationCount: the kept
// counter of the viewer's users row, read at most once a request (shared
// with the token check and `me`).
func (r *Resolver) unreadNotificationCount(ctx context.Context) (int, error) {
	u, err := r.userNow(ctx, viewerOf(ctx))
	if err != nil || u == nil {
		return 0, err
	}
	return int(u.UnreadNotifications), nil
}

// markNotificationsRead is Mutation.markNotificationsRead.
func (r *Resolver) markNotificationsRead(ctx context.Context, upTo *string) (int, error) {
	var id *weibo.NotificationID
	if upTo != nil {
		n, err := parseID[weibo.NotificationID]("upTo", *upTo)
		if err != nil {
			return 0, err
		}
		id = &n
	}
	return r.Svc.Notify.MarkNotificationsRead(ctx, viewerOf(ctx), id)
}

// notificationActors is Notification.actors: from the newest actors the
// notification keeps, or, beyond them, from every actor through the
// request's loader (prefetched for a page).
func (r *Resolver) notificationActors(ctx context.Context, n *notify.Notification, first *int) (*weibo.UserConnection, error) {
	page, need, err := n.ActorPage(first, nil)
	if err != nil || !need {
		return page, err
	}
	all, err := loaders.For(ctx).NotificationActors().Load(ctx, n.ID)()
	if err != nil {
		return nil, err
	}
	page, _, err = n.ActorPage(first, all)
	return page, err
}

// notificationPost is Notification.post, through the post loader.
func notificationPost(ctx context.Context, n *notify.Notification) (*feed.Post, error) {
	id, ok := n.PostID()
	if !ok {
		return nil, nil
	}
	return loaders.For(ctx).Posts().Load(ctx, id)()
}

// notificationComment is Notification.comment, through the comment loader.
func notificationComment(ctx context.Context, n *notify.Notification) (*comment.Comment, error) {
	id, ok := n.CommentID()
	if !ok {
		return nil, nil
	}
	return loaders.For(ctx).Comments().Load(ctx, id)()
}

// prefetchNotifications reads what a page of notifications leads to, each
// with one batched read when the query selects it, and primes the
// request's loaders: every actor of the notifications whose actors(first:)
// goes beyond the newest they keep, then the actors' users rows; the posts
// and the comments they are about; the reports of REPORT_RESOLVED ones.
// A page then costs the same number of store calls whatever its size.
func (r *Resolver) prefetchNotifications(ctx context.Context, page *notify.NotificationConnection) error {
	if len(page.Edges) == 0 {
		return nil
	}
	l := loaders.For(ctx)
	nodes := selections(ctx, "edges", "node")
	selected := func(name string) bool { return selectsAny(ctx, nodes, func(n string) bool { return n == name }) }
	g, gctx := errgroup.WithContext(ctx)
	if selected("actors") {
		g.Go(func() error { return r.prefetchActors(gctx, page) })
	}
	var posts []weibo.PostID
	var comments []weibo.CommentID
	for _, e := range page.Edges {
		if id, ok := e.Notification.PostID(); ok && !slices.Contains(posts, id) {
			posts = append(posts, id)
		}
		if id, ok := e.Notification.CommentID(); ok && !slices.Contains(comments, id) {
			comments = append(comments, id)
		}
	}
	if selected("post") && len(posts) > 0 {
		prime(ctx, g, gctx, posts, r.Svc.Feed.GetPosts, l.Posts())
	}
	if selected("comment") && len(comments) > 0 {
		prime(ctx, g, gctx, comments, r.Svc.Comments.VisibleComments, l.Comments())
	}
	if ids := notificationReports(page); selected("report") && len(ids) > 0 {
		prime(ctx, g, gctx, ids, r.Svc.Reports.Get, l.Reports())
	}
	return g.Wait()
}

// prefetchActors primes, for a page of notifications, every actor of
// those whose actors(first:) (the largest first selected) goes beyond
// the newest they keep (one GetMany), then the users rows of the actors
// the page shows (prefetchUsers).
func (r *Resolver) prefetchActors(ctx context.Context, page *notify.NotificationConnection) error {
	first := 0
	oc := graphql.GetOperationContext(ctx)
	for _, set := range selections(ctx, "edges", "node") {
		for _, f := range gqlfield.CollectFields(oc, set, nil) {
			if f.Name != "actors" {
				continue
			}
			n := weibo.DefaultPageSize
			if v := f.ArgumentMap(oc.Variables)["first"]; v != nil {
				if i, err := graphql.UnmarshalInt(v); err == nil {
					n = i
				}
			}
			first = max(first, n)
		}
	}
	var full []weibo.NotificationID
	for _, e := range page.Edges {
		if n := e.Notification; first > len(n.Newest) && n.ActorCount > len(n.Newest) {
			full = append(full, n.ID)
		}
	}
	all := map[weibo.NotificationID][]tables.NotifActor{}
	if len(full) > 0 {
		lists, err := r.Svc.Notify.NotificationActors(ctx, full)
		if err != nil {
			return err
		}
		l := loaders.For(ctx)
		for i, id := range full {
			all[id] = lists[i]
			l.NotificationActors().Prime(ctx, id, lists[i])
		}
	}
	var ids []weibo.UserID
	for _, e := range page.Edges {
		actors := e.Notification.Newest
		if a, ok := all[e.Notification.ID]; ok {
			actors = a
		}
		for _, a := range actors[:min(first, len(actors))] {
			ids = append(ids, a.User)
		}
	}
	return prefetchUsers(ctx, r.Svc, ids, false, "edges", "node", "actors", "edges", "node")
}
