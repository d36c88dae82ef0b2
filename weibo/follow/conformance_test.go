package follow_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/counted/countedtest"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/follow"
	"github.com/weibohbase/gateway/weibo/notify"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestFollowConformance runs the conformance suite of counted relations
// (countedtest) over the follow, through the domain's API, on both
// backends: a follow and an unfollow are killed at every step of their
// counted write (the fans row, the inbox backfill) and of the notify
// write they make, and outlive their budget; after the restart's repair
// both users' counters and the followed user's unread count are exact,
// the follow is as the call decided and fsck finds nothing.
func TestFollowConformance(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := domaintest.OwnStore(t, b)
			steps := domaintest.Declared(st, []tables.PendingKind{tables.PendingFollow},
				append([]string{follow.StepDecided, follow.StepFans, follow.StepInbox}, domaintest.NotifySteps...)...)
			countedtest.Run(t, st, domaintest.DomainModule(tables.PendingFollow, follow.StepDecided, steps, followPair))
		})
	}
}

// followPair is a follow of a fresh user with posts (the backfill of the
// follower's inbox) by another: the first follower, whose follow makes
// the FOLLOW notification and whose unfollow deletes it.
func followPair(t *testing.T, d *domain.Domain) *countedtest.Pair[*domain.Domain] {
	ctx := t.Context()
	a, b := domaintest.MustUser(t, d, domaintest.Uniq("a")), domaintest.MustUser(t, d, domaintest.Uniq("b"))
	for i := range 2 {
		if _, err := d.Feed.Publish(ctx, b.ID, fmt.Sprintf("before %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	return &countedtest.Pair[*domain.Domain]{
		Owner: uint64(a.ID), Other: uint64(b.ID),
		Counters: []counted.Counter{{Kind: notify.UnreadCount, Owner: uint64(b.ID)}},
		Do: func(ctx context.Context, d *domain.Domain) error {
			_, err := d.Follows.Follow(ctx, a.ID, b.ID)
			return err
		},
		Undo: func(ctx context.Context, d *domain.Domain) error {
			_, err := d.Follows.Unfollow(ctx, a.ID, b.ID)
			return err
		},
		Present: func(ctx context.Context, d *domain.Domain) (bool, error) {
			f, err := d.Follows.IsFollowing(ctx, a.ID, []weibo.UserID{b.ID})
			if err != nil {
				return false, err
			}
			return f[0], nil
		},
	}
}
