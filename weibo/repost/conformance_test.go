package repost_test

import (
	"cmp"
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
	"github.com/weibohbase/gateway/weibo/fanout"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/repost"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestRepostConformance runs the conformance suite of counted relations
// (countedtest) over the pair (root, repost), through the domain's API,
// on both backends: a repost is killed at every step the repost relation
// declares, at every step of the publish it makes (feed's publish
// relation), right after it was acknowledged (before its fan-out ran) and
// in the middle of its fan-out, and the delete of the repost at every
// step of the repost relation it reaches and right after it was
// acknowledged (a marker of the delete's kind is left then); both outlive
// their budget.
// After the restart's repair the root's repostCount and the reposter's
// postCount are exact, the root's list of reposts holds the repost
// exactly when its content row stands, and holds exactly the stored
// reposts of the root (an earlier one among them), the home timelines
// and inboxes of the users are a recomputation from the stored posts and
// follows, and fsck finds nothing.
//
// The repost's authority is its content row, which the publish writes
// (feed.StepPublishContent follows it) and the delete deletes; the
// delete runs no step right after it: its decided step is the first one
// after it, repost.StepCounted.
func TestRepostConformance(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := domaintest.OwnStore(t, b)
			steps := domaintest.Declared(st, []tables.PendingKind{tables.PendingRepost}, feed.StepPublishOutbox, feed.StepPublishSequenced,
				feed.StepPublishContent, feed.StepPublishCounted, domaintest.StepAcknowledged, fanout.StepWritten)
			m := domaintest.DomainModule(tables.PendingRepost, feed.StepPublishContent, steps, repostPair)
			m.UndoDecided = repost.StepCounted
			m.MarkerKinds = []tables.PendingKind{tables.PendingPostDelete}
			countedtest.Run(t, st, m)
		})
	}
}

// repostPair is a repost with a comment of a fresh user's post by another
// fresh user, who follows the post's author and whom a third fresh user
// follows (whose inbox the repost's fan-out writes); that third user
// reposted the post first. Its reverse deletes the repost the write made
// (in the case's setup).
func repostPair(t *testing.T, d *domain.Domain) *countedtest.Pair[*domain.Domain] {
	ctx := t.Context()
	author, u := domaintest.MustUser(t, d, domaintest.Uniq("author")), domaintest.MustUser(t, d, domaintest.Uniq("reposter"))
	fan := domaintest.MustUser(t, d, domaintest.Uniq("fan"))
	p, err := d.Feed.Publish(ctx, author.ID, "reposted")
	if err != nil {
		t.Fatal(err)
	}
	root := p.ID
	first, err := d.Reposts.Repost(ctx, fan.ID, root, "先转")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range [][2]weibo.UserID{{fan.ID, u.ID}, {u.ID, author.ID}} {
		if _, err := d.Follows.Follow(ctx, f[0], f[1]); err != nil {
			t.Fatal(err)
		}
	}
	var made weibo.PostID
	return &countedtest.Pair[*domain.Domain]{
		Owner: uint64(root.Author), Other: uint64(root.Millis),
		Counters: []counted.Counter{{Kind: feed.PostCount, Owner: uint64(u.ID)}},
		Do: func(ctx context.Context, d *domain.Domain) error {
			r, err := d.Reposts.Repost(ctx, u.ID, root, "worth reading")
			if err == nil {
				made = r.ID
				if r.RepostOfID == nil || *r.RepostOfID != root {
					return fmt.Errorf("repost %+v does not name its root %s", r, root)
				}
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
		// repost's content row, the authority): the first one, and the
		// write's when it stands (the acknowledged one, when the call
		// returned it); exactly the stored reposts of the root, newest
		// first; and the timelines agree.
		Present: func(ctx context.Context, d *domain.Domain) (bool, error) {
			c, err := d.Reposts.Reposts(ctx, root, nil, nil)
			if err != nil {
				return false, err
			}
			var listed, mine []weibo.PostID
			for _, e := range c.Edges {
				listed = append(listed, e.Post.ID)
				switch {
				case e.Post.ID == first.ID:
				case e.Post.ID.Author != u.ID || (made != weibo.PostID{} && e.Post.ID != made):
					return false, fmt.Errorf("repost %s by a stranger", e.Post.ID)
				default:
					mine = append(mine, e.Post.ID)
				}
			}
			var stored []weibo.PostID
			for _, uid := range []weibo.UserID{u.ID, fan.ID} {
				ids, err := domaintest.UserPosts(ctx, d, uid)
				if err != nil {
					return false, err
				}
				ps, err := d.Feed.GetPosts(ctx, ids)
				if err != nil {
					return false, err
				}
				for _, p := range ps {
					if p != nil && p.RepostOfID != nil && *p.RepostOfID == root {
						stored = append(stored, p.ID)
					}
				}
			}
			slices.SortFunc(stored, func(a, b weibo.PostID) int {
				return cmp.Or(cmp.Compare(b.Millis, a.Millis), cmp.Compare(a.Author, b.Author))
			})
			if !slices.Contains(listed, first.ID) || !slices.Equal(listed, stored) || len(mine) > 1 {
				return false, fmt.Errorf("reposts of %s: listed %v, stored %v, the first %s", root, listed, stored, first.ID)
			}
			if err := domaintest.Timelines(ctx, d, author.ID, u.ID, fan.ID); err != nil {
				return false, err
			}
			return len(mine) == 1, nil
		},
	}
}
