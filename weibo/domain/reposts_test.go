package domain_test

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/repost"
	"github.com/weibohbase/gateway/weibo/tables"
)

// checkReposts checks root's reposts after quiescence: its repostCount
// equals the reposts its list shows (every page, newest first), and they
// are exactly the stored posts of reposters that name root — among them
// every acknowledged repost of acked. It returns the reposts listed.
func checkReposts(t *testing.T, svc *domain.Domain, root weibo.PostID, reposters []weibo.UserID, acked []weibo.PostID) []weibo.PostID {
	t.Helper()
	ctx := t.Context()
	hundred := 100
	var listed []weibo.PostID
	var after *string
	for {
		page, err := svc.Reposts.Reposts(ctx, root, &hundred, after)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Edges {
			listed = append(listed, e.Post.ID)
		}
		if !page.PageInfo.HasNextPage {
			break
		}
		after = page.PageInfo.EndCursor
	}
	var stored []weibo.PostID
	for _, u := range reposters {
		var after *string
		for {
			page, err := svc.Feed.UserPosts(ctx, u, weibo.Page{First: &hundred, After: after})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range page.Edges {
				if e.Post.RepostOfID != nil && *e.Post.RepostOfID == root {
					stored = append(stored, e.Post.ID)
				}
			}
			if !page.PageInfo.HasNextPage {
				break
			}
			after = page.PageInfo.EndCursor
		}
	}
	slices.SortFunc(stored, func(a, b weibo.PostID) int {
		return cmp.Or(cmp.Compare(b.Millis, a.Millis), cmp.Compare(a.Author, b.Author))
	})
	ps, err := svc.Feed.GetPosts(ctx, []weibo.PostID{root})
	if err != nil || ps[0] == nil {
		t.Fatalf("root %s: %v", root, err)
	}
	if n := ps[0].RepostCount; n != int64(len(listed)) || !slices.Equal(listed, stored) {
		t.Errorf("post %s: repostCount %d, %d reposts listed %v, %d stored %v", root, n, len(listed), listed, len(stored), stored)
	}
	for _, id := range acked {
		if !slices.Contains(listed, id) {
			t.Errorf("acknowledged repost %s is not listed", id)
		}
	}
	return listed
}

// TestRepostStorm reposts one post concurrently on each backend (the
// embedded store's calls delayed at random, see jittery): reposts of the
// post, reposts of those reposts (which name the root), several by one
// user at once, and follows of the reposters in between. After
// quiescence the root's repostCount equals its reposts listed, which are
// exactly the stored reposts, and checkWorld holds (fsck finds nothing).
func TestRepostStorm(t *testing.T) {
	const (
		users       = 6
		reposts     = 60
		concurrency = 12
		grace       = 10 * time.Second
	)
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := domaintest.OwnStore(t, b)
			if b.Name == hbase.BackendEmbedded {
				st = domaintest.Jittery{StoreAdmin: st}
			}
			svc := domaintest.Quiet(st, domain.WithRepairGrace(grace), domain.WithOutboxSweep(time.Second))
			if err := svc.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer svc.Close(context.Background())
			w := &world{posts: map[weibo.UserID][]weibo.PostID{}}
			var ids []weibo.UserID
			for i := range users {
				u := mustUser(t, svc, uniq(fmt.Sprintf("rp%d", i)))
				w.users = append(w.users, u)
				ids = append(ids, u.ID)
			}
			root, err := svc.Feed.Publish(ctx, ids[0], "要被转发的微博")
			if err != nil {
				t.Fatal(err)
			}
			w.addPost(root)
			var (
				mu       sync.Mutex
				acked    []weibo.PostID
				failures []error
			)
			var calls []func() error
			for i := range reposts {
				author := ids[rand.IntN(users)]
				calls = append(calls, func() error {
					target := root.ID
					mu.Lock()
					if len(acked) > 0 && i%3 == 0 { // a repost of a repost
						target = acked[rand.IntN(len(acked))]
					}
					mu.Unlock()
					p, err := svc.Reposts.Repost(ctx, author, target, fmt.Sprintf("转发 %d", i))
					if err == nil {
						w.addPost(p)
						mu.Lock()
						acked = append(acked, p.ID)
						mu.Unlock()
					}
					return err
				})
			}
			for range 10 {
				a, f := ids[rand.IntN(users)], ids[rand.IntN(users)]
				if a != f {
					calls = append(calls, func() error { _, err := svc.Follows.Follow(ctx, a, f); return err })
				}
			}
			rand.Shuffle(len(calls), func(i, j int) { calls[i], calls[j] = calls[j], calls[i] })
			work := make(chan func() error)
			var wg sync.WaitGroup
			for range concurrency {
				wg.Go(func() {
					for call := range work {
						if err := call(); err != nil {
							mu.Lock()
							failures = append(failures, err)
							mu.Unlock()
						}
					}
				})
			}
			for _, c := range calls {
				work <- c
			}
			close(work)
			wg.Wait()
			if len(failures) > 0 {
				t.Fatalf("%d calls failed, first: %v", len(failures), failures[0])
			}
			domaintest.WaitQuiet(t, svc, 2*time.Minute)
			listed := checkReposts(t, svc, root.ID, ids, acked)
			if len(listed) != reposts {
				t.Errorf("%d reposts listed, want %d", len(listed), reposts)
			}
			checkWorld(t, svc, w, grace, true)
		})
	}
}

// TestRepostSameMillisecond reposts one post three times by one user in
// one millisecond (a fixed clock): the reposts take consecutive
// milliseconds, each a marker of its own for every id it tried, and none
// is left behind; the root counts and lists all three.
func TestRepostSameMillisecond(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := domaintest.OwnStore(t, b)
			at := time.UnixMilli(1583020800123)
			svc := domaintest.Quiet(st, domain.WithClock(func() time.Time { return at }))
			if err := svc.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer svc.Close(context.Background())
			author, reposter := mustUser(t, svc, uniq("author")), mustUser(t, svc, uniq("reposter"))
			root, err := svc.Feed.Publish(ctx, author.ID, "root")
			if err != nil {
				t.Fatal(err)
			}
			var acked []weibo.PostID
			for i := range 3 {
				p, err := svc.Reposts.Repost(ctx, reposter.ID, root.ID, "")
				if err != nil {
					t.Fatal(err)
				}
				if p.ID.Millis != at.UnixMilli()+int64(i) || p.Content != repost.EmptyRepostContent {
					t.Fatalf("repost %d: %s %q", i, p.ID, p.Content)
				}
				acked = append(acked, p.ID)
			}
			if err := svc.FlushFanout(ctx); err != nil {
				t.Fatal(err)
			}
			if n := domaintest.Leftovers(t, st); n != 0 {
				t.Fatalf("%d pending or outbox rows left", n)
			}
			listed := checkReposts(t, svc, root.ID, []weibo.UserID{reposter.ID}, acked)
			if !slices.Equal(listed, []weibo.PostID{acked[2], acked[1], acked[0]}) {
				t.Errorf("reposts = %v", listed)
			}
			rows, err := hbase.ScanAll(ctx, st, &hbase.Scan{Table: tables.Reposts, Prefix: tables.RepostPrefix(root.ID)})
			if err != nil || len(rows) != 3 {
				t.Errorf("%d list rows (%v), want 3", len(rows), err)
			}
		})
	}
}
