package safety

import (
	"context"
	"errors"
	"fmt"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/account"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/tables"
)

// BlockCount is a user's blockCount (GraphQL: blockedUsers' totalCount):
// the entries of their block cell, kept with Increment on the users row
// (family c, tables.ColBlockCount).
const BlockCount counted.CounterKind = "blockCount"

// Relation is the block relation's name; its steps are
// counted.Step(Relation, phase).
const Relation = "block"

// The block's own phases (the protocol's are counted's).
const (
	PhaseReverse counted.Phase = "reverse" // a block's settle: after the blocked user's blocked-by cell
	PhaseFollows counted.Phase = "follows" // a block's settle: after the follows both ways were ended
)

// Steps of a block's counted write, passed to the protocol's step hook.
var (
	StepMarked    = counted.Step(Relation, counted.PhaseMarked)    // after the pending row of a block or unblock
	StepSequenced = counted.Step(Relation, counted.PhaseSequenced) // after the blocker's blockCount sequence
	StepDecided   = counted.Step(Relation, counted.PhaseDecided)   // after the block cell's CheckAndPut
	StepCounted   = counted.Step(Relation, counted.PhaseCounted)   // after the blocker's blockCount
	StepReverse   = counted.Step(Relation, PhaseReverse)           // in every settle: after the blocked-by cell
	StepFollows   = counted.Step(Relation, PhaseFollows)           // in every settle of a standing block: after both unfollows
)

// blockRelation is the block a → b: authority a's block cell holding b,
// dependents b's blocked-by cell of a and the follows a → b and b → a
// (none while the block stands); counter a's blockCount.
func (s *Service) blockRelation() *counted.Relation {
	return &counted.Relation{
		Name:   Relation,
		Marker: tables.PendingBlock,
		Phases: []counted.Phase{counted.PhaseDecided, PhaseReverse, PhaseFollows},
		Counters: func(a, _ uint64) []counted.Counter {
			return []counted.Counter{{Kind: BlockCount, Owner: a}}
		},
		Settle: func(ctx context.Context, a, b uint64, _ []byte) error {
			return s.RepairBlock(ctx, weibo.UserID(a), weibo.UserID(b))
		},
	}
}

// register adds the block relation, its counter and its fsck check.
func (s *Service) register() {
	s.rel = s.blockRelation()
	s.w.Register(s.rel)
	s.w.RegisterCounter(account.Counter(s.users, BlockCount, tables.ColBlockCount, tables.ColBlockCountSeq, func(ctx context.Context, uid weibo.UserID) (int64, error) {
		cell, err := s.readCell(ctx, uid, tables.ColBlocks)
		return int64(tables.Blocks(cell).Len()), err
	}))
	s.w.RegisterCheck(s.fsckCheck())
}

// Block makes viewer block target and returns target. It is idempotent.
// Errors: BAD_USER_INPUT when viewer == target or viewer blocks
// MaxBlocks users already, NOT_FOUND when target does not exist.
//
// Writes, in order (package counted explains why this order survives any
// interleaving and any crash):
//  1. the weibo:pending row of the write (the marker);
//  2. the operation sequence of viewer's blockCount;
//  3. viewer's block cell with target added, CheckAndPut against the
//     cell read (the authority: the one write that decides whether this
//     call blocks, so concurrent or repeated calls count once);
//  4. if it did, viewer's blockCount +1 (within the write's budget);
//  5. the settle (settleBlock): target's blocked-by cell of viewer, then
//     the follows viewer → target and target → viewer ended, each an
//     unfollow of its own (the follow relation's counted write), then a
//     re-read of the block cell;
//  6. the change published to both users' live reads, on every instance;
//  7. the delete of the pending row.
//
// A follow racing the block checks the block cells after writing its
// attends row (follow.Guard): either it sees this block and undoes
// itself, or this block's unfollow, after it, sees the attends row. A
// call that dies anywhere leaves the pending row; the repairer settles
// the pair and recounts viewer's blockCount after the repair grace.
// Neither user is notified.
func (s *Service) Block(ctx context.Context, viewer, target weibo.UserID) (_ *weibo.User, err error) {
	defer weibo.Wrapf(&err, "block %s → %s", viewer, target)
	if viewer == target {
		return nil, weibo.BadInput("userId", "you cannot block yourself")
	}
	u, err := s.existingUser(ctx, target)
	if err != nil {
		return nil, err
	}
	full := func(cur []byte) error {
		if b := tables.Blocks(cur); b.Len() >= MaxBlocks {
			if _, ok := b.Find(target); !ok {
				return weibo.BadInput("userId", "you block %d users already, the most one user may", MaxBlocks)
			}
		}
		return nil
	}
	cur, err := s.readCell(ctx, viewer, tables.ColBlocks)
	if err != nil {
		return nil, err
	}
	if _, ok := tables.Blocks(cur).Find(target); ok {
		return u, nil
	}
	if err := full(cur); err != nil {
		return nil, err
	}
	op, err := s.w.Begin(ctx, s.rel, uint64(viewer), uint64(target))
	if err != nil {
		return nil, err
	}
	at := s.w.NowMillis()
	applied, err := s.update(ctx, viewer, tables.ColBlocks, func(cur []byte) ([]byte, bool, error) {
		b := tables.Blocks(cur)
		if _, ok := b.Find(target); ok {
			return nil, false, nil
		}
		if err := full(cur); err != nil {
			return nil, false, err
		}
		return b.With(tables.BlockEntry{UID: target, At: at}), true, nil
	})
	var bad *weibo.Error
	if errors.As(err, &bad) && bad.Code == weibo.CodeBadUserInput {
		// Full since the first read: nothing written but the marker and
		// the sequence.
		if err := s.w.End(ctx, op); err != nil {
			return nil, err
		}
		return nil, bad
	}
	if err == nil {
		err = s.w.Step(ctx, StepDecided)
	}
	if err != nil {
		return nil, err
	}
	if applied {
		if _, err := s.w.Count(ctx, op, +1); err != nil {
			return nil, err
		}
	}
	blocked := true
	if err := s.settleBlock(ctx, viewer, target, &blocked); errors.Is(err, counted.ErrUnsettled) {
		if err := s.w.Keep(ctx, op, nil); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	s.emitChange(viewer, target)
	return u, s.w.End(ctx, op)
}

// Unblock makes viewer stop blocking target and returns target. It is
// idempotent. Errors: BAD_USER_INPUT when viewer == target, NOT_FOUND
// when target does not exist. Writes, in order, as Block's: the pending
// row, the sequence, the block cell without target (CheckAndPut or, for
// its last entry, CheckAndDelete, against the cell read: the authority),
// the blockCount −1, the settle (the blocked-by cell deleted, the block
// cell re-read), the change published, the pending row deleted. The
// follows the block ended stay ended.
func (s *Service) Unblock(ctx context.Context, viewer, target weibo.UserID) (_ *weibo.User, err error) {
	defer weibo.Wrapf(&err, "unblock %s → %s", viewer, target)
	if viewer == target {
		return nil, weibo.BadInput("userId", "you cannot unblock yourself")
	}
	u, err := s.existingUser(ctx, target)
	if err != nil {
		return nil, err
	}
	cur, err := s.readCell(ctx, viewer, tables.ColBlocks)
	if err != nil {
		return nil, err
	}
	if _, ok := tables.Blocks(cur).Find(target); !ok {
		return u, nil
	}
	op, err := s.w.Begin(ctx, s.rel, uint64(viewer), uint64(target))
	if err != nil {
		return nil, err
	}
	applied, err := s.update(ctx, viewer, tables.ColBlocks, func(cur []byte) ([]byte, bool, error) {
		b := tables.Blocks(cur)
		if _, ok := b.Find(target); !ok {
			return nil, false, nil
		}
		return b.Without(target), true, nil
	})
	if err == nil {
		err = s.w.Step(ctx, StepDecided)
	}
	if err != nil {
		return nil, err
	}
	if applied {
		if _, err := s.w.Count(ctx, op, -1); err != nil {
			return nil, err
		}
	}
	blocked := false
	if err := s.settleBlock(ctx, viewer, target, &blocked); errors.Is(err, counted.ErrUnsettled) {
		if err := s.w.Keep(ctx, op, nil); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	s.emitChange(viewer, target)
	return u, s.w.End(ctx, op)
}

// blockState reads a's block cell: whether it holds b, and since when.
func (s *Service) blockState(ctx context.Context, a, b weibo.UserID) (bool, int64, error) {
	cur, err := s.readCell(ctx, a, tables.ColBlocks)
	if err != nil {
		return false, 0, err
	}
	e, ok := tables.Blocks(cur).Find(b)
	return ok, e.At, nil
}

// settleBlock makes the dependents of the block a → b agree with a's
// block cell, the authority (counted.Settle): b's blocked-by cell of a
// present while the block stands, absent once not; while it stands, no
// follow a → b or b → a (each ended by an unfollow, the follow relation's
// counted write, which is idempotent). It settles from state, the
// block's state as the caller just wrote it (nil to read it);
// counted.ErrUnsettled when the cell kept changing.
func (s *Service) settleBlock(ctx context.Context, a, b weibo.UserID, state *bool) error {
	var blocked bool
	at := s.w.NowMillis()
	if state != nil {
		blocked = *state
	}
	if state == nil || blocked {
		ok, t, err := s.blockState(ctx, a, b)
		if err != nil {
			return err
		}
		if state == nil {
			blocked = ok
		}
		if ok {
			at = t
		}
	}
	read := func(ctx context.Context) (bool, error) {
		ok, _, err := s.blockState(ctx, a, b)
		return ok, err
	}
	write := func(ctx context.Context, blocked bool) error {
		row := tables.SafetyKey(b)
		q := tables.BlockedByQualifier(a)
		// The cell and the row's version in one atomic mutation.
		m := &hbase.RowMutation{Table: tables.Safety, Row: row, Put: hbase.Values{tables.FamSafetyVersion: {tables.ColSafetyVersion: tables.NewSafetyVersion()}}}
		if blocked {
			m.Put[tables.FamSafetyBlockedBy] = map[string][]byte{q: tables.EncodeMillis(at)}
		} else {
			m.Delete = hbase.Values{tables.FamSafetyBlockedBy: {q: nil}}
		}
		err := s.st.MutateRow(ctx, m)
		if err == nil {
			s.refresh(ctx, b, false)
		}
		if err == nil {
			err = s.w.Step(ctx, StepReverse)
		}
		if err != nil || !blocked {
			return err
		}
		if _, err := s.follows.Unfollow(ctx, a, b); err != nil && weibo.CodeOf(err) != weibo.CodeNotFound {
			return err
		}
		if _, err := s.follows.Unfollow(ctx, b, a); err != nil && weibo.CodeOf(err) != weibo.CodeNotFound {
			return err
		}
		return s.w.Step(ctx, StepFollows)
	}
	_, err := counted.Settle(ctx, blocked, func(x, y bool) bool { return x == y }, write, read)
	return err
}

// RepairBlock settles the block a → b from a's block cell (settleBlock):
// what the repairer does for a dead block or unblock, and `gateway fsck
// --repair` for a blocked-by cell without its block, a block without its
// blocked-by cell, or a follow across a block. Errors are the store's,
// or one wrapping counted.ErrUnsettled when the cell kept changing.
func (s *Service) RepairBlock(ctx context.Context, a, b weibo.UserID) error {
	if err := s.settleBlock(ctx, a, b, nil); err != nil {
		return fmt.Errorf("repair block %s → %s: %w", a, b, err)
	}
	return nil
}
