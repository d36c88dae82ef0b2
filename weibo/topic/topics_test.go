package topic_test

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weibohbase/gateway/fsck"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/topic"
	"github.com/weibohbase/gateway/weibo/topic/hashtag"
)

// topicPostIDs pages through topic name's posts with pages of size n,
// forward, and returns their ids.
func topicPostIDs(t *testing.T, svc *domain.Domain, name string, n int) []weibo.PostID {
	t.Helper()
	var ids []weibo.PostID
	var after *string
	for {
		page, err := svc.Topics.TopicPosts(t.Context(), 0, name, weibo.Page{First: &n, After: after})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Edges {
			ids = append(ids, e.Post.ID)
		}
		if !page.PageInfo.HasNextPage {
			return ids
		}
		after = page.PageInfo.EndCursor
	}
}

// newestFirst orders post ids as a topic's list does.
func newestFirst(a, b weibo.PostID) int {
	return cmp.Or(cmp.Compare(b.Millis, a.Millis), cmp.Compare(a.Author, b.Author))
}

// TestTopics publishes, reposts and deletes posts with topics and checks
// the topic's page (both ways), postCount, topTopics, trendingTopics and
// the bad inputs.
func TestTopics(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			svc := domaintest.Quiet(domaintest.OwnStore(t, b))
			if err := svc.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer svc.Close(context.Background())
			a := domaintest.MustUser(t, svc, domaintest.Uniq("topa")).ID
			c := domaintest.MustUser(t, svc, domaintest.Uniq("topc")).ID
			var ids []weibo.PostID
			for i := range 7 {
				p, err := svc.Feed.Publish(ctx, []weibo.UserID{a, c}[i%2], fmt.Sprintf("#武汉加油# 第%d条 #抗疫 %d#", i, i%2))
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, p.ID)
			}
			rp, err := svc.Reposts.Repost(ctx, c, ids[0], "#武汉加油##转发#")
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, rp.ID)
			if _, err := svc.Reposts.Repost(ctx, a, ids[1], ""); err != nil { // 转发微博: no topic
				t.Fatal(err)
			}
			if ok, err := svc.Feed.DeletePost(ctx, ids[3]); err != nil || !ok {
				t.Fatalf("delete: %v %v", ok, err)
			}
			if err := svc.FlushFanout(ctx); err != nil {
				t.Fatal(err)
			}
			want := slices.Clone(ids)
			want = slices.Delete(want, 3, 4)
			slices.SortFunc(want, newestFirst)
			tp, err := svc.Topics.Topic(ctx, "武汉加油")
			if err != nil || tp == nil || tp.PostCount != int64(len(want)) {
				t.Fatalf("topic = %+v, %v; want postCount %d", tp, err, len(want))
			}
			for _, n := range []int{1, 2, 3, 100} {
				if got := topicPostIDs(t, svc, "武汉加油", n); !slices.Equal(got, want) {
					t.Fatalf("pages of %d: %v, want %v", n, got, want)
				}
			}
			// Backward from the end: the last two, then the two before.
			two := 2
			last, err := svc.Topics.TopicPosts(ctx, 0, "武汉加油", weibo.Page{Last: &two})
			if err != nil {
				t.Fatal(err)
			}
			if len(last.Edges) != 2 || last.Edges[0].Post.ID != want[len(want)-2] || last.Edges[1].Post.ID != want[len(want)-1] ||
				!last.PageInfo.HasPreviousPage || last.PageInfo.HasNextPage {
				t.Fatalf("last 2: %+v", last)
			}
			prev, err := svc.Topics.TopicPosts(ctx, 0, "武汉加油", weibo.Page{Last: &two, Before: last.PageInfo.StartCursor})
			if err != nil {
				t.Fatal(err)
			}
			if len(prev.Edges) != 2 || prev.Edges[0].Post.ID != want[len(want)-4] || !prev.PageInfo.HasNextPage {
				t.Fatalf("2 before: %+v", prev)
			}
			if tp, _ := svc.Topics.Topic(ctx, "抗疫 1"); tp == nil || tp.PostCount != 2 { // posts 1, 5 (3 deleted)
				t.Fatalf("抗疫 1 = %+v", tp)
			}
			if tp, _ := svc.Topics.Topic(ctx, "nothing"); tp != nil {
				t.Fatalf("an unknown topic = %+v", tp)
			}
			found, err := svc.Topics.SearchTopics(ctx, "抗", nil)
			if err != nil || len(found) != 2 || found[0].Name != "抗疫 0" || found[0].PostCount != 4 || found[1].Name != "抗疫 1" {
				t.Fatalf("search 抗 = %+v, %v", found, err)
			}
			now := time.Now()
			top, err := svc.Topics.TopTopics(ctx, now.Add(-time.Hour), now.Add(time.Hour), nil)
			if err != nil || len(top) != 4 || top[0].Topic.Name != "武汉加油" || top[0].Count != int64(len(want)) || top[0].Topic.PostCount != int64(len(want)) ||
				top[3].Topic.Name != "转发" || top[3].Count != 1 {
				t.Fatalf("top = %+v, %v", top, err)
			}
			trend, err := svc.Topics.TrendingTopics(ctx, now.Add(time.Hour), topic.TrendHour, nil)
			if err != nil {
				t.Fatal(err)
			}
			// This hour or the one before holds the posts; both windows
			// start within two hours of now.
			if len(trend) == 0 || trend[0].Topic.Name != "武汉加油" {
				t.Logf("trending = %+v (the posts may straddle an hour)", trend)
			}
			for _, tc := range []struct {
				name string
				err  error
			}{
				{"empty name", func() error { _, err := svc.Topics.Topic(ctx, ""); return err }()},
				{"65 characters", func() error { _, err := svc.Topics.Topic(ctx, string(make([]rune, 65))); return err }()},
				{"since = until", func() error { _, err := svc.Topics.TopTopics(ctx, now, now, nil); return err }()},
				{"32 days", func() error { _, err := svc.Topics.TopTopics(ctx, now.Add(-32*24*time.Hour), now, nil); return err }()},
				{"first 0", func() error { z := 0; _, err := svc.Topics.TopTopics(ctx, now.Add(-time.Hour), now, &z); return err }()},
				{"first 101", func() error { z := 101; _, err := svc.Topics.SearchTopics(ctx, "a", &z); return err }()},
				{"empty prefix", func() error { _, err := svc.Topics.SearchTopics(ctx, "", nil); return err }()},
				{"bad window", func() error { _, err := svc.Topics.TrendingTopics(ctx, now, 7, nil); return err }()},
				{"page of an empty name", func() error { _, err := svc.Topics.TopicPosts(ctx, 0, "", weibo.Page{}); return err }()},
			} {
				if weibo.CodeOf(tc.err) != weibo.CodeBadUserInput {
					t.Errorf("%s: %v, want BAD_USER_INPUT", tc.name, tc.err)
				}
			}
			rep, err := fsck.Run(ctx, svc, fsck.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Issues) != 0 {
				t.Errorf("fsck: %+v", rep.Issues)
			}
		})
	}
}

// TestTopicsStorm publishes, reposts and deletes posts that share topics
// from many goroutines at once, then checks that every topic's postCount
// and hour count equals its list and the posts that have it, and that
// fsck finds nothing.
func TestTopicsStorm(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	const (
		calls       = 240
		concurrency = 16
	)
	names := []string{"武汉加油", "抗疫", "新冠肺炎", "🙂"}
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := domaintest.OwnStore(t, b)
			if b.Name == hbase.BackendEmbedded {
				st = domaintest.Jittery{StoreAdmin: st}
			}
			svc := domaintest.Quiet(st, domain.WithRepairGrace(10*time.Second), domain.WithOutboxSweep(time.Second))
			if err := svc.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer svc.Close(context.Background())
			var users []weibo.UserID
			for i := range 4 {
				users = append(users, domaintest.MustUser(t, svc, domaintest.Uniq(fmt.Sprintf("tstorm%d", i))).ID)
			}
			var (
				mu       sync.Mutex
				posts    []weibo.PostID
				failures = map[string]int{}
			)
			content := func() string {
				s := "text"
				for range 1 + rand.IntN(3) {
					s += " #" + names[rand.IntN(len(names))] + "#"
				}
				return s
			}
			var wg sync.WaitGroup
			sem := make(chan struct{}, concurrency)
			for i := range calls {
				wg.Add(1)
				sem <- struct{}{}
				go func() {
					defer func() { <-sem; wg.Done() }()
					var err error
					var p *feed.Post
					mu.Lock()
					var target weibo.PostID
					if len(posts) > 0 {
						target = posts[rand.IntN(len(posts))]
					}
					mu.Unlock()
					switch {
					case i%5 == 3 && target != (weibo.PostID{}):
						_, err = svc.Feed.DeletePost(ctx, target)
					case i%5 == 4 && target != (weibo.PostID{}):
						p, err = svc.Reposts.Repost(ctx, users[rand.IntN(len(users))], target, content())
					default:
						p, err = svc.Feed.Publish(ctx, users[rand.IntN(len(users))], content())
					}
					if p != nil {
						mu.Lock()
						posts = append(posts, p.ID)
						mu.Unlock()
					}
					if err != nil && weibo.CodeOf(err) != weibo.CodeNotFound {
						mu.Lock()
						failures[err.Error()]++
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			if len(failures) > 0 {
				t.Fatalf("failures: %v", failures)
			}
			domaintest.WaitQuiet(t, svc, time.Minute)
			ps, err := svc.Feed.GetPosts(ctx, posts)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string][]weibo.PostID{}
			for _, p := range ps {
				if p != nil {
					for _, n := range hashtag.Extract(p.Content) {
						want[n] = append(want[n], p.ID)
					}
				}
			}
			now := time.Now()
			top, err := svc.Topics.TopTopics(ctx, now.Add(-2*time.Hour), now.Add(time.Hour), nil)
			if err != nil {
				t.Fatal(err)
			}
			topCount := map[string]int64{}
			for _, tc := range top {
				topCount[tc.Topic.Name] = tc.Count
			}
			for _, n := range names {
				slices.SortFunc(want[n], newestFirst)
				got := topicPostIDs(t, svc, n, 7)
				tp, err := svc.Topics.Topic(ctx, n)
				if err != nil {
					t.Fatal(err)
				}
				count := int64(0)
				if tp != nil {
					count = tp.PostCount
				}
				if !slices.Equal(got, want[n]) || count != int64(len(want[n])) || topCount[n] != count {
					t.Errorf("topic %q: postCount %d, hour counts %d, %d listed, %d posts have it\nlisted %v\nwant   %v",
						n, count, topCount[n], len(got), len(want[n]), got, want[n])
				}
			}
			rep, err := fsck.Run(ctx, svc, fsck.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Issues) != 0 {
				t.Errorf("fsck after the storm: %+v", rep.Issues)
			}
		})
	}
}
