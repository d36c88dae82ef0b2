package seed

import (
	"context"
	"fmt"

	"github.com/weibohbase/gateway/dataset"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/tables"
	"github.com/weibohbase/gateway/weibo/topic/hashtag"
)

// topicIndex is what the topic phase writes, computed from the posts with
// the topic rule (package weibo/topic): each post's topics, each topic's
// post count and its count per hour.
type topicIndex struct {
	names  [][]string                 // per post (index in ds.Posts): its topics
	counts map[string]int64           // topic -> posts
	hours  map[int64]map[string]int64 // hour's first ms -> topic -> posts of the hour
	rows   int64                      // rows the phase writes
}

// newTopicIndex applies the topic rule to every post of ds.
func newTopicIndex(ds *dataset.Dataset) *topicIndex {
	ti := &topicIndex{names: make([][]string, len(ds.Posts)), counts: map[string]int64{}, hours: map[int64]map[string]int64{}}
	for i, p := range ds.Posts {
		ns := hashtag.Extract(p.Text)
		ti.names[i] = ns
		if len(ns) == 0 {
			continue
		}
		h := tables.HourStart(p.Millis)
		if ti.hours[h] == nil {
			ti.hours[h] = map[string]int64{}
		}
		for _, n := range ns {
			ti.counts[n]++
			ti.hours[h][n]++
			ti.rows++
		}
	}
	ti.rows += int64(len(ti.counts) + len(ti.hours))
	return ti
}

// topics writes the topics of the imported posts: each post's entry in the
// list of each of its topics (weibo:topicposts, by author in the content
// phase's order), then the topics' rows (postCount) and the hour rows
// (each topic's count of the hour's posts) of weibo:topics. Counters are
// Put, not Incremented: a re-run writes the same values.
func (s *seeder) topics() error {
	ti := s.topicIndex
	vals := tables.TopicEntryValues()
	weight := func(i int32) int64 { return int64(s.ds.PostCount(s.ds.Users[i].ID)) }
	err := s.forEachOwner(s.owners, weight, func(w *writer, i int32) error {
		u := s.ds.Users[i]
		for _, j := range s.ds.PostsOf(u.ID) {
			id := weibo.PostID{Author: weibo.UserID(u.ID), Millis: s.ds.Posts[j].Millis}
			for _, n := range ti.names[j] {
				k := tables.AppendTopicPostKey(w.key(tables.TopicPostKeyLen), tables.TopicID(n), id)
				if err := w.put(tables.TopicPosts, k, vals); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	written := s.written.Load()
	err = s.forEachOwner([]int32{0}, one, func(w *writer, _ int32) error {
		for n, c := range ti.counts {
			if err := w.put(tables.Topics, tables.TopicKey(n), hbase.Values{tables.FamTopicCount: {tables.ColTopicPosts: tables.EncodeCounter(c)}}); err != nil {
				return err
			}
		}
		for h, m := range ti.hours {
			cells := make(map[string][]byte, len(m))
			for n, c := range m {
				cells[n] = tables.EncodeCounter(c)
			}
			if err := w.put(tables.Topics, tables.HourKey(h), hbase.Values{tables.FamTopicCount: cells}); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil && s.written.Load()-written != int64(len(ti.counts)+len(ti.hours)) {
		err = fmt.Errorf("wrote %d topic and hour rows, want %d", s.written.Load()-written, len(ti.counts)+len(ti.hours))
	}
	return err
}

// ImportTopics writes the topics of ds's posts (the topic phase of Import
// alone) into a store that already holds them: for a store seeded before
// topics were kept. Errors are the store's.
func ImportTopics(ctx context.Context, st hbase.StoreAdmin, ds *dataset.Dataset, opts Options) (rows int64, err error) {
	if err := tables.Migrate(ctx, st); err != nil {
		return 0, fmt.Errorf("seed topics: migrate: %w", err)
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = DefaultBatch
	}
	if opts.Parallelism <= 0 {
		opts.Parallelism = 1
	}
	s := newSeeder(ctx, st, ds, opts)
	if err := s.topics(); err != nil {
		return 0, fmt.Errorf("seed topics: %w", err)
	}
	return s.written.Load(), nil
}
