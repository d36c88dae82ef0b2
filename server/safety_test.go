package server_test

import (
	"fmt"
	"testing"

	"github.com/weibohbase/gateway/internal/testenv"
)

// The safety API over GraphQL/HTTP on both backends: blockUser and
// unblockUser (idempotent, the follows ended both ways with exact
// counters, following across a block FORBIDDEN with one message both
// ways), blockedUsers (newest first, totalCount, cursors), and the User
// fields blockedByViewer and blocksViewer, the viewer's Set read once per
// request. Mutes and filters are in safety_filters_test.go.

// safetyUser is a user with its safety flags.
type safetyUser struct {
	ID               string `json:"id"`
	FollowCount      int    `json:"followCount"`
	FanCount         int    `json:"fanCount"`
	FollowedByViewer bool   `json:"followedByViewer"`
	BlockedByViewer  bool   `json:"blockedByViewer"`
	BlocksViewer     bool   `json:"blocksViewer"`
	MutedByViewer    bool   `json:"mutedByViewer"`
}

const safetyUserFields = `id followCount fanCount followedByViewer blockedByViewer blocksViewer mutedByViewer`

// blockedPage is a page of blockedUsers.
type blockedPage struct {
	Edges []struct {
		Cursor    string     `json:"cursor"`
		Node      safetyUser `json:"node"`
		BlockedAt string     `json:"blockedAt"`
	} `json:"edges"`
	PageInfo struct {
		HasNextPage     bool    `json:"hasNextPage"`
		HasPreviousPage bool    `json:"hasPreviousPage"`
		EndCursor       *string `json:"endCursor"`
	} `json:"pageInfo"`
	TotalCount int `json:"totalCount"`
}

func (p blockedPage) ids() []string {
	var out []string
	for _, e := range p.Edges {
		out = append(out, e.Node.ID)
	}
	return out
}

const blockedUsersQuery = `query($first: Int, $after: String) { blockedUsers(first: $first, after: $after) {
  edges { cursor blockedAt node { ` + safetyUserFields + ` } } pageInfo { hasNextPage hasPreviousPage endCursor } totalCount } }`

func (g *gw) block(token, id string) safetyUser {
	g.t.Helper()
	var d struct{ BlockUser safetyUser }
	g.ok(token, `mutation($id: ID!) { blockUser(userId: $id) { `+safetyUserFields+` } }`, map[string]any{"id": id}, &d)
	return d.BlockUser
}

func (g *gw) unblock(token, id string) safetyUser {
	g.t.Helper()
	var d struct{ UnblockUser safetyUser }
	g.ok(token, `mutation($id: ID!) { unblockUser(userId: $id) { `+safetyUserFields+` } }`, map[string]any{"id": id}, &d)
	return d.UnblockUser
}

// safetyView reads user id as the viewer of token sees it.
func (g *gw) safetyView(token, id string) safetyUser {
	g.t.Helper()
	var d struct{ User safetyUser }
	g.ok(token, `query($id: ID!) { user(id: $id) { `+safetyUserFields+` } }`, map[string]any{"id": id}, &d)
	return d.User
}

func (g *gw) blockedUsers(token string, first int, after *string) blockedPage {
	g.t.Helper()
	var d struct{ BlockedUsers blockedPage }
	vars := map[string]any{"first": first}
	if after != nil {
		vars["after"] = *after
	}
	g.ok(token, blockedUsersQuery, vars, &d)
	return d.BlockedUsers
}

// wantCounts checks user id's followCount and fanCount.
func (g *gw) wantCounts(what, id string, follows, fans int) {
	g.t.Helper()
	u := g.user("", id)
	if u.FollowCount != follows || u.FanCount != fans {
		g.t.Fatalf("%s: user %s followCount %d fanCount %d, want %d and %d", what, id, u.FollowCount, u.FanCount, follows, fans)
	}
}

func TestBlockUser(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startGateway(t, b.Open(t))
			alice, bob, carol := g.register(uniqueName("alice")), g.register(uniqueName("bob")), g.register(uniqueName("carol"))

			g.follow(alice.token, bob.ID)
			g.follow(bob.token, alice.ID)
			g.follow(carol.token, bob.ID)
			g.follow(carol.token, alice.ID)
			g.wantCounts("before the block", alice.ID, 1, 2)
			g.wantCounts("before the block", bob.ID, 1, 2)

			// The block ends both follows at once; the answer is the
			// user as the block left it. Blocking again changes nothing.
			for i := range 2 {
				u := g.block(alice.token, bob.ID)
				if u.ID != bob.ID || !u.BlockedByViewer || u.BlocksViewer || u.FollowedByViewer || u.FollowCount != 0 || u.FanCount != 1 {
					t.Fatalf("blockUser #%d = %+v, want bob blocked, unfollowed, followCount 0, fanCount 1 (carol)", i+1, u)
				}
			}
			g.wantCounts("after the block", alice.ID, 0, 1)
			g.wantCounts("after the block", bob.ID, 0, 1)
			if u := g.safetyView(alice.token, bob.ID); !u.BlockedByViewer || u.BlocksViewer {
				t.Fatalf("alice's view of bob = %+v, want blockedByViewer and not blocksViewer", u)
			}
			if u := g.safetyView(bob.token, alice.ID); u.BlockedByViewer || !u.BlocksViewer || u.FollowedByViewer {
				t.Fatalf("bob's view of alice = %+v, want blocksViewer only", u)
			}
			if u := g.safetyView(carol.token, bob.ID); u.BlockedByViewer || u.BlocksViewer || !u.FollowedByViewer {
				t.Fatalf("carol's view of bob = %+v, want no block, following", u)
			}

			// Following across the block is FORBIDDEN either way, with one
			// message that does not say who blocked whom; nothing changes.
			follow := `mutation($id: ID!) { follow(userId: $id) { id } }`
			byBlocker := g.fails(alice.token, "FORBIDDEN", follow, map[string]any{"id": bob.ID})
			byBlocked := g.fails(bob.token, "FORBIDDEN", follow, map[string]any{"id": alice.ID})
			if byBlocker.Message != byBlocked.Message || byBlocker.Message == "" {
				t.Fatalf("follow across a block: messages %q and %q, want one message both ways", byBlocker.Message, byBlocked.Message)
			}
			g.wantCounts("after the refused follows", alice.ID, 0, 1)
			g.wantCounts("after the refused follows", bob.ID, 0, 1)

			// blockedUsers: newest block first, totalCount, cursors.
			g.block(alice.token, carol.ID)
			g.wantCounts("after carol's block", carol.ID, 1, 0) // carol still follows bob
			g.wantCounts("after carol's block", alice.ID, 0, 0)
			all := g.blockedUsers(alice.token, 10, nil)
			if !equalStrings(all.ids(), []string{carol.ID, bob.ID}) || all.TotalCount != 2 || all.PageInfo.HasNextPage {
				t.Fatalf("blockedUsers = %v (totalCount %d, hasNextPage %v), want [carol bob], 2, false", all.ids(), all.TotalCount, all.PageInfo.HasNextPage)
			}
			if all.Edges[0].BlockedAt < all.Edges[1].BlockedAt {
				t.Fatalf("blockedAt %s before %s: not newest first", all.Edges[0].BlockedAt, all.Edges[1].BlockedAt)
			}
			for _, e := range all.Edges {
				if !e.Node.BlockedByViewer || e.Node.BlocksViewer {
					t.Fatalf("blocked user %+v: want blockedByViewer only", e.Node)
				}
			}
			p1 := g.blockedUsers(alice.token, 1, nil)
			if !equalStrings(p1.ids(), []string{carol.ID}) || !p1.PageInfo.HasNextPage || p1.TotalCount != 2 || p1.Edges[0].Cursor != *p1.PageInfo.EndCursor {
				t.Fatalf("first page = %v (hasNextPage %v, totalCount %d), want [carol], true, 2", p1.ids(), p1.PageInfo.HasNextPage, p1.TotalCount)
			}
			p2 := g.blockedUsers(alice.token, 1, p1.PageInfo.EndCursor)
			if !equalStrings(p2.ids(), []string{bob.ID}) || p2.PageInfo.HasNextPage || !p2.PageInfo.HasPreviousPage {
				t.Fatalf("second page = %v (hasNextPage %v, hasPreviousPage %v), want [bob], false, true", p2.ids(), p2.PageInfo.HasNextPage, p2.PageInfo.HasPreviousPage)
			}
			if p := g.blockedUsers(bob.token, 10, nil); len(p.Edges) != 0 || p.TotalCount != 0 {
				t.Fatalf("bob's blockedUsers = %v (%d), want none: being blocked is not blocking", p.ids(), p.TotalCount)
			}

			// Unblocking is idempotent; the ended follows stay ended, and
			// following works again both ways.
			for i := range 2 {
				if u := g.unblock(alice.token, bob.ID); u.BlockedByViewer || u.BlocksViewer || u.FanCount != 1 {
					t.Fatalf("unblockUser #%d = %+v, want no block, fanCount 1", i+1, u)
				}
			}
			if p := g.blockedUsers(alice.token, 10, nil); !equalStrings(p.ids(), []string{carol.ID}) || p.TotalCount != 1 {
				t.Fatalf("blockedUsers after the unblock = %v (%d), want [carol] (1)", p.ids(), p.TotalCount)
			}
			if u := g.safetyView(bob.token, alice.ID); u.BlocksViewer || u.FollowedByViewer {
				t.Fatalf("bob's view of alice after the unblock = %+v, want no block, not following", u)
			}
			g.wantCounts("after the unblock", alice.ID, 0, 0)
			g.follow(bob.token, alice.ID)
			g.follow(alice.token, bob.ID)
			g.wantCounts("after following again", alice.ID, 1, 1)
			g.wantCounts("after following again", bob.ID, 1, 2)

			// Mutations run in order, and each answers from the state it
			// left: the viewer's Set read by one is read anew after the next.
			var both struct {
				B safetyUser `json:"b"`
				U safetyUser `json:"u"`
				M safetyUser `json:"m"`
			}
			g.ok(alice.token, `mutation($id: ID!) { b: blockUser(userId: $id) { `+safetyUserFields+` }
			  u: unblockUser(userId: $id) { `+safetyUserFields+` } m: muteUser(userId: $id) { `+safetyUserFields+` } }`,
				map[string]any{"id": bob.ID}, &both)
			if !both.B.BlockedByViewer || both.B.FanCount != 1 || both.U.BlockedByViewer || both.U.MutedByViewer || !both.M.MutedByViewer {
				t.Fatalf("block, unblock, mute in one request = %+v, want blocked (fanCount 1), then not, then muted", both)
			}
		})
	}
}

// TestSafetyFlagsReadOnce checks that blockedByViewer, blocksViewer and
// mutedByViewer on a page of users read the viewer's Set once for the
// request, whatever the page's length, and answer per user.
func TestSafetyFlagsReadOnce(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startGateway(t, b.Open(t))
			viewer, star := g.register(uniqueName("viewer")), g.register(uniqueName("star"))
			var fans []account
			for range 6 {
				f := g.register(uniqueName("fan"))
				g.follow(f.token, star.ID)
				fans = append([]account{f}, fans...) // newest follower first
			}
			g.block(viewer.token, fans[0].ID)
			g.block(fans[1].token, viewer.ID)
			g.ok(viewer.token, `mutation($id: ID!) { muteUser(userId: $id) { id } }`, map[string]any{"id": fans[2].ID}, nil)

			const page = `query($id: ID!) { user(id: $id) { fans(first: 10) { edges { node { id %s } } } } }`
			var d struct {
				User struct {
					Fans struct {
						Edges []struct{ Node safetyUser }
					}
				}
			}
			vars := map[string]any{"id": star.ID}
			without := g.okCalls(viewer.token, fmt.Sprintf(page, "username"), vars, nil)
			with := g.okCalls(viewer.token, fmt.Sprintf(page, "username blockedByViewer blocksViewer mutedByViewer"), vars, &d)
			if with != without+1 {
				t.Errorf("store calls with the safety flags on %d users = %v, without %v: want one more (the viewer's Set, once)", len(fans), with, without)
			}
			got := map[string]safetyUser{}
			for _, e := range d.User.Fans.Edges {
				got[e.Node.ID] = e.Node
			}
			if len(got) != len(fans) {
				t.Fatalf("star's fans seen = %d, want %d", len(got), len(fans))
			}
			for i, f := range fans {
				u, ok := got[f.ID]
				if !ok {
					t.Fatalf("fan %d missing from %v", i, got)
				}
				want := safetyUser{ID: f.ID, BlockedByViewer: i == 0, BlocksViewer: i == 1, MutedByViewer: i == 2}
				if u != want {
					t.Errorf("fan %d = %+v, want %+v", i, u, want)
				}
			}
		})
	}
}
