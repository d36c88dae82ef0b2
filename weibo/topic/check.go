package topic

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/check"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/tables"
	"github.com/weibohbase/gateway/weibo/topic/hashtag"
)

// The topics' part of `gateway fsck` (package check):
//
//	pair                      authority                        dependent
//	topic                     the post's content row (the      the post's entry in the topic's list,
//	                          topics of its text)              the topic's postCount and its count in
//	                                                           the hour row of the post's hour
//
// The content rows are read by fsck's one scan (Run.Content); the list
// entries with one scan of weibo:topicposts, the counters with one of
// weibo:topics. An entry whose post is gone or lacks the topic
// (IssueListStale) is deleted — settled (RepairTopics) when its name is
// known —, a post missing from a topic's list (IssueListMissing) is
// settled, and a postCount or hour count that differs from the posts
// (IssuePostCount, IssueHourCount) is recounted; a dead topic write's
// marker is repaired with the other markers.

// Kinds of check.Issue of the topics.
const (
	IssueListStale   = "topic-list-stale"   // an entry whose post is gone or does not have the topic: deleted
	IssueListMissing = "topic-list-missing" // a post missing from the list of one of its topics: written
	IssuePostCount   = "topic-post-count"   // a topic's postCount that differs from its posts: recounted
	IssueHourCount   = "topic-hour-count"   // a topic's count in an hour row that differs from the posts of that hour: recounted
)

type topicEntry struct {
	tid  uint64
	post weibo.PostID
}

type hourTopic struct {
	hour int64
	name string
}

// checkRun is one fsck run of the topics' check.
type checkRun struct {
	s       *Service
	p       *check.Pass
	names   map[uint64]string    // TopicID -> name, of every topic a stored post has
	entries map[topicEntry]int64 // (tid, post) a list must hold -> the content row's newest cell time
	counts  map[string]int64     // name -> stored posts with it
	hours   map[hourTopic]int64  // (hour, name) -> stored posts of the hour with it
}

// fsckCheck is the topics' check, registered by New.
func (s *Service) fsckCheck() check.Check {
	return check.Check{Name: Relation, Start: func(p *check.Pass) check.Run {
		c := &checkRun{s: s, p: p, names: map[uint64]string{}, entries: map[topicEntry]int64{},
			counts: map[string]int64{}, hours: map[hourTopic]int64{}}
		return check.Run{Content: c.content, Check: c.check}
	}}
}

// content keeps the topics of a stored post's text and what they make the
// lists and counters hold.
func (c *checkRun) content(id weibo.PostID, r *hbase.Result) {
	names := hashtag.Extract(string(r.Value(tables.FamPost, tables.ColText)))
	if len(names) == 0 {
		return
	}
	ts := check.NewestTS(r)
	hour := tables.HourStart(id.Millis)
	for _, n := range names {
		tid := tables.TopicID(n)
		c.names[tid] = n
		c.entries[topicEntry{tid, id}] = ts
		c.counts[n]++
		c.hours[hourTopic{hour, n}]++
	}
}

// check compares the lists of weibo:topicposts with the posts' topics, and
// the counters of weibo:topics with the posts.
func (c *checkRun) check(ctx context.Context) error {
	listed := map[topicEntry]bool{}
	type stale struct {
		key  []byte
		e    topicEntry
		ts   int64
		name string // "" when no stored post has a topic of that id
	}
	var stales []stale
	err := c.p.Scan(ctx, &hbase.Scan{Table: tables.TopicPosts}, func(r *hbase.Result) {
		tid, post, ok := tables.DecodeTopicPostKey(r.Row)
		if !ok {
			return
		}
		e := topicEntry{tid, post}
		if _, ok := c.entries[e]; ok {
			listed[e] = true
			return
		}
		stales = append(stales, stale{bytes.Clone(r.Row), e, check.NewestTS(r), c.names[tid]})
	})
	if err != nil {
		return err
	}
	for _, s := range stales {
		err := c.p.Issue(IssueListStale, s.ts, func() (bool, error) {
			if s.name != "" {
				return true, c.s.RepairTopics(ctx, s.e.post, []string{s.name})
			}
			// No stored post has a topic of this id, so no write in
			// flight can want the entry but the post's own, which the
			// grace spares.
			return true, c.s.st.Delete(ctx, &hbase.Delete{Table: tables.TopicPosts, Row: s.key})
		}, "a topic list (id %016x%s) lists post %s, which is gone or does not have the topic", s.e.tid, quoted(s.name), s.e.post)
		if err != nil {
			return err
		}
	}
	for _, e := range slices.SortedFunc(maps.Keys(c.entries), func(a, b topicEntry) int {
		return cmp.Or(a.post.Compare(b.post), cmp.Compare(a.tid, b.tid))
	}) {
		if listed[e] {
			continue
		}
		name := c.names[e.tid]
		err := c.p.Issue(IssueListMissing, c.entries[e], func() (bool, error) {
			return true, c.s.RepairTopics(ctx, e.post, []string{name})
		}, "post %s is missing from the list of its topic %q", e.post, name)
		if err != nil {
			return err
		}
	}
	return c.checkCounters(ctx)
}

// checkCounters compares every topic row's postCount and every hour row's
// counts with the stored posts.
func (c *checkRun) checkCounters(ctx context.Context) error {
	rows, topicTS, hourTS := map[string]int64{}, map[string]int64{}, map[hourTopic]int64{}
	hourCells := map[hourTopic]int64{}
	err := c.p.Scan(ctx, &hbase.Scan{Table: tables.Topics}, func(r *hbase.Result) {
		if name, ok := tables.DecodeTopicKey(r.Row); ok {
			rows[name] = tables.TopicPostCount(r)
			topicTS[name] = check.NewestTS(r)
			return
		}
		hour, ok := tables.DecodeHourKey(r.Row)
		if !ok {
			return
		}
		for _, cell := range r.Cells {
			k := hourTopic{hour, cell.Qualifier}
			hourTS[k] = max(hourTS[k], cell.Timestamp)
			if cell.Family == tables.FamTopicCount {
				hourCells[k] = int64(tables.DecodeU64(cell.Value))
			}
		}
	})
	if err != nil {
		return err
	}
	names := map[string]bool{}
	for n := range rows {
		names[n] = true
	}
	for n := range c.counts {
		names[n] = true
	}
	for _, n := range slices.Sorted(maps.Keys(names)) {
		has, want := rows[n], c.counts[n]
		if has == want {
			continue
		}
		fix := c.s.w.RecountOne(ctx, counted.Counter{Kind: TopicPostCount, Name: n})
		if err := c.p.Issue(IssuePostCount, topicTS[n], fix, "topic %q has postCount %d, %d posts have it", n, has, want); err != nil {
			return err
		}
	}
	keys := map[hourTopic]bool{}
	for k := range hourCells {
		keys[k] = true
	}
	for k := range c.hours {
		keys[k] = true
	}
	for _, k := range slices.SortedFunc(maps.Keys(keys), func(a, b hourTopic) int {
		return cmp.Or(cmp.Compare(a.hour, b.hour), cmp.Compare(a.name, b.name))
	}) {
		has, want := hourCells[k], c.hours[k]
		if has == want {
			continue
		}
		fix := c.s.w.RecountOne(ctx, counted.Counter{Kind: TopicHourCount, Name: k.name, Sub: uint64(k.hour)})
		err := c.p.Issue(IssueHourCount, hourTS[k], fix,
			"topic %q has %d posts counted in the hour of %d ms, %d posts of that hour have it", k.name, has, k.hour, want)
		if err != nil {
			return err
		}
	}
	return nil
}

// quoted returns ", name" (quoted) for a known name, "" otherwise.
func quoted(name string) string {
	if name == "" {
		return ""
	}
	return fmt.Sprintf(", %q", name)
}
