package server_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestTokensOnlyForUsersThatExist resets the store under a token: a
// validly signed token (same secret) whose user id has no users row, and
// then one whose id was given to a new user after the reset (registered
// ids restart at 100000001), must get UNAUTHENTICATED on every operation
// that uses the viewer — queries, mutations, a subscription — and write
// nothing; the new user's own token works. On HBase the store is a
// namespace of its own, dropped for the reset.
func TestTokensOnlyForUsersThatExist(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			raw := b.Open(t)
			ns := fmt.Sprintf("tok_%d_%d", time.Now().UnixNano()%1e9, rand.IntN(1000))
			store := func() hbase.StoreAdmin { return hbase.WithNamespace(raw, tables.Namespace, ns) }
			if b.Name == hbase.BackendEmbedded {
				store = func() hbase.StoreAdmin { return testenv.Embedded(t) }
			}
			t.Cleanup(func() { _ = hbase.WithNamespace(raw, tables.Namespace, ns).DropNamespace(ctx, tables.Namespace) })

			before := startGateway(t, store())
			old := before.register("alice_" + ns)
			if old.ID != "100000001" {
				t.Fatalf("first registered id = %s, want 100000001", old.ID)
			}
			// The reset: a new, empty store; a gateway with the same secret.
			if b.Name == hbase.BackendHBase {
				if err := store().DropNamespace(ctx, tables.Namespace); err != nil {
					t.Fatal(err)
				}
			}
			g := startGateway(t, store())

			refused := func(when string) {
				t.Helper()
				for _, q := range []struct{ name, query string }{
					{"me", `{ me { id } }`},
					{"homeTimeline", `{ homeTimeline { edges { cursor } } }`},
					{"roles", `{ roles { edges { cursor } } }`},
					{"publishPost", `mutation { publishPost(content: "hello from the past") { id } }`},
					{"follow", `mutation { follow(userId: "100000001") { id } }`},
					{"unfollow", `mutation { unfollow(userId: "100000001") { id } }`},
				} {
					if e := g.fails(old.token, "UNAUTHENTICATED", q.query, nil); !strings.Contains(e.Message, "no longer exists") {
						t.Errorf("%s: %s: message %q does not say why", when, q.name, e.Message)
					}
				}
				conn := g.subscribe(old.token, `subscription { homeTimelineUpdates { id } }`)
				if m := g.read(conn); !strings.Contains(string(m.Payload), `"code":"UNAUTHENTICATED"`) {
					t.Errorf("%s: subscription: %s %s", when, m.Type, m.Payload)
				}
				var d struct {
					User *struct{ FollowedByViewer bool }
				}
				g.ok(old.token, `{ user(id: "100000001") { followedByViewer } }`, nil, &d)
				if d.User != nil && d.User.FollowedByViewer {
					t.Errorf("%s: followedByViewer true for a refused token", when)
				}
			}
			refused("no users row")

			time.Sleep(5 * time.Millisecond) // a creation time of its own
			bob := g.register("bob_" + ns)
			if bob.ID != old.ID {
				t.Fatalf("after the reset the first id is %s, want %s", bob.ID, old.ID)
			}
			other := g.register("carol_" + ns)
			refused("the id is another user's")
			var me struct{ Me struct{ ID, Username string } }
			g.ok(bob.token, `{ me { id username } }`, nil, &me)
			if me.Me.ID != bob.ID || me.Me.Username != bob.Username {
				t.Fatalf("the new user's own token: me = %+v", me.Me)
			}
			g.follow(bob.token, other.ID)
			g.flush()
			got := g.user(bob.token, bob.ID)
			if got.PostCount != 0 || got.FollowCount != 1 || got.FanCount != 0 {
				t.Fatalf("refused calls wrote: %+v", got)
			}
			if c := g.user("", other.ID); c.FanCount != 1 {
				t.Fatalf("carol's fans = %d, want bob only", c.FanCount)
			}
		})
	}
}
