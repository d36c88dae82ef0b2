// Package topic is the topics of posts (#话题#, the rule of package
// weibo/topic/hashtag): the counted pair (topic, post) on the write
// protocol (package counted), made as a part of every publish and delete
// of a post with topics (feed.PostPart) — each topic's postCount and
// hour counts, its list of posts —, and the topic reads: a topic, search
// by prefix, top and trending topics, a topic's posts.
package topic

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/tables"
	"github.com/weibohbase/gateway/weibo/topic/hashtag"
)

// Topics (#话题#). A post's topics are a function of its text (package
// weibo/topic/hashtag), so the pair (topic, post) has the post's content row as
// its AUTHORITY: the post has the topic exactly while its content row
// holds a text with it. Its DEPENDENT is the post's entry in the topic's
// list (weibo:topicposts); its COUNTERS are the topic's postCount and the
// topic's count in the hour row of the post's hour (weibo:topics). A
// publish and a delete of a post with topics are one counted write of the
// relation "topic" (marker kind tables.PendingTopic on (author, ms), the
// names in the marker), made inside the publish's or the delete's own.

// The topics' counters, kept with Increment in weibo:topics and registered
// with the protocol by New. Their Counter names the topic (Name) and, for
// the hour, the hour's first ms (Sub).
const (
	// TopicPostCount is a topic's postCount: the stored posts that have it.
	TopicPostCount counted.CounterKind = "topicPostCount"
	// TopicHourCount is a topic's count of the stored posts of one hour
	// that have it.
	TopicHourCount counted.CounterKind = "topicHourCount"
)

// Steps of a topic write besides the protocol's ("topic:marked",
// "topic:sequenced", "topic:counted").
var StepListed = counted.Step(Relation, PhaseListed) // in every settle of a post's topics: after the list entries, before the re-read

// Relation is the topic pair's name; its steps are
// counted.Step(Relation, phase).
const Relation = "topic"

// PhaseListed is the topic pair's own phase: in every settle of a post's
// topics, after the list entries, before the re-read.
const PhaseListed counted.Phase = "listed"

// topicRelation is the pair (post, its topics): owner the post's author,
// other its ms, the topics' names in the marker's extra bytes; counters
// each topic's postCount and hour count, in the order of the names.
func (s *Service) topicRelation() *counted.Relation {
	return &counted.Relation{
		Name:   Relation,
		Marker: tables.PendingTopic,
		Phases: []counted.Phase{PhaseListed},
		CountersWith: func(author, ms uint64, extra []byte) []counted.Counter {
			names, _ := tables.DecodeTopicExtra(extra)
			return topicCounters(int64(ms), names)
		},
		Settle: func(ctx context.Context, author, ms uint64, extra []byte) error {
			names, ok := tables.DecodeTopicExtra(extra)
			if !ok {
				return nil // nothing to settle; the recount still runs
			}
			return s.RepairTopics(ctx, weibo.PostID{Author: weibo.UserID(author), Millis: int64(ms)}, names)
		},
	}
}

// topicCounters returns the counters a post of time ms with topics names
// changes: each topic's postCount, then each topic's hour count.
func topicCounters(ms int64, names []string) []counted.Counter {
	hour := uint64(tables.HourStart(ms))
	out := make([]counted.Counter, 0, 2*len(names))
	for _, n := range names {
		out = append(out, counted.Counter{Kind: TopicPostCount, Name: n})
	}
	for _, n := range names {
		out = append(out, counted.Counter{Kind: TopicHourCount, Name: n, Sub: hour})
	}
	return out
}

// Posts is what topics need of the posts: a part in every post's write
// (a topic page reads the posts' content rows itself, with the viewer's
// safety row in the same GetMany). *feed.Service implements it.
type Posts interface {
	RegisterPostPart(make feed.PartMaker)
}

// Service is the topics' API. It is safe for concurrent use.
type Service struct {
	st    hbase.Store
	w     *counted.Protocol
	rel   *counted.Relation
	posts Posts
	susp  weibo.Suspensions // whose posts leave topic pages (SetSuspensions)
}

// SetSuspensions hides from every topic page (and so from the trends'
// posts) the posts of the users susp says are suspended, and the reposts
// of their posts. It must be called before any call, while the domain is
// wired.
func (s *Service) SetSuspensions(susp weibo.Suspensions) { s.susp = susp }

// New returns the topics over st and registers with w the topic relation,
// its two counters and the topics' fsck check (check.go), and with posts the topics' part in the write of
// every post with topics. The weibo tables must exist (tables.Migrate).
func New(st hbase.Store, w *counted.Protocol, posts Posts) *Service {
	s := &Service{st: st, w: w, posts: posts, susp: weibo.NoSuspensions}
	s.rel = s.topicRelation()
	w.Register(s.rel)
	w.RegisterCheck(s.fsckCheck())
	s.w.RegisterCounter(&counted.CounterSpec{
		Kind: TopicPostCount, Family: tables.FamTopicCount, SeqFamily: tables.FamTopicSeq,
		Cell: func(c counted.Counter) (string, []byte, string, string) {
			return tables.Topics, tables.TopicKey(c.Name), tables.ColTopicPosts, tables.ColTopicPosts
		},
		Count: func(ctx context.Context, c counted.Counter) (int64, bool, error) {
			n, err := s.countTopicPosts(ctx, c.Name, 0)
			return n, true, err
		},
	})
	s.w.RegisterCounter(&counted.CounterSpec{
		Kind: TopicHourCount, Family: tables.FamTopicCount, SeqFamily: tables.FamTopicSeq,
		Cell: func(c counted.Counter) (string, []byte, string, string) {
			return tables.Topics, tables.HourKey(int64(c.Sub)), c.Name, c.Name
		},
		Count: func(ctx context.Context, c counted.Counter) (int64, bool, error) {
			n, err := s.countTopicPosts(ctx, c.Name, int64(c.Sub))
			return n, true, err
		},
	})
	posts.RegisterPostPart(func(text string, _ *weibo.PostID) feed.PostPart {
		if tw := s.newTopicWrite(text); tw != nil {
			return tw
		}
		return nil
	})
	return s
}

// countTopicPosts counts the entries of topic name's list whose post is
// stored and has the topic: all of them when hour is 0, else those of the
// hour starting at hour (ms) — a range of each bucket, the list being in
// time order. One scan per bucket, each chunk of entries checked with one
// GetMany of the posts' content rows.
func (s *Service) countTopicPosts(ctx context.Context, name string, hour int64) (int64, error) {
	var total int64
	for _, pre := range tables.TopicPostPrefixes(name) {
		sc := &hbase.Scan{Table: tables.TopicPosts, Prefix: pre}
		if hour != 0 {
			// Newest first: from the hour's last ms down to its first.
			sc.Start = append(append([]byte{}, pre...), tables.TopicPostSuffix(weibo.PostID{Millis: hour + tables.HourMillis - 1})[:8]...)
			sc.Stop = append(append([]byte{}, pre...), tables.TopicPostSuffix(weibo.PostID{Millis: hour - 1})[:8]...)
		}
		n, err := s.w.CountRows(ctx, sc, func(r *hbase.Result) *hbase.Get {
			if _, post, ok := tables.DecodeTopicPostKey(r.Row); ok {
				return &hbase.Get{Table: tables.Content, Row: tables.ContentKey(post), Families: []string{tables.FamPost}}
			}
			return nil
		}, func(r *hbase.Result) bool { return hasTopic(r, name) })
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// hasTopic reports whether content row r is a stored post whose text has
// topic name: the authority of the pair.
func hasTopic(r *hbase.Result, name string) bool {
	text := r.Value(tables.FamPost, tables.ColText)
	return text != nil && slices.Contains(hashtag.Extract(string(text)), name)
}

// topicWrite is the topic pair's part of a publish or a delete
// (feed.PostPart): the post's topics, and the markers written for them.
type topicWrite struct {
	s     *Service
	names []string
	ops   []*counted.Op // one marker per id tried, the last one the post's
}

// newTopicWrite returns the topic write of a post with content, nil when
// it has no topic.
func (s *Service) newTopicWrite(content string) *topicWrite {
	names := hashtag.Extract(content)
	if len(names) == 0 {
		return nil
	}
	return &topicWrite{s: s, names: names}
}

// Mark writes the marker of post id's topics and bumps the sequences of
// their counters (counted.Protocol.BeginWith), before id's content row is
// written or deleted.
func (tw *topicWrite) Mark(ctx context.Context, id weibo.PostID) error {
	op, err := tw.s.w.BeginWith(ctx, tw.s.rel, uint64(id.Author), uint64(id.Millis), tables.EncodeTopicExtra(tw.names))
	if err != nil {
		return err
	}
	tw.ops = append(tw.ops, op)
	return nil
}

// Count adds d to the counters of the post's topics, within the write's
// budget (counted.Protocol.Count).
func (tw *topicWrite) Count(ctx context.Context, d int64) error {
	_, err := tw.s.w.Count(ctx, tw.ops[len(tw.ops)-1], d)
	return err
}

// Settle settles the list entries of post id, stored or not as the
// caller just made it, and ends the write's markers (keeps them for the
// repairer when the post kept changing).
func (tw *topicWrite) Settle(ctx context.Context, id weibo.PostID, stored bool) error {
	state := make([]bool, len(tw.names))
	for i := range state {
		state[i] = stored
	}
	_, err := tw.s.settleTopics(ctx, id, tw.names, state)
	if errors.Is(err, counted.ErrUnsettled) {
		err = tw.s.w.Keep(ctx, tw.ops[len(tw.ops)-1], nil)
	}
	if err != nil {
		return err
	}
	for _, op := range tw.ops {
		if err := tw.s.w.End(ctx, op); err != nil {
			return err
		}
	}
	return nil
}

// End ends the markers of a write that changed nothing (a delete that
// found the post gone).
func (tw *topicWrite) End(ctx context.Context) error {
	for _, op := range tw.ops {
		if err := tw.s.w.End(ctx, op); err != nil {
			return err
		}
	}
	return nil
}

// settleTopics makes post id's entries in the lists of names agree with
// the authority, its content row: an entry exists exactly while the row
// holds a text with that topic. It settles (counted.Settle) from state,
// one entry per name (nil: read it), and returns the state it settled
// on; counted.ErrUnsettled when the row kept changing. Every write is an
// idempotent Put or Delete, all in one PutMany and one DeleteMany.
func (s *Service) settleTopics(ctx context.Context, id weibo.PostID, names []string, state []bool) ([]bool, error) {
	read := func(ctx context.Context) ([]bool, error) {
		r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Content, Row: tables.ContentKey(id), Families: []string{tables.FamPost}})
		out := make([]bool, len(names))
		for i, n := range names {
			out[i] = hasTopic(r, n)
		}
		return out, err
	}
	if state == nil {
		var err error
		if state, err = read(ctx); err != nil {
			return nil, err
		}
	}
	write := func(ctx context.Context, state []bool) error {
		var puts []*hbase.Put
		var dels []*hbase.Delete
		for i, n := range names {
			key := tables.TopicPostKey(n, id)
			if state[i] {
				puts = append(puts, &hbase.Put{Table: tables.TopicPosts, Row: key, Values: tables.TopicEntryValues()})
			} else {
				dels = append(dels, &hbase.Delete{Table: tables.TopicPosts, Row: key})
			}
		}
		if len(puts) > 0 {
			if err := s.st.PutMany(ctx, puts); err != nil {
				return err
			}
		}
		if len(dels) > 0 {
			if err := s.st.DeleteMany(ctx, dels); err != nil {
				return err
			}
		}
		return s.w.Step(ctx, StepListed)
	}
	return counted.Settle(ctx, state, slices.Equal[[]bool], write, read)
}

// RepairTopics settles post id's entries in the lists of topics names from
// its content row (see settleTopics). It is what the repairer does for a
// dead publish or delete of a post with topics, and what `gateway fsck
// --repair` does for an entry that disagrees. Errors are the store's, or
// one wrapping counted.ErrUnsettled when the post kept changing.
func (s *Service) RepairTopics(ctx context.Context, id weibo.PostID, names []string) error {
	if _, err := s.settleTopics(ctx, id, names, nil); err != nil {
		return fmt.Errorf("repair topics of post %s: %w", id, err)
	}
	return nil
}
