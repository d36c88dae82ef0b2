package server_test

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weibohbase/gateway/bus/natsbus"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/server"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/moderation/suspend"
)

const (
	suspendMutation   = `mutation($id: ID!, $until: Time, $reason: String) { suspendUser(userId: $id, until: $until, reason: $reason) { id suspension { since until reason } } }`
	unsuspendMutation = `mutation($id: ID!) { unsuspendUser(userId: $id) { id suspension { since } } }`
	loginMutation     = `mutation($u: String!, $p: String!) { login(username: $u, password: $p) { token } }`
)

// suspensionView is what one viewer reads of the content a suspension
// hides, and the counters it must leave alone.
type suspensionView struct {
	Timeline, Topic, Comments, Likers, Reposts, Notifications, BobPosts, BobLikes []string
	BobPost                                                                       bool
	Counters                                                                      string
}

// viewOf reads v's view as token's user on g: home timeline, the topic's
// page, the comments, likers and reposts of post, notifications, bob's
// posts, the posts bob likes and bob's post by id, and the counters of
// post and bob.
func (g *gw) viewOf(token, topic, post, bob, bobPost string) suspensionView {
	g.t.Helper()
	var v suspensionView
	for _, e := range g.timeline(token, 50, nil).Edges {
		v.Timeline = append(v.Timeline, e.Node.ID)
	}
	v.Topic = g.seenTopicIDs(token, topic, 50)
	v.Comments = g.seenComments(token, post, 50)
	v.Likers, _ = g.likers(token, post, 50)
	for _, e := range g.reposts(token, post, 50, nil).Reposts.Edges {
		v.Reposts = append(v.Reposts, e.Node.ID)
	}
	ns, _ := g.notifications(token, 50, 10)
	for _, n := range ns {
		var actors []string
		for _, a := range n.Actors.Edges {
			actors = append(actors, a.Node.Username)
		}
		v.Notifications = append(v.Notifications, fmt.Sprintf("%s%v", n.Kind, actors))
	}
	var d struct {
		User struct {
			PostCount, FanCount int
			Posts, LikedPosts   struct {
				Edges []struct{ Node struct{ ID string } }
			}
		}
		Post   *struct{ ID string }
		Counts struct{ LikeCount, CommentCount, RepostCount int }
	}
	g.ok(token, `query($bob: ID!, $bp: ID!, $p: ID!) { user(id: $bob) { postCount fanCount posts(first: 50) { edges { node { id } } }
		likedPosts(first: 50) { edges { node { id } } } }
		post(id: $bp) { id } counts: post(id: $p) { likeCount commentCount repostCount } }`,
		map[string]any{"bob": bob, "bp": bobPost, "p": post}, &d)
	for _, e := range d.User.Posts.Edges {
		v.BobPosts = append(v.BobPosts, e.Node.ID)
	}
	for _, e := range d.User.LikedPosts.Edges {
		v.BobLikes = append(v.BobLikes, e.Node.ID)
	}
	v.BobPost = d.Post != nil
	v.Counters = fmt.Sprintf("bob posts %d fans %d; post likes %d comments %d reposts %d",
		d.User.PostCount, d.User.FanCount, d.Counts.LikeCount, d.Counts.CommentCount, d.Counts.RepostCount)
	return v
}

// awaitView reads the view on g until want says it is right (the second
// instance hears of a suspension over the bus), failing after 15 s.
func (g *gw) awaitView(what string, read func() suspensionView, want func(suspensionView) bool) suspensionView {
	g.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		v := read()
		if want(v) {
			return v
		}
		if time.Now().After(deadline) {
			g.t.Fatalf("%s: the view never came: %+v", what, v)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSuspensionAcrossInstances suspends bob through the first of two
// gateway instances sharing the store and a NATS bus, on both backends,
// and reads as alice through the second: bob's post, his repost, his
// comment, his like (and its notification), his posts and his post by id
// leave her home timeline, the topic page, the comment thread, the likers
// and reposts and her notifications, and bob's post of the suspension's
// time never reaches her live subscriptions, while the counters stay as
// they were. Bob's token is refused at once on the second instance and
// his login answers ACCOUNT_SUSPENDED with until. Once until passes (the
// instances' clock moved), and after unsuspendUser, everything is back
// exactly as before.
func TestSuspensionAcrossInstances(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := b.Open(t)
			first, err := natsbus.Open(natsbus.Config{Listen: "127.0.0.1:0"})
			if err != nil {
				t.Fatal(err)
			}
			defer first.Close()
			second, err := natsbus.Open(natsbus.Config{URL: first.ClientURL()})
			if err != nil {
				t.Fatal(err)
			}
			defer second.Close()
			var skew atomic.Int64 // both instances' clock: now + skew
			clock := domain.WithClock(func() time.Time { return time.Now().Add(time.Duration(skew.Load())) })
			// The views read again and again: no query budget.
			unlimited := func(c *server.Config) { c.RateLimit = -1 }
			g1 := startGatewayWith(t, st, unlimited, domain.WithBus(first), clock)
			g2 := startGatewayWith(t, st, unlimited, domain.WithBus(second), clock)
			admin, alice, bob, carol := g1.register(uniqueName("admin")), g1.register(uniqueName("alice")),
				g1.register(uniqueName("bob")), g1.register(uniqueName("carol"))
			g1.makeAdmin(admin)
			uid := func(a account) weibo.UserID { u, _ := weibo.ParseUserID(a.ID); return u }
			topic := uniqueName("话题")
			tag := "#" + topic + "# "
			g1.follow(alice.token, bob.ID)
			g1.follow(alice.token, carol.ID)
			g1.follow(carol.token, bob.ID)
			carols := g1.publish(carol.token, tag+"carol's post")
			bobs := g1.publish(bob.token, tag+"bob's post")
			g1.repost(bob.token, carols.ID, nil)
			bobsComment := g1.addComment(bob.token, carols.ID, "bob's comment", "")
			g1.addComment(alice.token, carols.ID, "alice's comment", "")
			g1.like(bob.token, carols.ID, true)
			g1.like(alice.token, carols.ID, true)
			mine := g1.publish(alice.token, "alice's post")
			g1.like(bob.token, mine.ID, true)
			g1.addComment(carol.token, mine.ID, "carol on alice's post", "")
			g1.flush()

			read := func() suspensionView { return g2.viewOf(alice.token, topic, carols.ID, bob.ID, bobs.ID) }
			before := read()
			if len(before.Timeline) != 4 || len(before.Topic) != 2 || len(before.Comments) != 2 || len(before.Likers) != 2 ||
				len(before.Reposts) != 1 || len(before.BobPosts) != 2 || len(before.BobLikes) != 2 || !before.BobPost {
				t.Fatalf("before the suspension: %+v", before)
			}
			bobsID := func(id string) bool { return strings.HasPrefix(id, bob.ID+"_") || id == bob.ID }
			hidden := func(v suspensionView) bool {
				return !slices.ContainsFunc(v.Timeline, bobsID) && !slices.ContainsFunc(v.Topic, bobsID) &&
					!slices.ContainsFunc(v.Comments, func(c string) bool { return strings.HasPrefix(c, "bob") }) &&
					!slices.ContainsFunc(v.Likers, bobsID) && len(v.Reposts) == 0 && len(v.BobPosts) == 0 && len(v.BobLikes) == 0 && !v.BobPost &&
					len(v.Timeline) >= 2 && len(v.Topic) == 1 && len(v.Comments) == 1 && len(v.Likers) == 1
			}

			// Suspended for an hour, through the first instance.
			until := time.Now().Add(time.Hour).UTC().Truncate(time.Millisecond)
			var s struct {
				SuspendUser struct {
					Suspension *struct {
						Until  *time.Time
						Reason *string
					}
				}
			}
			g1.ok(admin.token, suspendMutation, map[string]any{"id": bob.ID, "until": until.Format(time.RFC3339Nano), "reason": "spam"}, &s)
			if sp := s.SuspendUser.Suspension; sp == nil || sp.Until == nil || !sp.Until.Equal(until) || sp.Reason == nil || *sp.Reason != "spam" {
				t.Fatalf("suspendUser answered %+v", sp)
			}
			// Bob's token is refused at once on the first instance (its
			// registry read the row before suspendUser answered), and on
			// the second as soon as it hears of it over the bus.
			if r := g1.post(bob.token, `{ me { id } }`, nil); len(r.Errors) == 0 || r.Errors[0].Extensions["code"] != weibo.CodeUnauthenticated {
				t.Fatalf("bob's token right after suspendUser: %+v", r)
			}
			g2.awaitRefused(bob.token)
			e := g2.fails("", weibo.CodeAccountSuspended, loginMutation, map[string]any{"u": bob.Username, "p": "correct horse"})
			if got, _ := e.Extensions["until"].(string); got == "" {
				t.Fatalf("login: no extensions.until in %+v", e)
			} else if at, err := time.Parse(time.RFC3339Nano, got); err != nil || !at.Equal(until) {
				t.Fatalf("login: until %q, want %s", got, until)
			}
			during := g2.awaitView("hidden", read, hidden)
			// Bob's comment by id (node, as a reply's replyTo loads it) is
			// none too.
			var n struct{ Node *struct{ ID string } }
			g2.ok(alice.token, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": bobsComment.ID}, &n)
			if n.Node != nil {
				t.Fatalf("node(id:) of bob's comment while suspended: %+v", n.Node)
			}
			if during.Counters != before.Counters {
				t.Fatalf("counters changed by the suspension: %s, were %s", during.Counters, before.Counters)
			}
			if !slices.Contains(during.Notifications, "COMMENT["+carol.Username+"]") || len(during.Notifications) != len(before.Notifications)-1 {
				t.Fatalf("notifications while bob is suspended: %v (before %v)", during.Notifications, before.Notifications)
			}
			// The suspension shows to the admin and to nobody else; the
			// users filter finds bob.
			var u struct {
				User struct{ Suspension *struct{ Reason string } }
			}
			g2.ok(admin.token, `query($id: ID!) { user(id: $id) { suspension { reason } } }`, map[string]any{"id": bob.ID}, &u)
			if u.User.Suspension == nil || u.User.Suspension.Reason != "spam" {
				t.Fatalf("admin reads bob's suspension %+v", u.User.Suspension)
			}
			g2.ok(alice.token, `query($id: ID!) { user(id: $id) { suspension { reason } } }`, map[string]any{"id": bob.ID}, &u)
			if u.User.Suspension != nil {
				t.Fatalf("alice reads bob's suspension %+v", u.User.Suspension)
			}
			for _, c := range []struct {
				who       account
				suspended bool
				want      []string
			}{{bob, true, []string{bob.Username}}, {bob, false, nil}, {alice, true, nil}, {alice, false, []string{alice.Username}}} {
				if got := g2.allUsers(admin.token, map[string]any{"usernamePrefix": c.who.Username, "suspended": c.suspended}, 10); !slices.Equal(got, c.want) {
					t.Fatalf("users(filter: {usernamePrefix: %s, suspended: %v}) = %v, want %v", c.who.Username, c.suspended, got, c.want)
				}
			}

			// Until passes: everything is back, exactly, with no job run.
			skew.Store(int64(2 * time.Hour))
			if after := read(); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Fatalf("after until passed:\n%+v\nwant\n%+v", after, before)
			}
			g2.ok(alice.token, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": bobsComment.ID}, &n)
			if n.Node == nil || n.Node.ID != bobsComment.ID {
				t.Fatalf("node(id:) of bob's comment after until passed: %+v", n.Node)
			}
			bob.token = g2.login(bob.Username, "correct horse")

			// Suspended until lifted; the live streams on the second
			// instance never carry bob's post of that time, nor his comment
			// on alice's post.
			events := g2.timelineEvents(alice.token, nil)
			events.awaitLive(t, g1, alice)
			notes := g2.notificationEvents(alice.token)
			notes.awaitLive(t, g1, carol, alice)
			g1.ok(admin.token, suspendMutation, map[string]any{"id": bob.ID}, &s)
			if sp := s.SuspendUser.Suspension; sp == nil || sp.Until != nil || sp.Reason != nil {
				t.Fatalf("suspendUser without until answered %+v", sp)
			}
			g2.awaitRefused(bob.token)
			if e := g2.fails("", weibo.CodeAccountSuspended, loginMutation, map[string]any{"u": bob.Username, "p": "correct horse"}); e.Extensions["until"] != nil {
				t.Fatalf("login of an indefinite suspension: until %v", e.Extensions["until"])
			}
			g2.awaitView("hidden again", read, hidden)
			late, err := g1.svc.Feed.Publish(ctx, uid(bob), "bob while suspended")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := g1.svc.Comments.AddComment(ctx, uid(bob), mustPostID(t, mine.ID), "bob's comment while suspended", nil); err != nil {
				t.Fatal(err)
			}
			g1.flush()
			shown := g1.publish(carol.token, "carol after bob")
			if e := events.next(t); e.Typename != "PostAdded" || e.Post.ID != shown.ID {
				t.Fatalf("homeTimelineEvents: %+v, want carol's post", e)
			}
			g1.addComment(carol.token, mine.ID, "carol again", "")
			if n := notes.next(t); n.Kind != "COMMENT" || n.Actors.Edges[0].Node.Username != carol.Username {
				t.Fatalf("notificationAdded: %+v, want carol's comment", n)
			}

			// Lifted: bob's content is back, the post of his suspension too.
			g1.ok(admin.token, unsuspendMutation, map[string]any{"id": bob.ID}, nil)
			back := g2.awaitView("back", read, func(v suspensionView) bool { return v.BobPost })
			if !slices.Contains(back.Timeline, late.ID.String()) || !slices.Contains(back.Timeline, bobs.ID) ||
				len(back.Topic) != 2 || len(back.Comments) != 2 || len(back.Likers) != 2 || len(back.Reposts) != 1 || len(back.BobPosts) != 3 {
				t.Fatalf("after unsuspendUser: %+v", back)
			}
			g2.login(bob.Username, "correct horse")
		})
	}
}

// awaitRefused waits until token is refused as a suspended or ended
// token (the ending reaches this instance over the bus), failing after
// 15 s.
func (g *gw) awaitRefused(token string) {
	g.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		r := g.post(token, `{ me { id } }`, nil)
		if len(r.Errors) > 0 && r.Errors[0].Extensions["code"] == weibo.CodeUnauthenticated {
			return
		}
		if time.Now().After(deadline) {
			g.t.Fatalf("the token is still accepted: %+v", r)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func mustPostID(t *testing.T, s string) weibo.PostID {
	t.Helper()
	id, err := weibo.ParsePostID(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestSuspendedTokenRefusedWithoutEnding kills suspendUser right after
// its row is written, before the user's tokens are ended, on both
// backends: the token check refuses bob's token all the same
// (UNAUTHENTICATED, reason ACCOUNT_SUSPENDED), from the registry; once
// unsuspended, the token, never ended, works again.
func TestSuspendedTokenRefusedWithoutEnding(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			f := domaintest.NewFaults()
			g := startGateway(t, b.Open(t), domain.WithStepHook(f.Hook))
			admin, bob := g.register(uniqueName("admin")), g.register(uniqueName("bob"))
			g.makeAdmin(admin)
			g.works(bob.token, bob.ID, "before")
			f.Arm(suspend.StepWritten)
			if r := g.post(admin.token, suspendMutation, map[string]any{"id": bob.ID}); len(r.Errors) == 0 {
				t.Fatalf("suspendUser killed after its row: %+v", r)
			}
			e := g.fails(bob.token, weibo.CodeUnauthenticated, `{ me { id } }`, nil)
			if e.Extensions["reason"] != weibo.ReasonAccountSuspended {
				t.Fatalf("bob's token: %+v, want reason %s", e, weibo.ReasonAccountSuspended)
			}
			g.ok(admin.token, unsuspendMutation, map[string]any{"id": bob.ID}, nil)
			g.works(bob.token, bob.ID, "after unsuspendUser")
		})
	}
}

// TestUsersFilterSuspended pages through users(filter: {suspended}) on
// both backends: with true, the suspended users of a prefix in username
// order, one a page (their list comes from the registry, not a scan of
// every username), an ended suspension left out; with false, the others;
// no totalCount with the criterion.
func TestUsersFilterSuspended(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			var skew atomic.Int64
			g := startGatewayWith(t, b.Open(t), func(c *server.Config) { c.RateLimit = -1 },
				domain.WithClock(func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }))
			admin := g.register(uniqueName("admin"))
			g.makeAdmin(admin)
			prefix := uniqueName("sus")
			var names []string
			var users []account
			for _, s := range []string{"c", "a", "d", "b"} {
				u := g.register(prefix + s)
				users = append(users, u)
				names = append(names, u.Username)
			}
			for _, u := range users[:3] {
				g.ok(admin.token, suspendMutation, map[string]any{"id": u.ID}, nil)
			}
			// d's suspension ends in an hour; the clock moves two: once
			// ended it is none.
			g.ok(admin.token, suspendMutation, map[string]any{"id": users[2].ID, "until": time.Now().Add(time.Hour).Format(time.RFC3339Nano)}, nil)
			if got := g.allUsers(admin.token, map[string]any{"usernamePrefix": prefix, "suspended": true}, 2); len(got) != 3 {
				t.Fatalf("suspended before the end: %v", got)
			}
			skew.Store(int64(2 * time.Hour))
			page := g.users(admin.token, map[string]any{"usernamePrefix": prefix, "suspended": true}, 1, nil)
			if page.TotalCount != nil || !page.PageInfo.HasNextPage || len(page.Edges) != 1 || page.Edges[0].Node.Username != prefix+"a" {
				t.Fatalf("first page: %+v", page)
			}
			if got := g.allUsers(admin.token, map[string]any{"usernamePrefix": prefix, "suspended": true}, 1); !slices.Equal(got, []string{prefix + "a", prefix + "c"}) {
				t.Fatalf("suspended: %v, want a and c", got)
			}
			if got := g.allUsers(admin.token, map[string]any{"usernamePrefix": prefix, "suspended": false}, 1); !slices.Equal(got, []string{prefix + "b", prefix + "d"}) {
				t.Fatalf("not suspended: %v, want b and d (of %v)", got, names)
			}
		})
	}
}
