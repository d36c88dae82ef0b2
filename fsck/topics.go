package fsck

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/tables"
	"github.com/weibohbase/gateway/weibo/topic"
	"github.com/weibohbase/gateway/weibo/topic/hashtag"
)

// Topics are checked in AreaSocial:
//
//	pair                      authority                        dependent
//	topic                     the post's content row (the      the post's entry in the topic's list,
//	                          topics of its text)              the topic's postCount and its count in
//	                                                           the hour row of the post's hour
//
// The content rows are read once, by loadSocial's scan (noteTopics); the
// list entries with one scan of weibo:topicposts, the counters with one of
// weibo:topics. An entry whose post is gone or lacks the topic
// (TopicListStale) is deleted — settled through the domain when its name
// is known (RepairTopics) —, a post missing from a topic's list
// (TopicListMissing) is settled, and a postCount or hour count that
// differs from the posts (TopicPostCount, TopicHourCount) is recounted
// (RecountCounters); a dead topic write's marker is repaired with the
// other markers (WriteUnfinished).

// Kinds of Issue of the topics.
const (
	TopicListStale   = "topic-list-stale"   // an entry whose post is gone or does not have the topic: deleted
	TopicListMissing = "topic-list-missing" // a post missing from the list of one of its topics: written
	TopicPostCount   = "topic-post-count"   // a topic's postCount that differs from its posts: recounted
	TopicHourCount   = "topic-hour-count"   // a topic's count in an hour row that differs from the posts of that hour: recounted
)

// topicsLoaded is what noteTopics keeps of the content rows.
type topicsLoaded struct {
	names   map[uint64]string    // TopicID -> name, of every topic a stored post has
	entries map[topicEntry]int64 // (tid, post) a list must hold -> the content row's newest cell time
	counts  map[string]int64     // name -> stored posts with it
	hours   map[hourTopic]int64  // (hour, name) -> stored posts of the hour with it
	hourTS  map[hourTopic]int64  // (hour, name) -> newest cell time of its counter and sequence, as read
	topicTS map[string]int64     // name -> newest cell time of its topic row
	rows    map[string]int64     // name -> postCount as read
}

type topicEntry struct {
	tid  uint64
	post weibo.PostID
}

type hourTopic struct {
	hour int64
	name string
}

// noteTopics keeps what the topic checks need of stored post id's content
// row r, read by loadSocial's scan.
func (so *social) noteTopics(id weibo.PostID, r *hbase.Result) {
	tl := &so.topics
	if tl.names == nil {
		tl.names, tl.entries, tl.counts, tl.hours = map[uint64]string{}, map[topicEntry]int64{}, map[string]int64{}, map[hourTopic]int64{}
	}
	names := hashtag.Extract(string(r.Value(tables.FamPost, tables.ColText)))
	if len(names) == 0 {
		return
	}
	ts := newestTS(r)
	hour := tables.HourStart(id.Millis)
	for _, n := range names {
		tid := tables.TopicID(n)
		tl.names[tid] = n
		tl.entries[topicEntry{tid, id}] = ts
		tl.counts[n]++
		tl.hours[hourTopic{hour, n}]++
	}
}

// checkTopics compares the lists of weibo:topicposts with the posts'
// topics, and the counters of weibo:topics with the posts.
func (f *fsck) checkTopics(ctx context.Context) error {
	tl := &f.so.topics
	if tl.names == nil {
		f.so.noteTopics(weibo.PostID{}, &hbase.Result{}) // nothing stored: empty maps
	}
	listed := map[topicEntry]bool{}
	type stale struct {
		key  []byte
		e    topicEntry
		ts   int64
		name string // "" when no stored post has a topic of that id
	}
	var stales []stale
	err := f.scan(ctx, &hbase.Scan{Table: tables.TopicPosts}, func(r *hbase.Result) {
		tid, post, ok := tables.DecodeTopicPostKey(r.Row)
		if !ok {
			return
		}
		e := topicEntry{tid, post}
		if _, ok := tl.entries[e]; ok {
			listed[e] = true
			return
		}
		stales = append(stales, stale{bytes.Clone(r.Row), e, newestTS(r), tl.names[tid]})
	})
	if err != nil {
		return err
	}
	for _, s := range stales {
		err := f.issue(ctx, TopicListStale, s.ts, func() (bool, error) {
			if s.name != "" {
				return true, f.s.Topics.RepairTopics(ctx, s.e.post, []string{s.name})
			}
			// No stored post has a topic of this id, so no write in
			// flight can want the entry but the post's own, which the
			// grace spares.
			return true, f.st.Delete(ctx, &hbase.Delete{Table: tables.TopicPosts, Row: s.key})
		}, "a topic list (id %016x%s) lists post %s, which is gone or does not have the topic", s.e.tid, quoted(s.name), s.e.post)
		if err != nil {
			return err
		}
	}
	for _, e := range slices.SortedFunc(maps.Keys(tl.entries), func(a, b topicEntry) int {
		return cmp.Or(comparePosts(a.post, b.post), cmp.Compare(a.tid, b.tid))
	}) {
		if listed[e] {
			continue
		}
		name := tl.names[e.tid]
		err := f.issue(ctx, TopicListMissing, tl.entries[e], func() (bool, error) {
			return true, f.s.Topics.RepairTopics(ctx, e.post, []string{name})
		}, "post %s is missing from the list of its topic %q", e.post, name)
		if err != nil {
			return err
		}
	}
	return f.checkTopicCounters(ctx)
}

// checkTopicCounters compares every topic row's postCount and every hour
// row's counts with the stored posts.
func (f *fsck) checkTopicCounters(ctx context.Context) error {
	tl := &f.so.topics
	tl.rows, tl.topicTS, tl.hourTS = map[string]int64{}, map[string]int64{}, map[hourTopic]int64{}
	hourCells := map[hourTopic]int64{}
	err := f.scan(ctx, &hbase.Scan{Table: tables.Topics}, func(r *hbase.Result) {
		if name, ok := tables.DecodeTopicKey(r.Row); ok {
			tl.rows[name] = tables.TopicPostCount(r)
			tl.topicTS[name] = newestTS(r)
			return
		}
		hour, ok := tables.DecodeHourKey(r.Row)
		if !ok {
			return
		}
		for _, c := range r.Cells {
			k := hourTopic{hour, c.Qualifier}
			tl.hourTS[k] = max(tl.hourTS[k], c.Timestamp)
			if c.Family == tables.FamTopicCount {
				hourCells[k] = int64(tables.DecodeU64(c.Value))
			}
		}
	})
	if err != nil {
		return err
	}
	names := map[string]bool{}
	for n := range tl.rows {
		names[n] = true
	}
	for n := range tl.counts {
		names[n] = true
	}
	for _, n := range slices.Sorted(maps.Keys(names)) {
		has, want := tl.rows[n], tl.counts[n]
		if has == want {
			continue
		}
		c := counted.Counter{Kind: topic.TopicPostCount, Name: n}
		err := f.issue(ctx, TopicPostCount, tl.topicTS[n], f.recount(ctx, c),
			"topic %q has postCount %d, %d posts have it", n, has, want)
		if err != nil {
			return err
		}
	}
	keys := map[hourTopic]bool{}
	for k := range hourCells {
		keys[k] = true
	}
	for k := range tl.hours {
		keys[k] = true
	}
	for _, k := range slices.SortedFunc(maps.Keys(keys), func(a, b hourTopic) int {
		return cmp.Or(cmp.Compare(a.hour, b.hour), cmp.Compare(a.name, b.name))
	}) {
		has, want := hourCells[k], tl.hours[k]
		if has == want {
			continue
		}
		c := counted.Counter{Kind: topic.TopicHourCount, Name: k.name, Sub: uint64(k.hour)}
		err := f.issue(ctx, TopicHourCount, tl.hourTS[k], f.recount(ctx, c),
			"topic %q has %d posts counted in the hour of %d ms, %d posts of that hour have it", k.name, has, k.hour, want)
		if err != nil {
			return err
		}
	}
	return nil
}

// recount returns the fix that recounts c.
func (f *fsck) recount(ctx context.Context, c counted.Counter) func() (bool, error) {
	return func() (bool, error) {
		res, err := f.s.Writes.RecountCounters(ctx, []counted.Counter{c})
		return err == nil && res[0].Done, err
	}
}

// quoted returns " (name)" for a known name, "" otherwise.
func quoted(name string) string {
	if name == "" {
		return ""
	}
	return fmt.Sprintf(", %q", name)
}
