package comment_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/comment"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/counted/countedtest"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/notify"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestCommentConformance runs the conformance suite of counted relations
// (countedtest) over the comment, through the domain's API, on both
// backends: a comment and its delete are killed at every step of their
// counted write and of the notify write they make, and outlive their
// budget; after the restart's repair the post's commentCount and the
// author's unread count are exact, the comment is as the call decided and
// fsck finds nothing.
func TestCommentConformance(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := domaintest.OwnStore(t, b)
			steps := domaintest.Declared(st, []tables.PendingKind{tables.PendingComment},
				append([]string{comment.StepDecided, notify.StepActor, notify.StepGroup}, domaintest.NotifyWrite...)...)
			countedtest.Run(t, st, domaintest.DomainModule(tables.PendingComment, comment.StepDecided, steps, commentPair))
		})
	}
}

// commentPair is a comment of a fresh user on a fresh post; its reverse
// deletes the comment the write made (in the case's setup).
func commentPair(t *testing.T, d *domain.Domain) *countedtest.Pair[*domain.Domain] {
	author, u := domaintest.MustUser(t, d, domaintest.Uniq("author")), domaintest.MustUser(t, d, domaintest.Uniq("commenter"))
	p, err := d.Feed.Publish(t.Context(), author.ID, "commented")
	if err != nil {
		t.Fatal(err)
	}
	post := p.ID
	var made weibo.CommentID
	return &countedtest.Pair[*domain.Domain]{
		Owner: uint64(post.Author), Other: uint64(post.Millis),
		Counters: []counted.Counter{{Kind: notify.UnreadCount, Owner: uint64(author.ID)}},
		Do: func(ctx context.Context, d *domain.Domain) error {
			c, err := d.Comments.AddComment(ctx, u.ID, post, "the words", nil)
			if err == nil {
				made = c.ID
			}
			return err
		},
		Undo: func(ctx context.Context, d *domain.Domain) error {
			deleted, err := d.Comments.DeleteComment(ctx, u.ID, made)
			if err == nil && !deleted {
				err = fmt.Errorf("comment %s: nothing to delete", made)
			}
			return err
		},
		// The post's stored comments: only the write's; and the author's
		// COMMENT notification by the commenter, there while the comment
		// is (a delete leaves it).
		Present: func(ctx context.Context, d *domain.Domain) (bool, error) {
			found := false
			err := d.Store().Scan(ctx, &hbase.Scan{Table: tables.Comments, Prefix: tables.CommentsPrefix(post)}, func(r *hbase.Result) error {
				found = found || tables.CommentStored(r)
				return nil
			})
			if err != nil {
				return false, err
			}
			ns, err := d.Notify.Notifications(ctx, author.ID, nil, nil)
			if err != nil {
				return false, err
			}
			notified := false
			for _, e := range ns.Edges {
				n := e.Notification
				notified = notified || n.Kind == notify.KindComment && len(n.Newest) == 1 && n.Newest[0].User == u.ID
			}
			if found && !notified {
				return false, fmt.Errorf("comment stored: %v, its notification: %v", found, notified)
			}
			return found, nil
		},
	}
}
