package server_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weibohbase/gateway/internal/testenv"
)

// notificationEvent is one notificationAdded event as the client gets it.
type notificationEvent struct {
	ID         string `json:"id"`
	Kind       string `json:"kind"`
	ActorCount int    `json:"actorCount"`
	Read       bool   `json:"read"`
	Actors     struct {
		Edges []struct {
			Node struct{ Username string } `json:"node"`
		} `json:"edges"`
	} `json:"actors"`
	Post *struct {
		ID      string `json:"id"`
		Content string `json:"content"`
	} `json:"post"`
}

// notificationSub reads a notificationAdded subscription's events into a
// channel (closed when the subscription ends, its last message in end).
type notificationSub struct {
	events chan notificationEvent
	end    chan wsMessage
}

func (g *gw) notificationEvents(token string) *notificationSub {
	g.t.Helper()
	conn := g.subscribe(token, `subscription { notificationAdded { id kind actorCount read
	  actors(first: 5) { edges { node { username } } } post { id content } } }`)
	s := &notificationSub{events: make(chan notificationEvent, 16), end: make(chan wsMessage, 1)}
	go readEvents(conn, "notificationAdded", s.events, s.end)
	return s
}

// next returns the next event that is not a ping's MENTION, failing after
// 15 s or when the subscription ends.
func (s *notificationSub) next(t *testing.T) notificationEvent {
	t.Helper()
	for {
		select {
		case e, ok := <-s.events:
			if !ok {
				t.Fatal("subscription closed")
			}
			if e.Kind == "MENTION" && e.Post != nil && strings.HasPrefix(e.Post.Content, "ping ") {
				continue
			}
			return e
		case m := <-s.end:
			t.Fatalf("subscription ended: %s %s", m.Type, m.Payload)
		case <-time.After(15 * time.Second):
			t.Fatal("no notification in 15 s")
		}
	}
}

// awaitLive returns once the subscription delivers: by mentions of to's
// user in posts of from, until one comes back.
func (s *notificationSub) awaitLive(t *testing.T, g *gw, from, to account) {
	t.Helper()
	for i := 0; ; i++ {
		g.publish(from.token, fmt.Sprintf("ping %d @%s", i, to.Username))
		select {
		case e := <-s.events:
			if e.Kind != "MENTION" || e.ActorCount != 1 || e.Actors.Edges[0].Node.Username != from.Username {
				t.Fatalf("first notification = %+v, want a MENTION by %s", e, from.Username)
			}
			return
		case m := <-s.end:
			t.Fatalf("subscription ended: %s %s", m.Type, m.Payload)
		case <-time.After(300 * time.Millisecond):
			if i > 30 {
				t.Fatal("no notification of a mention")
			}
		}
	}
}

// TestNotificationAdded: over graphql-ws, each notification reaches its
// recipient as it is created and again as another user joins it (a
// grouped FOLLOW: the same id, actorCount 2); a user's own action sends
// nothing; a LIKE names its post.
func TestNotificationAdded(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startGateway(t, b.Open(t))
			alice, bob, carol := g.register(uniqueName("alice")), g.register(uniqueName("bob")), g.register(uniqueName("carol"))
			sub := g.notificationEvents(alice.token)
			sub.awaitLive(t, g, carol, alice)

			g.follow(bob.token, alice.ID)
			first := sub.next(t)
			if first.Kind != "FOLLOW" || first.ActorCount != 1 || first.Read || first.Actors.Edges[0].Node.Username != bob.Username {
				t.Fatalf("after bob's follow: %+v", first)
			}
			g.follow(carol.token, alice.ID)
			second := sub.next(t)
			if second.ID != first.ID || second.ActorCount != 2 || second.Actors.Edges[0].Node.Username != carol.Username {
				t.Fatalf("after carol's follow: %+v, want %s with 2 actors, carol first", second, first.ID)
			}

			p := g.publish(alice.token, "a post to like")
			g.ok(alice.token, `mutation($id: ID!) { likePost(postId: $id) { id } }`, map[string]any{"id": p.ID}, nil)
			g.ok(bob.token, `mutation($id: ID!) { likePost(postId: $id) { id } }`, map[string]any{"id": p.ID}, nil)
			like := sub.next(t) // alice's own like sent nothing before it
			if like.Kind != "LIKE" || like.ActorCount != 1 || like.Post == nil || like.Post.ID != p.ID ||
				like.Actors.Edges[0].Node.Username != bob.Username {
				t.Fatalf("after bob's like: %+v, want LIKE of %s by bob alone", like, p.ID)
			}
		})
	}
}
