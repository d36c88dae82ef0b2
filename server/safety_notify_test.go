package server_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/server"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/safety"
)

// carrySafety gives each of viewers 100 blocks and 100 mutes (with
// notifications) of users of their own, and 20 keyword filters of every
// context, half HIDE, half WARN, whose phrases no test text holds: a
// Set that hides nothing the test wrote, read by every page.
func carrySafety(t *testing.T, g *gw, viewers ...weibo.UserID) {
	t.Helper()
	ctx := t.Context()
	others := make([]weibo.UserID, 200)
	for i := range others {
		u, err := g.svc.Accounts.Register(ctx, uniqueName(fmt.Sprintf("set%d", i)), "correct horse")
		if err != nil {
			t.Fatal(err)
		}
		others[i] = u.ID
	}
	for _, v := range viewers {
		for _, u := range others[:100] {
			if _, err := g.svc.Safety.Block(ctx, v, u); err != nil {
				t.Fatal(err)
			}
		}
		for _, u := range others[100:] {
			if _, err := g.svc.Safety.Mute(ctx, v, u, nil, true); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 20 {
			action := safety.Hide
			if i%2 == 1 {
				action = safety.Warn
			}
			if _, err := g.svc.Safety.CreateFilter(ctx, v, safety.FilterInput{Phrase: fmt.Sprintf("zq%02dxv", i),
				Contexts: safety.AllContexts, Action: action}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestNotificationsHonourSafety: over HTTP on both backends, the
// recipient's notifications leave out the actors they block, are
// blocked by or mute with notifications (a group keeps its other actors,
// with actorCount and actors' totalCount less them; a notification left
// with none is gone), notifications about a blocked user's post, and
// those whose text a NOTIFICATIONS HIDE filter matches (a WARN match is
// kept, with Filtered); a mute without notifications hides nothing here.
// The unread count counts what was written. A mention across a block,
// either way, in a post or a comment, writes no notification.
func TestNotificationsHonourSafety(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			g := startGatewayWith(t, b.Open(t), func(c *server.Config) { c.Signups.Rate = -1 })
			r := g.register(uniqueName("rcpt"))
			bl, mu, mq, ok := g.register(uniqueName("blk")), g.register(uniqueName("mut")), g.register(uniqueName("mq")), g.register(uniqueName("ok"))
			names := map[string]string{r.ID: "r", bl.ID: "bl", mu.ID: "mu", mq.ID: "mq", ok.ID: "ok"}
			id := func(a account) weibo.UserID { u, _ := weibo.ParseUserID(a.ID); return u }
			rid := id(r)

			p := g.publish(r.token, "a post of r")
			pid, _ := weibo.ParsePostID(p.ID)
			third := g.publish(ok.token, "a post of ok's")
			thirdID, _ := weibo.ParsePostID(third.ID)
			// Notifications of one millisecond are ordered by kind and
			// subject: each action in a millisecond of its own.
			comment := func(by weibo.UserID, post weibo.PostID, text string, replyTo *weibo.CommentID) {
				t.Helper()
				if _, err := g.svc.Comments.AddComment(ctx, by, post, text, replyTo); err != nil {
					t.Fatal(err)
				}
				time.Sleep(2 * time.Millisecond)
			}
			for _, a := range []account{ok, mq, mu, bl} {
				g.like(a.token, p.ID, true)
				time.Sleep(2 * time.Millisecond)
			}
			comment(rid, thirdID, "r says hi", nil)
			comment(id(bl), pid, "bl's comment", nil)
			comment(id(mu), pid, "mu's comment", nil)
			comment(id(mq), pid, "mq's comment", nil)
			comment(id(ok), pid, "CHEAP Pills here", nil)
			const warned = "剧透：结局"
			comment(id(ok), pid, warned, nil)
			g.publish(bl.token, "hello @"+r.Username)
			g.flush()
			// A REPLY by ok to r's comment on a post of bl's: gone with the
			// block, as a notification about bl's post.
			blPost := g.publish(bl.token, "bl's own post")
			blPostID, _ := weibo.ParsePostID(blPost.ID)
			rOnBl, err := g.svc.Comments.AddComment(ctx, rid, blPostID, "r on bl's post", nil)
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(2 * time.Millisecond)
			comment(id(ok), blPostID, "ok replies", &rOnBl.ID)

			before := g.expectNotifs(r, names, "*REPLY:ok", "*MENTION:bl", "*COMMENT:ok", "*COMMENT:ok", "*COMMENT:mq", "*COMMENT:mu", "*COMMENT:bl",
				"*LIKE:bl,mu,mq,ok")
			if _, err := g.svc.Safety.Block(ctx, rid, id(bl)); err != nil {
				t.Fatal(err)
			}
			if _, err := g.svc.Safety.Mute(ctx, rid, id(mu), nil, true); err != nil {
				t.Fatal(err)
			}
			if _, err := g.svc.Safety.Mute(ctx, rid, id(mq), nil, false); err != nil {
				t.Fatal(err)
			}
			for _, f := range []safety.FilterInput{
				{Phrase: "cheap pills", Contexts: []safety.Context{safety.ContextNotifications}, Action: safety.Hide},
				{Phrase: "剧透", Contexts: []safety.Context{safety.ContextNotifications}, Action: safety.Warn},
				{Phrase: "a post of r", Contexts: safety.AllContexts, Action: safety.Hide}, // r's own post: a LIKE carries no text of the actor's
			} {
				if _, err := g.svc.Safety.CreateFilter(ctx, rid, f); err != nil {
					t.Fatal(err)
				}
			}
			ns, unread := g.notifications(r.token, 2, 10)
			var got []string
			for _, n := range ns {
				got = append(got, n.short(names))
			}
			want := []string{"*COMMENT:ok", "*COMMENT:mq", "*LIKE:mq,ok"}
			if !slices.Equal(got, want) {
				t.Fatalf("after the block, mutes and filters: %q, want %q", got, want)
			}
			if like := ns[2]; like.ActorCount != 2 || like.Actors.TotalCount != 2 || like.Post == nil || like.Post.ID != p.ID {
				t.Fatalf("the LIKE: %+v", like)
			}
			if ns[0].Comment == nil || ns[0].Comment.Content != warned {
				t.Fatalf("the WARN comment is not the newest: %+v", ns[0])
			}
			if unread != len(before) {
				t.Fatalf("unreadNotificationCount = %d, want %d: it counts what was written", unread, len(before))
			}
			page, err := g.svc.Notify.Notifications(ctx, rid, new(1), nil)
			if err != nil {
				t.Fatal(err)
			}
			if f := page.Edges[0].Notification.Filtered; len(f) != 1 || f[0].Phrase != "剧透" || f[0].Action != safety.Warn {
				t.Fatalf("the WARN comment's Filtered = %+v", f)
			}
			// node(id:) answers as the list shows: bl's MENTION is none,
			// ok's COMMENT is there.
			for i, seen := range map[int]bool{1: false, 2: true} {
				var n struct{ Node *struct{ ID string } }
				g.ok(r.token, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": before[i].ID}, &n)
				if (n.Node != nil) != seen {
					t.Fatalf("node(%s) = %+v, want seen %v", before[i].short(names), n.Node, seen)
				}
			}
			// All actors (beyond the newest kept): the hidden are left out.
			var d struct {
				Notifications struct {
					Edges []struct{ Node notifNode }
				}
			}
			g.ok(r.token, `query($first: Int, $actors: Int) { notifications(first: $first) { edges { node { `+notifFields+` } } } }`,
				map[string]any{"first": 3, "actors": 50}, &d)
			if a := d.Notifications.Edges[2].Node.Actors; a.TotalCount != 2 || len(a.Edges) != 2 {
				t.Fatalf("the LIKE's actors(first: 50): %+v", a)
			}

			// Mentions across the block, either way, in posts and comments:
			// nothing is written (the unread counts stay).
			_, blUnread := g.notifications(bl.token, 20, 1)
			g.publish(bl.token, "again @"+r.Username)
			g.publish(r.token, "and you @"+bl.Username)
			comment(id(bl), thirdID, "see @"+r.Username, nil)
			comment(rid, thirdID, "see @"+bl.Username, nil)
			g.publish(ok.token, "but @"+r.Username) // written: the count moves
			g.flush()
			if _, n := g.notifications(r.token, 20, 1); n != len(before)+1 {
				t.Fatalf("r's unread count after the mentions = %d, want %d (ok's alone)", n, len(before)+1)
			}
			if _, n := g.notifications(bl.token, 20, 1); n != blUnread {
				t.Fatalf("bl's unread count moved from %d to %d", blUnread, n)
			}
		})
	}
}

// TestNotificationsPagesStayFull: a page whose entries the viewer's Set
// hides reads on, so that first: 20 returns 20 edges while that many are
// left, up to the bound of its scans (8, each of the rows the page still
// lacks): 300 hidden notifications in a row end pages early (a page with
// no edge, hasNextPage and an endCursor past the rows read), and the next
// pages go on from there.
func TestNotificationsPagesStayFull(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			g := startGatewayWith(t, b.Open(t), func(c *server.Config) { c.Signups.Rate = -1 })
			r, bl, ok := g.register(uniqueName("full")), g.register(uniqueName("fullb")), g.register(uniqueName("fullo"))
			rid, _ := weibo.ParseUserID(r.ID)
			blid, _ := weibo.ParseUserID(bl.ID)
			okid, _ := weibo.ParseUserID(ok.ID)
			p := g.publish(r.token, "comment here")
			pid, _ := weibo.ParsePostID(p.ID)
			add := func(by weibo.UserID, n int) {
				for i := range n {
					if _, err := g.svc.Comments.AddComment(ctx, by, pid, fmt.Sprint("c", i), nil); err != nil {
						t.Fatal(err)
					}
				}
				time.Sleep(2 * time.Millisecond)
			}
			// Newest first: 20 of bl's, 30 of ok's interleaved with 30 of
			// bl's, then 300 of bl's, 5 of ok's.
			add(okid, 5)
			add(blid, 300)
			for range 30 {
				add(okid, 1)
				add(blid, 1)
			}
			add(blid, 20)
			if _, err := g.svc.Safety.Block(ctx, rid, blid); err != nil {
				t.Fatal(err)
			}
			type page struct {
				Notifications struct {
					Edges []struct {
						Node struct{ Comment struct{ ID string } }
					}
					PageInfo struct {
						HasNextPage bool
						EndCursor   *string
					}
				}
			}
			var sizes []int
			var after *string
			for range 10 {
				var d page
				g.ok(r.token, `query($after: String) { notifications(first: 20, after: $after) { edges { node { comment { id } } }
					pageInfo { hasNextPage endCursor } } }`, map[string]any{"after": after}, &d)
				sizes = append(sizes, len(d.Notifications.Edges))
				if !d.Notifications.PageInfo.HasNextPage {
					break
				}
				after = d.Notifications.PageInfo.EndCursor
			}
			// The first page reads 20 + 40 rows for 20 of ok's; the second
			// the 10 left of the interleaved ones and 77 hidden rows (7 scans
			// of 11), the third 168 more (8 of 21), the fourth the 54 left and
			// ok's 5.
			if want := []int{20, 10, 0, 5}; !slices.Equal(sizes, want) {
				t.Fatalf("page sizes %v, want %v", sizes, want)
			}
		})
	}
}

// TestNotificationActorsBeyondTheNewestHonourBlocks: actors(first:)
// beyond the newest actors a notification keeps reads all of them, and
// leaves out those the viewer blocks: totalCount is what is left.
func TestNotificationActorsBeyondTheNewestHonourBlocks(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			g := startGatewayWith(t, b.Open(t), func(c *server.Config) { c.Signups.Rate = -1 })
			r, bl := g.register(uniqueName("many")), g.register(uniqueName("manyb"))
			rid, _ := weibo.ParseUserID(r.ID)
			blid, _ := weibo.ParseUserID(bl.ID)
			p := g.publish(r.token, "like it")
			pid, _ := weibo.ParsePostID(p.ID)
			// bl first: the oldest actor, beyond the 10 newest kept.
			likers := []weibo.UserID{blid}
			for i := range 11 {
				u, err := g.svc.Accounts.Register(ctx, uniqueName(fmt.Sprint("liker", i)), "correct horse")
				if err != nil {
					t.Fatal(err)
				}
				likers = append(likers, u.ID)
			}
			for _, u := range likers {
				if _, err := g.svc.Likes.Like(ctx, u, pid); err != nil {
					t.Fatal(err)
				}
				time.Sleep(2 * time.Millisecond)
			}
			if _, err := g.svc.Safety.Block(ctx, rid, blid); err != nil {
				t.Fatal(err)
			}
			var d struct {
				Notifications struct {
					Edges []struct{ Node notifNode }
				}
			}
			g.ok(r.token, `query($first: Int, $actors: Int) { notifications(first: $first) { edges { node { `+notifFields+` } } } }`,
				map[string]any{"first": 1, "actors": 50}, &d)
			a := d.Notifications.Edges[0].Node.Actors
			if a.TotalCount != 11 || len(a.Edges) != 11 || slices.ContainsFunc(a.Edges, func(e struct {
				Cursor string
				Node   struct{ ID, Username string }
			}) bool {
				return e.Node.ID == bl.ID
			}) {
				t.Fatalf("actors(first: 50) of the LIKE: %d edges, totalCount %d; bl among them or missing others", len(a.Edges), a.TotalCount)
			}
		})
	}
}
