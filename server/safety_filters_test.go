package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/server"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/safety"
	"github.com/weibohbase/gateway/weibo/tables"
)

// The safety API over GraphQL/HTTP on both backends, continued: muteUser
// (a timed mute ends by itself, moved by a settable clock rather than
// waited for), mutedUsers with each mute's end, keyword filters with their
// bounds, Post.filtered, and the errors: UNAUTHENTICATED without a token,
// BAD_USER_INPUT and NOT_FOUND for bad arguments.

// mutedPage is a page of mutedUsers.
type mutedPage struct {
	Edges []struct {
		Node          struct{ ID string } `json:"node"`
		MutedAt       time.Time           `json:"mutedAt"`
		ExpiresAt     *time.Time          `json:"expiresAt"`
		Notifications bool                `json:"notifications"`
	} `json:"edges"`
	PageInfo struct {
		HasNextPage bool `json:"hasNextPage"`
	} `json:"pageInfo"`
	TotalCount int `json:"totalCount"`
}

func (p mutedPage) ids() []string {
	var out []string
	for _, e := range p.Edges {
		out = append(out, e.Node.ID)
	}
	return out
}

func (g *gw) mutedUsers(token string) mutedPage {
	g.t.Helper()
	var d struct{ MutedUsers mutedPage }
	g.ok(token, `{ mutedUsers(first: 10) { edges { node { id } mutedAt expiresAt notifications } pageInfo { hasNextPage } totalCount } }`, nil, &d)
	return d.MutedUsers
}

func TestMuteUser(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			// The service's clock runs ahead of the real one by skew, which
			// the test moves past a timed mute's end.
			var skew atomic.Int64
			g := startGateway(t, b.Open(t), domain.WithClock(func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }))
			alice, bob, carol := g.register(uniqueName("alice")), g.register(uniqueName("bob")), g.register(uniqueName("carol"))

			mute := `mutation($id: ID!, $d: Int, $n: Boolean) { muteUser(userId: $id, duration: $d, notifications: $n) { ` + safetyUserFields + ` } }`
			var d struct{ MuteUser safetyUser }
			g.ok(alice.token, mute, map[string]any{"id": bob.ID, "d": 3600, "n": false}, &d)
			if u := d.MuteUser; u.ID != bob.ID || !u.MutedByViewer || u.BlockedByViewer || u.BlocksViewer {
				t.Fatalf("muteUser = %+v, want bob muted, not blocked", u)
			}
			g.ok(alice.token, `mutation($id: ID!) { muteUser(userId: $id) { id } }`, map[string]any{"id": carol.ID}, nil)

			// The muted user notices nothing.
			if u := g.safetyView(bob.token, alice.ID); u.MutedByViewer || u.BlocksViewer || u.BlockedByViewer {
				t.Fatalf("bob's view of alice = %+v, want nothing", u)
			}
			if p := g.mutedUsers(bob.token); len(p.Edges) != 0 || p.TotalCount != 0 {
				t.Fatalf("bob's mutedUsers = %v, want none", p.ids())
			}

			// mutedUsers: newest first, each with its end and its
			// notifications (true by default).
			p := g.mutedUsers(alice.token)
			if !equalStrings(p.ids(), []string{carol.ID, bob.ID}) || p.TotalCount != 2 || p.PageInfo.HasNextPage {
				t.Fatalf("mutedUsers = %v (%d), want [carol bob] (2)", p.ids(), p.TotalCount)
			}
			if c := p.Edges[0]; c.ExpiresAt != nil || !c.Notifications {
				t.Fatalf("carol's mute: expiresAt %v notifications %v, want null (until unmuted) and true", c.ExpiresAt, c.Notifications)
			}
			if m := p.Edges[1]; m.ExpiresAt == nil || m.ExpiresAt.Sub(m.MutedAt) != time.Hour || m.Notifications {
				t.Fatalf("bob's mute: mutedAt %v expiresAt %v notifications %v, want an hour after, false", m.MutedAt, m.ExpiresAt, m.Notifications)
			}

			// The hour passes: the mute ends by itself, with nothing run.
			skew.Store(int64(time.Hour + time.Second))
			deadline := time.Now().Add(30 * time.Second)
			for g.safetyView(alice.token, bob.ID).MutedByViewer {
				if time.Now().After(deadline) {
					t.Fatal("bob's timed mute did not end")
				}
				time.Sleep(10 * time.Millisecond)
			}
			if p := g.mutedUsers(alice.token); !equalStrings(p.ids(), []string{carol.ID}) || p.TotalCount != 1 {
				t.Fatalf("mutedUsers after the hour = %v (%d), want [carol] (1)", p.ids(), p.TotalCount)
			}

			// Unmuting is idempotent.
			for i := range 2 {
				var d struct{ UnmuteUser safetyUser }
				g.ok(alice.token, `mutation($id: ID!) { unmuteUser(userId: $id) { `+safetyUserFields+` } }`, map[string]any{"id": carol.ID}, &d)
				if d.UnmuteUser.ID != carol.ID || d.UnmuteUser.MutedByViewer {
					t.Fatalf("unmuteUser #%d = %+v, want carol not muted", i+1, d.UnmuteUser)
				}
			}
			if p := g.mutedUsers(alice.token); len(p.Edges) != 0 || p.TotalCount != 0 {
				t.Fatalf("mutedUsers after the unmute = %v, want none", p.ids())
			}

			// A duration out of 1 s … ten years is BAD_USER_INPUT, and
			// nothing is muted.
			for _, dur := range []int{0, -5, 400 * 24 * 3600 * 10} {
				g.fails(alice.token, "BAD_USER_INPUT", mute, map[string]any{"id": bob.ID, "d": dur})
			}
			if g.safetyView(alice.token, bob.ID).MutedByViewer {
				t.Fatal("a refused mute muted")
			}
		})
	}
}

// filterData is a Filter as the tests read it.
type filterData struct {
	ID        string     `json:"id"`
	Phrase    string     `json:"phrase"`
	Context   []string   `json:"context"`
	Action    string     `json:"action"`
	WholeWord bool       `json:"wholeWord"`
	ExpiresAt *time.Time `json:"expiresAt"`
	CreatedAt time.Time  `json:"createdAt"`
}

const (
	filterFields   = `id phrase context action wholeWord expiresAt createdAt`
	createFilter   = `mutation($p: String!, $c: [FilterContext!]!, $a: FilterAction!, $w: Boolean, $e: Int) { createFilter(phrase: $p, context: $c, action: $a, wholeWord: $w, expiresIn: $e) { ` + filterFields + ` } }`
	filtersQuery   = `{ filters { ` + filterFields + ` } }`
	deleteFilterOp = `mutation($id: ID!) { deleteFilter(id: $id) }`
)

func (g *gw) createFilter(token string, vars map[string]any) filterData {
	g.t.Helper()
	var d struct{ CreateFilter filterData }
	g.ok(token, createFilter, vars, &d)
	return d.CreateFilter
}

func (g *gw) filters(token string) []filterData {
	g.t.Helper()
	var d struct{ Filters []filterData }
	g.ok(token, filtersQuery, nil, &d)
	return d.Filters
}

func (g *gw) deleteFilter(token, id string) bool {
	g.t.Helper()
	var d struct{ DeleteFilter bool }
	g.ok(token, deleteFilterOp, map[string]any{"id": id}, &d)
	return d.DeleteFilter
}

func TestKeywordFilters(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startGateway(t, b.Open(t))
			alice, bob := g.register(uniqueName("alice")), g.register(uniqueName("bob"))

			warn := g.createFilter(alice.token, map[string]any{"p": "  剧透 ", "c": []string{"HOME", "TOPIC"}, "a": "WARN"})
			if warn.ID == "" || warn.Phrase != "剧透" || !equalStrings(warn.Context, []string{"HOME", "TOPIC"}) || warn.Action != "WARN" ||
				warn.WholeWord || warn.ExpiresAt != nil || warn.CreatedAt.IsZero() {
				t.Fatalf("createFilter = %+v, want 剧透 (trimmed), [HOME TOPIC], WARN, not whole-word, no end", warn)
			}
			hide := g.createFilter(alice.token, map[string]any{"p": "Spoiler", "c": []string{"COMMENTS", "NOTIFICATIONS"}, "a": "HIDE", "w": true, "e": 3600})
			if hide.Action != "HIDE" || !hide.WholeWord || !equalStrings(hide.Context, []string{"NOTIFICATIONS", "COMMENTS"}) ||
				hide.ExpiresAt == nil || hide.ExpiresAt.Sub(hide.CreatedAt) != time.Hour {
				t.Fatalf("createFilter = %+v, want HIDE, whole-word, [NOTIFICATIONS COMMENTS], ending an hour after", hide)
			}
			fs := g.filters(alice.token)
			if len(fs) != 2 || fs[0].ID != warn.ID || fs[1].ID != hide.ID || fs[1].Phrase != "Spoiler" {
				t.Fatalf("filters = %+v, want [剧透 Spoiler]", fs)
			}
			if fs := g.filters(bob.token); len(fs) != 0 {
				t.Fatalf("bob's filters = %+v, want none: filters are their owner's", fs)
			}

			// Post.filtered: empty when nothing matched (never null).
			p := g.publish(bob.token, "no spoilers here")
			var d struct {
				Post struct {
					Filtered []struct{ Phrase, Action string }
				}
			}
			g.ok(alice.token, `query($id: ID!) { post(id: $id) { filtered { phrase action } } }`, map[string]any{"id": p.ID}, &d)
			raw := g.post(alice.token, `query($id: ID!) { post(id: $id) { filtered { phrase } } }`, map[string]any{"id": p.ID})
			if len(d.Post.Filtered) != 0 || !strings.Contains(string(raw.Data), `"filtered":[]`) {
				t.Fatalf("post(id:).filtered = %s, want []", raw.Data)
			}

			// Bad filters are BAD_USER_INPUT, and nothing is written.
			bad := []map[string]any{
				{"p": strings.Repeat("字", 65), "c": []string{"HOME"}, "a": "HIDE"},
				{"p": "   ", "c": []string{"HOME"}, "a": "HIDE"},
				{"p": "x", "c": []string{}, "a": "HIDE"},
				{"p": "x", "c": []string{"HOME"}, "a": "HIDE", "e": 0},
			}
			for _, vars := range bad {
				g.fails(alice.token, "BAD_USER_INPUT", createFilter, vars)
			}
			// An enum value outside the schema is refused before any
			// resolver, as for any variable of the wrong shape.
			g.fails(alice.token, "GRAPHQL_VALIDATION_FAILED", createFilter, map[string]any{"p": "x", "c": []string{"EVERYWHERE"}, "a": "HIDE"})
			if fs := g.filters(alice.token); len(fs) != 2 {
				t.Fatalf("filters after the refused ones = %d, want 2", len(fs))
			}
			// 64 characters is the most a phrase may have.
			long := g.createFilter(alice.token, map[string]any{"p": strings.Repeat("字", 64), "c": []string{"HOME"}, "a": "HIDE"})

			// At most 100 filters: the 101st is BAD_USER_INPUT.
			for i := len(g.filters(alice.token)); i < 100; i++ {
				g.createFilter(alice.token, map[string]any{"p": fmt.Sprintf("phrase %d", i), "c": []string{"HOME"}, "a": "HIDE"})
			}
			g.fails(alice.token, "BAD_USER_INPUT", createFilter, map[string]any{"p": "one too many", "c": []string{"HOME"}, "a": "HIDE"})
			if fs := g.filters(alice.token); len(fs) != 100 {
				t.Fatalf("filters = %d, want 100", len(fs))
			}

			// deleteFilter: true once, then false; a malformed id is
			// BAD_USER_INPUT; another user's filter is not theirs to delete.
			if g.deleteFilter(bob.token, long.ID) {
				t.Fatal("bob deleted alice's filter")
			}
			if !g.deleteFilter(alice.token, long.ID) || g.deleteFilter(alice.token, long.ID) {
				t.Fatal("deleteFilter: want true, then false")
			}
			g.fails(alice.token, "BAD_USER_INPUT", deleteFilterOp, map[string]any{"id": "not-a-filter"})
			fs = g.filters(alice.token)
			if len(fs) != 99 || fs[0].ID != warn.ID {
				t.Fatalf("filters after the delete = %d (first %+v), want 99 starting with 剧透", len(fs), fs[0])
			}
			// Room again for one.
			g.createFilter(alice.token, map[string]any{"p": "one more", "c": []string{"HOME"}, "a": "WARN"})
		})
	}
}

// TestSafetyErrors checks the safety API's errors: every field needs a
// token, and bad ids are BAD_USER_INPUT or NOT_FOUND with nothing written.
func TestSafetyErrors(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startGateway(t, b.Open(t))
			alice, bob := g.register(uniqueName("alice")), g.register(uniqueName("bob"))

			id := map[string]any{"id": bob.ID}
			for _, q := range []string{
				`mutation($id: ID!) { blockUser(userId: $id) { id } }`,
				`mutation($id: ID!) { unblockUser(userId: $id) { id } }`,
				`mutation($id: ID!) { muteUser(userId: $id) { id } }`,
				`mutation($id: ID!) { unmuteUser(userId: $id) { id } }`,
				`mutation($id: ID!) { deleteFilter(id: $id) }`,
			} {
				g.fails("", "UNAUTHENTICATED", q, id)
			}
			// The per-user flags answer false without a token, as
			// followedByViewer does.
			var anon struct{ User safetyUser }
			g.ok("", `query($id: ID!) { user(id: $id) { `+safetyUserFields+` } }`, id, &anon)
			if u := anon.User; u.BlockedByViewer || u.BlocksViewer || u.MutedByViewer {
				t.Fatalf("anonymous view of bob = %+v, want every flag false", u)
			}
			for _, q := range []string{`{ blockedUsers { totalCount } }`, `{ mutedUsers { totalCount } }`, `{ filters { id } }`} {
				g.fails("", "UNAUTHENTICATED", q, nil)
			}
			g.fails("", "UNAUTHENTICATED", createFilter, map[string]any{"p": "x", "c": []string{"HOME"}, "a": "HIDE"})

			for _, op := range []string{"blockUser", "unblockUser", "muteUser", "unmuteUser"} {
				q := `mutation($id: ID!) { ` + op + `(userId: $id) { id } }`
				g.fails(alice.token, "BAD_USER_INPUT", q, map[string]any{"id": "not-a-user"})
				g.fails(alice.token, "BAD_USER_INPUT", q, map[string]any{"id": alice.ID}) // oneself
				g.fails(alice.token, "NOT_FOUND", q, map[string]any{"id": "987654321"})
			}
			for _, q := range []string{`{ blockedUsers(first: 101) { totalCount } }`, `{ mutedUsers(first: 0) { totalCount } }`,
				`{ blockedUsers(after: "nonsense") { totalCount } }`, `{ mutedUsers(after: "nonsense") { totalCount } }`} {
				g.fails(alice.token, "BAD_USER_INPUT", q, nil)
			}
			if p := g.blockedUsers(alice.token, 10, nil); len(p.Edges) != 0 || p.TotalCount != 0 {
				t.Fatalf("blockedUsers after the refused blocks = %v, want none", p.ids())
			}
			if p := g.mutedUsers(alice.token); len(p.Edges) != 0 {
				t.Fatalf("mutedUsers after the refused mutes = %v, want none", p.ids())
			}
		})
	}
}

// TestSafetyQueryCost checks that the safety lists count in the query
// cost: blockedUsers and mutedUsers by their `first`, filters and
// Post.filtered by the most filters a user may have.
func TestSafetyQueryCost(t *testing.T) {
	g := startGateway(t, testenv.Embedded(t))
	cost := func(q string) int64 {
		t.Helper()
		raw := g.raw(http.MethodPost, "", mustJSON(map[string]any{"query": q}))
		var out struct {
			Extensions struct {
				Cost server.CostReport `json:"cost"`
			} `json:"extensions"`
		}
		if err := jsonUnmarshal(raw.body, &out); err != nil {
			t.Fatal(err)
		}
		return out.Extensions.Cost.Nodes
	}
	for _, list := range []string{"blockedUsers", "mutedUsers"} {
		q := `{ ` + list + `(first: %d) { edges { node { id follows(first: 10) { edges { node { id } } } } } } }`
		small, big := cost(fmt.Sprintf(q, 1)), cost(fmt.Sprintf(q, 100))
		if small < 11 || big != 100*(small-1)+1 {
			t.Errorf("%s: cost %d at first: 1, %d at first: 100; want each edge to count its node and follows", list, small, big)
		}
	}
	if c := cost(`{ filters { id } }`); c != safety.MaxFilters {
		t.Errorf("filters: cost %d, want %d", c, safety.MaxFilters)
	}
	if c := cost(`{ post(id: "1_1") { filtered { phrase } } }`); c != 1+safety.MaxFilters {
		t.Errorf("post.filtered: cost %d, want %d", c, 1+safety.MaxFilters)
	}
}

// TestFilteredIsCountFree checks that Post.filtered, which the home
// timeline's read sets on the page's posts, keeps a home page on the post
// cache as the fields without counters do: a post deleted through another
// gateway (its inbox entry back, as a lagging retraction leaves it) is
// still served from this gateway's cache to a page selecting filtered,
// and not to one selecting a counter.
func TestFilteredIsCountFree(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := b.Open(t)
			one, two := startGateway(t, st), startGateway(t, st, domain.WithPostCache(1000, time.Hour))
			author, fan := one.register(uniqueName("author")), one.register(uniqueName("fan"))
			one.follow(fan.token, author.ID)
			p := one.publish(author.token, "filtered "+uniqueName("p"))
			one.flush()
			shows := func(fields string) bool {
				t.Helper()
				var d struct {
					HomeTimeline struct {
						Edges []struct {
							Node struct {
								ID       string
								Filtered []struct{ Phrase string }
							}
						}
					}
				}
				two.ok(fan.token, `{ homeTimeline(first: 5) { edges { node { id `+fields+` } } } }`, nil, &d)
				for _, e := range d.HomeTimeline.Edges {
					if e.Node.ID == p.ID {
						return true
					}
				}
				return false
			}
			if !shows("content filtered { phrase action }") {
				t.Fatal("the fan's home timeline lacks the post")
			}
			one.ok(author.token, `mutation($id: ID!) { deletePost(id: $id) }`, map[string]any{"id": p.ID}, nil)
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
			if !shows("content filtered { phrase action }") {
				t.Error("a page selecting filtered read the content rows: filtered is not count-free")
			}
			if shows("likeCount") {
				t.Error("a page selecting likeCount showed the deleted post")
			}
		})
	}
}
