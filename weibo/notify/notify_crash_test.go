package notify_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/comment"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/follow"
	"github.com/weibohbase/gateway/weibo/like"
	"github.com/weibohbase/gateway/weibo/notify"
)

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

// TestNotificationCrashPoints kills notified actions — like (joining a
// notification and creating one), unlike (leaving one, and emptying it),
// follow, unfollow, a reply with a mention, a repost with a mention, and
// markNotificationsRead — at the steps of the action and of its notify
// writes, and makes one outlive its budget. A restarted service on the
// same store, its clock moved past the repair grace, must repair
// everything by itself: then every notification agrees with the actions'
// authorities (exactly one notification, with exactly the actors whose
// action stands), every unread count equals the unread notifications,
// nothing is left in weibo:pending or weibo:outbox, and fsck finds nothing.
func TestNotificationCrashPoints(t *testing.T) {
	const grace = 10 * time.Second
	type scenario struct {
		op   string
		step string // where it is killed, or where the clock jumps when slow
		slow bool
	}
	var scenarios []scenario
	add := func(op string, steps ...string) {
		for _, s := range steps {
			scenarios = append(scenarios, scenario{op: op, step: s})
		}
	}
	add("like", like.StepMarked, like.StepDecided, like.StepCounted, like.StepDependents,
		notify.StepMarked, notify.StepSequenced, notify.StepActor, notify.StepGroup, notify.StepIndexed)
	add("like-first", notify.StepMarked, notify.StepGroup, notify.StepCounted)
	add("unlike", like.StepDecided, notify.StepMarked, notify.StepActor, notify.StepGroup)
	add("unlike-last", notify.StepActor, notify.StepGroup, notify.StepIndexed, notify.StepCounted)
	add("follow", follow.StepDecided, follow.StepInbox, notify.StepMarked, notify.StepGroup, notify.StepCounted)
	add("unfollow", follow.StepDecided, notify.StepActor, notify.StepGroup, notify.StepCounted)
	add("reply", comment.StepDecided, comment.StepCounted, notify.StepMarked, notify.StepGroup, notify.StepCounted)
	add("repost", feed.StepPublishContent, feed.StepPublishCounted, notify.StepMarked, notify.StepGroup, notify.StepCounted)
	add("markread", notify.StepMarked, notify.StepSequenced, notify.StepRead, notify.StepCounted)
	scenarios = append(scenarios, scenario{op: "like", step: notify.StepSequenced, slow: true},
		scenario{op: "markread", step: notify.StepSequenced, slow: true})
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := domaintest.OwnStore(t, b)
			clk := &domaintest.Clock{}
			for _, sc := range scenarios {
				name := sc.op + "@" + sc.step
				if sc.slow {
					name = sc.op + "-slow"
				}
				t.Run(name, func(t *testing.T) {
					setup := domaintest.Quiet(st, clk.Option())
					a, u1, u2, x := domaintest.MustUser(t, setup, domaintest.Uniq("a")), domaintest.MustUser(t, setup, domaintest.Uniq("u1")), domaintest.MustUser(t, setup, domaintest.Uniq("u2")), domaintest.MustUser(t, setup, domaintest.Uniq("x"))
					p, err := setup.Feed.Publish(ctx, a.ID, "crash test")
					if err != nil {
						t.Fatal(err)
					}
					c1, err := setup.Comments.AddComment(ctx, u1.ID, p.ID, "first", nil)
					if err != nil {
						t.Fatal(err)
					}
					switch sc.op {
					case "like", "unlike", "markread":
						_, err = setup.Likes.Like(ctx, u1.ID, p.ID)
					case "unfollow":
						_, err = setup.Follows.Follow(ctx, u2.ID, a.ID)
					}
					if err == nil && (sc.op == "unlike" || sc.op == "unlike-last" || sc.op == "markread") {
						time.Sleep(2 * time.Millisecond)
						_, err = setup.Likes.Like(ctx, u2.ID, p.ID)
					}
					if err != nil {
						t.Fatal(err)
					}
					if err := setup.Start(ctx); err != nil { // the setup's fan-out
						t.Fatal(err)
					}
					if err := setup.FlushFanout(ctx); err != nil {
						t.Fatal(err)
					}
					_ = setup.Close(ctx)
					time.Sleep(2 * time.Millisecond)

					hook, hit := domaintest.CrashAt(sc.step)
					if sc.slow {
						hook = func(_ context.Context, s string) error {
							if s == sc.step {
								clk.Advance(grace/2 + time.Second)
							}
							return nil
						}
						hit = func() bool { return true }
					}
					crashed := domaintest.Quiet(st, clk.Option(), domain.WithRepairGrace(grace), domain.WithFanoutLease(grace/2), domain.WithStepHook(hook))
					if sc.op == "repost" {
						if err := crashed.Start(ctx); err != nil { // its workers run the fan-out, which may die
							t.Fatal(err)
						}
					}
					switch sc.op {
					case "like", "like-first":
						_, err = crashed.Likes.Like(ctx, u2.ID, p.ID)
					case "unlike", "unlike-last":
						_, err = crashed.Likes.Unlike(ctx, u2.ID, p.ID)
					case "follow":
						_, err = crashed.Follows.Follow(ctx, u2.ID, a.ID)
					case "unfollow":
						_, err = crashed.Follows.Unfollow(ctx, u2.ID, a.ID)
					case "reply":
						_, err = crashed.Comments.AddComment(ctx, u2.ID, p.ID, "re @"+x.Username, &c1.ID)
					case "repost":
						_, err = crashed.Reposts.Repost(ctx, u2.ID, p.ID, "看 @"+x.Username)
					case "markread":
						_, err = crashed.Notify.MarkNotificationsRead(ctx, a.ID, nil)
					}
					if err != nil && !errors.Is(err, domaintest.ErrCrash) {
						t.Fatalf("the call returned %v", err)
					}
					if sc.op == "repost" {
						_ = crashed.FlushFanout(ctx)
						_ = crashed.Close(ctx)
					}
					if !hit() {
						t.Fatalf("step %s never reached", sc.step)
					}

					// The restart, once the grace has passed.
					clk.Advance(grace + time.Second)
					restarted := domaintest.Quiet(st, clk.Option(), domain.WithRepairGrace(grace), domain.WithFanoutLease(grace/2))
					if err := restarted.Start(ctx); err != nil {
						t.Fatal(err)
					}
					if err := restarted.FlushFanout(ctx); err != nil {
						t.Fatal(err)
					}
					if _, err := restarted.Writes.Repair(ctx); err != nil {
						t.Fatal(err)
					}
					_ = restarted.Close(ctx)
					if left := domaintest.Leftovers(t, st); left != 0 {
						t.Fatalf("%d pending or outbox rows left after the restart", left)
					}

					// Every notification agrees with the actions that stand.
					liked, err := restarted.Likes.IsLiked(ctx, u1.ID, []weibo.PostID{p.ID})
					if err != nil {
						t.Fatal(err)
					}
					liked2, err := restarted.Likes.IsLiked(ctx, u2.ID, []weibo.PostID{p.ID})
					if err != nil {
						t.Fatal(err)
					}
					var likers []weibo.UserID
					for i, u := range []weibo.UserID{u1.ID, u2.ID} {
						if []bool{liked[0], liked2[0]}[i] {
							likers = append(likers, u)
						}
					}
					if sc.op != "markread" {
						wantActors(t, restarted, a.ID, notify.KindLike, likers)
					}
					follows, err := restarted.Follows.IsFollowing(ctx, u2.ID, []weibo.UserID{a.ID})
					if err != nil {
						t.Fatal(err)
					}
					wantActors(t, restarted, a.ID, notify.KindFollow, map[bool][]weibo.UserID{true: {u2.ID}}[follows[0]])
					var replied, reposted []weibo.UserID
					comments := domaintest.PostComments(t, restarted, p.ID, 5)
					if slices.ContainsFunc(comments, func(c weibo.CommentID) bool { return c.Author == u2.ID }) {
						replied = []weibo.UserID{u2.ID}
					}
					reposts, err := restarted.Reposts.Reposts(ctx, p.ID, nil, nil)
					if err != nil {
						t.Fatal(err)
					}
					if len(reposts.Edges) > 0 {
						reposted = []weibo.UserID{u2.ID}
					}
					// One COMMENT a comment (u2's reply is one too).
					if got := actorSets(t, restarted, a.ID, notify.KindComment); len(got) != 1+len(replied) ||
						!slices.ContainsFunc(got, func(s []weibo.UserID) bool { return slices.Equal(s, []weibo.UserID{u1.ID}) }) ||
						(len(replied) == 1 && !slices.ContainsFunc(got, func(s []weibo.UserID) bool { return slices.Equal(s, replied) })) {
						t.Fatalf("COMMENT notifications of a: %v, want u1's and u2's if stored (%v)", got, replied)
					}
					if sc.op == "reply" || sc.op == "repost" {
						wantActors(t, restarted, u1.ID, notify.KindReply, replied)
						wantActors(t, restarted, a.ID, notify.KindRepost, reposted)
						wantActors(t, restarted, x.ID, notify.KindMention, append(replied, reposted...))
					}
					for _, u := range []weibo.UserID{a.ID, u1.ID, u2.ID, x.ID} {
						n := int64(0)
						for _, x := range domaintest.Notifs(t, restarted, u, 4) {
							if !x.Read {
								n++
							}
						}
						if got := domaintest.Unread(t, restarted, u); got != n {
							t.Fatalf("unread count of %s = %d, %d unread listed", u, got, n)
						}
					}
					domaintest.CheckFsck(t, restarted)
				})
			}
		})
	}
}
