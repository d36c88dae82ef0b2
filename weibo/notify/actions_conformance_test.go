package notify_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/comment"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/counted/countedtest"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/like"
	"github.com/weibohbase/gateway/weibo/notify"
	"github.com/weibohbase/gateway/weibo/tables"
)

// The conformance runs of this file run the suite over the notified
// actions, each on a scene of its own: its pair checks, besides the
// action itself, that every notification of the scene agrees with the
// actions' authorities (scene.agree).

// scene is what one case of a notified action writes on: a post of a,
// commented by u1 (a COMMENT notification of a), and the users u2 (who
// acts) and x (whom u2 mentions).
type scene struct {
	a, u1, u2, x *weibo.User
	post         weibo.PostID
	c1           weibo.CommentID
}

func newScene(t *testing.T, d *domain.Domain) *scene {
	ctx := t.Context()
	sc := &scene{a: domaintest.MustUser(t, d, domaintest.Uniq("a")), u1: domaintest.MustUser(t, d, domaintest.Uniq("u1")),
		u2: domaintest.MustUser(t, d, domaintest.Uniq("u2")), x: domaintest.MustUser(t, d, domaintest.Uniq("x"))}
	p, err := d.Feed.Publish(ctx, sc.a.ID, "crash test")
	if err != nil {
		t.Fatal(err)
	}
	sc.post = p.ID
	c1, err := d.Comments.AddComment(ctx, sc.u1.ID, p.ID, "first", nil)
	if err != nil {
		t.Fatal(err)
	}
	sc.c1 = c1.ID
	return sc
}

// like has uid like the scene's post.
func (sc *scene) like(t *testing.T, d *domain.Domain, uid weibo.UserID) {
	if _, err := d.Likes.Like(t.Context(), uid, sc.post); err != nil {
		t.Fatal(err)
	}
}

// unread returns the unread counts of the scene's users: the counters
// every case keeps exact.
func (sc *scene) unread() []counted.Counter {
	var cs []counted.Counter
	for _, u := range []*weibo.User{sc.a, sc.u1, sc.u2, sc.x} {
		cs = append(cs, counted.Counter{Kind: notify.UnreadCount, Owner: uint64(u.ID)})
	}
	return cs
}

// agree checks that every notification of the scene agrees with the
// actions that stand: a's LIKE notification holds exactly the likers of
// the post (none when there are none), its FOLLOW one u2 exactly when u2
// follows a, a's COMMENT notifications are one a comment (u1's, and u2's
// when it stands), u1's REPLY, a's REPOST and x's MENTION notifications
// hold u2 exactly when u2's reply (or repost) stands, and every unread
// count equals the unread notifications listed.
func (sc *scene) agree(t *testing.T, d *domain.Domain) {
	t.Helper()
	ctx := t.Context()
	var likers []weibo.UserID
	for _, u := range []weibo.UserID{sc.u1.ID, sc.u2.ID} {
		liked, err := d.Likes.IsLiked(ctx, u, []weibo.PostID{sc.post})
		if err != nil {
			t.Fatal(err)
		}
		if liked[0] {
			likers = append(likers, u)
		}
	}
	wantActors(t, d, sc.a.ID, notify.KindLike, likers)
	follows, err := d.Follows.IsFollowing(ctx, sc.u2.ID, []weibo.UserID{sc.a.ID})
	if err != nil {
		t.Fatal(err)
	}
	wantActors(t, d, sc.a.ID, notify.KindFollow, map[bool][]weibo.UserID{true: {sc.u2.ID}}[follows[0]])
	var replied, reposted []weibo.UserID
	comments := domaintest.PostComments(t, d, sc.post, 5)
	if slices.ContainsFunc(comments, func(c weibo.CommentID) bool { return c.Author == sc.u2.ID }) {
		replied = []weibo.UserID{sc.u2.ID}
	}
	reposts, err := d.Reposts.Reposts(ctx, sc.post, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(reposts.Edges) > 0 {
		reposted = []weibo.UserID{sc.u2.ID}
	}
	// One COMMENT a comment (u2's reply is one too).
	if got := actorSets(t, d, sc.a.ID, notify.KindComment); len(got) != 1+len(replied) ||
		!slices.ContainsFunc(got, func(s []weibo.UserID) bool { return slices.Equal(s, []weibo.UserID{sc.u1.ID}) }) ||
		(len(replied) == 1 && !slices.ContainsFunc(got, func(s []weibo.UserID) bool { return slices.Equal(s, replied) })) {
		t.Fatalf("COMMENT notifications of a: %v, want u1's and u2's if stored (%v)", got, replied)
	}
	wantActors(t, d, sc.u1.ID, notify.KindReply, replied)
	wantActors(t, d, sc.a.ID, notify.KindRepost, reposted)
	wantActors(t, d, sc.x.ID, notify.KindMention, append(replied, reposted...))
	for _, u := range []weibo.UserID{sc.a.ID, sc.u1.ID, sc.u2.ID, sc.x.ID} {
		n := int64(0)
		for _, x := range domaintest.Notifs(t, d, u, 4) {
			if !x.Read {
				n++
			}
		}
		if got := domaintest.Unread(t, d, u); got != n {
			t.Fatalf("unread count of %s = %d, %d unread listed", u, got, n)
		}
	}
}

// actorSets returns the actors of uid's notifications of kind, one sorted
// set per notification, checking that each lists all its actors
// (ActorCount) once.
func actorSets(t *testing.T, svc *domain.Domain, uid weibo.UserID, kind notify.NotificationKind) [][]weibo.UserID {
	t.Helper()
	var out [][]weibo.UserID
	for _, n := range domaintest.Notifs(t, svc, uid, 3) {
		if n.Kind != kind {
			continue
		}
		var set []weibo.UserID
		for _, a := range n.Newest {
			set = append(set, a.User)
		}
		slices.Sort(set)
		if n.ActorCount != len(set) || len(slices.Compact(slices.Clone(set))) != len(set) {
			t.Fatalf("%s notification of %s: count %d, newest %v", kind, uid, n.ActorCount, n.Newest)
		}
		out = append(out, set)
	}
	return out
}

// wantActors checks that uid has exactly one notification of kind whose
// actors are want (none at all when want is empty).
func wantActors(t *testing.T, svc *domain.Domain, uid weibo.UserID, kind notify.NotificationKind, want []weibo.UserID) {
	t.Helper()
	got := actorSets(t, svc, uid, kind)
	slices.Sort(want)
	if len(want) == 0 && len(got) == 0 {
		return
	}
	if len(got) != 1 || !slices.Equal(got[0], want) {
		t.Fatalf("%s notifications of %s: %v, want one of %v", kind, uid, got, want)
	}
}

// TestNotifyLikeConformance runs the conformance suite of counted
// relations (countedtest) over the LIKE notification of u2's like, on
// both backends: a like joining a notification (u1 liked first) and the
// unlike leaving it, and a like creating the notification and the unlike
// emptying it, each killed at every step of the like and of its notify
// write, and outliving its budget. After the restart's repair the post's
// likeCount and every unread count are exact, the like is as the call
// decided, the notifications agree with the actions (scene.agree) and
// fsck finds nothing.
func TestNotifyLikeConformance(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			for _, first := range []bool{false, true} {
				name := map[bool]string{false: "join", true: "first"}[first]
				t.Run(name, func(t *testing.T) {
					st := domaintest.OwnStore(t, b)
					steps := domaintest.Declared(st, []tables.PendingKind{tables.PendingLike},
						append([]string{like.StepDecided, like.StepDependents}, domaintest.NotifySteps...)...)
					if !first {
						// Joining (leaving) an unread notification counts nothing.
						steps = slices.DeleteFunc(steps, func(s string) bool { return s == notify.StepCounted })
					}
					m := domaintest.DomainModule(tables.PendingNotify, like.StepDecided, steps, func(t *testing.T, d *domain.Domain) *countedtest.Pair[*domain.Domain] {
						sc := newScene(t, d)
						if !first {
							sc.like(t, d, sc.u1.ID)
							time.Sleep(2 * time.Millisecond) // u2's like moves the notification's time
						}
						return &countedtest.Pair[*domain.Domain]{
							Owner: uint64(sc.a.ID), Other: uint64(sc.u2.ID),
							Counters: append(sc.unread(), counted.Counter{Kind: like.LikeCount, Owner: uint64(sc.post.Author), Sub: uint64(sc.post.Millis)}),
							Do: func(ctx context.Context, d *domain.Domain) error {
								_, err := d.Likes.Like(ctx, sc.u2.ID, sc.post)
								return err
							},
							Undo: func(ctx context.Context, d *domain.Domain) error {
								_, err := d.Likes.Unlike(ctx, sc.u2.ID, sc.post)
								return err
							},
							Present: func(ctx context.Context, d *domain.Domain) (bool, error) {
								sc.agree(t, d)
								l, err := d.Likes.IsLiked(ctx, sc.u2.ID, []weibo.PostID{sc.post})
								if err != nil {
									return false, err
								}
								return l[0], nil
							},
						}
					})
					m.MarkerKinds = []tables.PendingKind{tables.PendingLike}
					countedtest.Run(t, st, m)
				})
			}
		})
	}
}

// TestNotifyReplyConformance runs the suite over u2's reply to u1's
// comment, which mentions x (COMMENT, REPLY and MENTION notifications),
// on both backends: the reply is killed at every step of the comment and
// of its notify writes, and outlives its budget. After the restart's
// repair the post's commentCount and every unread count are exact, the
// reply is as the call decided, the notifications agree with the actions
// (scene.agree) and fsck finds nothing. A comment's delete leaves the
// notifications it made, so it is no reverse scene.agree could check
// (TestCommentConformance kills it): the reply runs alone
// (countedtest's NoReverse).
func TestNotifyReplyConformance(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := domaintest.OwnStore(t, b)
			steps := domaintest.Declared(st, []tables.PendingKind{tables.PendingComment},
				append([]string{comment.StepDecided, notify.StepActor, notify.StepGroup}, domaintest.NotifyWrite...)...)
			m := domaintest.DomainModule(tables.PendingComment, comment.StepDecided, steps, func(t *testing.T, d *domain.Domain) *countedtest.Pair[*domain.Domain] {
				sc := newScene(t, d)
				return &countedtest.Pair[*domain.Domain]{
					Owner: uint64(sc.post.Author), Other: uint64(sc.post.Millis),
					Counters: sc.unread(),
					Do: func(ctx context.Context, d *domain.Domain) error {
						_, err := d.Comments.AddComment(ctx, sc.u2.ID, sc.post, "re @"+sc.x.Username, &sc.c1)
						return err
					},
					Present: func(ctx context.Context, d *domain.Domain) (bool, error) {
						sc.agree(t, d)
						return slices.ContainsFunc(domaintest.PostComments(t, d, sc.post, 5), func(c weibo.CommentID) bool { return c.Author == sc.u2.ID }), nil
					},
				}
			})
			m.MarkerKinds = []tables.PendingKind{tables.PendingNotify}
			m.NoReverse = true
			countedtest.Run(t, st, m)
		})
	}
}

// TestNotifyRepostConformance runs the suite over u2's repost of the
// post, which mentions x (REPOST and MENTION notifications, sent by its
// fan-out), on both backends: the repost is killed at every step of its
// publish, of the repost pair and of its notify writes (in its fan-out),
// and outlives its budget. After the restart's repair the post's
// repostCount, u2's postCount and every unread count are exact, the
// repost is as the call decided, the notifications agree with the
// actions (scene.agree) and fsck finds nothing. The decided step is
// TestRepostConformance's. A post's delete leaves the notifications it
// made, so it is no reverse scene.agree could check
// (TestRepostConformance kills it): the repost runs alone (countedtest's
// NoReverse).
func TestNotifyRepostConformance(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := domaintest.OwnStore(t, b)
			steps := domaintest.Declared(st, []tables.PendingKind{tables.PendingRepost},
				append([]string{feed.StepPublishContent, feed.StepPublishCounted, notify.StepActor, notify.StepGroup}, domaintest.NotifyWrite...)...)
			m := domaintest.DomainModule(tables.PendingRepost, feed.StepPublishContent, steps, func(t *testing.T, d *domain.Domain) *countedtest.Pair[*domain.Domain] {
				sc := newScene(t, d)
				return &countedtest.Pair[*domain.Domain]{
					Owner: uint64(sc.post.Author), Other: uint64(sc.post.Millis),
					Counters: append(sc.unread(), counted.Counter{Kind: feed.PostCount, Owner: uint64(sc.u2.ID)}),
					Do: func(ctx context.Context, d *domain.Domain) error {
						_, err := d.Reposts.Repost(ctx, sc.u2.ID, sc.post, "看 @"+sc.x.Username)
						return err
					},
					Present: func(ctx context.Context, d *domain.Domain) (bool, error) {
						sc.agree(t, d)
						c, err := d.Reposts.Reposts(ctx, sc.post, nil, nil)
						if err != nil {
							return false, err
						}
						return len(c.Edges) > 0, nil
					},
				}
			})
			m.MarkerKinds = []tables.PendingKind{tables.PendingNotify}
			m.NoReverse = true
			countedtest.Run(t, st, m)
		})
	}
}

// TestNotifyReadConformance runs the suite over markNotificationsRead, a
// write without a reverse, on both backends: a's notifications (a LIKE
// of two likers, a COMMENT) are marked read, killed at every step of the
// write and outliving its budget. After the restart's repair every unread
// count is exact, a's notifications are all read exactly when the call
// decided it (its first batch marked read), the notifications agree with
// the actions (scene.agree) and fsck finds nothing.
func TestNotifyReadConformance(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := domaintest.OwnStore(t, b)
			steps := []string{notify.StepMarked, notify.StepSequenced, notify.StepRead, notify.StepCounted}
			m := domaintest.DomainModule(tables.PendingNotify, notify.StepRead, steps, func(t *testing.T, d *domain.Domain) *countedtest.Pair[*domain.Domain] {
				sc := newScene(t, d)
				sc.like(t, d, sc.u1.ID)
				sc.like(t, d, sc.u2.ID)
				return &countedtest.Pair[*domain.Domain]{
					Owner:    uint64(sc.a.ID),
					Counters: sc.unread(),
					Do: func(ctx context.Context, d *domain.Domain) error {
						_, err := d.Notify.MarkNotificationsRead(ctx, sc.a.ID, nil)
						return err
					},
					Present: func(ctx context.Context, d *domain.Domain) (bool, error) {
						sc.agree(t, d)
						ns := domaintest.Notifs(t, d, sc.a.ID, 4)
						read := 0
						for _, n := range ns {
							if n.Read {
								read++
							}
						}
						if read != 0 && read != len(ns) {
							return false, fmt.Errorf("%d of a's %d notifications read", read, len(ns))
						}
						return read > 0, nil
					},
				}
			})
			m.NoReverse = true
			countedtest.Run(t, st, m)
		})
	}
}
