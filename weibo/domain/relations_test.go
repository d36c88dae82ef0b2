package domain_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/tables"
)

// followState is what a follow of a → b has written, read back from the
// tables and through the domain.
type followState struct {
	aFollows, aFans, bFollows, bFans int64 // the counters
	attends, fans                    bool  // the two relation rows
	followed                         bool  // Follows(a, [b])
	followList, fanList              []weibo.UserID
	inbox                            int // rows of b's posts in a's inbox
	timeline                         int // b's posts on a's home timeline
}

func readFollow(t *testing.T, svc *domain.Domain, a, b weibo.UserID, bPosts []weibo.PostID) followState {
	t.Helper()
	ctx := t.Context()
	var s followState
	us, err := svc.Accounts.GetUsers(ctx, []weibo.UserID{a, b})
	if err != nil {
		t.Fatal(err)
	}
	s.aFollows, s.aFans, s.bFollows, s.bFans = us[0].FollowCount, us[0].FanCount, us[1].FollowCount, us[1].FanCount
	rs, err := svc.Store().GetMany(ctx, []*hbase.Get{
		{Table: tables.Relations, Row: tables.RelationKey(a, tables.Attends, b)},
		{Table: tables.Relations, Row: tables.RelationKey(b, tables.Fans, a)},
	})
	if err != nil {
		t.Fatal(err)
	}
	s.attends, s.fans = rs[0].Exists(), rs[1].Exists()
	fs, err := svc.Follows.IsFollowing(ctx, a, []weibo.UserID{b})
	if err != nil {
		t.Fatal(err)
	}
	s.followed = fs[0]
	for _, list := range []struct {
		out  *[]weibo.UserID
		page func() (*weibo.UserConnection, error)
	}{
		{&s.followList, func() (*weibo.UserConnection, error) { return svc.Follows.FollowList(ctx, a, nil, nil) }},
		{&s.fanList, func() (*weibo.UserConnection, error) { return svc.Follows.FanList(ctx, b, nil, nil) }},
	} {
		p, err := list.page()
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range p.Edges {
			*list.out = append(*list.out, e.User)
		}
	}
	for _, id := range bPosts {
		s.inbox += domaintest.InboxHas(t, svc, a, id)
	}
	tl, err := svc.Timeline.HomeTimeline(ctx, a, weibo.Page{First: new(weibo.MaxPageSize)})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range tl.Edges {
		if e.Post.ID.Author == b {
			s.timeline++
		}
	}
	return s
}

func (s followState) String() string {
	type plain followState // without the String method
	return fmt.Sprintf("%+v", plain(s))
}

// TestFollowIdempotent follows twice and unfollows twice, concurrently too,
// and checks after each call the counters, both relation rows, the lists
// and the follower's inbox: a repeated call changes nothing.
func TestFollowIdempotent(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := b.Open(t)
			if err := tables.Migrate(ctx, st); err != nil {
				t.Fatal(err)
			}
			svc := domaintest.Quiet(st)
			alice, bob := mustUser(t, svc, uniq("alice")), mustUser(t, svc, uniq("bob"))
			var posts []weibo.PostID
			for i := range 3 {
				p, err := svc.Feed.Publish(ctx, bob.ID, fmt.Sprintf("bob's post %d", i))
				if err != nil {
					t.Fatal(err)
				}
				posts = append(posts, p.ID)
			}
			following := followState{aFollows: 1, bFans: 1, attends: true, fans: true, followed: true,
				followList: []weibo.UserID{bob.ID}, fanList: []weibo.UserID{alice.ID}, inbox: 3, timeline: 3}
			none := followState{}

			if got := readFollow(t, svc, alice.ID, bob.ID, posts); got.String() != none.String() {
				t.Fatalf("before: %v", got)
			}
			for i := range 2 {
				u, err := svc.Follows.Follow(ctx, alice.ID, bob.ID)
				if err != nil {
					t.Fatalf("follow %d: %v", i+1, err)
				}
				if u.ID != bob.ID || u.FanCount != 1 {
					t.Fatalf("follow %d returned %+v, want bob with 1 fan", i+1, u)
				}
				if got := readFollow(t, svc, alice.ID, bob.ID, posts); got.String() != following.String() {
					t.Fatalf("after follow %d:\n got %v\nwant %v", i+1, got, following)
				}
			}
			for i := range 2 {
				u, err := svc.Follows.Unfollow(ctx, alice.ID, bob.ID)
				if err != nil {
					t.Fatalf("unfollow %d: %v", i+1, err)
				}
				if u.ID != bob.ID || u.FanCount != 0 {
					t.Fatalf("unfollow %d returned %+v, want bob with 0 fans", i+1, u)
				}
				if got := readFollow(t, svc, alice.ID, bob.ID, posts); got.String() != none.String() {
					t.Fatalf("after unfollow %d:\n got %v\nwant %v", i+1, got, none)
				}
			}

			// Concurrent repeats count once too.
			for _, op := range []struct {
				name string
				call func(context.Context, weibo.UserID, weibo.UserID) (*weibo.User, error)
				want followState
			}{{"follow", svc.Follows.Follow, following}, {"unfollow", svc.Follows.Unfollow, none}} {
				var wg sync.WaitGroup
				errs := make(chan error, 8)
				for range 8 {
					wg.Go(func() {
						if _, err := op.call(ctx, alice.ID, bob.ID); err != nil {
							errs <- err
						}
					})
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					t.Fatalf("concurrent %s: %v", op.name, err)
				}
				if got := readFollow(t, svc, alice.ID, bob.ID, posts); got.String() != op.want.String() {
					t.Fatalf("after 8 concurrent %ss:\n got %v\nwant %v", op.name, got, op.want)
				}
			}

			// Refused calls write nothing.
			_, err := svc.Follows.Follow(ctx, alice.ID, alice.ID)
			domaintest.WantCode(t, err, weibo.CodeBadUserInput, "follow yourself")
			_, err = svc.Follows.Unfollow(ctx, alice.ID, alice.ID)
			domaintest.WantCode(t, err, weibo.CodeBadUserInput, "unfollow yourself")
			_, err = svc.Follows.Follow(ctx, alice.ID, 999_999_999_999)
			domaintest.WantCode(t, err, weibo.CodeNotFound, "follow an unknown user")
			if us, _ := svc.Accounts.GetUsers(ctx, []weibo.UserID{alice.ID}); us[0].FollowCount != 0 || us[0].FanCount != 0 {
				t.Fatalf("refused calls changed alice's counters: %+v", us[0])
			}
		})
	}
}

// TestConnectionCursors pages every connection one edge at a time (every
// edge once, in order, the last page without a next page) and feeds each
// one malformed cursors and another connection's cursor: BAD_USER_INPUT on
// "after", every time.
func TestConnectionCursors(t *testing.T) {
	ctx := t.Context()
	st := testenv.Embedded(t)
	if err := tables.Migrate(ctx, st); err != nil {
		t.Fatal(err)
	}
	svc := domaintest.Quiet(st)
	users := []*weibo.User{mustUser(t, svc, uniq("c")), mustUser(t, svc, uniq("c")), mustUser(t, svc, uniq("c"))}
	u0 := users[0].ID
	for _, u := range users[1:] {
		if _, err := svc.Follows.Follow(ctx, u.ID, u0); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Follows.Follow(ctx, u0, u.ID); err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			if _, err := svc.Feed.Publish(ctx, u.ID, fmt.Sprintf("post %d", i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := svc.FlushFanout(ctx); err != nil {
		t.Fatal(err)
	}
	defer svc.Close(ctx)
	var rids []weibo.RoleID
	for i := range 3 {
		r, err := svc.Org.Roles.Create(ctx, uniq(fmt.Sprintf("role%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		rids = append(rids, r.ID)
		for _, u := range users {
			if _, err := svc.Org.Roles.Assign(ctx, u.ID, r.ID, 5); err != nil {
				t.Fatal(err)
			}
		}
	}
	top, err := svc.Org.Departments.Create(ctx, "top", weibo.RootDept)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b", "c"} {
		if _, err := svc.Org.Departments.Create(ctx, name, top.ID); err != nil {
			t.Fatal(err)
		}
	}
	for _, u := range users {
		if _, err := svc.Org.Members.Set(ctx, u.ID, top.ID); err != nil {
			t.Fatal(err)
		}
	}

	// Each connection as a function of (first, after) giving its edges' keys and page info.
	type page struct {
		keys []string
		info weibo.PageInfo
	}
	userPage := func(p *weibo.UserConnection, err error) (page, error) {
		if err != nil {
			return page{}, err
		}
		out := page{info: p.PageInfo}
		for _, e := range p.Edges {
			out.keys = append(out.keys, e.User.String())
		}
		return out, nil
	}
	postPage := func(p *feed.PostConnection, err error) (page, error) {
		if err != nil {
			return page{}, err
		}
		out := page{info: p.PageInfo}
		for _, e := range p.Edges {
			out.keys = append(out.keys, e.Post.ID.String())
		}
		return out, nil
	}
	conns := []struct {
		name string
		want int
		read func(first *int, after *string) (page, error)
	}{
		{"follows", 2, func(f *int, a *string) (page, error) { return userPage(svc.Follows.FollowList(ctx, u0, f, a)) }},
		{"fans", 2, func(f *int, a *string) (page, error) { return userPage(svc.Follows.FanList(ctx, u0, f, a)) }},
		{"posts", 2, func(f *int, a *string) (page, error) {
			return postPage(svc.Feed.UserPosts(ctx, users[1].ID, weibo.Page{First: f, After: a}))
		}},
		{"home timeline", 4, func(f *int, a *string) (page, error) {
			return postPage(svc.Timeline.HomeTimeline(ctx, u0, weibo.Page{First: f, After: a}))
		}},
		{"department members", 3, func(f *int, a *string) (page, error) { return userPage(svc.Org.Departments.Members(ctx, top.ID, f, a)) }},
		{"roles", 3, func(f *int, a *string) (page, error) {
			p, err := svc.Org.Roles.List(ctx, f, a)
			if err != nil {
				return page{}, err
			}
			out := page{info: p.PageInfo}
			for _, e := range p.Edges {
				out.keys = append(out.keys, e.Role.Name)
			}
			return out, nil
		}},
		{"role members", 3, func(f *int, a *string) (page, error) {
			p, err := svc.Org.Roles.Members(ctx, rids[0], f, a)
			if err != nil {
				return page{}, err
			}
			out := page{info: p.PageInfo}
			for _, e := range p.Edges {
				out.keys = append(out.keys, e.User.String())
			}
			return out, nil
		}},
		{"department children", 3, func(f *int, a *string) (page, error) {
			p, err := svc.Org.Departments.Children(ctx, top.ID, f, a)
			if err != nil {
				return page{}, err
			}
			out := page{info: p.PageInfo}
			for _, e := range p.Edges {
				out.keys = append(out.keys, e.Department.Name)
			}
			return out, nil
		}},
	}
	cursors := map[string]string{} // a valid cursor of each connection
	for _, c := range conns {
		t.Run(c.name, func(t *testing.T) {
			all, err := c.read(nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(all.keys) != c.want || all.info.HasNextPage {
				t.Fatalf("one page of everything: %v %+v, want %d edges", all.keys, all.info, c.want)
			}
			var paged []string
			var after *string
			for range c.want + 1 {
				p, err := c.read(new(1), after)
				if err != nil {
					t.Fatal(err)
				}
				paged = append(paged, p.keys...)
				if len(p.keys) != 1 || *p.info.StartCursor != *p.info.EndCursor {
					t.Fatalf("page after %v: %v %+v", after, p.keys, p.info)
				}
				cursors[c.name] = *p.info.EndCursor
				if !p.info.HasNextPage {
					break
				}
				after = p.info.EndCursor
			}
			if !slices.Equal(paged, all.keys) {
				t.Fatalf("paged by one: %v, want %v", paged, all.keys)
			}
			for _, first := range []int{0, weibo.MaxPageSize + 1} {
				if _, err := c.read(&first, nil); weibo.CodeOf(err) != weibo.CodeBadUserInput {
					t.Errorf("first %d: %v, want BAD_USER_INPUT", first, err)
				}
			}
		})
	}
	for _, c := range conns {
		bad := []string{"garbage!", "QQ"}
		for other, cur := range cursors {
			if other != c.name && !sameCursorKind(c.name, other) {
				bad = append(bad, cur)
			}
		}
		for _, cur := range bad {
			_, err := c.read(nil, &cur)
			if e, ok := errors.AsType[*weibo.Error](err); !ok || e.Code != weibo.CodeBadUserInput || e.Field != "after" {
				t.Errorf("%s after %q: %v, want BAD_USER_INPUT on after", c.name, cur, err)
			}
		}
	}
}

// sameCursorKind tells the connections that share a cursor kind (lists of
// users by id, lists of posts newest first are not: the timeline's cursor
// also carries the author).
func sameCursorKind(a, b string) bool {
	users := map[string]bool{"follows": true, "fans": true, "department members": true}
	return users[a] && users[b]
}
