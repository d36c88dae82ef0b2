package timeline_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/tables"
	"github.com/weibohbase/gateway/weibo/timeline"
)

// world is a viewer following a large account (star: two fans at a
// threshold of 2, so its posts reach no inbox) and an ordinary account
// (friend), and the posts star, friend, viewer and star published in
// that order, one millisecond apart at least, their fan-outs written.
type world struct {
	svc    *domain.Domain
	viewer weibo.UserID
	star   weibo.UserID
	posts  []weibo.PostID // oldest first
}

func newWorld(t *testing.T, b testenv.Backend, name string) *world {
	t.Helper()
	ctx := t.Context()
	st := b.OpenOwn(t, tables.Namespace, name)
	if err := tables.Migrate(ctx, st); err != nil {
		t.Fatal(err)
	}
	svc := domain.New(st, domain.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		domain.WithBcryptCost(4), domain.WithOutboxSweep(0), domain.WithFanoutThreshold(2))
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close(context.Background()) })
	var users []weibo.UserID
	for _, n := range []string{"viewer", "star", "fan", "friend"} {
		u, err := svc.Accounts.Register(ctx, n, "correct horse")
		if err != nil {
			t.Fatal(err)
		}
		users = append(users, u.ID)
	}
	w := &world{svc: svc, viewer: users[0], star: users[1]}
	fan, friend := users[2], users[3]
	for _, f := range [][2]weibo.UserID{{fan, w.star}, {w.viewer, w.star}, {w.viewer, friend}} {
		if _, err := svc.Follows.Follow(ctx, f[0], f[1]); err != nil {
			t.Fatal(err)
		}
	}
	for i, a := range []weibo.UserID{w.star, friend, w.viewer, w.star} {
		time.Sleep(2 * time.Millisecond)
		p, err := svc.Feed.Publish(ctx, a, "post "+string(rune('a'+i)))
		if err != nil {
			t.Fatal(err)
		}
		w.posts = append(w.posts, p.ID)
	}
	if err := svc.FlushFanout(ctx); err != nil {
		t.Fatal(err)
	}
	return w
}

// ids returns the ids of a page's posts, in its order.
func ids(c *feed.PostConnection) []weibo.PostID {
	var out []weibo.PostID
	for _, e := range c.Edges {
		out = append(out, e.Post.ID)
	}
	return out
}

// TestHomeTimelineHybrid reads a home timeline through the domain's
// wiring on both backends: the large account's posts, absent from the
// viewer's inbox, are merged with the inbox newest first; pages go on
// from a cursor both ways; WithoutCounts serves the same posts without
// counters.
func TestHomeTimelineHybrid(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			w := newWorld(t, b, "timeline")
			large, err := w.svc.Fanout.LargeAccounts(ctx)
			if err != nil || len(large) != 1 || large[w.star] {
				t.Fatalf("LargeAccounts = %v, %v; want star (%s) large, not draining", large, err, w.star)
			}
			var inbox []weibo.PostID
			err = w.svc.Store().Scan(ctx, &hbase.Scan{Table: tables.Inbox, Prefix: tables.InboxPrefix(w.viewer)}, func(r *hbase.Result) error {
				if _, id, ok := tables.DecodeInboxKey(r.Row); ok {
					inbox = append(inbox, id)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if want := []weibo.PostID{w.posts[2], w.posts[1]}; !slices.Equal(inbox, want) {
				t.Fatalf("the viewer's inbox holds %v, want %v (none of the large account's)", inbox, want)
			}

			newest := slices.Clone(w.posts)
			slices.Reverse(newest)
			all, err := w.svc.Timeline.HomeTimeline(ctx, w.viewer, weibo.Page{First: new(10)})
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(all); !slices.Equal(got, newest) {
				t.Fatalf("HomeTimeline = %v, want %v", got, newest)
			}
			if all.PageInfo.HasNextPage || all.PageInfo.HasPreviousPage {
				t.Fatalf("one whole page: page info %+v", all.PageInfo)
			}

			first, err := w.svc.Timeline.HomeTimeline(ctx, w.viewer, weibo.Page{First: new(2)})
			if err != nil || !slices.Equal(ids(first), newest[:2]) || !first.PageInfo.HasNextPage {
				t.Fatalf("first page = %v (%+v), %v; want %v and a next page", ids(first), first.PageInfo, err, newest[:2])
			}
			second, err := w.svc.Timeline.HomeTimeline(ctx, w.viewer, weibo.Page{First: new(2), After: first.PageInfo.EndCursor})
			if err != nil || !slices.Equal(ids(second), newest[2:]) || second.PageInfo.HasNextPage || !second.PageInfo.HasPreviousPage {
				t.Fatalf("second page = %v (%+v), %v; want %v, the last", ids(second), second.PageInfo, err, newest[2:])
			}
			back, err := w.svc.Timeline.HomeTimeline(ctx, w.viewer, weibo.Page{Last: new(1), Before: second.PageInfo.StartCursor})
			if err != nil || !slices.Equal(ids(back), newest[1:2]) {
				t.Fatalf("page before the second = %v, %v; want %v", ids(back), err, newest[1:2])
			}

			bare, err := w.svc.Timeline.HomeTimeline(ctx, w.viewer, weibo.Page{First: new(10)}, timeline.WithoutCounts())
			if err != nil || !slices.Equal(ids(bare), newest) {
				t.Fatalf("HomeTimeline(WithoutCounts) = %v, %v; want %v", ids(bare), err, newest)
			}
			for i, e := range bare.Edges {
				if e.Post.Content != all.Edges[i].Post.Content || e.Cursor != all.Edges[i].Cursor {
					t.Fatalf("WithoutCounts edge %d = %+v, want %+v", i, e, all.Edges[i])
				}
			}

			if _, err := w.svc.Timeline.HomeTimeline(ctx, w.viewer, weibo.Page{First: new(1), After: new("not a cursor")}); weibo.CodeOf(err) != weibo.CodeBadUserInput {
				t.Fatalf("a malformed cursor: %v, want BAD_USER_INPUT", err)
			}
		})
	}
}

// TestTimelineEventsResume resumes a stream from the cursor of the oldest
// post: the newer ones are replayed oldest first, the large account's
// among them, then a post published afterwards arrives live, with the
// cursor its timeline edge has.
func TestTimelineEventsResume(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			w := newWorld(t, b, "timelineevents")
			page, err := w.svc.Timeline.HomeTimeline(ctx, w.viewer, weibo.Page{First: new(10)})
			if err != nil {
				t.Fatal(err)
			}
			oldest := page.Edges[len(page.Edges)-1].Cursor
			stream, err := w.svc.Timeline.TimelineEvents(ctx, w.viewer, &oldest)
			if err != nil {
				t.Fatal(err)
			}
			next := func() timeline.PostAdded {
				t.Helper()
				select {
				case e, ok := <-stream.C:
					if !ok {
						t.Fatalf("stream closed: %v", stream.Err())
					}
					a, ok := e.(timeline.PostAdded)
					if !ok {
						t.Fatalf("event %+v, want a PostAdded", e)
					}
					return a
				case <-time.After(10 * time.Second):
					t.Fatal("no event in 10 s")
				}
				return timeline.PostAdded{}
			}
			for _, id := range w.posts[1:] {
				if e := next(); e.Post.ID != id {
					t.Fatalf("replayed %s, want %s", e.Post.ID, id)
				}
			}
			p, err := w.svc.Feed.Publish(ctx, w.star, "live")
			if err != nil {
				t.Fatal(err)
			}
			e := next()
			if e.Post.ID != p.ID || e.Post.Content != "live" {
				t.Fatalf("live event %+v, want %s", e.Post, p.ID)
			}
			top, err := w.svc.Timeline.HomeTimeline(ctx, w.viewer, weibo.Page{First: new(1)})
			if err != nil || len(top.Edges) != 1 || top.Edges[0].Post.ID != p.ID || top.Edges[0].Cursor != e.Cursor {
				t.Fatalf("top of the timeline = %+v, %v; want %s at cursor %s", top.Edges, err, p.ID, e.Cursor)
			}

			if _, err := w.svc.Timeline.TimelineEvents(ctx, w.viewer, new("not a cursor")); weibo.CodeOf(err) != weibo.CodeBadUserInput {
				t.Fatalf("a malformed after: %v, want BAD_USER_INPUT", err)
			}
		})
	}
}
