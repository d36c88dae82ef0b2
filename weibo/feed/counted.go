package feed

import (
	"context"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/account"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/fanout"
	"github.com/weibohbase/gateway/weibo/follow"
	"github.com/weibohbase/gateway/weibo/tables"
)

// The feed's counters, kept with Increment on the users row (family c) and
// registered with the protocol by New.
const (
	// PostCount is a user's postCount: their content rows.
	PostCount counted.CounterKind = "postCount"
)

// The names of the feed's counted relations: their steps are
// counted.Step(name, phase).
const (
	RelationPublish = "publish"
	RelationDelete  = "delete"
)

// The feed's own phases (the protocol's are counted's).
const (
	PhaseOutbox    counted.Phase = "outbox"    // a publish: after the outbox row
	PhaseContent   counted.Phase = "content"   // a publish or delete: after the content row's write
	PhaseRetracted counted.Phase = "retracted" // a delete's retraction: after one batch of inbox deletes
)

// Steps of the feed's counted writes, passed to the protocol's step hook
// (counted.WithStepHook). Each names the point after the step's write; the
// relations declare them (Relation.Phases, MoreSteps), so the registry and
// the conformance suite know them all.
var (
	StepPublishOutbox    = counted.Step(RelationPublish, PhaseOutbox)            // after the outbox row
	StepPublishSequenced = counted.Step(RelationPublish, counted.PhaseSequenced) // after the author's operation sequence
	StepPublishContent   = counted.Step(RelationPublish, PhaseContent)           // after the content row
	StepPublishCounted   = counted.Step(RelationPublish, counted.PhaseCounted)   // after the own inbox row and the post counter, before the outbox row is marked counted
)

// publishRelation is a publish: authority the content row, dependents the
// inbox rows of the fan-out, counter the author's postCount. Its marker is
// the post's weibo:outbox row, whose dead rows the fan-out's sweep repairs.
func (s *Service) publishRelation() *counted.Relation {
	return &counted.Relation{
		Name:      RelationPublish,
		Phases:    []counted.Phase{PhaseOutbox, counted.PhaseSequenced, PhaseContent, counted.PhaseCounted},
		MoreSteps: []string{fanout.StepWritten},
		Counters: func(author, _ uint64) []counted.Counter {
			return []counted.Counter{{Kind: PostCount, Owner: author}}
		},
		InFlight: s.publishesInFlight,
	}
}

// register adds the feed's relations and counters to the protocol.
func (s *Service) register() {
	s.w.Register(s.publishRelation())
	s.deletes = s.deleteRelation()
	s.w.Register(s.deletes)
	s.w.RegisterCounter(account.Counter(s.users, PostCount, tables.ColPosts, tables.ColPostsSeq, func(ctx context.Context, uid weibo.UserID) (int64, error) {
		return s.w.CountRows(ctx, &hbase.Scan{Table: tables.Content, Prefix: tables.ContentPrefix(uid), Families: []string{tables.FamPost}}, nil, tables.PostStored)
	}))
}

// publishesInFlight returns the postCount counters of the authors with a
// weibo:outbox row not marked counted written at or after young (ms): a
// publish that may still be running. The outbox holds only fan-outs in
// flight, so it is read with one scan.
func (s *Service) publishesInFlight(ctx context.Context, young int64) ([]counted.Counter, error) {
	var out []counted.Counter
	err := s.st.Scan(ctx, &hbase.Scan{Table: tables.Outbox}, func(r *hbase.Result) error {
		id, ok := tables.DecodeOutboxKey(r.Row)
		if ok && !tables.OutboxCounted(r) && tables.OutboxAt(r) >= young {
			out = append(out, counted.Counter{Kind: PostCount, Owner: uint64(id.Author)})
		}
		return nil
	})
	return out, err
}

// SettleFollow settles the follow pair a → b from a's attends row
// (fanout.Host; package follow's).
func (s *Service) SettleFollow(ctx context.Context, a, b weibo.UserID) error {
	return s.follows.SettleFollow(ctx, a, b)
}

// RecountPosts recounts author's postCount (fanout.Host): false when a
// write of the author was in flight and the recount must wait. Errors are
// the store's.
func (s *Service) RecountPosts(ctx context.Context, author weibo.UserID) (bool, error) {
	res, err := s.w.RecountCounters(ctx, []counted.Counter{{Kind: PostCount, Owner: uint64(author)}})
	if err != nil {
		return false, err
	}
	return res[0].Done, nil
}

// Fanout returns the feed's fan-out engine: the large accounts, and the
// repair of a fan-out left in the outbox.
func (s *Service) Fanout() *fanout.Engine { return s.fan }

// Follows returns the feed's follow pair (package follow), built with its
// fan-out.
func (s *Service) Follows() *follow.Service { return s.follows }

// PostCounter is the CounterSpec of a counter kept on a post's content
// row (family p: qualifier qual, its operation sequence seq) — a post's
// likeCount, commentCount, repostCount — that count counts for a stored
// post; a post that is gone has none (Count reports !exists, one Get of
// the content row). The Counter names the post: Owner its author, Sub its
// ms.
func PostCounter(st hbase.Store, kind counted.CounterKind, qual, seq string, count func(ctx context.Context, post weibo.PostID) (int64, error)) *counted.CounterSpec {
	postOf := func(c counted.Counter) weibo.PostID {
		return weibo.PostID{Author: weibo.UserID(c.Owner), Millis: int64(c.Sub)}
	}
	return &counted.CounterSpec{
		Kind:   kind,
		Family: tables.FamPost,
		Cell: func(c counted.Counter) (string, []byte, string, string) {
			return tables.Content, tables.ContentKey(postOf(c)), qual, seq
		},
		Count: func(ctx context.Context, c counted.Counter) (int64, bool, error) {
			post := postOf(c)
			r, err := st.Get(ctx, &hbase.Get{Table: tables.Content, Row: tables.ContentKey(post), Families: []string{tables.FamPost}})
			if err != nil || !tables.PostStored(r) {
				return 0, false, err
			}
			n, err := count(ctx, post)
			return n, true, err
		},
	}
}
