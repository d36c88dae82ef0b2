package timeline_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/safety"
	"github.com/weibohbase/gateway/weibo/tables"
	"github.com/weibohbase/gateway/weibo/timeline"
)

// safetyWorld is a viewer who follows a friend, a large account (star,
// with two other fans at a threshold of 3), and four users the viewer will
// block, be blocked by, mute, or leave alone (plain); each has posted,
// friend and star have reposted the posts of the blocked, the blocker and
// the muted, and some posts hold the phrases of the viewer's filters.
type safetyWorld struct {
	svc                                   *domain.Domain
	viewer, friend, star                  weibo.UserID
	blocked, blocker, muted, plain, other weibo.UserID
	posts                                 []wpost // oldest first
}

// wpost is one post of the world and how the viewer's timeline shows it
// once the viewer's sets are in place.
type wpost struct {
	id   weibo.PostID
	what string
	hide bool   // hidden by the viewer's Set
	warn string // the WARN phrase it matches, "" for none
}

func newSafetyWorld(t *testing.T, b testenv.Backend, name string) *safetyWorld {
	t.Helper()
	ctx := t.Context()
	st := b.OpenOwn(t, tables.Namespace, name)
	if err := tables.Migrate(ctx, st); err != nil {
		t.Fatal(err)
	}
	svc := domain.New(st, domain.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		domain.WithBcryptCost(4), domain.WithOutboxSweep(0), domain.WithFanoutThreshold(3))
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close(context.Background()) })
	var u []weibo.UserID
	for _, n := range []string{"viewer", "friend", "star", "fan", "blocked", "blocker", "muted", "plain", "other", "fan2"} {
		r, err := svc.Accounts.Register(ctx, n, "correct horse")
		if err != nil {
			t.Fatal(err)
		}
		u = append(u, r.ID)
	}
	w := &safetyWorld{svc: svc, viewer: u[0], friend: u[1], star: u[2], blocked: u[4], blocker: u[5], muted: u[6], plain: u[7], other: u[8]}
	for _, f := range [][2]weibo.UserID{{u[3], w.star}, {u[9], w.star}, {w.viewer, w.star}, {w.viewer, w.friend},
		{w.viewer, w.blocked}, {w.viewer, w.blocker}, {w.viewer, w.muted}, {w.viewer, w.plain}} {
		if _, err := svc.Follows.Follow(ctx, f[0], f[1]); err != nil {
			t.Fatal(err)
		}
	}
	if ls, err := svc.Fanout.LargeAccounts(ctx); err != nil || len(ls) != 1 || ls[w.star] {
		t.Fatalf("LargeAccounts = %v, %v; want star alone, not draining", ls, err)
	}
	post := func(author weibo.UserID, text string, hide bool, warn string) weibo.PostID {
		t.Helper()
		time.Sleep(2 * time.Millisecond)
		p, err := svc.Feed.Publish(ctx, author, text)
		if err != nil {
			t.Fatal(err)
		}
		w.posts = append(w.posts, wpost{id: p.ID, what: text, hide: hide, warn: warn})
		return p.ID
	}
	repost := func(author weibo.UserID, root weibo.PostID, text string, hide bool) {
		t.Helper()
		time.Sleep(2 * time.Millisecond)
		p, err := svc.Reposts.Repost(ctx, author, root, text)
		if err != nil {
			t.Fatal(err)
		}
		w.posts = append(w.posts, wpost{id: p.ID, what: text, hide: hide})
	}
	post(w.friend, "friend 1", false, "")
	b1 := post(w.blocked, "by the blocked", true, "")
	x1 := post(w.blocker, "by the blocker", true, "")
	m1 := post(w.muted, "by the muted", true, "")
	post(w.plain, "plain, Lockdown ahead", false, "lockdown")
	repost(w.friend, b1, "friend reposts the blocked", true)
	repost(w.friend, x1, "friend reposts the blocker", true)
	repost(w.friend, m1, "friend reposts the muted", true)
	repost(w.star, m1, "star reposts the muted", true)
	post(w.star, "star 1", false, "")
	post(w.star, "star on 疫情", true, "")
	post(w.star, "star: the LOCKDOWN", false, "lockdown")
	post(w.friend, "friend on 疫情数据", true, "")
	post(w.friend, "friend: lockdowns are not a whole word", false, "")
	post(w.friend, "friend 2", false, "")
	post(w.viewer, "the viewer's own, with hello", false, "") // hello: a NOTIFICATIONS filter only
	// The newest entries are hidden ones, so that a page of the newest must
	// read on past them.
	for i := range 40 {
		post(w.muted, fmt.Sprintf("muted again %d", i), true, "")
		if i%8 == 0 {
			post(w.star, fmt.Sprintf("star on 疫情 again %d", i), true, "")
		}
	}
	post(w.plain, "plain, newest", false, "")
	if err := svc.FlushFanout(ctx); err != nil {
		t.Fatal(err)
	}
	return w
}

// applySets makes the viewer block blocked and mute muted, blocker block
// the viewer, and gives the viewer the filters: 疫情 HIDE and "lockdown"
// WARN (whole word) at home, "hello" HIDE in notifications only.
func (w *safetyWorld) applySets(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	sf := w.svc.Safety
	if _, err := sf.Block(ctx, w.viewer, w.blocked); err != nil {
		t.Fatal(err)
	}
	if _, err := sf.Block(ctx, w.blocker, w.viewer); err != nil {
		t.Fatal(err)
	}
	if _, err := sf.Mute(ctx, w.viewer, w.muted, nil, true); err != nil {
		t.Fatal(err)
	}
	for _, f := range []safety.FilterInput{
		{Phrase: "疫情", Contexts: []safety.Context{safety.ContextHome}, Action: safety.Hide},
		{Phrase: "lockdown", Contexts: []safety.Context{safety.ContextHome, safety.ContextTopic}, Action: safety.Warn, WholeWord: true},
		{Phrase: "hello", Contexts: []safety.Context{safety.ContextNotifications}, Action: safety.Hide},
	} {
		if _, err := sf.CreateFilter(ctx, w.viewer, f); err != nil {
			t.Fatal(err)
		}
	}
}

// want returns the viewer's timeline as the world says, newest first:
// every post, or only those the sets leave.
func (w *safetyWorld) want(withSets bool) []wpost {
	var out []wpost
	for _, p := range slices.Backward(w.posts) {
		if !withSets || !p.hide {
			out = append(out, p)
		}
	}
	return out
}

// page reads one page of the viewer's home timeline.
func (w *safetyWorld) page(t *testing.T, p weibo.Page, opts ...timeline.ReadOption) *feed.PostConnection {
	t.Helper()
	c, err := w.svc.Timeline.HomeTimeline(t.Context(), w.viewer, p, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// check compares a page's posts with want, warnings included.
func check(t *testing.T, what string, got []*feed.Post, want []wpost) {
	t.Helper()
	show := func(id weibo.PostID, text string, warn string) string {
		return fmt.Sprintf("%s %q warn=%q", id, text, warn)
	}
	var g, wt []string
	for _, p := range got {
		var warn []string
		for _, f := range p.Filtered {
			if f.Action != safety.Warn {
				t.Errorf("%s: post %q filtered with action %v", what, p.Content, f.Action)
			}
			warn = append(warn, f.Phrase)
		}
		g = append(g, show(p.ID, p.Content, strings.Join(warn, ",")))
	}
	for _, p := range want {
		wt = append(wt, show(p.id, p.what, p.warn))
	}
	if !slices.Equal(g, wt) {
		t.Fatalf("%s:\n got %s\nwant %s", what, strings.Join(g, "\n     "), strings.Join(wt, "\n     "))
	}
}

func postsOf(c *feed.PostConnection) []*feed.Post {
	var out []*feed.Post
	for _, e := range c.Edges {
		out = append(out, e.Post)
	}
	return out
}

// TestHomeTimelineSafety proves on both backends that the home timeline
// honours the viewer's Set: the posts of a user the viewer blocks, who
// blocks the viewer, or whom the viewer mutes are gone, and so are
// reposts of them (by an ordinary followee and by a large account whose
// posts are merged at read time); a HOME filter with HIDE drops matching
// posts (a large account's too), one with WARN returns them with Filtered
// set on a copy (the post cache's post stays as it was), a filter of
// another context does nothing; pages of first: n stay full although the
// newest entries are hidden, page on without loss both ways; a follow
// across a block for a moment (a racing follow before its undo) shows
// nothing; muting the large account hides all of its posts.
func TestHomeTimelineSafety(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			w := newSafetyWorld(t, b, "timeline_safety")
			all := w.want(false)
			before := w.page(t, weibo.Page{First: new(100)})
			for _, p := range postsOf(before) { // no warnings without filters
				if p.Filtered != nil {
					t.Fatalf("post %q filtered without filters", p.Content)
				}
			}
			for i := range all {
				all[i].warn = ""
			}
			check(t, "before the sets", postsOf(before), all)

			w.applySets(t)
			want := w.want(true)
			check(t, "first: 100", postsOf(w.page(t, weibo.Page{First: new(100)})), want)
			check(t, "first: 100, without counts", postsOf(w.page(t, weibo.Page{First: new(100)}, timeline.WithoutCounts())), want)

			// Full pages despite the hidden newest entries, forward then
			// backward from the end.
			for _, n := range []int{1, 3, 5} {
				var got []*feed.Post
				var after *string
				for range 100 {
					c := w.page(t, weibo.Page{First: new(n), After: after})
					if len(c.Edges) != n && c.PageInfo.HasNextPage {
						t.Fatalf("first: %d after %v: %d edges with a next page", n, after, len(c.Edges))
					}
					got = append(got, postsOf(c)...)
					if !c.PageInfo.HasNextPage {
						break
					}
					after = c.PageInfo.EndCursor
				}
				check(t, fmt.Sprintf("pages of first: %d", n), got, want)
				var back []*feed.Post
				var before *string
				for range 100 {
					c := w.page(t, weibo.Page{Last: new(n), Before: before})
					if len(c.Edges) != n && c.PageInfo.HasPreviousPage {
						t.Fatalf("last: %d before %v: %d edges with a previous page", n, before, len(c.Edges))
					}
					back = append(postsOf(c), back...)
					if !c.PageInfo.HasPreviousPage {
						break
					}
					before = c.PageInfo.StartCursor
				}
				check(t, fmt.Sprintf("pages of last: %d", n), back, want)
			}

			// The post cache's copy of a warned post is not marked: another
			// viewer without filters reads it plain.
			var warned weibo.PostID
			for _, p := range want {
				if p.warn != "" && p.id.Author == w.plain {
					warned = p.id
				}
			}
			if _, err := w.svc.Follows.Follow(ctx, w.other, w.plain); err != nil {
				t.Fatal(err)
			}
			if err := w.svc.FlushFanout(ctx); err != nil {
				t.Fatal(err)
			}
			c, err := w.svc.Timeline.HomeTimeline(ctx, w.other, weibo.Page{First: new(10)}, timeline.WithoutCounts())
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, p := range postsOf(c) {
				if p.ID == warned {
					found = true
					if p.Filtered != nil {
						t.Fatalf("another viewer reads the post %q with %v", p.Content, p.Filtered)
					}
				}
			}
			if !found {
				t.Fatalf("another viewer's timeline misses %s", warned)
			}

			// A follow across a block for a moment (a racing follow's
			// attends row and a fan-out's entry before the follow undoes
			// itself): the Set still hides those posts, either way.
			for _, a := range []weibo.UserID{w.blocked, w.blocker} {
				time.Sleep(2 * time.Millisecond)
				p, err := w.svc.Feed.Publish(ctx, a, "across the block")
				if err != nil {
					t.Fatal(err)
				}
				if err := w.svc.Store().PutMany(ctx, []*hbase.Put{
					{Table: tables.Relations, Row: tables.RelationKey(w.viewer, tables.Attends, a),
						Values: hbase.Values{tables.FamRel: {tables.ColRelSet: tables.EncodeMillis(p.ID.Millis)}}},
					{Table: tables.Inbox, Row: tables.InboxKey(w.viewer, p.ID), Values: hbase.Values{tables.FamInbox: {tables.ColInboxAt: {}}}},
				}); err != nil {
					t.Fatal(err)
				}
			}
			check(t, "with follows across the blocks", postsOf(w.page(t, weibo.Page{First: new(100)})), want)

			// Muting the large account hides all of its posts.
			if _, err := w.svc.Safety.Mute(ctx, w.viewer, w.star, nil, false); err != nil {
				t.Fatal(err)
			}
			want = slices.DeleteFunc(want, func(p wpost) bool { return p.id.Author == w.star })
			check(t, "star muted", postsOf(w.page(t, weibo.Page{First: new(100)})), want)
			check(t, "star muted, first: 2", postsOf(w.page(t, weibo.Page{First: new(2)})), want[:2])
		})
	}
}
