package feed

import "github.com/weibohbase/gateway/weibo"

// Author is the post's author as the post row knows it: id and username
// only (Complete is false; the users row is read when more is asked for).
// It is a plain method, not a resolver, so that GraphQL resolves
// Post.author inline instead of in a goroutine per post.
// A post read from its row (postFromRow) returns the same User every time,
// allocated with the post; callers must not modify it.
func (p *Post) Author() *weibo.User {
	if p.author != nil {
		return p.author
	}
	return &weibo.User{ID: p.ID.Author, Username: p.AuthorName}
}
