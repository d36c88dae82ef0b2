package resolvers

import (
	"context"

	"github.com/weibohbase/gateway/loaders"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/comment"
)

// prefetchComments prefetches what the edges of a page of a post's
// comments lead to, when the query selects it: the authors' users rows
// when more of them than id and username is selected (see
// prefetchUsers), and the comments they reply to, read with one GetMany
// that primes the request's comment loader.
func (r *Resolver) prefetchComments(ctx context.Context, page *comment.CommentConnection) error {
	authors := make([]weibo.UserID, len(page.Edges))
	var replies []weibo.CommentID
	for i, e := range page.Edges {
		authors[i] = e.Comment.ID.Author
		if e.Comment.ReplyTo != nil {
			replies = append(replies, *e.Comment.ReplyTo)
		}
	}
	if err := prefetchUsers(ctx, r.Svc, authors, true, "edges", "node", "author"); err != nil {
		return err
	}
	if len(replies) == 0 || !selectsAny(ctx, selections(ctx, "edges", "node"), func(n string) bool { return n == "replyTo" }) {
		return nil
	}
	cs, err := r.Svc.Comments.VisibleComments(ctx, replies)
	if err != nil {
		return err
	}
	l := loaders.For(ctx)
	for i, c := range cs {
		l.Comments().Prime(ctx, replies[i], c)
	}
	return nil
}
