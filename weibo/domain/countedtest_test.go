package domain_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"

	"github.com/weibohbase/gateway/fsck"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/comment"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/counted/countedtest"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/follow"
	"github.com/weibohbase/gateway/weibo/like"
	"github.com/weibohbase/gateway/weibo/notify"
	"github.com/weibohbase/gateway/weibo/tables"
)

// conformanceDomain builds the domain the way a gateway process over st
// does, quiet, with the suite's clock, grace and step hook.
func conformanceDomain(st hbase.Store, cfg countedtest.Config) *domain.Domain {
	return domain.New(st, domain.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		domain.WithBcryptCost(4), domain.WithOutboxSweep(0), domain.WithClock(cfg.Now),
		domain.WithRepairGrace(cfg.Grace), domain.WithFanoutLease(cfg.Grace/2), domain.WithStepHook(cfg.Hook))
}

// domainModule is the part of every module of the domain's relations: its
// wiring, its background work (the fan-out, whose sweep also repairs) and
// `gateway fsck` over the whole store.
func domainModule(marker tables.PendingKind, decided string, steps []string,
	setup func(t *testing.T, d *domain.Domain) *countedtest.Pair[*domain.Domain]) countedtest.Module[*domain.Domain] {
	return countedtest.Module[*domain.Domain]{
		Marker:   marker,
		Steps:    steps,
		Decided:  decided,
		Open:     conformanceDomain,
		Protocol: func(d *domain.Domain) *counted.Protocol { return d.Writes },
		Quiesce: func(ctx context.Context, d *domain.Domain) error {
			if err := d.Start(ctx); err != nil {
				return err
			}
			if err := d.FlushFanout(ctx); err != nil {
				return err
			}
			return d.Close(ctx)
		},
		Setup: setup,
		Fsck: func(ctx context.Context, d *domain.Domain) ([]string, error) {
			rep, err := fsck.Run(ctx, d, fsck.Options{RepairGrace: countedtest.Grace})
			if err != nil {
				return nil, err
			}
			var out []string
			for _, i := range rep.Issues {
				out = append(out, fmt.Sprintf("%s: %s", i.Kind, i.Detail))
			}
			return out, nil
		},
	}
}

// declared returns the steps the relations of kinds declare on the
// domain's protocol, then more, each once.
func declared(st hbase.Store, kinds []tables.PendingKind, more ...string) []string {
	p := domain.New(st).Writes
	var out []string
	for _, k := range kinds {
		out = append(out, p.Steps(k)...)
	}
	for _, s := range more {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// notifyWrite are the protocol's steps of the notify write an action
// makes, and notifySteps those and the steps of its own it reaches (the
// notify relation declares more: markNotificationsRead's).
var (
	notifyWrite = []string{notify.StepMarked, notify.StepSequenced, notify.StepCounted, counted.StepsOf(notify.Relation).Settled}
	notifySteps = append(slices.Clone(notifyWrite), notify.StepActor, notify.StepGroup, notify.StepIndexed)
)

// TestConformance runs the conformance suite of counted relations
// (countedtest) over the like, the follow and the comment, through the
// domain's API, on both backends: each is killed at every step of its
// counted write and of the notify write it makes, and outlives its
// budget, for the write and its reverse, and after the restart's repair
// its counters (and the notified user's unread count) are exact, the pair
// is as the call decided and fsck finds nothing.
func TestConformance(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Run("like", func(t *testing.T) {
				st := domaintest.OwnStore(t, b)
				steps := declared(st, []tables.PendingKind{tables.PendingLike},
					append([]string{like.StepDecided, like.StepDependents}, notifySteps...)...)
				countedtest.Run(t, st, domainModule(tables.PendingLike, like.StepDecided, steps, likePair))
			})
			t.Run("follow", func(t *testing.T) {
				st := domaintest.OwnStore(t, b)
				steps := declared(st, []tables.PendingKind{tables.PendingFollow},
					append([]string{follow.StepDecided, follow.StepFans, follow.StepInbox}, notifySteps...)...)
				countedtest.Run(t, st, domainModule(tables.PendingFollow, follow.StepDecided, steps, followPair))
			})
			t.Run("comment", func(t *testing.T) {
				st := domaintest.OwnStore(t, b)
				steps := declared(st, []tables.PendingKind{tables.PendingComment},
					append([]string{comment.StepDecided, notify.StepActor, notify.StepGroup}, notifyWrite...)...)
				countedtest.Run(t, st, domainModule(tables.PendingComment, comment.StepDecided, steps, commentPair))
			})
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
		// The post's stored comments: only the write's.
		Present: func(ctx context.Context, d *domain.Domain) (bool, error) {
			found := false
			err := d.Store().Scan(ctx, &hbase.Scan{Table: tables.Comments, Prefix: tables.CommentsPrefix(post)}, func(r *hbase.Result) error {
				found = found || tables.CommentStored(r)
				return nil
			})
			return found, err
		},
	}
}
