package resolvers

import (
	"context"

	"github.com/weibohbase/gateway/loaders"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/feed"
)

// topicPosts is Topic.posts: one page of t's posts as the viewer sees it (TopicPosts),
// its totalCount t's postCount when the query selects it, and the page's
// prefetch (prefetchPosts), as every list of posts.
func (r *topicResolver) topicPosts(ctx context.Context, t *weibo.Topic, p weibo.Page) (*feed.PostConnection, error) {
	page, err := r.Svc.Topics.TopicPosts(ctx, viewerOf(ctx), t.Name, p)
	if err != nil {
		return nil, err
	}
	if selectsAny(ctx, selections(ctx), func(n string) bool { return n == "totalCount" }) {
		if page.TotalCount, err = topicPostCount(ctx, t); err != nil {
			return nil, err
		}
	}
	return page, r.prefetchPosts(ctx, page)
}

// topicPostCount returns t's kept postCount: the value read with it
// (topic, topics, topTopics, trendingTopics read the topics' rows), else
// its row through the request's topic loader (a post's topics: one
// batched read for every topic of the request's posts); 0 when no post
// has the topic.
func topicPostCount(ctx context.Context, t *weibo.Topic) (int, error) {
	if t.Counted {
		return int(t.PostCount), nil
	}
	got, err := loaders.For(ctx).Topics().Load(ctx, t.Name)()
	if err != nil || got == nil {
		return 0, err
	}
	return int(got.PostCount), nil
}
