package domain_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/tables"
)

// postList is a connection of posts that pages both ways, read through the
// domain: the home timeline of a user or a user's posts.
type postList struct {
	name string
	read func(ctx context.Context, p weibo.Page) (*feed.PostConnection, error)
	// row is the rowkey of a post's row in the list (to remove it by hand).
	row func(id weibo.PostID) (table string, row []byte)
	// calls is the store round trips one page costs.
	calls float64
}

// bothPage is one page as the tests compare it.
type bothPage struct {
	ids        []string
	start, end *string
	cursors    []string
	info       weibo.PageInfo
}

func readBoth(t *testing.T, l postList, p weibo.Page) bothPage {
	t.Helper()
	c, err := l.read(t.Context(), p)
	if err != nil {
		t.Fatalf("%s %s: %v", l.name, describePage(p), err)
	}
	out := bothPage{info: c.PageInfo, start: c.PageInfo.StartCursor, end: c.PageInfo.EndCursor}
	for _, e := range c.Edges {
		out.ids = append(out.ids, e.Post.ID.String())
		out.cursors = append(out.cursors, e.Cursor)
	}
	return out
}

func describePage(p weibo.Page) string {
	s := ""
	for _, a := range []struct {
		name string
		n    *int
		c    *string
	}{{"first", p.First, nil}, {"after", nil, p.After}, {"last", p.Last, nil}, {"before", nil, p.Before}} {
		if a.n != nil {
			s += fmt.Sprintf("%s:%d ", a.name, *a.n)
		}
		if a.c != nil {
			s += fmt.Sprintf("%s:%s ", a.name, *a.c)
		}
	}
	return "(" + s + ")"
}

// TestPagingBothWays pages the home timeline and a user's posts forward and
// backward on both backends: every page in list order, forward and backward
// paging giving the same list with no repeat and no gap, both cursors
// bounding a window, page info as the Relay specification says (also when
// a cursor's own row is gone), "newer than my first item" giving exactly
// the posts published since, bad arguments refused, and a page costing the
// same store round trips in both directions.
func TestPagingBothWays(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			var calls atomic.Int64
			st := hbase.Instrument(b.Open(t))
			if err := tables.Migrate(ctx, st); err != nil {
				t.Fatal(err)
			}
			// A clock a millisecond further on each reading: posts never share one.
			var tick atomic.Int64
			base := time.Now().UnixMilli()
			svc := domaintest.Quiet(st, domain.WithClock(func() time.Time { return time.UnixMilli(base + tick.Add(1)) }))
			if err := svc.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer svc.Close(context.Background())
			alice, bob := mustUser(t, svc, uniq("alice")), mustUser(t, svc, uniq("bob"))
			if _, err := svc.Follows.Follow(ctx, alice.ID, bob.ID); err != nil {
				t.Fatal(err)
			}
			publish := func(author weibo.UserID, n int) {
				for i := range n {
					if _, err := svc.Feed.Publish(ctx, author, fmt.Sprintf("post %d", i)); err != nil {
						t.Fatal(err)
					}
				}
				if err := svc.FlushFanout(ctx); err != nil {
					t.Fatal(err)
				}
			}
			for range 6 {
				publish(bob.ID, 1)
				publish(alice.ID, 1)
			}
			counted := hbase.WithCallCounter(ctx, func(context.Context, string, string) { calls.Add(1) })
			lists := []postList{
				{"home timeline", func(_ context.Context, p weibo.Page) (*feed.PostConnection, error) {
					return svc.Timeline.HomeTimeline(counted, alice.ID, p)
				}, func(id weibo.PostID) (string, []byte) { return tables.Inbox, tables.InboxKey(alice.ID, id) },
					3}, // the inbox scan and the large-accounts Get, then one GetMany
				{"user posts", func(_ context.Context, p weibo.Page) (*feed.PostConnection, error) {
					return svc.Feed.UserPosts(counted, bob.ID, p)
				}, func(id weibo.PostID) (string, []byte) { return tables.Content, tables.ContentKey(id) }, 1},
			}
			for _, l := range lists {
				t.Run(l.name, func(t *testing.T) {
					all := readBoth(t, l, weibo.Page{First: new(weibo.MaxPageSize)})
					if len(all.ids) < 4 || all.info.HasNextPage || all.info.HasPreviousPage {
						t.Fatalf("everything: %v %+v", all.ids, all.info)
					}
					cursorOf := map[string]string{}
					for i, id := range all.ids {
						cursorOf[id] = all.cursors[i]
					}
					n := len(all.ids)

					// Forward by 2.
					var fwd []string
					for p, i := (bothPage{}), 0; i == 0 || p.info.HasNextPage; i++ {
						p = readBoth(t, l, weibo.Page{First: new(2), After: p.end})
						if p.info.HasPreviousPage != (i > 0) {
							t.Errorf("forward page %d: hasPreviousPage %v", i, p.info.HasPreviousPage)
						}
						fwd = append(fwd, p.ids...)
					}
					if !slices.Equal(fwd, all.ids) {
						t.Errorf("forward by 2: %v, want %v", fwd, all.ids)
					}
					// Backward by 2 from the end: the pages come in list order.
					var back []string
					for p, i := (bothPage{}), 0; i == 0 || p.info.HasPreviousPage; i++ {
						p = readBoth(t, l, weibo.Page{Last: new(2), Before: p.start})
						if p.info.HasNextPage != (i > 0) {
							t.Errorf("backward page %d: hasNextPage %v", i, p.info.HasNextPage)
						}
						if i == 0 && !slices.Equal(p.ids, all.ids[n-2:]) {
							t.Errorf("last 2: %v, want %v", p.ids, all.ids[n-2:])
						}
						back = append(slices.Clone(p.ids), back...)
					}
					if !slices.Equal(back, all.ids) {
						t.Errorf("backward by 2: %v, want %v", back, all.ids)
					}
					// More than there is.
					if p := readBoth(t, l, weibo.Page{Last: new(weibo.MaxPageSize)}); !slices.Equal(p.ids, all.ids) || p.info.HasNextPage || p.info.HasPreviousPage {
						t.Errorf("last %d: %v %+v", weibo.MaxPageSize, p.ids, p.info)
					}
					// Both cursors: the window between them.
					after, before := cursorOf[all.ids[0]], cursorOf[all.ids[4]]
					if p := readBoth(t, l, weibo.Page{First: new(10), After: &after, Before: &before}); !slices.Equal(p.ids, all.ids[1:4]) ||
						p.info.HasNextPage || !p.info.HasPreviousPage {
						t.Errorf("first 10 between 0 and 4: %v %+v, want %v", p.ids, p.info, all.ids[1:4])
					}
					if p := readBoth(t, l, weibo.Page{First: new(2), After: &after, Before: &before}); !slices.Equal(p.ids, all.ids[1:3]) ||
						!p.info.HasNextPage || !p.info.HasPreviousPage {
						t.Errorf("first 2 between 0 and 4: %v %+v, want %v", p.ids, p.info, all.ids[1:3])
					}
					if p := readBoth(t, l, weibo.Page{Last: new(2), After: &after, Before: &before}); !slices.Equal(p.ids, all.ids[2:4]) ||
						!p.info.HasNextPage || !p.info.HasPreviousPage {
						t.Errorf("last 2 between 0 and 4: %v %+v, want %v", p.ids, p.info, all.ids[2:4])
					}
					if p := readBoth(t, l, weibo.Page{Last: new(10), After: &after, Before: &before}); !slices.Equal(p.ids, all.ids[1:4]) ||
						!p.info.HasNextPage || p.info.HasPreviousPage {
						t.Errorf("last 10 between 0 and 4: %v %+v, want %v", p.ids, p.info, all.ids[1:4])
					}
					if p := readBoth(t, l, weibo.Page{After: &before, Before: &after}); len(p.ids) != 0 || p.info.HasNextPage || !p.info.HasPreviousPage {
						t.Errorf("crossed cursors: %v %+v, want no edge", p.ids, p.info)
					}

					// Round trips: the same per page, whichever the direction.
					for _, p := range []weibo.Page{{First: new(3)}, {First: new(3), After: &after}, {Last: new(3)},
						{Last: new(3), Before: &before}, {Last: new(weibo.MaxPageSize), Before: &before}} {
						calls.Store(0)
						readBoth(t, l, p)
						if got := float64(calls.Load()); got != l.calls {
							t.Errorf("%s: %v store calls, want %v", describePage(p), got, l.calls)
						}
					}

					// Bad arguments.
					other := "VAAAAAAAAAAAAAAAAAAAAAA" // a timeline cursor's shape
					if l.name == "home timeline" {
						other = "UAAAAAAAAAAA" // a posts cursor's shape
					}
					for _, c := range []struct {
						page  weibo.Page
						field string
					}{
						{weibo.Page{First: new(1), Last: new(1)}, "last"},
						{weibo.Page{Last: new(0)}, "last"},
						{weibo.Page{Last: new(weibo.MaxPageSize + 1)}, "last"},
						{weibo.Page{Last: new(1), Before: new("garbage!")}, "before"},
						{weibo.Page{Last: new(1), Before: &other}, "before"},
						{weibo.Page{First: new(1), Before: new("QQ")}, "before"},
						{weibo.Page{Last: new(1), After: new("QQ")}, "after"},
					} {
						_, err := l.read(ctx, c.page)
						if e, ok := errors.AsType[*weibo.Error](err); !ok || e.Code != weibo.CodeBadUserInput || e.Field != c.field {
							t.Errorf("%s: %v, want BAD_USER_INPUT on %s", describePage(c.page), err, c.field)
						}
					}
				})
			}

			// Newer than my first item: a client shows a first page, posts
			// arrive, and the page before its start cursor holds exactly them.
			for _, l := range lists {
				t.Run(l.name+"/newer than the first item", func(t *testing.T) {
					first := readBoth(t, l, weibo.Page{First: new(3)})
					before := readBoth(t, l, weibo.Page{First: new(weibo.MaxPageSize)}).ids
					publish(bob.ID, 2)
					publish(alice.ID, 1)
					publish(bob.ID, 1)
					now := readBoth(t, l, weibo.Page{First: new(weibo.MaxPageSize)}).ids
					fresh := now[:len(now)-len(before)]
					if !slices.Equal(now[len(fresh):], before) || len(fresh) == 0 {
						t.Fatalf("after publishing: %v, before %v", now, before)
					}
					p := readBoth(t, l, weibo.Page{Last: new(weibo.MaxPageSize), Before: first.start})
					if !slices.Equal(p.ids, fresh) || p.info.HasPreviousPage || !p.info.HasNextPage {
						t.Errorf("newer than %s: %v %+v, want exactly %v", first.ids[0], p.ids, p.info, fresh)
					}
					// Two at a time, back to the newest.
					var got []string
					for p, i := (bothPage{end: first.start, start: first.start}), 0; i == 0 || p.info.HasPreviousPage; i++ {
						p = readBoth(t, l, weibo.Page{Last: new(2), Before: p.start})
						got = append(slices.Clone(p.ids), got...)
					}
					if !slices.Equal(got, fresh) {
						t.Errorf("newer than %s by 2: %v, want %v", first.ids[0], got, fresh)
					}
					// And forward from the first page's end: nothing new, no repeat.
					rest := readBoth(t, l, weibo.Page{First: new(weibo.MaxPageSize), After: first.end})
					if !slices.Equal(append(slices.Clone(first.ids), rest.ids...), before) {
						t.Errorf("first page %v then %v, want %v", first.ids, rest.ids, before)
					}
				})
			}

			// A cursor whose own row is gone: the page info still tells
			// whether edges lie beyond it.
			for _, l := range lists {
				t.Run(l.name+"/cursor row gone", func(t *testing.T) {
					all := readBoth(t, l, weibo.Page{First: new(weibo.MaxPageSize)})
					n := len(all.ids)
					drop := func(i int) {
						id, err := weibo.ParsePostID(all.ids[i])
						if err != nil {
							t.Fatal(err)
						}
						table, row := l.row(id)
						if err := st.Delete(ctx, &hbase.Delete{Table: table, Row: row}); err != nil {
							t.Fatal(err)
						}
					}
					drop(0)
					drop(n - 1)
					drop(2)
					for _, c := range []struct {
						page       weibo.Page
						ids        []string
						prev, next bool
					}{
						// The newest is gone: nothing before it.
						{weibo.Page{First: new(1), After: &all.cursors[0]}, all.ids[1:2], false, true},
						// The oldest is gone: nothing after it.
						{weibo.Page{Last: new(1), Before: &all.cursors[n-1]}, all.ids[n-2 : n-1], true, false},
						// The third is gone: the second lies before it, the fourth after it.
						{weibo.Page{First: new(1), After: &all.cursors[2]}, all.ids[3:4], true, true},
						{weibo.Page{Last: new(1), Before: &all.cursors[2]}, all.ids[1:2], false, true},
					} {
						p := readBoth(t, l, c.page)
						if !slices.Equal(p.ids, c.ids) || p.info.HasPreviousPage != c.prev || p.info.HasNextPage != c.next {
							t.Errorf("%s: %v %+v, want %v previous %v next %v", describePage(c.page), p.ids, p.info, c.ids, c.prev, c.next)
						}
					}
				})
			}
		})
	}
}
