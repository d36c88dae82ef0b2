package repost_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted/countedtest"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/repost"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestRepostConformance runs the conformance suite of counted relations
// (countedtest) over the pair (root, repost), through the domain's API,
// on both backends: a repost and the delete of the repost are killed at
// every step the repost relation declares, and outlive their budget;
// after the restart's repair the root's repostCount is exact, the root's
// list of reposts holds the repost exactly when its content row stands,
// and fsck finds nothing.
//
// The relation runs no step right after its authority (the repost's
// content row, written by the publish or the delete): its decided step
// is the first one after it, repost.StepCounted.
func TestRepostConformance(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := domaintest.OwnStore(t, b)
			countedtest.Run(t, st, domaintest.DomainModule(tables.PendingRepost, repost.StepCounted, nil, repostPair))
		})
	}
}

// repostPair is a repost with a comment of a fresh user's post by another
// fresh user; its reverse deletes the repost the write made (in the
// case's setup).
func repostPair(t *testing.T, d *domain.Domain) *countedtest.Pair[*domain.Domain] {
	author, u := domaintest.MustUser(t, d, domaintest.Uniq("author")), domaintest.MustUser(t, d, domaintest.Uniq("reposter"))
	p, err := d.Feed.Publish(t.Context(), author.ID, "reposted")
	if err != nil {
		t.Fatal(err)
	}
	root := p.ID
	var made weibo.PostID
	return &countedtest.Pair[*domain.Domain]{
		Owner: uint64(root.Author), Other: uint64(root.Millis),
		Do: func(ctx context.Context, d *domain.Domain) error {
			r, err := d.Reposts.Repost(ctx, u.ID, root, "worth reading")
			if err == nil {
				made = r.ID
			}
			return err
		},
		Undo: func(ctx context.Context, d *domain.Domain) error {
			deleted, err := d.Feed.DeletePost(ctx, made)
			if err == nil && !deleted {
				err = fmt.Errorf("repost %s: nothing to delete", made)
			}
			return err
		},
		// The root's reposts as read (each entry checked against the
		// repost's content row, the authority): only the write's.
		Present: func(ctx context.Context, d *domain.Domain) (bool, error) {
			c, err := d.Reposts.Reposts(ctx, root, nil, nil)
			if err != nil {
				return false, err
			}
			for _, e := range c.Edges {
				if e.Post.ID.Author != u.ID {
					return false, fmt.Errorf("repost %s by a stranger", e.Post.ID)
				}
			}
			return len(c.Edges) > 0, nil
		},
	}
}
