package feed_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/counted/countedtest"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestDeleteConformance runs the conformance suite of counted relations
// (countedtest) over the delete of a post, through the domain's API, on
// both backends: the pair is a post, made by a publish and unmade by its
// delete, which is killed at every step it runs before it returns, and
// outlives its budget; after the restart's repair the author's postCount
// is exact, the post stands exactly when the delete did not decide, the
// inboxes hold it exactly when it stands, and fsck finds nothing.
//
// The suite needs the pair's decided step in both directions, and its
// markers in weibo:pending: the publish keeps its marker in weibo:outbox
// (the publish relation has no marker kind, so the suite cannot run over
// it) and neither write runs the delete's decided step. The module's hook
// marks it (counted.StepsOf(feed.RelationDelete).Decided) just before the
// step that follows each write's authority, the content row: the
// publish's feed.StepPublishContent and the delete's
// feed.StepDeleteContent. The delete's retraction and the end of its
// marker run in the background once the call has returned, where a kill
// is no error of the call: their steps (feed.StepDeleteRetracted and the
// settled step) are not passed on, and the repairer's settle runs them
// after every crash.
func TestDeleteConformance(t *testing.T) {
	decided := counted.StepsOf(feed.RelationDelete).Decided
	steps := []string{counted.StepsOf(feed.RelationDelete).Marked, counted.StepsOf(feed.RelationDelete).Sequenced,
		feed.StepDeleteContent, counted.StepsOf(feed.RelationDelete).Counted}
	background := []string{feed.StepDeleteRetracted, counted.StepsOf(feed.RelationDelete).Settled}
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := domaintest.OwnStore(t, b)
			m := domaintest.DomainModule(tables.PendingPostDelete, decided, steps, deletePair)
			open := m.Open
			m.Open = func(st hbase.Store, cfg countedtest.Config) *domain.Domain {
				if hook := cfg.Hook; hook != nil {
					cfg.Hook = func(ctx context.Context, step string) error {
						if slices.Contains(background, step) {
							return nil
						}
						if step == feed.StepPublishContent || step == feed.StepDeleteContent {
							if err := hook(ctx, decided); err != nil {
								return err
							}
						}
						return hook(ctx, step)
					}
				}
				return open(st, cfg)
			}
			countedtest.Run(t, st, m)
		})
	}
}

// deletePair is a post of a fresh user with a fresh follower (whose inbox
// the fan-out writes and the retraction clears); its write publishes it,
// its reverse deletes it.
func deletePair(t *testing.T, d *domain.Domain) *countedtest.Pair[*domain.Domain] {
	author, fan := domaintest.MustUser(t, d, domaintest.Uniq("author")), domaintest.MustUser(t, d, domaintest.Uniq("fan"))
	if _, err := d.Follows.Follow(t.Context(), fan.ID, author.ID); err != nil {
		t.Fatal(err)
	}
	var made weibo.PostID
	return &countedtest.Pair[*domain.Domain]{
		Owner: uint64(author.ID),
		Do: func(ctx context.Context, d *domain.Domain) error {
			p, err := d.Feed.Publish(ctx, author.ID, "here for a while")
			if err == nil {
				made = p.ID
			}
			return err
		},
		Undo: func(ctx context.Context, d *domain.Domain) error {
			deleted, err := d.Feed.DeletePost(ctx, made)
			if err == nil && !deleted {
				err = fmt.Errorf("post %s: nothing to delete", made)
			}
			return err
		},
		// The post as read, and the fan's and the author's inbox rows
		// of it: all there, or none.
		Present: func(ctx context.Context, d *domain.Domain) (bool, error) {
			ps, err := d.Feed.GetPosts(ctx, []weibo.PostID{made})
			if err != nil {
				return false, err
			}
			rs, err := d.Store().GetMany(ctx, []*hbase.Get{
				{Table: tables.Inbox, Row: tables.InboxKey(fan.ID, made)},
				{Table: tables.Inbox, Row: tables.InboxKey(author.ID, made)}})
			if err != nil {
				return false, err
			}
			if rs[0].Exists() != (ps[0] != nil) || rs[1].Exists() != (ps[0] != nil) {
				return false, fmt.Errorf("post %s stands: %v, in the inboxes of the fan: %v, of the author: %v",
					made, ps[0] != nil, rs[0].Exists(), rs[1].Exists())
			}
			return ps[0] != nil, nil
		},
	}
}
