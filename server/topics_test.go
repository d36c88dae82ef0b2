package server_test

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weibohbase/gateway/dataset"
	"github.com/weibohbase/gateway/demo"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/seed"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/tables"
	"github.com/weibohbase/gateway/weibo/topic/hashtag"
)

// topicIndex is the topics of a data set recomputed from its posts with
// the topic rule: what the gateway must answer.
type topicIndex struct {
	posts map[string][]dataset.Post  // topic -> its posts, newest first
	hours map[int64]map[string]int64 // hour's first ms -> topic -> posts
	names []string                   // every topic, by post count descending, then name
}

func indexTopics(ds *dataset.Dataset) *topicIndex {
	ti := &topicIndex{posts: map[string][]dataset.Post{}, hours: map[int64]map[string]int64{}}
	for _, p := range ds.Posts {
		for _, n := range hashtag.Extract(p.Text) {
			ti.posts[n] = append(ti.posts[n], p)
			h := tables.HourStart(p.Millis)
			if ti.hours[h] == nil {
				ti.hours[h] = map[string]int64{}
			}
			ti.hours[h][n]++
		}
	}
	for n := range ti.posts {
		slices.SortFunc(ti.posts[n], dataset.NewerFirst)
	}
	ti.names = slices.SortedFunc(maps.Keys(ti.posts), func(a, b string) int {
		return cmp.Or(cmp.Compare(len(ti.posts[b]), len(ti.posts[a])), cmp.Compare(a, b))
	})
	return ti
}

// counts sums the topics' posts over the hours [from, to) (ms).
func (ti *topicIndex) counts(from, to int64) map[string]int64 {
	out := map[string]int64{}
	for h := from; h < to; h += tables.HourMillis {
		for n, c := range ti.hours[h] {
			out[n] += c
		}
	}
	return out
}

type topicCountJSON struct {
	Topic struct {
		Name      string `json:"name"`
		PostCount int    `json:"postCount"`
	} `json:"topic"`
	Count         int64   `json:"count"`
	PreviousCount int64   `json:"previousCount"`
	Score         float64 `json:"score"`
}

// wantTop returns the expected topTopics over [since, until) (hours).
func (ti *topicIndex) wantTop(since, until time.Time, first int) []string {
	sum := ti.counts(tables.HourStart(since.UnixMilli()), tables.HourStart(until.UnixMilli()))
	names := slices.SortedFunc(maps.Keys(sum), func(a, b string) int { return cmp.Or(cmp.Compare(sum[b], sum[a]), cmp.Compare(a, b)) })
	out := make([]string, 0, first)
	for _, n := range names[:min(first, len(names))] {
		out = append(out, fmt.Sprintf("%s=%d/%d", n, sum[n], len(ti.posts[n])))
	}
	return out
}

// wantTrending returns the expected trendingTopics at at over window hours.
func (ti *topicIndex) wantTrending(at time.Time, window int64, first int) []string {
	end := tables.HourStart(at.UnixMilli())
	span := window * tables.HourMillis
	cur, prev := ti.counts(end-span, end), ti.counts(end-2*span, end-span)
	type trend struct {
		name  string
		n, p  int64
		score float64
	}
	var ts []trend
	for name, n := range cur {
		p := prev[name]
		if n >= 5 && n > p {
			d := float64(n - p)
			ts = append(ts, trend{name, n, p, d * d / float64(max(p, 1))})
		}
	}
	slices.SortFunc(ts, func(a, b trend) int { return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.name, b.name)) })
	out := make([]string, 0, first)
	for _, t := range ts[:min(first, len(ts))] {
		out = append(out, fmt.Sprintf("%s=%d/%d:%g/%d", t.name, t.n, t.p, t.score, len(ti.posts[t.name])))
	}
	return out
}

func formatTop(got []topicCountJSON) []string {
	out := make([]string, 0, len(got))
	for _, c := range got {
		out = append(out, fmt.Sprintf("%s=%d/%d", c.Topic.Name, c.Count, c.Topic.PostCount))
	}
	return out
}

func formatTrending(got []topicCountJSON) []string {
	out := make([]string, 0, len(got))
	for _, c := range got {
		out = append(out, fmt.Sprintf("%s=%d/%d:%g/%d", c.Topic.Name, c.Count, c.PreviousCount, c.Score, c.Topic.PostCount))
	}
	return out
}

const topicPageQuery = `query($name: String!, $first: Int, $after: String, $last: Int, $before: String) {
  topic(name: $name) { id name postCount posts(first: $first, after: $after, last: $last, before: $before) {
    totalCount edges { cursor node { id } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } } }`

type topicPage struct {
	Topic *struct {
		ID        string `json:"id"`
		Name      string `json:"name"`
		PostCount int    `json:"postCount"`
		Posts     struct {
			TotalCount int `json:"totalCount"`
			Edges      []struct {
				Node struct {
					ID string `json:"id"`
				} `json:"node"`
			} `json:"edges"`
			PageInfo struct {
				HasNextPage     bool    `json:"hasNextPage"`
				HasPreviousPage bool    `json:"hasPreviousPage"`
				StartCursor     *string `json:"startCursor"`
				EndCursor       *string `json:"endCursor"`
			} `json:"pageInfo"`
		} `json:"posts"`
	} `json:"topic"`
}

// topicIDs reads up to limit posts of topic name, pages of size n, forward.
func (g *gw) topicIDs(t *testing.T, name string, n, limit int) ([]string, int) {
	t.Helper()
	var ids []string
	vars := map[string]any{"name": name, "first": n}
	for {
		var d topicPage
		g.ok("", topicPageQuery, vars, &d)
		if d.Topic == nil {
			t.Fatalf("topic %q is null", name)
		}
		for _, e := range d.Topic.Posts.Edges {
			ids = append(ids, e.Node.ID)
		}
		if !d.Topic.Posts.PageInfo.HasNextPage || len(ids) >= limit {
			return ids, d.Topic.PostCount
		}
		vars["after"] = *d.Topic.Posts.PageInfo.EndCursor
	}
}

// checkTopics compares the gateway's topics with a recomputation from the
// data set: topic pages (forward, and backward from the end) and
// postCount of the busiest topics and of topics spread over the ranking,
// topics(prefix:), topTopics per day and over the whole set, and
// trendingTopics (DAY and HOUR) at several times.
func checkTopics(t *testing.T, g *gw, ds *dataset.Dataset) {
	t.Helper()
	ti := indexTopics(ds)
	if len(ti.names) == 0 {
		t.Fatal("no topics in the data set")
	}
	t.Logf("%d topics; busiest %q with %d posts", len(ti.names), ti.names[0], len(ti.posts[ti.names[0]]))
	var picks []string
	for _, i := range []int{0, 1, 2, len(ti.names) / 100, len(ti.names) / 10, len(ti.names) / 2, len(ti.names) - 1} {
		if !slices.Contains(picks, ti.names[i]) {
			picks = append(picks, ti.names[i])
		}
	}
	const limit = 600
	for _, name := range picks {
		want := ti.posts[name]
		ids, count := g.topicIDs(t, name, 100, limit)
		var wantIDs []string
		for _, p := range want[:min(limit, len(want))] {
			wantIDs = append(wantIDs, postID(p))
		}
		if count != len(want) || !equalStrings(ids[:min(len(ids), limit)], wantIDs) {
			t.Fatalf("topic %q: postCount %d, want %d; first posts\n%v\nwant\n%v", name, count, len(want), ids, wantIDs)
		}
		// Backward from the end: the oldest posts, oldest last.
		var d topicPage
		g.ok("", topicPageQuery, map[string]any{"name": name, "last": 50}, &d)
		var tail []string
		for _, e := range d.Topic.Posts.Edges {
			tail = append(tail, e.Node.ID)
		}
		var wantTail []string
		for _, p := range want[max(0, len(want)-50):] {
			wantTail = append(wantTail, postID(p))
		}
		if !equalStrings(tail, wantTail) || d.Topic.Posts.TotalCount != len(want) || d.Topic.Posts.PageInfo.HasPreviousPage != (len(want) > 50) {
			t.Fatalf("topic %q, last 50: %v (totalCount %d)\nwant %v", name, tail, d.Topic.Posts.TotalCount, wantTail)
		}
	}
	// topics(prefix:): the first character of the busiest topics.
	for _, name := range picks[:3] {
		prefix := string([]rune(name)[:1])
		var d struct {
			Topics []struct {
				Name      string `json:"name"`
				PostCount int    `json:"postCount"`
			} `json:"topics"`
		}
		g.ok("", `query($p: String!) { topics(prefix: $p, first: 100) { name postCount } }`, map[string]any{"p": prefix}, &d)
		var got, want []string
		for _, x := range d.Topics {
			got = append(got, fmt.Sprintf("%s=%d", x.Name, x.PostCount))
		}
		for _, n := range ti.names {
			if strings.HasPrefix(n, prefix) && len(want) < 100 {
				want = append(want, fmt.Sprintf("%s=%d", n, len(ti.posts[n])))
			}
		}
		if !equalStrings(got, want) {
			t.Fatalf("topics(prefix: %q) =\n%v\nwant\n%v", prefix, got, want)
		}
	}
	// topTopics: each day, and the whole data set (20 days).
	first, last := ds.Posts[0].CreatedAt(), ds.Posts[len(ds.Posts)-1].CreatedAt()
	day0, _ := dataset.DayStart(first.Format("2006-01-02"))
	end, _ := dataset.DayStart(last.Format("2006-01-02"))
	end = end.AddDate(0, 0, 1)
	windows := [][2]time.Time{{day0, end}}
	for d := day0; d.Before(end); d = d.AddDate(0, 0, 1) {
		windows = append(windows, [2]time.Time{d, d.AddDate(0, 0, 1)})
	}
	windows = append(windows, [2]time.Time{day0.Add(90 * time.Minute), day0.Add(5*time.Hour + 59*time.Minute)}) // rounded down to the hour
	for _, w := range windows {
		var d struct{ TopTopics []topicCountJSON }
		g.ok("", `query($s: Time!, $u: Time!) { topTopics(since: $s, until: $u, first: 100) { topic { name postCount } count } }`,
			map[string]any{"s": w[0].Format(time.RFC3339), "u": w[1].Format(time.RFC3339)}, &d)
		if got, want := formatTop(d.TopTopics), ti.wantTop(w[0], w[1], 100); !equalStrings(got, want) {
			t.Fatalf("topTopics(%s, %s) =\n%v\nwant\n%v", w[0], w[1], got, want)
		}
	}
	// trendingTopics: DAY at every day's end, HOUR at a few hours.
	type at struct {
		t      time.Time
		window string
		hours  int64
	}
	var ats []at
	for d := day0.AddDate(0, 0, 1); !d.After(end); d = d.AddDate(0, 0, 1) {
		ats = append(ats, at{d, "DAY", 24})
	}
	for _, h := range []int{9, 12, 15, 21} {
		ats = append(ats, at{day0.Add(time.Duration(h)*time.Hour + 30*time.Minute), "HOUR", 1})
	}
	for _, a := range ats {
		var d struct{ TrendingTopics []topicCountJSON }
		g.ok("", `query($at: Time!, $w: TrendWindow!) { trendingTopics(at: $at, window: $w, first: 100) { topic { name postCount } count previousCount score } }`,
			map[string]any{"at": a.t.Format(time.RFC3339), "w": a.window}, &d)
		if got, want := formatTrending(d.TrendingTopics), ti.wantTrending(a.t, a.hours, 100); !equalStrings(got, want) {
			t.Fatalf("trendingTopics(%s, %s) =\n%v\nwant\n%v", a.t, a.window, got, want)
		}
	}
}

// TestTopicsDemo checks the topics of the demo subset against the data set
// on both backends, the topic node id, and the bad inputs.
func TestTopicsDemo(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g, ds := seededGateway(t, b.Open(t))
			checkTopics(t, g, ds)
			ti := indexTopics(ds)
			name := ti.names[0]
			var d struct {
				Node *struct {
					ID        string `json:"id"`
					Name      string `json:"name"`
					PostCount int    `json:"postCount"`
				} `json:"node"`
			}
			g.ok("", `query($id: ID!) { node(id: $id) { id ... on Topic { name postCount } } }`, map[string]any{"id": "topic:" + name}, &d)
			if d.Node == nil || d.Node.Name != name || d.Node.ID != "topic:"+name || d.Node.PostCount != len(ti.posts[name]) {
				t.Fatalf("node(topic:%s) = %+v", name, d.Node)
			}
			// A post's topics, their counts read in one batch.
			p := ti.posts[name][0]
			var pd struct {
				Post struct {
					Topics []struct {
						Name      string `json:"name"`
						PostCount int    `json:"postCount"`
					} `json:"topics"`
				} `json:"post"`
			}
			g.ok("", `query($id: ID!) { post(id: $id) { topics { name postCount } } }`, map[string]any{"id": postID(p)}, &pd)
			names := hashtag.Extract(p.Text)
			if len(pd.Post.Topics) != len(names) {
				t.Fatalf("post %s topics %+v, want %q", postID(p), pd.Post.Topics, names)
			}
			for i, x := range pd.Post.Topics {
				if x.Name != names[i] || x.PostCount != len(ti.posts[names[i]]) {
					t.Fatalf("post %s topic %d = %+v, want %q with %d posts", postID(p), i, x, names[i], len(ti.posts[names[i]]))
				}
			}
			var null struct{ Topic *struct{ Name string } }
			g.ok("", `{ topic(name: "no such topic") { name } }`, nil, &null)
			if null.Topic != nil {
				t.Fatalf("an unknown topic = %+v", null.Topic)
			}
			for _, q := range []string{
				`{ topic(name: "") { name } }`,
				`{ topic(name: "` + strings.Repeat("话", 65) + `") { name } }`,
				`{ topics(prefix: "") { name } }`,
				`{ topics(prefix: "a", first: 0) { name } }`,
				`{ topics(prefix: "a", first: 101) { name } }`,
				`{ topTopics(since: "2020-03-02T00:00:00+08:00", until: "2020-03-01T00:00:00+08:00") { count } }`,
				`{ topTopics(since: "2020-03-01T00:00:00+08:00", until: "2020-03-01T00:00:00+08:00") { count } }`,
				`{ topTopics(since: "2020-02-01T00:00:00+08:00", until: "2020-03-03T01:00:00+08:00") { count } }`, // 31 days and an hour
				`{ trendingTopics(at: "2020-03-18T00:00:00+08:00", window: DAY, first: 500) { count } }`,
			} {
				g.fails("", "BAD_USER_INPUT", q, nil)
			}
			g.fails("", "BAD_USER_INPUT", `query($n: String!) { topic(name: $n) { posts(first: 1, last: 1) { totalCount } } }`, map[string]any{"n": name})
		})
	}
}

// TestTopicStoreCallsConstant proves with gateway_store_calls_total that a
// topic page costs the same number of store round trips whatever its
// size: the topic row's Get, one ScanMany of the list's buckets, one
// GetMany of the page's posts. On the same demo import it checks that
// GraphiQL's TrendingDemo lists topics.
func TestTopicStoreCallsConstant(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ds, err := demo.Load()
			if err != nil {
				t.Fatal(err)
			}
			st := b.Open(t)
			if _, err := seed.Import(t.Context(), st, ds, seed.Options{BcryptCost: 4}); err != nil {
				t.Fatal(err)
			}
			g := startGateway(t, st)
			name := indexTopics(ds).names[0]
			const q = `query($name: String!, $first: Int) { topic(name: $name) { postCount posts(first: $first) {
				totalCount edges { cursor node { id content createdAt likeCount author { username } } } pageInfo { endCursor } } } }`
			var costs []float64
			for _, first := range []int{1, 20, 50, 100} {
				var d topicPage
				calls := g.okCalls("", q, map[string]any{"name": name, "first": first}, &d)
				if d.Topic == nil || len(d.Topic.Posts.Edges) != first {
					t.Fatalf("first %d: %+v", first, d.Topic)
				}
				costs = append(costs, calls)
			}
			for _, c := range costs {
				if c != 3 {
					t.Fatalf("store calls per topic page for first = 1, 20, 50, 100: %v; want 3 each", costs)
				}
			}

			// A logged-in viewer with 100 blocks, 100 mutes and 20 filters:
			// the safety row is read in the page's GetMany of its posts, so
			// the cost stays 3. The blocked users post nothing in the topic
			// and no filter matches (pages full without reading on); the
			// muted users post in it, and mutes hide nothing on a topic page.
			viewer := g.register(uniqueName("topicviewer"))
			inTopic := map[uint64]bool{}
			for _, p := range indexTopics(ds).posts[name] {
				inTopic[p.Author] = true
			}
			var blocks, mutes []weibo.UserID
			for _, u := range ds.Users {
				if inTopic[u.ID] && len(mutes) < 100 {
					mutes = append(mutes, weibo.UserID(u.ID))
				} else if !inTopic[u.ID] && len(blocks) < 100 {
					blocks = append(blocks, weibo.UserID(u.ID))
				}
			}
			if len(blocks) != 100 || len(mutes) == 0 {
				t.Fatalf("demo users: %d to block, %d to mute", len(blocks), len(mutes))
			}
			loadSafety(t, g, safetyUID(t, viewer.ID), blocks, mutes, 20)
			for i, first := range []int{1, 20, 50, 100} {
				var anon, d topicPage
				g.ok("", q, map[string]any{"name": name, "first": first}, &anon)
				calls := g.okCalls(viewer.token, q, map[string]any{"name": name, "first": first}, &d)
				if d.Topic == nil || len(d.Topic.Posts.Edges) != first {
					t.Fatalf("viewer, first %d: %+v", first, d.Topic)
				}
				for j := range d.Topic.Posts.Edges {
					if d.Topic.Posts.Edges[j].Node.ID != anon.Topic.Posts.Edges[j].Node.ID {
						t.Fatalf("viewer, first %d: edge %d is %s, anonymous %s", first, j, d.Topic.Posts.Edges[j].Node.ID, anon.Topic.Posts.Edges[j].Node.ID)
					}
				}
				costs[i] = calls
			}
			for _, c := range costs {
				if c != 3 {
					t.Fatalf("store calls per topic page of a viewer with 100 blocks, 100 mutes and 20 filters for first = 1, 20, 50, 100: %v; want 3 each", costs)
				}
			}

			// GraphiQL's opening document's TrendingDemo shows topics on
			// the demo subset (make run).
			var demoTrends struct {
				TrendingTopics []struct{ Count, PreviousCount int }
				TopTopics      []struct{ Count int }
			}
			g.ok("", `{ trendingTopics(at: "2020-03-03T00:00:00+08:00", window: DAY, first: 10) { count previousCount }
			  topTopics(since: "2020-03-02T00:00:00+08:00", until: "2020-03-03T00:00:00+08:00", first: 5) { count } }`, nil, &demoTrends)
			if len(demoTrends.TrendingTopics) == 0 || len(demoTrends.TopTopics) != 5 ||
				demoTrends.TrendingTopics[0].Count <= demoTrends.TrendingTopics[0].PreviousCount {
				t.Fatalf("TrendingDemo on the demo subset: %+v", demoTrends)
			}
		})
	}
}
