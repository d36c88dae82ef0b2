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
	"github.com/weibohbase/gateway/weibo/fanout"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/follow"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestDeleteConformance runs the conformance suite of counted relations
// (countedtest) over the delete of a post, through the domain's API, on
// both backends: the pair is a post, made by a publish and unmade by its
// delete, which is killed at every step it runs — before it returns, and
// in its retraction, which runs in the background once it has returned
// (domaintest.DomainModule makes a kill there the call's) —, and outlives
// its budget; after the restart's repair the author's postCount is exact,
// the post stands exactly when the delete did not decide, the inboxes
// hold it exactly when it stands, and fsck finds nothing.
//
// The suite needs the pair's decided step in both directions, and its
// markers in weibo:pending: the publish keeps its marker in weibo:outbox
// (TestPublishConformance runs the suite over it) and neither write runs
// the delete's decided step. The module's hook marks it
// (counted.StepsOf(feed.RelationDelete).Decided) just before the step
// that follows each write's authority, the content row: the publish's
// feed.StepPublishContent and the delete's feed.StepDeleteContent.
func TestDeleteConformance(t *testing.T) {
	s := counted.StepsOf(feed.RelationDelete)
	steps := []string{s.Marked, s.Sequenced, feed.StepDeleteContent, s.Counted, feed.StepDeleteRetracted, s.Settled}
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := domaintest.OwnStore(t, b)
			m := domaintest.DomainModule(tables.PendingPostDelete, s.Decided, steps, deletePair)
			domaintest.MarkDecidedBefore(&m, s.Decided, feed.StepPublishContent, feed.StepDeleteContent)
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

// TestPublishConformance runs the conformance suite of counted relations
// (countedtest) over the publish, through the domain's API, on both
// backends: the pair is a post of an author with posts and two fans, made
// by a publish and unmade by its delete. The publish is killed at every
// step it runs — those of its relation, right after it was acknowledged
// (domaintest.StepAcknowledged: before its fan-out ran) and in the middle
// of its fan-out (fanout.StepWritten) —, and outlives its budget; the
// delete is killed right after it was acknowledged (before its
// retraction ran). After the restart's repair — the fan-out's outbox
// sweep, which repairs a publish — no outbox row is left, the author's
// postCount is exact, the post stands exactly when the publish decided it
// (its content row) and the delete did not, every post acknowledged
// before it stands, the home timelines and inboxes of the author and the
// fans are exactly a recomputation from the stored posts and follows
// (domaintest.Timelines), and fsck finds nothing. A publish killed
// right after it was acknowledged has, before the restart, put the post
// into its author's inbox and into no fan's.
//
// The publish relation has no marker kind: its marker is the post's
// weibo:outbox row (the module's MarkerTables), and its counters are the
// pair's. Its reverse, the delete, leaves a marker of the delete's kind.
func TestPublishConformance(t *testing.T) {
	steps := []string{feed.StepPublishOutbox, feed.StepPublishSequenced, feed.StepPublishContent, feed.StepPublishCounted,
		domaintest.StepAcknowledged, fanout.StepWritten}
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := domaintest.OwnStore(t, b)
			m := domaintest.DomainModule(0, feed.StepPublishContent, steps, publishPair)
			m.Relation = feed.RelationPublish
			m.UndoDecided = feed.StepDeleteContent
			m.MarkerKinds = []tables.PendingKind{tables.PendingPostDelete}
			countedtest.Run(t, st, m)
		})
	}
}

// publishPair is a post of a fresh author who has published twice and
// whom two fresh fans follow (whose inboxes the fan-out writes); its
// write publishes it, its reverse deletes it.
func publishPair(t *testing.T, d *domain.Domain) *countedtest.Pair[*domain.Domain] {
	ctx := t.Context()
	author := domaintest.MustUser(t, d, domaintest.Uniq("author"))
	fans := []weibo.UserID{domaintest.MustUser(t, d, domaintest.Uniq("fan")).ID, domaintest.MustUser(t, d, domaintest.Uniq("fan")).ID}
	var before []weibo.PostID
	for i := range 2 {
		p, err := d.Feed.Publish(ctx, author.ID, fmt.Sprintf("before %d", i))
		if err != nil {
			t.Fatal(err)
		}
		before = append(before, p.ID)
	}
	for _, fan := range fans {
		if _, err := d.Follows.Follow(ctx, fan, author.ID); err != nil {
			t.Fatal(err)
		}
	}
	const text = "the last words"
	var made weibo.PostID
	return &countedtest.Pair[*domain.Domain]{
		Owner: uint64(author.ID),
		Counters: []counted.Counter{{Kind: feed.PostCount, Owner: uint64(author.ID)},
			{Kind: follow.FanCount, Owner: uint64(author.ID)},
			{Kind: follow.FollowCount, Owner: uint64(fans[0])}, {Kind: follow.FollowCount, Owner: uint64(fans[1])}},
		Do: func(ctx context.Context, d *domain.Domain) error {
			p, err := d.Feed.Publish(ctx, author.ID, text)
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
		// The author's stored posts: the ones before, and the pair's
		// post when it stands (the acknowledged one, when the publish
		// returned it); and the timelines agree.
		Present: func(ctx context.Context, d *domain.Domain) (bool, error) {
			stored, err := domaintest.UserPosts(ctx, d, author.ID)
			if err != nil {
				return false, err
			}
			for _, id := range before {
				if !slices.Contains(stored, id) {
					return false, fmt.Errorf("acknowledged post %s is missing", id)
				}
			}
			var mine []weibo.PostID
			for _, id := range stored {
				if !slices.Contains(before, id) {
					mine = append(mine, id)
				}
			}
			if len(mine) > 1 || (len(mine) == 1 && made != (weibo.PostID{}) && mine[0] != made) {
				return false, fmt.Errorf("posts %v stored besides the ones before, want at most the post made (%s)", mine, made)
			}
			if err := domaintest.Timelines(ctx, d, append([]weibo.UserID{author.ID}, fans...)...); err != nil {
				return false, err
			}
			return len(mine) == 1, nil
		},
		// A publish acknowledged and killed before its fan-out ran: the
		// post is in its author's inbox at once, and in no fan's.
		Killed: func(ctx context.Context, d *domain.Domain, undo bool, step string) error {
			if undo || step != domaintest.StepAcknowledged {
				return nil
			}
			rs, err := d.Store().GetMany(ctx, []*hbase.Get{{Table: tables.Inbox, Row: tables.InboxKey(author.ID, made)},
				{Table: tables.Inbox, Row: tables.InboxKey(fans[0], made)}, {Table: tables.Inbox, Row: tables.InboxKey(fans[1], made)}})
			if err != nil {
				return err
			}
			if !rs[0].Exists() || rs[1].Exists() || rs[2].Exists() {
				return fmt.Errorf("post %s in the inboxes of its author: %v, of its fans: %v, %v (want the author's alone)",
					made, rs[0].Exists(), rs[1].Exists(), rs[2].Exists())
			}
			return nil
		},
	}
}
