package server_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weibohbase/gateway/bus/natsbus"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/safety"
)

// updatesSub is an open homeTimelineUpdates subscription: its posts, as
// the client reads them.
type updatesSub struct {
	posts chan postNode
	end   chan wsMessage
}

// homeUpdates subscribes to homeTimelineUpdates as token's user.
func (g *gw) homeUpdates(token string) *updatesSub {
	g.t.Helper()
	conn := g.subscribe(token, `subscription { homeTimelineUpdates { id content author { id username } } }`)
	s := &updatesSub{posts: make(chan postNode, 64), end: make(chan wsMessage, 1)}
	go readEvents(conn, "homeTimelineUpdates", s.posts, s.end)
	return s
}

// next returns the next post that is not a ping, failing after 15 s or
// when the subscription ends.
func (s *updatesSub) next(t *testing.T) postNode {
	t.Helper()
	for {
		select {
		case p, ok := <-s.posts:
			if !ok {
				t.Fatal("subscription closed")
			}
			if strings.HasPrefix(p.Content, "ping ") {
				continue
			}
			return p
		case m := <-s.end:
			t.Fatalf("subscription ended: %s %s", m.Type, m.Payload)
		case <-time.After(15 * time.Second):
			t.Fatal("no post in 15 s")
		}
	}
}

// awaitLive returns once the subscription delivers: it publishes pings
// as a through pub until one comes back.
func (s *updatesSub) awaitLive(t *testing.T, pub *gw, a account) {
	t.Helper()
	for i := 0; ; i++ {
		pub.publish(a.token, fmt.Sprintf("ping u%d", i))
		select {
		case <-s.posts:
			return
		case m := <-s.end:
			t.Fatalf("subscription ended: %s %s", m.Type, m.Payload)
		case <-time.After(300 * time.Millisecond):
			if i > 30 {
				t.Fatal("no post of the viewer's own")
			}
		}
	}
}

// TestLiveEventsHonourSafetyAcrossInstances: with two gateway instances
// sharing the store and a NATS bus, the viewer's live subscriptions on
// the second (homeTimelineEvents, homeTimelineUpdates, notificationAdded)
// stop carrying, from the moment the first instance writes it, what a
// block, a mute and a keyword filter hide: after alice blocks bob, a
// repost of bob's post by a followee, bob's mention and his part in a
// LIKE; after erin blocks alice, a repost of erin's post and her mention; after she mutes dave (notifications too), his posts and his
// like (joining a LIKE of carol's: the event is of his join); after a HOME and NOTIFICATIONS HIDE filter, a followee's post and
// mention that match it. Each hidden event is followed by one that is
// shown, which must be the next the client gets.
func TestLiveEventsHonourSafetyAcrossInstances(t *testing.T) {
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
			g1 := startGateway(t, st, domain.WithBus(first))
			g2 := startGateway(t, st, domain.WithBus(second))
			alice, bob, carol, dave := g1.register(uniqueName("alice")), g1.register(uniqueName("bob")),
				g1.register(uniqueName("carol")), g1.register(uniqueName("dave"))
			erin := g1.register(uniqueName("erin"))
			id := func(a account) weibo.UserID { u, _ := weibo.ParseUserID(a.ID); return u }
			for _, f := range []account{bob, carol, dave, erin} {
				g1.follow(alice.token, f.ID)
			}
			bobs := g1.publish(bob.token, "bob's post")
			erins := g1.publish(erin.token, "erin's post")
			mine := g1.publish(alice.token, "alice's post")
			mine2 := g1.publish(alice.token, "alice's second post")
			g1.flush()

			events := g2.timelineEvents(alice.token, nil)
			events.awaitLive(t, g1, alice)
			updates := g2.homeUpdates(alice.token)
			updates.awaitLive(t, g1, alice)
			notes := g2.notificationEvents(alice.token)
			notes.awaitLive(t, g1, carol, alice)
			// Shown: carol's post reaches both timelines' streams next.
			shown := func(text string) {
				t.Helper()
				p := g1.publish(carol.token, text)
				if e := events.next(t); e.Typename != "PostAdded" || e.Post.ID != p.ID {
					t.Fatalf("homeTimelineEvents: %+v, want carol's %q", e, text)
				}
				if u := updates.next(t); u.ID != p.ID {
					t.Fatalf("homeTimelineUpdates: %+v, want carol's %q", u, text)
				}
			}
			shown("carol before")

			g1.like(bob.token, mine.ID, true)
			if n := notes.next(t); n.Kind != "LIKE" || n.Actors.Edges[0].Node.Username != bob.Username {
				t.Fatalf("bob's like before the block: %+v", n)
			}

			// The block, on the first instance.
			if _, err := g1.svc.Safety.Block(ctx, id(alice), id(bob)); err != nil {
				t.Fatal(err)
			}
			bobsID, _ := weibo.ParsePostID(bobs.ID)
			if _, err := g1.svc.Reposts.Repost(ctx, id(carol), bobsID, "look at this"); err != nil {
				t.Fatal(err)
			}
			g1.publish(bob.token, "bob after the block @"+alice.Username)
			g1.flush() // the mention's notify write is the fan-out's
			g1.like(carol.token, mine.ID, true)
			if n := notes.next(t); n.Kind != "LIKE" || n.ActorCount != 1 || len(n.Actors.Edges) != 1 || n.Actors.Edges[0].Node.Username != carol.Username {
				t.Fatalf("carol's like after the block: %+v, want the LIKE of carol alone", n)
			}
			shown("carol after the block")

			// The other way: erin blocks alice.
			if _, err := g1.svc.Safety.Block(ctx, id(erin), id(alice)); err != nil {
				t.Fatal(err)
			}
			erinsID, _ := weibo.ParsePostID(erins.ID)
			if _, err := g1.svc.Reposts.Repost(ctx, id(carol), erinsID, "and this"); err != nil {
				t.Fatal(err)
			}
			g1.publish(erin.token, "erin after her block @"+alice.Username)
			g1.flush()
			shown("carol after erin's block")

			// The mute (notifications too).
			if _, err := g1.svc.Safety.Mute(ctx, id(alice), id(dave), nil, true); err != nil {
				t.Fatal(err)
			}
			g1.publish(dave.token, "dave muted")
			g1.like(dave.token, mine.ID, true) // joins carol's LIKE: the event of his join is not sent
			shown("carol after the mute")
			g1.like(carol.token, mine2.ID, true)
			if n := notes.next(t); n.Kind != "LIKE" || n.ActorCount != 1 || n.Post == nil || n.Post.ID != mine2.ID || n.Actors.Edges[0].Node.Username != carol.Username {
				t.Fatalf("carol's like after the mute: %+v, want the LIKE of %s by carol alone", n, mine2.ID)
			}

			// The filter.
			if _, err := g1.svc.Safety.CreateFilter(ctx, id(alice), safety.FilterInput{Phrase: "Forbidden",
				Contexts: []safety.Context{safety.ContextHome, safety.ContextNotifications}, Action: safety.Hide}); err != nil {
				t.Fatal(err)
			}
			g1.publish(carol.token, "the FORBIDDEN fruit @"+alice.Username)
			shown("fine @" + alice.Username)
			if n := notes.next(t); n.Kind != "MENTION" || n.Post == nil || !strings.HasPrefix(n.Post.Content, "fine") {
				t.Fatalf("after the filter: %+v, want carol's fine mention", n)
			}
		})
	}
}
