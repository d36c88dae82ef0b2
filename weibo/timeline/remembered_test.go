package timeline_test

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/safety"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestRememberedSetAcrossInstances: two gateway instances over one store
// (no bus between them). The reading instance remembers the viewer's Set
// by its row's version: a page read again costs the same store calls as
// the first once remembered, and reads none of the viewer's row but its
// version cell. A block, a mute and a filter made on the other instance
// are honoured by the reader's very next page (the version changed: one
// Get of the row more, once), a timed mute ends on the reader when its
// clock passes the mute's end, with no write, and a change made on the
// reader itself costs its next page nothing more.
func TestRememberedSetAcrossInstances(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := hbase.Instrument(b.OpenOwn(t, tables.Namespace, "remembered"))
			if err := tables.Migrate(ctx, st); err != nil {
				t.Fatal(err)
			}
			var clock domaintest.Clock
			open := func() *domain.Domain {
				d := domain.New(st, domain.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))), domain.WithBcryptCost(4),
					domain.WithOutboxSweep(0), clock.Option())
				if err := d.Start(ctx); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = d.Close(context.Background()) })
				return d
			}
			reader, writer := open(), open()
			user := func(n string) weibo.UserID { return domaintest.MustUser(t, writer, domaintest.Uniq(n)).ID }
			viewer, x, y := user("viewer"), user("x"), user("y")
			for _, f := range []weibo.UserID{x, y} {
				if _, err := writer.Follows.Follow(ctx, viewer, f); err != nil {
					t.Fatal(err)
				}
				if _, err := writer.Feed.Publish(ctx, f, "a post"); err != nil {
					t.Fatal(err)
				}
			}
			if err := writer.FlushFanout(ctx); err != nil {
				t.Fatal(err)
			}
			// Something in the viewer's row, so that it has a version.
			if _, err := writer.Safety.CreateFilter(ctx, viewer, safetyInput("nothing matches this")); err != nil {
				t.Fatal(err)
			}
			page := func() (authors map[weibo.UserID]bool, calls int) {
				t.Helper()
				var n atomic.Int64
				cctx := hbase.WithCallCounter(ctx, func(context.Context, string, string) { n.Add(1) })
				c, err := reader.Timeline.HomeTimeline(cctx, viewer, weibo.Page{First: new(10)})
				if err != nil {
					t.Fatal(err)
				}
				authors = map[weibo.UserID]bool{}
				for _, e := range c.Edges {
					authors[e.Post.ID.Author] = true
				}
				return authors, int(n.Load())
			}
			first, cold := page()
			again, warm := page()
			if !first[x] || !first[y] || len(again) != 2 || warm != cold-1 {
				t.Fatalf("pages: %v then %v, %d then %d store calls (want one fewer once remembered)", first, again, cold, warm)
			}
			if _, err := writer.Safety.Block(ctx, viewer, x); err != nil {
				t.Fatal(err)
			}
			if got, calls := page(); got[x] || !got[y] || calls != cold {
				t.Fatalf("after the block on the other instance: %v, %d calls (want x gone, %d calls)", got, calls, cold)
			}
			if _, err := writer.Safety.Unblock(ctx, viewer, x); err != nil {
				t.Fatal(err)
			}
			minute := 60
			if _, err := writer.Safety.Mute(ctx, viewer, y, &minute, true); err != nil {
				t.Fatal(err)
			}
			if got, _ := page(); got[y] {
				t.Fatalf("after the mute on the other instance: %v", got)
			}
			clock.Advance(time.Minute + time.Second)
			if got, calls := page(); !got[y] || calls != warm {
				t.Fatalf("after the mute's end: %v, %d calls (want y back, %d calls: nothing written)", got, calls, warm)
			}
			// A change made on the reading instance is remembered there as
			// it is made: the next page costs nothing more.
			if _, err := reader.Safety.CreateFilter(ctx, viewer, safetyInput("a post")); err != nil {
				t.Fatal(err)
			}
			if got, calls := page(); len(got) != 0 || calls != warm {
				t.Fatalf("after a filter made on the reader: %v, %d calls (want none shown, %d calls)", got, calls, warm)
			}
		})
	}
}

// safetyInput is a HIDE filter of phrase on the home timeline.
func safetyInput(phrase string) safety.FilterInput {
	return safety.FilterInput{Phrase: phrase, Contexts: []safety.Context{safety.ContextHome}, Action: safety.Hide}
}
