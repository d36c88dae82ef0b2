package like_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/weibohbase/gateway/fsck"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/counted/countedtest"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/like"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestLikesGoWithPost deletes a post three users like (one of whom likes
// another post too, one unliked it before), on both backends: once the
// retraction ran, the post's like rows, its likers rows and each liker's
// likes row of it are gone, each liker's likedPostCount is down by one
// (to what their likes recount to), the other post's likes stand, no
// marker is left and fsck finds nothing.
func TestLikesGoWithPost(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			svc := domaintest.Quiet(domaintest.OwnStore(t, b))
			if err := svc.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer svc.Close(context.Background())
			author := domaintest.MustUser(t, svc, domaintest.Uniq("author"))
			var users []weibo.UserID
			for i := range 4 {
				users = append(users, domaintest.MustUser(t, svc, domaintest.Uniq(fmt.Sprintf("liker%d", i))).ID)
			}
			gone, err := svc.Feed.Publish(ctx, author.ID, "deleted soon")
			if err != nil {
				t.Fatal(err)
			}
			kept, err := svc.Feed.Publish(ctx, author.ID, "kept")
			if err != nil {
				t.Fatal(err)
			}
			for _, u := range users {
				if _, err := svc.Likes.Like(ctx, u, gone.ID); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := svc.Likes.Unlike(ctx, users[3], gone.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := svc.Likes.Like(ctx, users[0], kept.ID); err != nil {
				t.Fatal(err)
			}
			want := []int64{2, 1, 1, 0}
			for i, u := range users {
				if n, err := svc.Likes.CountLikedPosts(ctx, u); err != nil || n != want[i] {
					t.Fatalf("user %d before the delete: likedPostCount %d, %v; want %d", i, n, err, want[i])
				}
			}
			if deleted, err := svc.Feed.DeletePost(ctx, gone.ID); err != nil || !deleted {
				t.Fatalf("DeletePost = %v, %v", deleted, err)
			}
			if err := svc.FlushFanout(ctx); err != nil { // the retraction
				t.Fatal(err)
			}
			st := svc.Store()
			for _, pre := range [][]byte{tables.LikePrefix(gone.ID), tables.PostLikersPrefix(gone.ID)} {
				if rows, err := hbase.ScanAll(ctx, st, &hbase.Scan{Table: tables.Likes, Prefix: pre}); err != nil || len(rows) != 0 {
					t.Errorf("rows of the deleted post under %x: %d, %v", pre, len(rows), err)
				}
			}
			for i, u := range users {
				want := want[i]
				if i < 3 {
					want--
				}
				var rows int
				err := st.Scan(ctx, &hbase.Scan{Table: tables.Likes, Prefix: tables.UserLikesPrefix(u)}, func(r *hbase.Result) error {
					if _, _, p, ok := tables.DecodeUserLikeKey(r.Row); ok && p == gone.ID {
						t.Errorf("user %d still lists the deleted post", i)
					}
					rows++
					return nil
				})
				if err != nil || int64(rows) != want {
					t.Errorf("user %d: %d likes rows, %v; want %d", i, rows, err, want)
				}
				if n, err := svc.Likes.CountLikedPosts(ctx, u); err != nil || n != want {
					t.Errorf("user %d after the delete: likedPostCount %d, %v; want %d", i, n, err, want)
				}
				res, err := svc.Writes.RecountCounters(ctx, []counted.Counter{{Kind: like.LikedPostCount, Owner: uint64(u)}})
				if err != nil || !res[0].Done || res[0].Before != res[0].After {
					t.Errorf("user %d: recount %+v, %v", i, res, err)
				}
			}
			if ps, err := svc.Feed.GetPosts(ctx, []weibo.PostID{kept.ID}); err != nil || ps[0] == nil || ps[0].LikeCount != 1 {
				t.Errorf("the kept post: %+v, %v; want likeCount 1", ps, err)
			}
			if rows, err := hbase.ScanAll(ctx, st, &hbase.Scan{Table: tables.Pending}); err != nil || len(rows) != 0 {
				t.Errorf("%d pending rows left (%v)", len(rows), err)
			}
			if rep, err := fsck.Run(ctx, svc, fsck.Options{}); err != nil || len(rep.Issues) > 0 {
				t.Errorf("fsck: %v %+v", err, rep.Issues)
			}
		})
	}
}

// TestLikedPostDeleteConformance runs the conformance suite of counted
// relations (countedtest) over the delete of a post two users like,
// through the domain's API, on both backends: the delete is killed at
// every step it runs, before it returns and in its retraction — among
// them every step of the unlike of a gone post's like its likes' removal
// runs —, and outlives its budget; after the restart's repair the
// author's postCount and each liker's likedPostCount are exact, the post
// and its likes are gone exactly when the delete decided (the post's like
// rows, likers rows and the likers' likes rows all gone with it) and
// fsck finds nothing. The module's hook marks the delete's decided step,
// as TestDeleteConformance's does.
func TestLikedPostDeleteConformance(t *testing.T) {
	s, l := counted.StepsOf(feed.RelationDelete), counted.StepsOf(like.Relation)
	steps := []string{s.Marked, s.Sequenced, feed.StepDeleteContent, s.Counted,
		l.Marked, l.Sequenced, like.StepDecided, l.Counted, like.StepDependents, l.Settled, s.Settled}
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := domaintest.OwnStore(t, b)
			m := domaintest.DomainModule(tables.PendingPostDelete, s.Decided, steps, likedPostDelete)
			m.NoReverse = true
			m.MarkerKinds = []tables.PendingKind{tables.PendingLike}
			domaintest.MarkDecidedBefore(&m, s.Decided, feed.StepDeleteContent)
			countedtest.Run(t, st, m)
		})
	}
}

// likedPostDelete is a fresh post two fresh users like; its write deletes
// it. Present reports the post gone with all its likes' rows, and fails
// on a post gone with some of them left.
func likedPostDelete(t *testing.T, d *domain.Domain) *countedtest.Pair[*domain.Domain] {
	ctx := t.Context()
	author := domaintest.MustUser(t, d, domaintest.Uniq("author"))
	likers := []weibo.UserID{domaintest.MustUser(t, d, domaintest.Uniq("liker")).ID, domaintest.MustUser(t, d, domaintest.Uniq("liker")).ID}
	p, err := d.Feed.Publish(ctx, author.ID, "liked, then deleted")
	if err != nil {
		t.Fatal(err)
	}
	post := p.ID
	for _, u := range likers {
		if _, err := d.Likes.Like(ctx, u, post); err != nil {
			t.Fatal(err)
		}
	}
	var counters []counted.Counter
	for _, u := range likers {
		counters = append(counters, counted.Counter{Kind: like.LikedPostCount, Owner: uint64(u)})
	}
	return &countedtest.Pair[*domain.Domain]{
		Owner:    uint64(author.ID),
		Other:    uint64(post.Millis),
		Counters: counters,
		Do: func(ctx context.Context, d *domain.Domain) error {
			deleted, err := d.Feed.DeletePost(ctx, post)
			if err == nil && !deleted {
				err = fmt.Errorf("post %s: nothing to delete", post)
			}
			return err
		},
		Present: func(ctx context.Context, d *domain.Domain) (bool, error) {
			ps, err := d.Feed.GetPosts(ctx, []weibo.PostID{post})
			if err != nil {
				return false, err
			}
			rows := 0
			count := func(*hbase.Result) error { rows++; return nil }
			for _, pre := range [][]byte{tables.LikePrefix(post), tables.PostLikersPrefix(post)} {
				if err := d.Store().Scan(ctx, &hbase.Scan{Table: tables.Likes, Prefix: pre}, count); err != nil {
					return false, err
				}
			}
			for _, u := range likers {
				err := d.Store().Scan(ctx, &hbase.Scan{Table: tables.Likes, Prefix: tables.UserLikesPrefix(u)}, count)
				if err != nil {
					return false, err
				}
			}
			gone := ps[0] == nil
			if (gone && rows != 0) || (!gone && rows != 3*len(likers)) {
				return false, fmt.Errorf("post %s gone: %v, with %d rows of its likes", post, gone, rows)
			}
			return gone, nil
		},
	}
}

// TestLikeRacingDelete likes a post whose delete and retraction run, to
// their end, between the like's marker and its like row (the step hook
// runs them at like:sequenced), on both backends: the retraction found no
// like to remove, so the like itself must find its post gone — the call
// is NOT_FOUND, the like's rows are gone both ways, the liker's
// likedPostCount is back to 0 and recounts to itself, no marker is left
// and fsck finds nothing.
func TestLikeRacingDelete(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			var (
				svc   *domain.Domain
				post  weibo.PostID
				armed = make(chan struct{}, 1)
			)
			hook := func(ctx context.Context, step string) error {
				if step != like.StepSequenced {
					return nil
				}
				select {
				case <-armed:
				default:
					return nil
				}
				if deleted, err := svc.Feed.DeletePost(ctx, post); err != nil || !deleted {
					return fmt.Errorf("delete in the like: %v, %v", deleted, err)
				}
				return svc.FlushFanout(ctx)
			}
			svc = domaintest.Quiet(domaintest.OwnStore(t, b), domain.WithStepHook(hook))
			if err := svc.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer svc.Close(context.Background())
			author, liker := domaintest.MustUser(t, svc, domaintest.Uniq("author")), domaintest.MustUser(t, svc, domaintest.Uniq("liker"))
			p, err := svc.Feed.Publish(ctx, author.ID, "deleted while liked")
			if err != nil {
				t.Fatal(err)
			}
			post = p.ID
			armed <- struct{}{}
			if _, err := svc.Likes.Like(ctx, liker.ID, post); weibo.CodeOf(err) != weibo.CodeNotFound {
				t.Fatalf("a like whose post went meanwhile: %v, want NOT_FOUND", err)
			}
			st := svc.Store()
			for _, pre := range [][]byte{tables.LikePrefix(post), tables.PostLikersPrefix(post), tables.UserLikesPrefix(liker.ID)} {
				if rows, err := hbase.ScanAll(ctx, st, &hbase.Scan{Table: tables.Likes, Prefix: pre}); err != nil || len(rows) != 0 {
					t.Errorf("like rows under %x: %d, %v", pre, len(rows), err)
				}
			}
			if n, err := svc.Likes.CountLikedPosts(ctx, liker.ID); err != nil || n != 0 {
				t.Errorf("likedPostCount = %d, %v; want 0", n, err)
			}
			res, err := svc.Writes.RecountCounters(ctx, []counted.Counter{{Kind: like.LikedPostCount, Owner: uint64(liker.ID)}})
			if err != nil || !res[0].Done || res[0].Before != res[0].After {
				t.Errorf("recount: %+v, %v", res, err)
			}
			if rows, err := hbase.ScanAll(ctx, st, &hbase.Scan{Table: tables.Pending}); err != nil || len(rows) != 0 {
				t.Errorf("%d pending rows left (%v)", len(rows), err)
			}
			if rep, err := fsck.Run(ctx, svc, fsck.Options{}); err != nil || len(rep.Issues) > 0 {
				t.Errorf("fsck: %v %+v", err, rep.Issues)
			}
		})
	}
}
