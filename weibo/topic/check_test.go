package topic_test

import (
	"context"
	"testing"

	"github.com/weibohbase/gateway/fsck"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/tables"
	"github.com/weibohbase/gateway/weibo/topic"
)

// putNewer overwrites cell (fam, qual) of row with v, as a version newer
// than the cell's: damage no API call makes.
func putNewer(ctx context.Context, st hbase.Store, table string, row []byte, fam, qual string, v []byte) error {
	r, err := st.Get(ctx, &hbase.Get{Table: table, Row: row, Families: []string{fam}})
	if err != nil {
		return err
	}
	put := &hbase.Put{Table: table, Row: row, Values: hbase.Values{fam: {qual: v}}}
	if c := r.Cell(fam, qual); c != nil {
		put.Timestamp = c.Timestamp + 1
	}
	return st.Put(ctx, put)
}

// TestTopicChecks damages the topics row by row — a post's entry lost
// from its topic's list, an entry of a post without the topic and one of
// a post that does not exist, a topic's postCount and a count in an hour
// row overwritten — and checks that fsck reports each kind, that --repair
// fixes all of them (the entries settled or deleted, the counters
// recounted), and that a second run finds nothing. On HBase the store is
// a namespace of its own, so that fsck sees only this test's rows.
func TestTopicChecks(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st, svc, _ := domaintest.FsckService(t, b)
			a := domaintest.MustUser(t, svc, domaintest.Uniq("a"))
			var posts []weibo.PostID
			for _, text := range []string{"#武汉加油# 一", "#武汉加油# #抗疫# 二", "没有话题"} {
				p, err := svc.Feed.Publish(ctx, a.ID, text)
				if err != nil {
					t.Fatal(err)
				}
				posts = append(posts, p.ID)
			}
			if err := svc.FlushFanout(ctx); err != nil {
				t.Fatal(err)
			}
			if rep, err := fsck.Run(ctx, svc, fsck.Options{}); err != nil || len(rep.Issues) > 0 {
				t.Fatalf("before the damage: %v %+v", err, rep)
			}
			hour := tables.HourStart(posts[1].Millis)
			damage := []domaintest.Damage{
				{Kind: topic.IssueListMissing, Do: func() error {
					return st.Delete(ctx, &hbase.Delete{Table: tables.TopicPosts, Row: tables.TopicPostKey("抗疫", posts[1])})
				}},
				{Kind: topic.IssueListStale, Do: func() error { // a post that does not have the topic
					return st.Put(ctx, &hbase.Put{Table: tables.TopicPosts, Row: tables.TopicPostKey("武汉加油", posts[2]), Values: tables.TopicEntryValues()})
				}},
				{Kind: topic.IssueListStale, Do: func() error { // a post that does not exist, of a topic no post has
					gone := weibo.PostID{Author: a.ID, Millis: 12345}
					return st.Put(ctx, &hbase.Put{Table: tables.TopicPosts, Row: tables.TopicPostKey("无人", gone), Values: tables.TopicEntryValues()})
				}},
				{Kind: topic.IssuePostCount, Do: func() error {
					return putNewer(ctx, st, tables.Topics, tables.TopicKey("武汉加油"), tables.FamTopicCount, tables.ColTopicPosts, tables.U64(7))
				}},
				{Kind: topic.IssueHourCount, Do: func() error {
					return putNewer(ctx, st, tables.Topics, tables.HourKey(hour), tables.FamTopicCount, "抗疫", tables.U64(3))
				}},
			}
			domaintest.FsckRepairs(t, svc, domaintest.Damaged(t, damage))
			for name, n := range map[string]int64{"武汉加油": 2, "抗疫": 1} {
				r, err := st.Get(ctx, &hbase.Get{Table: tables.Topics, Row: tables.TopicKey(name)})
				if err != nil {
					t.Fatal(err)
				}
				if got := tables.TopicPostCount(r); got != n {
					t.Errorf("topic %q: postCount %d after repair, want %d", name, got, n)
				}
			}
			r, err := st.Get(ctx, &hbase.Get{Table: tables.TopicPosts, Row: tables.TopicPostKey("抗疫", posts[1])})
			if err != nil || !r.Exists() {
				t.Errorf("the lost entry after repair: %v, %v", r.Exists(), err)
			}
		})
	}
}
