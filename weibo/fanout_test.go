package weibo_test

import (
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/tables"
)

func quietService(st hbase.Store, opts ...weibo.Option) *weibo.Service {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	return weibo.New(st, append([]weibo.Option{weibo.WithLogger(log), weibo.WithBcryptCost(4), weibo.WithOutboxSweep(0)}, opts...)...)
}

func inboxHas(t *testing.T, svc *weibo.Service, owner weibo.UserID, post weibo.PostID) int {
	t.Helper()
	n := 0
	err := svc.Store().Scan(t.Context(), &hbase.Scan{Table: tables.Inbox, Prefix: tables.InboxPrefix(owner)}, func(r *hbase.Result) error {
		if _, id, ok := tables.DecodeInboxKey(r.Row); ok && id == post {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestFanoutSurvivesCrash publishes with a gateway whose fan-out workers
// never run (it "dies" right after acknowledging the post), then starts
// another gateway on the same store: its outbox sweep delivers the post to
// every fan, exactly once, and clears the outbox row. Running the fan-out
// again adds no duplicate.
func TestFanoutSurvivesCrash(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := b.Open(t)
			if err := tables.Migrate(ctx, st); err != nil {
				t.Fatal(err)
			}
			crashed := quietService(st) // never started: no worker drains its queue
			tag := fmt.Sprintf("%d_%d", time.Now().UnixNano()%1e9, rand.IntN(1000))
			author, err := crashed.Register(ctx, "author_"+tag, "correct horse")
			if err != nil {
				t.Fatal(err)
			}
			var fans []*weibo.User
			for i := range 3 {
				f, err := crashed.Register(ctx, fmt.Sprintf("fan%d_%s", i, tag), "correct horse")
				if err != nil {
					t.Fatal(err)
				}
				if _, err := crashed.Follow(ctx, f.ID, author.ID); err != nil {
					t.Fatal(err)
				}
				fans = append(fans, f)
			}
			post, err := crashed.Publish(ctx, author.ID, "written just before the crash")
			if err != nil {
				t.Fatal(err)
			}
			if n := inboxHas(t, crashed, fans[0].ID, post.ID); n != 0 {
				t.Fatalf("fan-out ran without workers (%d)", n)
			}
			if n := inboxHas(t, crashed, author.ID, post.ID); n != 1 {
				t.Fatalf("the author's own inbox has the post %d times, want 1 at once", n)
			}
			if r, err := st.Get(ctx, &hbase.Get{Table: tables.Outbox, Row: tables.OutboxKey(post.ID)}); err != nil || !r.Exists() {
				t.Fatalf("no outbox row for an acknowledged post: %v", err)
			}

			for round := range 2 { // the second restart re-runs nothing, and would add nothing
				next := quietService(st)
				if round == 1 {
					if err := st.Put(ctx, &hbase.Put{Table: tables.Outbox, Row: tables.OutboxKey(post.ID),
						Values: hbase.Values{tables.FamOutbox: {tables.ColOutboxAt: tables.U64(1)}}}); err != nil {
						t.Fatal(err)
					}
				}
				if err := next.Start(ctx); err != nil {
					t.Fatal(err)
				}
				if err := next.FlushFanout(ctx); err != nil {
					t.Fatal(err)
				}
				if err := next.Close(ctx); err != nil {
					t.Fatal(err)
				}
				for _, f := range fans {
					if n := inboxHas(t, next, f.ID, post.ID); n != 1 {
						t.Fatalf("round %d: fan %s has the post %d times, want 1", round, f.Username, n)
					}
				}
				if r, err := st.Get(ctx, &hbase.Get{Table: tables.Outbox, Row: tables.OutboxKey(post.ID)}); err != nil || r.Exists() {
					t.Fatalf("round %d: outbox row left after the fan-out (%v)", round, err)
				}
			}
			page, err := quietService(st).HomeTimeline(ctx, fans[1].ID, weibo.Page{})
			if err != nil || len(page.Edges) != 1 || page.Edges[0].Post.ID != post.ID {
				t.Fatalf("fan's home timeline = %+v, %v", page, err)
			}
		})
	}
}
