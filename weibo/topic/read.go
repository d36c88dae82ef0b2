package topic

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/paging"
	"github.com/weibohbase/gateway/weibo/safety"
	"github.com/weibohbase/gateway/weibo/tables"
	"github.com/weibohbase/gateway/weibo/topic/hashtag"
)

// MaxTopicHours is the longest window of TopTopics, in hours (31 days).
const MaxTopicHours = 31 * 24

// topicRounds bounds the rounds (one ScanMany and one GetMany each) of one
// page of a topic's posts: a page whose entries keep turning out stale, or
// out of the viewer's sight (blocked either way, hidden by a TOPIC
// filter), stops after this many (a shorter page with a cursor; the next
// page goes on after it). Each round reads at most the page and one more
// row of every bucket and the posts of the entries it still needs, so a
// page costs at most topicRounds ScanManys and GetManys whatever it drops.
const topicRounds = 9

// TopicCount is a topic and its number of posts in a window (TopTopics).
type TopicCount struct {
	// Topic is the topic, its PostCount read.
	Topic *weibo.Topic
	// Count is its posts in the window.
	Count int64
}

// TopicTrend is a trending topic (TrendingTopics).
type TopicTrend struct {
	// Topic is the topic, its PostCount read.
	Topic *weibo.Topic
	// Count is its posts in the window ending at the time asked for.
	Count int64
	// PreviousCount is its posts in the window before.
	PreviousCount int64
	// Score is (Count - PreviousCount)² / max(PreviousCount, 1).
	Score float64
}

// TrendWindow is the window of TrendingTopics.
type TrendWindow int

// Windows of TrendingTopics.
const (
	// TrendHour compares the last hour with the hour before.
	TrendHour TrendWindow = 1
	// TrendDay compares the last 24 hours with the 24 before.
	TrendDay TrendWindow = 24
)

// MarshalGQL writes the window's GraphQL enum value, HOUR or DAY.
func (w TrendWindow) MarshalGQL(out io.Writer) {
	if w == TrendDay {
		io.WriteString(out, `"DAY"`)
		return
	}
	io.WriteString(out, `"HOUR"`)
}

// UnmarshalGQL reads the GraphQL enum value HOUR or DAY.
func (w *TrendWindow) UnmarshalGQL(v any) error {
	switch v {
	case "HOUR":
		*w = TrendHour
	case "DAY":
		*w = TrendDay
	default:
		return fmt.Errorf("%v is not a valid TrendWindow", v)
	}
	return nil
}

// MinTrendCount is the fewest posts in its window a trending topic has.
const MinTrendCount = 5

// checkTopicArg validates a topic name or prefix argument: 1 to
// hashtag.MaxLen code points of valid UTF-8. Errors: BAD_USER_INPUT on field.
func checkTopicArg(field, name string) error {
	if name == "" || !utf8.ValidString(name) || utf8.RuneCountInString(name) > hashtag.MaxLen {
		return weibo.BadInput(field, "%s must be 1 to %d characters of UTF-8", field, hashtag.MaxLen)
	}
	return nil
}

// GetTopics reads topics by name with one GetMany of their rows; one entry
// per name, nil where no stored post has the topic (or the name cannot be
// one: no read for it).
func (s *Service) GetTopics(ctx context.Context, names []string) (_ []*weibo.Topic, err error) {
	defer weibo.Wrap(&err, "get topics")
	out := make([]*weibo.Topic, len(names))
	var gets []*hbase.Get
	var at []int
	for i, n := range names {
		if hashtag.Valid(n) {
			gets = append(gets, &hbase.Get{Table: tables.Topics, Row: tables.TopicKey(n), Families: []string{tables.FamTopicCount}})
			at = append(at, i)
		}
	}
	if len(gets) == 0 {
		return out, nil
	}
	rs, err := s.st.GetMany(ctx, gets)
	if err != nil {
		return nil, err
	}
	for j, r := range rs {
		if n := tables.TopicPostCount(r); n > 0 {
			out[at[j]] = &weibo.Topic{Name: names[at[j]], PostCount: n, Counted: true}
		}
	}
	return out, nil
}

// Topic returns topic name, nil when no stored post has it: one Get.
// Errors: BAD_USER_INPUT on "name" for an empty or over-long name.
func (s *Service) Topic(ctx context.Context, name string) (*weibo.Topic, error) {
	if err := checkTopicArg("name", name); err != nil {
		return nil, err
	}
	ts, err := s.GetTopics(ctx, []string{name})
	if err != nil {
		return nil, err
	}
	return ts[0], nil
}

// SearchTopics returns at most first (1 to 100, default 20) of the topics
// whose names start with prefix (byte for byte), most posts first, ties by
// name: one prefix scan of the topic rows, ranked in the gateway (its cost
// grows with the number of topics that start with prefix). Errors:
// BAD_USER_INPUT on "prefix" (empty or over 64 characters) or "first".
func (s *Service) SearchTopics(ctx context.Context, prefix string, first *int) (_ []*weibo.Topic, err error) {
	defer weibo.Wrap(&err, "search topics")
	n, err := paging.Size(first)
	if err != nil {
		return nil, err
	}
	if err := checkTopicArg("prefix", prefix); err != nil {
		return nil, err
	}
	var out []*weibo.Topic
	err = s.st.Scan(ctx, &hbase.Scan{Table: tables.Topics, Prefix: tables.TopicNamePrefix(prefix), Families: []string{tables.FamTopicCount}},
		func(r *hbase.Result) error {
			if name, ok := tables.DecodeTopicKey(r.Row); ok {
				if c := tables.TopicPostCount(r); c > 0 {
					out = append(out, &weibo.Topic{Name: name, PostCount: c, Counted: true})
				}
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b *weibo.Topic) int {
		return cmp.Or(cmp.Compare(b.PostCount, a.PostCount), cmp.Compare(a.Name, b.Name))
	})
	return out[:min(n, len(out))], nil
}

// hourCounts sums every topic's counts over the hour rows of the hours
// [from, to) (their first ms), read with one GetMany.
func (s *Service) hourCounts(ctx context.Context, hours []int64) ([]map[string]int64, error) {
	gets := make([]*hbase.Get, len(hours))
	for i, h := range hours {
		gets[i] = &hbase.Get{Table: tables.Topics, Row: tables.HourKey(h), Families: []string{tables.FamTopicCount}}
	}
	rs, err := s.st.GetMany(ctx, gets)
	if err != nil {
		return nil, err
	}
	out := make([]map[string]int64, len(rs))
	for i, r := range rs {
		m := map[string]int64{}
		tables.HourCounts(r, func(name string, n int64) { m[name] = n })
		out[i] = m
	}
	return out, nil
}

// hoursOf returns the first ms of each hour of [from, to) (hour starts).
func hoursOf(from, to int64) []int64 {
	var out []int64
	for h := from; h < to; h += tables.HourMillis {
		out = append(out, h)
	}
	return out
}

// TopTopics returns at most first (1 to 100, default 20) topics ranked by
// their number of posts created in [since, until), both rounded down to
// the hour, most first, ties by name; topics without a post there are not
// listed. It reads one hour row per hour of the window (one GetMany of at
// most MaxTopicHours rows), summed in the gateway, and the listed topics'
// rows (one GetMany). Errors: BAD_USER_INPUT on "until" when since is not
// before until, on "since" for a window over 31 days, on "first".
func (s *Service) TopTopics(ctx context.Context, since, until time.Time, first *int) (_ []*TopicCount, err error) {
	defer weibo.Wrap(&err, "top topics")
	n, err := paging.Size(first)
	if err != nil {
		return nil, err
	}
	if !since.Before(until) {
		return nil, weibo.BadInput("until", "until must be after since")
	}
	from, to := tables.HourStart(since.UnixMilli()), tables.HourStart(until.UnixMilli())
	if (to-from)/tables.HourMillis > MaxTopicHours {
		return nil, weibo.BadInput("since", "the window must be at most %d days", MaxTopicHours/24)
	}
	rows, err := s.hourCounts(ctx, hoursOf(from, to))
	if err != nil {
		return nil, err
	}
	sum := map[string]int64{}
	for _, m := range rows {
		for name, c := range m {
			sum[name] += c
		}
	}
	out := make([]*TopicCount, 0, len(sum))
	for name, c := range sum {
		out = append(out, &TopicCount{Topic: &weibo.Topic{Name: name}, Count: c})
	}
	slices.SortFunc(out, func(a, b *TopicCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Topic.Name, b.Topic.Name))
	})
	out = out[:min(n, len(out))]
	ts := make([]*weibo.Topic, len(out))
	for i := range out {
		ts[i] = out[i].Topic
	}
	return out, s.readCounts(ctx, ts)
}

// TrendingTopics returns at most first (1 to 100, default 20) trending
// topics at time at (rounded down to the hour): with n a topic's posts in
// [at - window, at) and p its posts in the window before, its score is
// (n - p)² / max(p, 1) when n ≥ MinTrendCount and n > p; topics that do
// not score are not listed. Ranked by score, then name. It reads the hour
// rows of both windows with one GetMany (2 or 48 rows) and the listed
// topics' rows with one more. Errors: BAD_USER_INPUT on "window" (neither
// TrendHour nor TrendDay) or "first".
func (s *Service) TrendingTopics(ctx context.Context, at time.Time, window TrendWindow, first *int) (_ []*TopicTrend, err error) {
	defer weibo.Wrap(&err, "trending topics")
	n, err := paging.Size(first)
	if err != nil {
		return nil, err
	}
	if window != TrendHour && window != TrendDay {
		return nil, weibo.BadInput("window", "unknown window")
	}
	end := tables.HourStart(at.UnixMilli())
	span := int64(window) * tables.HourMillis
	rows, err := s.hourCounts(ctx, hoursOf(end-2*span, end))
	if err != nil {
		return nil, err
	}
	half := len(rows) / 2
	prev, cur := map[string]int64{}, map[string]int64{}
	for i, m := range rows {
		dst := cur
		if i < half {
			dst = prev
		}
		for name, c := range m {
			dst[name] += c
		}
	}
	var out []*TopicTrend
	for name, c := range cur {
		p := prev[name]
		if c < MinTrendCount || c <= p {
			continue
		}
		d := float64(c - p)
		out = append(out, &TopicTrend{Topic: &weibo.Topic{Name: name}, Count: c, PreviousCount: p, Score: d * d / float64(max(p, 1))})
	}
	slices.SortFunc(out, func(a, b *TopicTrend) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.Topic.Name, b.Topic.Name))
	})
	out = out[:min(n, len(out))]
	ts := make([]*weibo.Topic, len(out))
	for i := range out {
		ts[i] = out[i].Topic
	}
	return out, s.readCounts(ctx, ts)
}

// readCounts fills in the PostCount of ts with one GetMany of their rows
// (none for no topic).
func (s *Service) readCounts(ctx context.Context, ts []*weibo.Topic) error {
	if len(ts) == 0 {
		return nil
	}
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.Name
	}
	got, err := s.GetTopics(ctx, names)
	if err != nil {
		return err
	}
	for i, t := range got {
		ts[i].Counted = true
		if t != nil {
			ts[i].PostCount = t.PostCount
		}
	}
	return nil
}

// TopicPosts pages through the posts of topic name, newest first (ties in
// one millisecond by author id), both ways like a user's posts. The list
// is spread over tables.TopicBuckets buckets: a page is one ScanMany of
// every bucket from the cursor (at most a page and one more row each),
// merged in the gateway, then one GetMany of the merged page's posts,
// which keeps only the posts that are stored and have the topic (an entry
// of a write in flight, or the trace of one that died, is skipped; then a
// further round reads on).
//
// For a logged-in viewer (not 0) the first round's GetMany reads the
// viewer's safety row too (safety.RowGet: no store call of its own), and
// the page leaves out, as it does a stale entry, the posts whose author
// or reposted root's author is blocked either way (safety.Set.BlocksPost)
// and those a TOPIC filter hides; a post a TOPIC filter warns of is
// returned as a copy with Filtered set. Pages stay full: a dropped entry
// makes the page read on, within topicRounds rounds. Mutes do not hide
// posts here. Errors: BAD_USER_INPUT on "name" and on the paging
// arguments.
func (s *Service) TopicPosts(ctx context.Context, viewer weibo.UserID, name string, p weibo.Page) (_ *feed.PostConnection, err error) {
	defer weibo.Wrap(&err, "posts of a topic")
	if err := checkTopicArg("name", name); err != nil {
		return nil, err
	}
	q := paging.Query{Kind: paging.CursorTopicPosts, RowLen: 16}
	w, err := q.Window(p)
	if err != nil {
		return nil, err
	}
	ts := &topicScan{s: s, name: name, prefixes: tables.TopicPostPrefixes(name), viewer: viewer}
	from, to := w.After, w.Before
	if w.Backward {
		from, to = w.Before, w.After
	}
	posts, keys, frontier, near, err := ts.read(ctx, from, to, w.Backward, w.N, topicRounds)
	if err != nil {
		return nil, err
	}
	beyond := false
	if from != nil {
		if beyond = near; !beyond {
			// The cursor's own post is gone: look the other way.
			back, _, _, _, err := ts.read(ctx, from, nil, !w.Backward, 0, 3)
			if err != nil {
				return nil, err
			}
			beyond = len(back) > 0
		}
	}
	more := len(posts) > w.N
	if more {
		posts, keys = posts[:w.N], keys[:w.N]
	}
	if w.Backward {
		slices.Reverse(posts)
		slices.Reverse(keys)
	}
	edges, info := paging.Build(posts, keys, w.N, func(dst, key []byte) []byte {
		return paging.AppendCursor(dst, paging.CursorTopicPosts, key)
	}, feed.NewPostEdge)
	if frontier != nil {
		more = true
		c := paging.EncodeCursor(paging.CursorTopicPosts, frontier)
		if w.Backward {
			info.StartCursor = &c
		} else {
			info.EndCursor = &c
		}
	}
	info.HasNextPage, info.HasPreviousPage = more, beyond
	if w.Backward {
		info.HasNextPage, info.HasPreviousPage = beyond, more
	}
	return &feed.PostConnection{Edges: edges, PageInfo: info}, nil
}

// topicScan reads a topic's list, merging its buckets, as viewer sees it.
type topicScan struct {
	s        *Service
	name     string
	prefixes [][]byte
	viewer   weibo.UserID // 0: anonymous
	set      *safety.Set  // the viewer's, read with the first GetMany; nil: none (yet)
}

// getPosts reads the posts ids with one GetMany, and with it, the first
// time, the viewer's safety row (ts.set).
func (ts *topicScan) getPosts(ctx context.Context, ids []weibo.PostID) ([]*feed.Post, error) {
	gets := make([]*hbase.Get, len(ids), len(ids)+1)
	for i, id := range ids {
		gets[i] = &hbase.Get{Table: tables.Content, Row: tables.ContentKey(id)}
	}
	readSet := ts.viewer != 0 && ts.set == nil
	if readSet {
		gets = append(gets, safety.RowGet(ts.viewer))
	}
	rs, err := ts.s.st.GetMany(ctx, gets)
	if err != nil {
		return nil, err
	}
	if readSet {
		ts.set = safety.FromRow(ts.viewer, rs[len(ids)], ts.s.w.NowMillis())
	}
	out := make([]*feed.Post, len(ids))
	for i, id := range ids {
		out[i] = feed.PostFromRow(id, rs[i])
	}
	return out, nil
}

// view returns p as the page shows it to the viewer: nil when it is gone,
// does not have the topic (a stale entry), is by a suspended author (or
// reposts one's post), is blocked either way (its author or its root's)
// or hidden by a TOPIC filter; a copy naming the
// filters that warn of it; else p itself.
func (ts *topicScan) view(p *feed.Post) *feed.Post {
	if p == nil || !slices.Contains(hashtag.Extract(p.Content), ts.name) {
		return nil
	}
	if now := ts.s.w.NowMillis(); ts.s.susp.Suspended(p.ID.Author, now) || p.RepostOfID != nil && ts.s.susp.Suspended(p.RepostOfID.Author, now) {
		return nil
	}
	if ts.set == nil {
		return p
	}
	if ts.set.BlocksPost(p.ID, p.RepostOfID) {
		return nil
	}
	hide, warn := ts.set.Match(p.Content, safety.ContextTopic)
	if hide {
		return nil
	}
	if warn != nil {
		return p.WithFiltered(warn)
	}
	return p
}

// read returns up to n+1 stored posts of the topic with their suffixes,
// in list order (newest first) strictly after from — or, backward, in
// reverse list order strictly before from —, strictly before to (after
// to, backward); nil bounds are the list's ends. Each round is one
// ScanMany of every bucket (n+1 rows each, at most) and one GetMany of the
// next n+1 merged entries' posts — with from's own post in the first
// (near: whether it is stored and has the topic, an edge at the cursor).
// A round reads only entries no bucket could still precede: up to the
// nearest last row of the buckets that filled their limit. After rounds
// rounds without n+1 posts and the range not exhausted, frontier is the
// suffix of the last entry read.
func (ts *topicScan) read(ctx context.Context, from, to []byte, backward bool, n, rounds int) (posts []*feed.Post, keys [][]byte, frontier []byte, near bool, err error) {
	before := func(a, b []byte) bool { // a comes first in the scan's order
		if backward {
			return bytes.Compare(a, b) > 0
		}
		return bytes.Compare(a, b) < 0
	}
	checkNear := from != nil
	for round := 1; ; round++ {
		want := n + 1 - len(posts)
		scans := make([]*hbase.Scan, len(ts.prefixes))
		for i, pre := range ts.prefixes {
			sc := &hbase.Scan{Table: tables.TopicPosts, Prefix: pre, Limit: want, Reversed: backward}
			if backward {
				if from != nil {
					sc.Stop = join(pre, from)
				}
				if to != nil {
					sc.Start = append(join(pre, to), 0)
				}
			} else {
				if from != nil {
					sc.Start = append(join(pre, from), 0)
				}
				if to != nil {
					sc.Stop = join(pre, to)
				}
			}
			scans[i] = sc
		}
		rows, err := hbase.ScanMany(ctx, ts.s.st, scans)
		if err != nil {
			return nil, nil, nil, false, err
		}
		var bound []byte // the nearest last row of a bucket that filled its limit
		var merged [][]byte
		for _, rs := range rows {
			for _, r := range rs {
				if len(r.Row) == tables.TopicPostKeyLen {
					merged = append(merged, r.Row[tables.TopicPostPrefixLen:])
				}
			}
			if len(rs) == want {
				last := rs[len(rs)-1].Row[tables.TopicPostPrefixLen:]
				if bound == nil || before(last, bound) {
					bound = last
				}
			}
		}
		slices.SortFunc(merged, func(a, b []byte) int {
			if backward {
				return bytes.Compare(b, a)
			}
			return bytes.Compare(a, b)
		})
		if bound != nil {
			// Entries past the bound may have unread entries of the bound's
			// bucket before them.
			i := slices.IndexFunc(merged, func(s []byte) bool { return before(bound, s) })
			if i >= 0 {
				merged = merged[:i]
			}
		}
		exhausted := bound == nil && len(merged) <= want
		chunk := merged[:min(want, len(merged))]
		ids := make([]weibo.PostID, 0, len(chunk)+1)
		for _, sfx := range chunk {
			id, _ := tables.DecodeTopicPostSuffix(sfx)
			ids = append(ids, id)
		}
		if checkNear {
			id, _ := tables.DecodeTopicPostSuffix(from)
			ids = append(ids, id)
		}
		got, err := ts.getPosts(ctx, ids)
		if err != nil {
			return nil, nil, nil, false, err
		}
		if checkNear {
			near = ts.view(got[len(got)-1]) != nil
			got, checkNear = got[:len(got)-1], false
		}
		for i, p := range got {
			if p = ts.view(p); p != nil {
				posts = append(posts, p)
				keys = append(keys, chunk[i])
			}
		}
		if len(posts) > n || exhausted || len(chunk) == 0 {
			return posts, keys, nil, near, nil
		}
		from = chunk[len(chunk)-1]
		if round == rounds {
			return posts, keys, bytes.Clone(from), near, nil
		}
	}
}

// join returns a | b in a new slice.
func join(a, b []byte) []byte { return append(append(make([]byte, 0, len(a)+len(b)+1), a...), b...) }
