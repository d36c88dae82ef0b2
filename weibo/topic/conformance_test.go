package topic_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/counted/countedtest"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/tables"
	"github.com/weibohbase/gateway/weibo/topic"
	"github.com/weibohbase/gateway/weibo/topic/hashtag"
)

// TestTopicConformance runs the conformance suite of counted relations
// (countedtest) over the pair (post, its topics), through the domain's
// API, on both backends: the publish and the delete of a post with two
// topics are killed at every step the topic relation declares, and
// outlive their budget; after the restart's repair each topic's postCount
// and hour count are exact, the topics list the post exactly when it
// stands, and fsck finds nothing.
//
// The relation runs no step right after its authority (the post's content
// row, written by the publish or the delete): its decided step is the
// first one after it, topic:counted.
func TestTopicConformance(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := domaintest.OwnStore(t, b)
			decided := counted.StepsOf(topic.Relation).Counted
			countedtest.Run(t, st, domaintest.DomainModule(tables.PendingTopic, decided, nil, topicPair))
		})
	}
}

// TestTopicConformanceBounded is TestTopicConformance over a post that
// names 40 fresh topics, twice: the killed and the slow writes, their
// repair and fsck all keep to its first 30 (hashtag.MaxTopics), and the
// other 10 never get a list entry or a count.
func TestTopicConformanceBounded(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := domaintest.OwnStore(t, b)
			decided := counted.StepsOf(topic.Relation).Counted
			pair := func(t *testing.T, d *domain.Domain) *countedtest.Pair[*domain.Domain] {
				return topicPairOf(t, d, hashtag.MaxTopics+10)
			}
			countedtest.Run(t, st, domaintest.DomainModule(tables.PendingTopic, decided, nil, pair))
		})
	}
}

// topicPair is a fresh user's post with two fresh topics (topicPairOf).
func topicPair(t *testing.T, d *domain.Domain) *countedtest.Pair[*domain.Domain] {
	return topicPairOf(t, d, 2)
}

// topicPairOf is a fresh user's post that names n fresh topics (twice
// each, when more than hashtag.MaxTopics), of which it has the first
// hashtag.MaxTopics at most; its reverse deletes the post the write made
// (in the case's setup). The pair's counters name the post's hour: the
// hour of the clock when the publish starts, then of the post it made.
func topicPairOf(t *testing.T, d *domain.Domain, n int) *countedtest.Pair[*domain.Domain] {
	u := domaintest.MustUser(t, d, domaintest.Uniq("author"))
	base := domaintest.Uniq("t")
	var named []string
	for i := range n {
		named = append(named, fmt.Sprintf("%s_%d", base, i))
	}
	text := "#" + strings.Join(named, "# and #") + "#"
	if n > hashtag.MaxTopics {
		text += " " + text
	}
	names := named[:min(n, hashtag.MaxTopics)] // the post's topics
	beyond := named[len(names):]               // plain text
	var made weibo.PostID
	pr := &countedtest.Pair[*domain.Domain]{Owner: uint64(u.ID), Extra: tables.EncodeTopicExtra(names)}
	pr.Do = func(ctx context.Context, d *domain.Domain) error {
		pr.Other = uint64(d.Feed.NowMillis())
		p, err := d.Feed.Publish(ctx, u.ID, text)
		if err == nil {
			made, pr.Other = p.ID, uint64(p.ID.Millis)
		}
		return err
	}
	pr.Undo = func(ctx context.Context, d *domain.Domain) error {
		deleted, err := d.Feed.DeletePost(ctx, made)
		if err == nil && !deleted {
			err = fmt.Errorf("post %s: nothing to delete", made)
		}
		return err
	}
	// Each topic's posts as read: the write's post in all, or in none; in
	// none of the names beyond the post's topics, which are no topics.
	pr.Present = func(ctx context.Context, d *domain.Domain) (bool, error) {
		var in []bool
		for _, n := range names {
			c, err := d.Topics.TopicPosts(ctx, 0, n, weibo.Page{})
			if err != nil {
				return false, err
			}
			if len(c.Edges) > 1 || len(c.Edges) == 1 && c.Edges[0].Post.ID.Author != u.ID {
				return false, fmt.Errorf("topic %s: posts of another write: %d", n, len(c.Edges))
			}
			in = append(in, len(c.Edges) == 1)
		}
		for i := range in {
			if in[i] != in[0] {
				return false, fmt.Errorf("the post is in topic %s: %v, in %s: %v", names[0], in[0], names[i], in[i])
			}
		}
		for _, n := range beyond {
			c, err := d.Topics.TopicPosts(ctx, 0, n, weibo.Page{})
			if err != nil {
				return false, err
			}
			tp, err := d.Topics.Topic(ctx, n)
			if err != nil {
				return false, err
			}
			if len(c.Edges) > 0 || tp != nil && tp.PostCount != 0 {
				return false, fmt.Errorf("%s, after the post's %dth topic, is a topic: %d posts listed, %+v", n, hashtag.MaxTopics, len(c.Edges), tp)
			}
		}
		return in[0], nil
	}
	return pr
}
