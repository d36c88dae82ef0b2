package notify_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/notify"
)

// describe renders notifications as "KIND:actor,actor" (newest actor
// first), with "*" for an unread one, for comparisons.
func describe(ns []*notify.Notification, names map[weibo.UserID]string) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		var actors []string
		for _, a := range n.Newest {
			actors = append(actors, names[a.User])
		}
		read := "*"
		if n.Read {
			read = ""
		}
		out[i] = fmt.Sprintf("%s%s:%s", read, n.Kind, strings.Join(actors, ","))
		if n.ActorCount != len(n.Newest) {
			out[i] += fmt.Sprintf("(%d)", n.ActorCount)
		}
	}
	return out
}

// checkNotifs checks uid's notifications against want (describe's form)
// and that the kept unread count is the number of unread ones listed.
func checkNotifs(t *testing.T, svc *domain.Domain, uid weibo.UserID, names map[weibo.UserID]string, want ...string) []*notify.Notification {
	t.Helper()
	ns := domaintest.Notifs(t, svc, uid, 2)
	if got := describe(ns, names); !slices.Equal(got, want) {
		t.Fatalf("notifications of %s =\n%q\nwant\n%q", names[uid], got, want)
	}
	n := int64(0)
	for _, x := range ns {
		if !x.Read {
			n++
		}
	}
	if got := domaintest.Unread(t, svc, uid); got != n {
		t.Fatalf("unread count of %s = %d, %d unread listed", names[uid], got, n)
	}
	return ns
}

// TestNotifications covers every kind of notification, grouping while
// unread, taking actors out (unlike, unfollow), own actions, mentions,
// markNotificationsRead and the unread count, on both backends.
func TestNotifications(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			svc := domaintest.Quiet(domaintest.OwnStore(t, b))
			if err := svc.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = svc.Close(ctx) }()
			a, alice, bob, carol := domaintest.MustUser(t, svc, domaintest.Uniq("a")), domaintest.MustUser(t, svc, domaintest.Uniq("alice")), domaintest.MustUser(t, svc, domaintest.Uniq("bob")), domaintest.MustUser(t, svc, domaintest.Uniq("carol"))
			names := map[weibo.UserID]string{a.ID: "a", alice.ID: "alice", bob.ID: "bob", carol.ID: "carol"}
			step := func() { time.Sleep(2 * time.Millisecond) } // distinct ms: the order is the test's
			flush := func() {
				if err := svc.FlushFanout(ctx); err != nil {
					t.Fatal(err)
				}
			}
			// Mentions: alice (twice, any case), not the e-mail-like bob,
			// not a user that does not exist, not the author.
			p, err := svc.Feed.Publish(ctx, a.ID, fmt.Sprintf("你好@%s and @%s, mail x@%s.com, @nobody_%d @%s", alice.Username, strings.ToUpper(alice.Username), bob.Username, time.Now().UnixNano(), a.Username))
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Mentions(); len(got) != 2 || got[0].ID != alice.ID || got[1].ID != a.ID || got[0].Username != alice.Username {
				t.Fatalf("mentions = %+v", got)
			}
			flush()
			checkNotifs(t, svc, alice.ID, names, "*MENTION:a")
			step()
			for _, u := range []weibo.UserID{alice.ID, bob.ID, a.ID} { // a's own like: nothing
				if _, err := svc.Likes.Like(ctx, u, p.ID); err != nil {
					t.Fatal(err)
				}
				step()
			}
			checkNotifs(t, svc, a.ID, names, "*LIKE:bob,alice")
			for _, u := range []weibo.UserID{carol.ID, bob.ID} {
				if _, err := svc.Follows.Follow(ctx, u, a.ID); err != nil {
					t.Fatal(err)
				}
				step()
			}
			c, err := svc.Comments.AddComment(ctx, bob.ID, p.ID, "nice, @"+carol.Username+" @"+a.Username, nil)
			if err != nil {
				t.Fatal(err)
			}
			step()
			if _, err := svc.Comments.AddComment(ctx, a.ID, p.ID, "thanks", &c.ID); err != nil {
				t.Fatal(err)
			}
			step()
			// The root's author is mentioned too: one REPOST, no MENTION.
			if _, err := svc.Reposts.Repost(ctx, alice.ID, p.ID, "//@"+a.Username+": look"); err != nil {
				t.Fatal(err)
			}
			flush()
			checkNotifs(t, svc, a.ID, names, "*REPOST:alice", "*COMMENT:bob", "*FOLLOW:bob,carol", "*LIKE:bob,alice")
			checkNotifs(t, svc, bob.ID, names, "*REPLY:a")
			checkNotifs(t, svc, carol.ID, names, "*MENTION:bob")
			domaintest.CheckFsck(t, svc)

			// Undone likes and follows take their actors out, the last one the notification.
			for _, u := range []weibo.UserID{bob.ID, alice.ID} {
				if _, err := svc.Likes.Unlike(ctx, u, p.ID); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := svc.Follows.Unfollow(ctx, carol.ID, a.ID); err != nil {
				t.Fatal(err)
			}
			ns := checkNotifs(t, svc, a.ID, names, "*REPOST:alice", "*COMMENT:bob", "*FOLLOW:bob")

			// Read up to the COMMENT: it and what is older.
			n, err := svc.Notify.MarkNotificationsRead(ctx, a.ID, &ns[1].ID)
			if err != nil || n != 2 {
				t.Fatalf("markNotificationsRead(upTo: the comment) = %d, %v; want 2", n, err)
			}
			checkNotifs(t, svc, a.ID, names, "*REPOST:alice", "COMMENT:bob", "FOLLOW:bob")
			// A new follow today starts a new group: the one of today is read.
			step()
			if _, err := svc.Follows.Follow(ctx, carol.ID, a.ID); err != nil {
				t.Fatal(err)
			}
			step()
			if _, err := svc.Likes.Like(ctx, carol.ID, p.ID); err != nil {
				t.Fatal(err)
			}
			checkNotifs(t, svc, a.ID, names, "*LIKE:carol", "*FOLLOW:carol", "*REPOST:alice", "COMMENT:bob", "FOLLOW:bob")
			// Grouped while unread: bob's like joins carol's.
			step()
			if _, err := svc.Likes.Like(ctx, bob.ID, p.ID); err != nil {
				t.Fatal(err)
			}
			checkNotifs(t, svc, a.ID, names, "*LIKE:bob,carol", "*FOLLOW:carol", "*REPOST:alice", "COMMENT:bob", "FOLLOW:bob")
			if n, err := svc.Notify.MarkNotificationsRead(ctx, a.ID, nil); err != nil || n != 3 {
				t.Fatalf("markNotificationsRead() = %d, %v; want 3", n, err)
			}
			if n, err := svc.Notify.MarkNotificationsRead(ctx, a.ID, nil); err != nil || n != 0 {
				t.Fatalf("markNotificationsRead() again = %d, %v; want 0", n, err)
			}
			checkNotifs(t, svc, a.ID, names, "LIKE:bob,carol", "FOLLOW:carol", "REPOST:alice", "COMMENT:bob", "FOLLOW:bob")
			// Someone else's notification is not found.
			if _, err := svc.Notify.MarkNotificationsRead(ctx, bob.ID, &ns[0].ID); weibo.CodeOf(err) != weibo.CodeNotFound {
				t.Fatalf("marking another's notification: %v", err)
			}
			// A deleted post's notifications stay.
			if _, err := svc.Feed.DeletePost(ctx, p.ID); err != nil {
				t.Fatal(err)
			}
			flush()
			checkNotifs(t, svc, carol.ID, names, "*MENTION:bob")
			domaintest.CheckFsck(t, svc)
		})
	}
}

// TestNotificationsLargeAuthor: a large account's posts are not pushed
// (hybrid fan-out), but their mentions and reposts still notify, through
// the fan-out that pushes nothing.
func TestNotificationsLargeAuthor(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			svc := domaintest.Quiet(domaintest.OwnStore(t, b), domain.WithFanoutThreshold(1))
			if err := svc.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = svc.Close(ctx) }()
			a, fan, x := domaintest.MustUser(t, svc, domaintest.Uniq("large")), domaintest.MustUser(t, svc, domaintest.Uniq("fan")), domaintest.MustUser(t, svc, domaintest.Uniq("x"))
			names := map[weibo.UserID]string{a.ID: "a", fan.ID: "fan", x.ID: "x"}
			if _, err := svc.Follows.Follow(ctx, fan.ID, a.ID); err != nil {
				t.Fatal(err)
			}
			if err := svc.FlushFanout(ctx); err != nil {
				t.Fatal(err)
			}
			if large, err := svc.Fanout.LargeAccounts(ctx); err != nil || len(large) != 1 {
				t.Fatalf("large accounts %v, %v; want a", large, err)
			}
			xp, err := svc.Feed.Publish(ctx, x.ID, "x's post")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := svc.Feed.Publish(ctx, a.ID, "hi @"+x.Username); err != nil {
				t.Fatal(err)
			}
			time.Sleep(2 * time.Millisecond)
			if _, err := svc.Reposts.Repost(ctx, a.ID, xp.ID, ""); err != nil {
				t.Fatal(err)
			}
			if err := svc.FlushFanout(ctx); err != nil {
				t.Fatal(err)
			}
			checkNotifs(t, svc, x.ID, names, "*REPOST:a", "*MENTION:a")
			if left := domaintest.Leftovers(t, svc.Store()); left != 0 {
				t.Fatalf("%d pending or outbox rows left", left)
			}
			domaintest.CheckFsck(t, svc)
		})
	}
}
