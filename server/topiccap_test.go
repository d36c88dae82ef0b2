package server_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/weibohbase/gateway/fsck"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/tables"
	"github.com/weibohbase/gateway/weibo/topic/hashtag"
)

// hashtagSpam returns the longest "#1##2#…" text of at most n characters
// and the number of its pairs.
func hashtagSpam(n int) (string, int) {
	var b strings.Builder
	for i := 1; ; i++ {
		p := "#" + strconv.Itoa(i) + "#"
		if b.Len()+len(p) > n {
			return b.String(), i - 1
		}
		b.WriteString(p)
	}
}

// afterPost returns once the clock has passed the millisecond of post id:
// an author's next post then takes a millisecond of its own, the first it
// tries, as the posts whose store calls are compared must.
func afterPost(t *testing.T, id string) {
	t.Helper()
	p, err := weibo.ParsePostID(id)
	if err != nil {
		t.Fatalf("post id %q: %v", id, err)
	}
	for time.Now().UnixMilli() <= p.Millis {
		time.Sleep(100 * time.Microsecond)
	}
}

type publishedTopics struct {
	PublishPost struct {
		ID     string `json:"id"`
		Topics []struct {
			Name string `json:"name"`
		} `json:"topics"`
	} `json:"publishPost"`
}

func (p publishedTopics) names() []string {
	var out []string
	for _, t := range p.PublishPost.Topics {
		out = append(out, t.Name)
	}
	return out
}

// TestTopicsPerPostBounded publishes the longest post the gateway takes
// made of "#1##2#…" pairs over HTTP and checks that only its first 30
// distinct names became topics: the post's topics, topic(name:),
// topics(prefix:) and the lists; that its publish and its delete cost the
// store calls of a post with 30 topics, not thousands; and that fsck finds
// nothing, with the post and after its delete (the check applies the same
// bound as the writes).
func TestTopicsPerPostBounded(t *testing.T) {
	spam, pairs := hashtagSpam(feed.MaxPostLength)
	if utf8.RuneCountInString(spam) < feed.MaxPostLength-10 || pairs < 1800 {
		t.Fatalf("spam text: %d characters, %d pairs", utf8.RuneCountInString(spam), pairs)
	}
	var thirty strings.Builder // 30 topics of their own
	var want30 []string
	for i := 1; i <= hashtag.MaxTopics; i++ {
		fmt.Fprintf(&thirty, "#t%d# ", i)
		want30 = append(want30, "t"+strconv.Itoa(i))
	}
	var wantSpam []string
	for i := 1; i <= hashtag.MaxTopics; i++ {
		wantSpam = append(wantSpam, strconv.Itoa(i))
	}
	const publish = `mutation($c: String!) { publishPost(content: $c) { id topics { name } } }`
	const del = `mutation($id: ID!) { deletePost(id: $id) }`
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			g := startGateway(t, b.OpenOwn(t, tables.Namespace, "topiccap"))
			a := g.register(uniqueName("spam"))
			var warm, p30, ps publishedTopics
			g.ok(a.token, publish, map[string]any{"c": "warm-up, no topic"}, &warm)
			afterPost(t, warm.PublishPost.ID)
			calls30 := g.okCalls(a.token, publish, map[string]any{"c": thirty.String()}, &p30)
			afterPost(t, p30.PublishPost.ID)
			callsSpam := g.okCalls(a.token, publish, map[string]any{"c": spam}, &ps)
			if got := p30.names(); !slices.Equal(got, want30) {
				t.Fatalf("the 30-topic post's topics: %q", got)
			}
			if got := ps.names(); !slices.Equal(got, wantSpam) {
				t.Fatalf("the %d-pair post's topics: %q (%d), want #1# to #30#", pairs, got, len(got))
			}
			if callsSpam != calls30 {
				t.Fatalf("publish store calls: %v for the %d-pair post, %v for a post with 30 topics", callsSpam, pairs, calls30)
			}
			t.Logf("publish store calls: %v for a post with 30 topics and for the %d-pair post", calls30, pairs)
			// A later post whose first topic is the spam's 31st pair.
			var p31 publishedTopics
			g.ok(a.token, publish, map[string]any{"c": "#31# 正常"}, &p31)

			// The post read back: its 30 topics, each counted once.
			var pd struct {
				Post struct {
					Topics []struct {
						Name      string `json:"name"`
						PostCount int    `json:"postCount"`
					} `json:"topics"`
				} `json:"post"`
			}
			g.ok("", `query($id: ID!) { post(id: $id) { topics { name postCount } } }`, map[string]any{"id": ps.PublishPost.ID}, &pd)
			if len(pd.Post.Topics) != hashtag.MaxTopics {
				t.Fatalf("post's topics read back: %+v", pd.Post.Topics)
			}
			for i, x := range pd.Post.Topics {
				if x.Name != wantSpam[i] || x.PostCount != 1 {
					t.Fatalf("post's topic %d: %+v, want %q with 1 post", i, x, wantSpam[i])
				}
			}
			// topics(prefix:): "1" starts 1 and 10-19 of the first 30 (of
			// the 1,851 pairs, 1,111 start with "1").
			prefix := func(p string) []string {
				var d struct {
					Topics []struct {
						Name      string `json:"name"`
						PostCount int    `json:"postCount"`
					} `json:"topics"`
				}
				g.ok("", `query($p: String!) { topics(prefix: $p, first: 100) { name postCount } }`, map[string]any{"p": p}, &d)
				var out []string
				for _, x := range d.Topics {
					out = append(out, fmt.Sprintf("%s=%d", x.Name, x.PostCount))
				}
				slices.Sort(out)
				return out
			}
			sorted := func(s ...string) []string { slices.Sort(s); return s }
			wantOnes := sorted("1=1", "10=1", "11=1", "12=1", "13=1", "14=1", "15=1", "16=1", "17=1", "18=1", "19=1")
			if got := prefix("1"); !slices.Equal(got, wantOnes) {
				t.Fatalf("topics(prefix: \"1\") = %q, want %q", got, wantOnes)
			}
			if got := prefix("3"); !slices.Equal(got, sorted("3=1", "30=1", "31=1")) {
				t.Fatalf("topics(prefix: \"3\") = %q, want 3, 30 and the later post's 31", got)
			}
			// topic(name:): the 30th has the spam post, the 31st only the
			// later post, the last pair is no topic.
			topicPosts := func(name string) (int, []string) {
				var d topicPage
				g.ok("", topicPageQuery, map[string]any{"name": name, "first": 10}, &d)
				if d.Topic == nil {
					return -1, nil
				}
				var ids []string
				for _, e := range d.Topic.Posts.Edges {
					ids = append(ids, e.Node.ID)
				}
				return d.Topic.PostCount, ids
			}
			if n, ids := topicPosts("30"); n != 1 || !slices.Equal(ids, []string{ps.PublishPost.ID}) {
				t.Fatalf("topic 30: postCount %d, posts %q", n, ids)
			}
			if n, ids := topicPosts("31"); n != 1 || !slices.Equal(ids, []string{p31.PublishPost.ID}) {
				t.Fatalf("topic 31: postCount %d, posts %q; want only %s", n, ids, p31.PublishPost.ID)
			}
			if n, _ := topicPosts(strconv.Itoa(pairs)); n != -1 {
				t.Fatalf("topic %d (the last pair): postCount %d, want null", pairs, n)
			}

			g.gt.Flush()
			rep, err := fsck.Run(ctx, g.svc, fsck.Options{})
			if err != nil || len(rep.Issues) != 0 {
				t.Fatalf("fsck with the post: %v %+v", err, rep.Issues)
			}

			// Deleting costs what deleting the 30-topic post costs too.
			var ok struct{ DeletePost bool }
			del30 := g.okCalls(a.token, del, map[string]any{"id": p30.PublishPost.ID}, &ok)
			if !ok.DeletePost {
				t.Fatal("delete of the 30-topic post: false")
			}
			delSpam := g.okCalls(a.token, del, map[string]any{"id": ps.PublishPost.ID}, &ok)
			if !ok.DeletePost {
				t.Fatal("delete of the spam post: false")
			}
			if delSpam != del30 {
				t.Fatalf("delete store calls: %v for the %d-pair post, %v for a post with 30 topics", delSpam, pairs, del30)
			}
			if got := prefix("1"); len(got) != 0 {
				t.Fatalf("topics(prefix: \"1\") after the delete = %q", got)
			}
			if got := prefix("3"); !slices.Equal(got, []string{"31=1"}) {
				t.Fatalf("topics(prefix: \"3\") after the delete = %q, want only 31", got)
			}
			g.gt.Flush()
			if rep, err = fsck.Run(ctx, g.svc, fsck.Options{}); err != nil || len(rep.Issues) != 0 {
				t.Fatalf("fsck after the delete: %v %+v", err, rep.Issues)
			}
		})
	}
}
