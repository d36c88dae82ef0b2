package follow

import (
	"context"
	"fmt"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/account"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/tables"
)

// The follow pair's counters, kept with Increment on the users rows
// (family c) and registered with the protocol by New.
const (
	// FollowCount is a user's followCount: their attends rows.
	FollowCount counted.CounterKind = "followCount"
	// FanCount is a user's fanCount: their fans rows whose attends row exists.
	FanCount counted.CounterKind = "fanCount"
)

// Relation is the follow pair's name; its steps are
// counted.Step(Relation, phase).
const Relation = "follow"

// The follow pair's own phases (the protocol's are counted's).
const (
	PhaseFans  counted.Phase = "fans"  // a follow pair's settle: after the fans row
	PhaseInbox counted.Phase = "inbox" // a follow pair's settle: after the inbox
)

// Steps of a follow's counted write, passed to the protocol's step hook
// (counted.WithStepHook); the relation declares them (Relation.Phases).
var (
	StepMarked    = counted.Step(Relation, counted.PhaseMarked)    // after the pending row of a follow or unfollow
	StepSequenced = counted.Step(Relation, counted.PhaseSequenced) // after the two operation sequences
	StepDecided   = counted.Step(Relation, counted.PhaseDecided)   // after the attends row's CheckAndPut/CheckAndDelete
	StepCounted   = counted.Step(Relation, counted.PhaseCounted)   // after the two counters
	StepFans      = counted.Step(Relation, PhaseFans)              // in every settle of a follow pair: after the fans row, before the inbox
	StepInbox     = counted.Step(Relation, PhaseInbox)             // in every settle of a follow pair: after the inbox, before the re-read
)

// followRelation is the follow pair a → b: authority a's attends row,
// dependents b's fans row and b's posts in a's inbox; counters a's
// followCount and b's fanCount (in that order).
func (s *Service) followRelation() *counted.Relation {
	return &counted.Relation{
		Name:   Relation,
		Marker: tables.PendingFollow,
		Phases: []counted.Phase{counted.PhaseDecided, PhaseFans, PhaseInbox},
		Counters: func(a, b uint64) []counted.Counter {
			return []counted.Counter{{Kind: FollowCount, Owner: a}, {Kind: FanCount, Owner: b}}
		},
		Settle: func(ctx context.Context, a, b uint64, _ []byte) error {
			if err := s.RepairFollow(ctx, weibo.UserID(a), weibo.UserID(b)); err != nil {
				return err
			}
			// A follow that died before its re-read of the blocks may
			// stand across a block made meanwhile: end it.
			if blocked, err := s.blocked(ctx, weibo.UserID(a), weibo.UserID(b)); err != nil {
				return err
			} else if blocked {
				if _, err := s.Unfollow(ctx, weibo.UserID(a), weibo.UserID(b)); err != nil {
					return err
				}
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

// register adds the follow relation and its two counters.
func (s *Service) register(w *counted.Protocol, users Users) {
	s.rel = s.followRelation()
	w.Register(s.rel)
	w.RegisterCounter(account.Counter(users, FollowCount, tables.ColFollows, tables.ColFollowsSeq, func(ctx context.Context, uid weibo.UserID) (int64, error) {
		return s.w.CountRows(ctx, &hbase.Scan{Table: tables.Relations, Prefix: tables.RelationPrefix(uid, tables.Attends)}, nil, nil)
	}))
	w.RegisterCounter(account.Counter(users, FanCount, tables.ColFans, tables.ColFansSeq, func(ctx context.Context, uid weibo.UserID) (int64, error) {
		return s.w.CountRows(ctx, &hbase.Scan{Table: tables.Relations, Prefix: tables.RelationPrefix(uid, tables.Fans)},
			func(r *hbase.Result) *hbase.Get {
				_, _, fan, ok := tables.DecodeRelationKey(r.Row)
				if !ok {
					return nil
				}
				return &hbase.Get{Table: tables.Relations, Row: tables.RelationKey(fan, tables.Attends, uid)}
			}, nil)
	}))
}

// settleFollow makes the rows that depend on whether a follows b agree
// with a's attends row, the authority: the fans row b←a, and b's posts in
// a's inbox (b's newest posts up to the backfill limit while following —
// none when b is large: home timelines merge them —, every post of b once
// not; either way none of b's posts whose delete is in flight:
// dropDeleting). It settles (counted.Settle) from state, the attends row
// as the caller just wrote or read it (nil to read it), and returns the
// state it settled on; counted.ErrUnsettled when the row kept changing
// (the writes that change it settle it themselves). Every write is an
// idempotent Put or Delete. Each round writes the fans row before the
// inbox, and reads the delete markers last: settleFanout and the delete's
// retraction (dropDeleting) rely on that order.
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
				Values: hbase.Values{tables.FamRel: {tables.ColRelSet: tables.EncodeMillis(s.w.NowMillis())}}})
		} else {
			err = s.st.Delete(ctx, &hbase.Delete{Table: tables.Relations, Row: fans})
		}
		if err == nil {
			err = s.w.Step(ctx, StepFans)
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
			err = s.dropDeleting(ctx, a, b)
		}
		if err == nil {
			err = s.w.Step(ctx, StepInbox)
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

// InFlight returns the users a with a write of the follow pair a →
// followee in flight (a follow or unfollow, or a dead one not yet
// repaired: a weibo:pending row of kind PendingFollow naming followee),
// each once. The markers are keyed by the follower, so it reads the whole
// of weibo:pending, which holds only the writes in flight (and the
// traces of dead ones): one scan. The delete's retraction
// (feed.RetractPost) reads it after the fans rows: see dropDeleting.
func (s *Service) InFlight(ctx context.Context, followee weibo.UserID) ([]weibo.UserID, error) {
	var out []weibo.UserID
	seen := map[weibo.UserID]bool{}
	err := s.st.Scan(ctx, &hbase.Scan{Table: tables.Pending}, func(r *hbase.Result) error {
		kind, a, b, _, ok := tables.DecodePendingKey(r.Row)
		if ok && kind == tables.PendingFollow && weibo.UserID(b) == followee && !seen[weibo.UserID(a)] {
			seen[weibo.UserID(a)] = true
			out = append(out, weibo.UserID(a))
		}
		return nil
	})
	return out, err
}

// SettleFollow settles the follow pair a → b from a's attends row
// (settleFollow, reading it): what the fan-out does for a fan whose fans
// row went (fanout.Host). Errors as RepairFollow's.
func (s *Service) SettleFollow(ctx context.Context, a, b weibo.UserID) error {
	_, err := s.settleFollow(ctx, a, b, nil)
	return err
}
