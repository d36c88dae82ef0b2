package resolvers

import (
	"context"

	"github.com/weibohbase/gateway/loaders"
	"github.com/weibohbase/gateway/weibo/feed"
)

// topicPostCount returns t's kept postCount: the value read with it
// (topic, topics, topTopics, trendingTopics read the topics' rows), else
// its row through the request's topic loader (a post's topics: one
// batched read for every topic of the request's posts); 0 when no post
// has the topic.
func topicPostCount(ctx context.Context, t *feed.Topic) (int, error) {
	if t.Counted {
		return int(t.PostCount), nil
	}
	got, err := loaders.For(ctx).Topics.Load(ctx, t.Name)()
	if err != nil || got == nil {
		return 0, err
	}
	return int(got.PostCount), nil
}
