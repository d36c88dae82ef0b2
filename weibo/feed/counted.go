package feed

import (
	"context"
	"fmt"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/fanout"
	"github.com/weibohbase/gateway/weibo/tables"
)

// The feed's counters, kept with Increment on the users row (family c) and
// registered with the protocol by New.
const (
	// FollowCount is a user's followCount: their attends rows.
	FollowCount counted.CounterKind = "followCount"
	// FanCount is a user's fanCount: their fans rows whose attends row exists.
	FanCount counted.CounterKind = "fanCount"
	// PostCount is a user's postCount: their content rows.
	PostCount counted.CounterKind = "postCount"
)

// The names of the feed's counted relations: their steps are
// counted.Step(name, phase).
const (
	RelationFollow  = "follow"
	RelationPublish = "publish"
	RelationDelete  = "delete"
)

// The feed's own phases (the protocol's are counted's).
const (
	PhaseFans      counted.Phase = "fans"      // a follow pair's settle: after the fans row
	PhaseInbox     counted.Phase = "inbox"     // a follow pair's settle: after the inbox
	PhaseOutbox    counted.Phase = "outbox"    // a publish: after the outbox row
	PhaseContent   counted.Phase = "content"   // a publish or delete: after the content row's write
	PhaseRetracted counted.Phase = "retracted" // a delete's retraction: after one batch of inbox deletes
)

// Steps of the feed's counted writes, passed to the protocol's step hook
// (counted.WithStepHook). Each names the point after the step's write; the
// relations declare them (Relation.Phases, MoreSteps), so the registry and
// the conformance suite know them all.
var (
	StepFollowMarked     = counted.Step(RelationFollow, counted.PhaseMarked)     // after the pending row of a follow or unfollow
	StepFollowSequenced  = counted.Step(RelationFollow, counted.PhaseSequenced)  // after the two operation sequences
	StepFollowDecided    = counted.Step(RelationFollow, counted.PhaseDecided)    // after the attends row's CheckAndPut/CheckAndDelete
	StepFollowCounted    = counted.Step(RelationFollow, counted.PhaseCounted)    // after the two counters
	StepFollowFans       = counted.Step(RelationFollow, PhaseFans)               // in every settle of a follow pair: after the fans row, before the inbox
	StepFollowInbox      = counted.Step(RelationFollow, PhaseInbox)              // in every settle of a follow pair: after the inbox, before the re-read
	StepPublishOutbox    = counted.Step(RelationPublish, PhaseOutbox)            // after the outbox row
	StepPublishSequenced = counted.Step(RelationPublish, counted.PhaseSequenced) // after the author's operation sequence
	StepPublishContent   = counted.Step(RelationPublish, PhaseContent)           // after the content row
	StepPublishCounted   = counted.Step(RelationPublish, counted.PhaseCounted)   // after the own inbox row and the post counter, before the outbox row is marked counted
)

// followRelation is the follow pair a → b: authority a's attends row,
// dependents b's fans row and b's posts in a's inbox; counters a's
// followCount and b's fanCount (in that order).
func (s *Service) followRelation() *counted.Relation {
	return &counted.Relation{
		Name:   RelationFollow,
		Marker: tables.PendingFollow,
		Phases: []counted.Phase{counted.PhaseDecided, PhaseFans, PhaseInbox},
		Counters: func(a, b uint64) []counted.Counter {
			return []counted.Counter{{Kind: FollowCount, Owner: a}, {Kind: FanCount, Owner: b}}
		},
		Settle: func(ctx context.Context, a, b uint64, _ []byte) error {
			if err := s.RepairFollow(ctx, weibo.UserID(a), weibo.UserID(b)); err != nil {
				return err
			}
			return s.syncFollowNotice(ctx, weibo.UserID(a), weibo.UserID(b))
		},
		// A dead unfollow waits for the fan-outs of b it raced: such a
		// fan-out read the fans list before the unfollow and, were it to
		// die part-way, could leave one of b's posts in a's inbox.
		Ready: func(ctx context.Context, _, b uint64, bound int64) (bool, error) {
			busy, err := s.fanoutsBefore(ctx, weibo.UserID(b), bound)
			return !busy, err
		},
	}
}

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
	s.follows = s.followRelation()
	s.w.Register(s.follows)
	s.w.Register(s.publishRelation())
	s.deletes = s.deleteRelation()
	s.w.Register(s.deletes)
	userCounter := func(kind counted.CounterKind, qual, seq string, count func(ctx context.Context, uid weibo.UserID) (int64, error)) *counted.CounterSpec {
		return &counted.CounterSpec{
			Kind: kind,
			Cell: func(c counted.Counter) (string, []byte, string, string) {
				return tables.Users, tables.UserKey(weibo.UserID(c.Owner)), qual, seq
			},
			Count: func(ctx context.Context, c counted.Counter) (int64, bool, error) {
				us, err := s.users.GetUsers(ctx, []weibo.UserID{weibo.UserID(c.Owner)})
				if err != nil || us[0] == nil {
					return 0, false, err
				}
				n, err := count(ctx, weibo.UserID(c.Owner))
				return n, true, err
			},
		}
	}
	s.w.RegisterCounter(userCounter(FollowCount, tables.ColFollows, tables.ColFollowsSeq, func(ctx context.Context, uid weibo.UserID) (int64, error) {
		return s.w.CountRows(ctx, &hbase.Scan{Table: tables.Relations, Prefix: tables.RelationPrefix(uid, tables.Attends)}, nil, nil)
	}))
	s.w.RegisterCounter(userCounter(FanCount, tables.ColFans, tables.ColFansSeq, func(ctx context.Context, uid weibo.UserID) (int64, error) {
		return s.w.CountRows(ctx, &hbase.Scan{Table: tables.Relations, Prefix: tables.RelationPrefix(uid, tables.Fans)},
			func(r *hbase.Result) *hbase.Get {
				_, _, fan, ok := tables.DecodeRelationKey(r.Row)
				if !ok {
					return nil
				}
				return &hbase.Get{Table: tables.Relations, Row: tables.RelationKey(fan, tables.Attends, uid)}
			}, nil)
	}))
	s.w.RegisterCounter(userCounter(PostCount, tables.ColPosts, tables.ColPostsSeq, func(ctx context.Context, uid weibo.UserID) (int64, error) {
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

// settleFollow makes the rows that depend on whether a follows b agree
// with a's attends row, the authority: the fans row b←a, and b's posts in
// a's inbox (b's newest posts up to the backfill limit while following —
// none when b is large: home timelines merge them —, every post of b once
// not). It settles (counted.Settle) from state, the attends row as the
// caller just wrote or read it (nil to read it), and returns the state it
// settled on; counted.ErrUnsettled when the row kept changing (the writes
// that change it settle it themselves). Every write is an idempotent Put
// or Delete. Each round writes the fans row before the inbox:
// settleFanout relies on that order.
func (s *Service) settleFollow(ctx context.Context, a, b weibo.UserID, state *bool) (bool, error) {
	key := tables.RelationKey(a, tables.Attends, b)
	read := func(ctx context.Context) (bool, error) {
		r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Relations, Row: key})
		return r.Exists(), err
	}
	var following bool
	if state != nil {
		following = *state
	} else {
		var err error
		if following, err = read(ctx); err != nil {
			return false, err
		}
	}
	write := func(ctx context.Context, following bool) error {
		fans := tables.RelationKey(b, tables.Fans, a)
		var err error
		if following {
			err = s.st.Put(ctx, &hbase.Put{Table: tables.Relations, Row: fans,
				Values: hbase.Values{tables.FamRel: {tables.ColRelSet: tables.EncodeMillis(s.NowMillis())}}})
		} else {
			err = s.st.Delete(ctx, &hbase.Delete{Table: tables.Relations, Row: fans})
		}
		if err == nil {
			err = s.w.Step(ctx, StepFollowFans)
		}
		if err == nil {
			if following {
				// Read after the fans row is written: a drain of b that
				// starts later finds a among the fans (large.go).
				var large bool
				if large, err = s.fan.IsLarge(ctx, b); err == nil && !large {
					err = s.backfill(ctx, a, b)
				}
			} else {
				err = s.unbackfill(ctx, a, b)
			}
		}
		if err == nil {
			err = s.w.Step(ctx, StepFollowInbox)
		}
		return err
	}
	return counted.Settle(ctx, following, func(x, y bool) bool { return x == y }, write, read)
}

// RepairFollow settles the follow pair a → b from a's attends row (see
// settleFollow): the fans row and b's posts in a's inbox are made to agree
// with it. It is what the repairer does for a dead follow or unfollow, and
// what `gateway fsck --repair` does for an asymmetric pair or inbox.
// Errors are the store's, or one wrapping counted.ErrUnsettled when the
// pair kept changing.
func (s *Service) RepairFollow(ctx context.Context, a, b weibo.UserID) error {
	if _, err := s.settleFollow(ctx, a, b, nil); err != nil {
		return fmt.Errorf("repair follow %s → %s: %w", a, b, err)
	}
	return nil
}

// fanoutsBefore reports whether author has a fan-out in weibo:outbox
// requested before bound (ms): one prefix scan of the author's outbox rows.
func (s *Service) fanoutsBefore(ctx context.Context, author weibo.UserID, bound int64) (bool, error) {
	found := false
	err := s.st.Scan(ctx, &hbase.Scan{Table: tables.Outbox, Prefix: tables.ContentPrefix(author)}, func(r *hbase.Result) error {
		if _, ok := tables.DecodeOutboxKey(r.Row); ok && tables.OutboxAt(r) < bound {
			found = true
			return hbase.ErrStopScan
		}
		return nil
	})
	return found, err
}

// SettleFollow settles the follow pair a → b from a's attends row
// (settleFollow, reading it): what the fan-out does for a fan whose fans
// row went (fanout.Host). Errors as RepairFollow's.
func (s *Service) SettleFollow(ctx context.Context, a, b weibo.UserID) error {
	_, err := s.settleFollow(ctx, a, b, nil)
	return err
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
