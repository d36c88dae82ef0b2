package follow_test

import (
	"context"
	"fmt"
	"slices"
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
// the follow is as the call decided, both sides list it exactly then, the
// followed user's FOLLOW notifications hold exactly the follower then,
// both users' home timelines and inboxes are a recomputation from the
// stored posts and follows (the backfill, and its removal) and fsck finds
// nothing.
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
	var posts []weibo.PostID
	for i := range 2 {
		p, err := d.Feed.Publish(ctx, b.ID, fmt.Sprintf("before %d", i))
		if err != nil {
			t.Fatal(err)
		}
		posts = append([]weibo.PostID{p.ID}, posts...)
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
		// The follow as read, both sides' lists, the FOLLOW
		// notifications of b, b's posts and both users' timelines.
		Present: func(ctx context.Context, d *domain.Domain) (bool, error) {
			f, err := d.Follows.IsFollowing(ctx, a.ID, []weibo.UserID{b.ID})
			if err != nil {
				return false, err
			}
			want := map[bool][]weibo.UserID{true: {b.ID}}[f[0]]
			follows, err := d.Follows.FollowList(ctx, a.ID, nil, nil)
			if err != nil {
				return false, err
			}
			fans, err := d.Follows.FanList(ctx, b.ID, nil, nil)
			if err != nil {
				return false, err
			}
			var got [2][]weibo.UserID
			for _, e := range follows.Edges {
				got[0] = append(got[0], e.User)
			}
			for _, e := range fans.Edges {
				got[1] = append(got[1], e.User)
			}
			c, err := d.Notify.Notifications(ctx, b.ID, nil, nil)
			if err != nil {
				return false, err
			}
			var ids []weibo.NotificationID
			for _, e := range c.Edges {
				if e.Notification.Kind == notify.KindFollow {
					ids = append(ids, e.Notification.ID)
				}
			}
			actors, err := d.Notify.NotificationActors(ctx, ids)
			if err != nil {
				return false, err
			}
			var notified []weibo.UserID
			for _, as := range actors {
				for _, x := range as {
					notified = append(notified, x.User)
				}
			}
			wantFans := map[bool][]weibo.UserID{true: {a.ID}}[f[0]]
			if !slices.Equal(got[0], want) || !slices.Equal(got[1], wantFans) || !slices.Equal(notified, wantFans) {
				return false, fmt.Errorf("following: %v; a follows %v, b's fans %v, b's FOLLOW notifications of %v", f[0], got[0], got[1], notified)
			}
			if stored, err := domaintest.UserPosts(ctx, d, b.ID); err != nil || !slices.Equal(stored, posts) {
				return false, fmt.Errorf("posts of b: %v, want the acknowledged %v (%v)", stored, posts, err)
			}
			if err := domaintest.Timelines(ctx, d, a.ID, b.ID); err != nil {
				return false, err
			}
			return f[0], nil
		},
	}
}
