package safety_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/counted/countedtest"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/follow"
	"github.com/weibohbase/gateway/weibo/notify"
	"github.com/weibohbase/gateway/weibo/safety"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestBlockConformance runs the conformance suite of counted relations
// (countedtest) over the block, through the domain's API, on both
// backends: a block of a user who follows the blocker and whom the
// blocker follows, and its unblock, are killed at every step of the
// block's counted write (the blocked-by cell, the follows ended) and of
// the two unfollows it makes; after the restart's repair the blocker's
// blockCount and both users' followCount, fanCount and unread count are
// exact, the
// block is as the call decided, the blocked user's blocked-by cell
// agrees with it, no follow stands across it, and fsck finds nothing.
func TestBlockConformance(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := domaintest.OwnStore(t, b)
			steps := domaintest.Declared(st, []tables.PendingKind{tables.PendingBlock},
				append([]string{follow.StepMarked, follow.StepDecided, follow.StepCounted, follow.StepFans, follow.StepInbox}, domaintest.NotifySteps...)...)
			countedtest.Run(t, st, domaintest.DomainModule(tables.PendingBlock, safety.StepDecided, steps, blockPair))
		})
	}
}

// blockPair is a's block of b, where a and b follow each other. Neither
// has posts: an unfollow racing a fan-out keeps its marker for the
// repairer after the grace (package follow's own suite covers it).
func blockPair(t *testing.T, d *domain.Domain) *countedtest.Pair[*domain.Domain] {
	ctx := t.Context()
	a, b := domaintest.MustUser(t, d, domaintest.Uniq("a")), domaintest.MustUser(t, d, domaintest.Uniq("b"))
	for _, f := range [][2]weibo.UserID{{a.ID, b.ID}, {b.ID, a.ID}} {
		if _, err := d.Follows.Follow(ctx, f[0], f[1]); err != nil {
			t.Fatal(err)
		}
	}
	st := d.Store()
	return &countedtest.Pair[*domain.Domain]{
		Owner: uint64(a.ID), Other: uint64(b.ID),
		Counters: []counted.Counter{
			{Kind: follow.FollowCount, Owner: uint64(a.ID)}, {Kind: follow.FanCount, Owner: uint64(a.ID)},
			{Kind: follow.FollowCount, Owner: uint64(b.ID)}, {Kind: follow.FanCount, Owner: uint64(b.ID)},
			{Kind: notify.UnreadCount, Owner: uint64(a.ID)}, {Kind: notify.UnreadCount, Owner: uint64(b.ID)},
		},
		Do: func(ctx context.Context, d *domain.Domain) error {
			_, err := d.Safety.Block(ctx, a.ID, b.ID)
			return err
		},
		Undo: func(ctx context.Context, d *domain.Domain) error {
			_, err := d.Safety.Unblock(ctx, a.ID, b.ID)
			return err
		},
		// The block as a's Set reads it, b's blocked-by cell, and no
		// follow either way while it stands.
		Present: func(ctx context.Context, d *domain.Domain) (bool, error) {
			sa, err := d.Safety.SetOf(ctx, a.ID)
			if err != nil {
				return false, err
			}
			sb, err := d.Safety.SetOf(ctx, b.ID)
			if err != nil {
				return false, err
			}
			blocked := sa.Blocks(b.ID)
			if sb.BlockedBy(a.ID) != blocked || sb.Blocks(a.ID) {
				return false, fmt.Errorf("a blocks b: %v; b's blocked-by cell of a: %v", blocked, sb.BlockedBy(a.ID))
			}
			if blocked {
				rs, err := st.GetMany(ctx, []*hbase.Get{
					{Table: tables.Relations, Row: tables.RelationKey(a.ID, tables.Attends, b.ID)},
					{Table: tables.Relations, Row: tables.RelationKey(b.ID, tables.Attends, a.ID)},
				})
				if err != nil {
					return false, err
				}
				if rs[0].Exists() || rs[1].Exists() {
					return false, fmt.Errorf("a follow across the block: a → b %v, b → a %v", rs[0].Exists(), rs[1].Exists())
				}
				if err := domaintest.Timelines(ctx, d, a.ID, b.ID); err != nil {
					return false, err
				}
			}
			return blocked, nil
		},
	}
}
