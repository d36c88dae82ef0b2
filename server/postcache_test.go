package server_test

import (
	"testing"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestPostCacheOverHTTP: two gateways over one store. A home page whose
// posts select no counter takes them from the post cache; one that
// selects a counter reads their content rows. After a delete on the
// first gateway (and with the viewer's inbox entry back, as a lagging
// retraction would leave it), the first never shows the post, the second
// shows it to a page without counters (its cache, within the TTL) and not
// to one with likeCount.
func TestPostCacheOverHTTP(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := b.Open(t)
			one, two := startGateway(t, st), startGateway(t, st)
			author, fan := one.register(uniqueName("cacheda")), one.register(uniqueName("cachedf"))
			one.follow(fan.token, author.ID)
			p := one.publish(author.token, "缓存 "+uniqueName("p"))
			one.flush()
			shows := func(g *gw, fields string) bool {
				t.Helper()
				var d struct {
					HomeTimeline struct {
						Edges []struct{ Node struct{ ID, Content string } }
					}
				}
				g.ok(fan.token, `{ homeTimeline(first: 5) { edges { node { `+fields+` } } } }`, nil, &d)
				for _, e := range d.HomeTimeline.Edges {
					if e.Node.ID == p.ID {
						if e.Node.Content != p.Content {
							t.Fatalf("content %q, want %q", e.Node.Content, p.Content)
						}
						return true
					}
				}
				return false
			}
			const plain, counted = "id content author { username }", "id content likeCount"
			if !shows(two, plain) || !shows(one, plain) {
				t.Fatal("the fan's home timeline lacks the post")
			}

			var d struct{ DeletePost bool }
			one.ok(author.token, `mutation($id: ID!) { deletePost(id: $id) }`, map[string]any{"id": p.ID}, &d)
			if !d.DeletePost {
				t.Fatal("deletePost = false")
			}
			one.flush()
			pid, err := weibo.ParsePostID(p.ID)
			if err != nil {
				t.Fatal(err)
			}
			fid, _ := weibo.ParseUserID(fan.ID)
			if err := st.Put(t.Context(), &hbase.Put{Table: tables.Inbox, Row: tables.InboxKey(fid, pid),
				Values: hbase.Values{tables.FamInbox: {tables.ColInboxAt: nil}}}); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				name   string
				g      *gw
				fields string
				want   bool
			}{
				{"deleting gateway, no counters", one, plain, false},
				{"deleting gateway, a counter", one, counted, false},
				{"other gateway, no counters (its cache, within the TTL)", two, plain, true},
				{"other gateway, a counter", two, counted, false},
			} {
				if got := shows(c.g, c.fields); got != c.want {
					t.Errorf("%s: shows the deleted post = %v, want %v", c.name, got, c.want)
				}
			}
		})
	}
}
