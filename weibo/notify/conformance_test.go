package notify_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted/countedtest"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/like"
	"github.com/weibohbase/gateway/weibo/notify"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestNotifyConformance runs the conformance suite of counted relations
// (countedtest) over the notify relation, through the domain's API, on
// both backends: the notify write of a like of a post whose LIKE
// notification the author has read already (another user liked the post
// first: the like starts the notification's next generation) and of the
// unlike that empties that generation again are killed at every step of
// the notify write they reach,
// and outlive their budget; after the restart's repair the recipient's
// unread count is exact, the notification holds the actor exactly when
// the like stands, and fsck finds nothing. The relation declares one step
// more, notify.StepRead, which only markNotificationsRead runs: the steps
// are the ones the pair reaches (domaintest.NotifySteps).
func TestNotifyConformance(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := domaintest.OwnStore(t, b)
			countedtest.Run(t, st, domaintest.DomainModule(tables.PendingNotify, like.StepDecided, domaintest.NotifySteps, noticePair))
		})
	}
}

// noticePair is the LIKE notification of a fresh post, liked by one user
// and read by its author, and a second liker of the post: the pair
// (recipient, actor) of the notify relation.
func noticePair(t *testing.T, d *domain.Domain) *countedtest.Pair[*domain.Domain] {
	ctx := t.Context()
	author := domaintest.MustUser(t, d, domaintest.Uniq("author"))
	first, liker := domaintest.MustUser(t, d, domaintest.Uniq("first")), domaintest.MustUser(t, d, domaintest.Uniq("liker"))
	p, err := d.Feed.Publish(ctx, author.ID, "liked twice")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Likes.Like(ctx, first.ID, p.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Notify.MarkNotificationsRead(ctx, author.ID, nil); err != nil {
		t.Fatal(err)
	}
	return &countedtest.Pair[*domain.Domain]{
		Owner: uint64(author.ID), Other: uint64(liker.ID),
		Do: func(ctx context.Context, d *domain.Domain) error {
			_, err := d.Likes.Like(ctx, liker.ID, p.ID)
			return err
		},
		Undo: func(ctx context.Context, d *domain.Domain) error {
			_, err := d.Likes.Unlike(ctx, liker.ID, p.ID)
			return err
		},
		// The author's LIKE notifications: the read one with the first
		// liker alone, and an unread one with the pair's liker alone
		// exactly when the pair is present.
		Present: func(ctx context.Context, d *domain.Domain) (bool, error) {
			c, err := d.Notify.Notifications(ctx, author.ID, nil, nil)
			if err != nil {
				return false, err
			}
			var got []string
			for _, e := range c.Edges {
				n := e.Notification
				var actors []weibo.UserID
				for _, a := range n.Newest {
					actors = append(actors, a.User)
				}
				got = append(got, fmt.Sprintf("%s read=%v %v", n.Kind, n.Read, actors))
			}
			read := fmt.Sprintf("%s read=true %v", notify.KindLike, []weibo.UserID{first.ID})
			unread := fmt.Sprintf("%s read=false %v", notify.KindLike, []weibo.UserID{liker.ID})
			switch {
			case slices.Equal(got, []string{read}):
				return false, nil
			case slices.Equal(got, []string{unread, read}):
				return true, nil
			}
			return false, fmt.Errorf("notifications of the author: %q", got)
		},
	}
}
