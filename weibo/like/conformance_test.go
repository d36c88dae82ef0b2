package like_test

import (
	"context"
	"testing"

	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/counted/countedtest"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/like"
	"github.com/weibohbase/gateway/weibo/notify"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestLikeConformance runs the conformance suite of counted relations
// (countedtest) over the like, through the domain's API, on both
// backends: a like and an unlike are killed at every step of their
// counted write and of the notify write they make, and outlive their
// budget; after the restart's repair the post's likeCount, the liker's
// likedPostCount and the author's unread count are exact, the like is as the call decided and fsck finds
// nothing.
func TestLikeConformance(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := domaintest.OwnStore(t, b)
			steps := domaintest.Declared(st, []tables.PendingKind{tables.PendingLike},
				append([]string{like.StepDecided, like.StepDependents}, domaintest.NotifySteps...)...)
			countedtest.Run(t, st, domaintest.DomainModule(tables.PendingLike, like.StepDecided, steps, likePair))
		})
	}
}

// likePair is a like of a fresh post by a fresh user; the post's author,
// whom the like notifies, has an unread count to keep exact.
func likePair(t *testing.T, d *domain.Domain) *countedtest.Pair[*domain.Domain] {
	author, liker := domaintest.MustUser(t, d, domaintest.Uniq("author")), domaintest.MustUser(t, d, domaintest.Uniq("liker"))
	p, err := d.Feed.Publish(t.Context(), author.ID, "liked")
	if err != nil {
		t.Fatal(err)
	}
	post := p.ID
	return &countedtest.Pair[*domain.Domain]{
		Owner: uint64(post.Author), Other: uint64(post.Millis),
		// The liker, as the marker names them: their likedPostCount.
		Extra:    tables.EncodeLikeExtra(liker.ID, 0),
		Counters: []counted.Counter{{Kind: notify.UnreadCount, Owner: uint64(author.ID)}},
		Do: func(ctx context.Context, d *domain.Domain) error {
			_, err := d.Likes.Like(ctx, liker.ID, post)
			return err
		},
		Undo: func(ctx context.Context, d *domain.Domain) error {
			_, err := d.Likes.Unlike(ctx, liker.ID, post)
			return err
		},
		Present: func(ctx context.Context, d *domain.Domain) (bool, error) {
			l, err := d.Likes.IsLiked(ctx, liker.ID, []weibo.PostID{post})
			if err != nil {
				return false, err
			}
			return l[0], nil
		},
	}
}
