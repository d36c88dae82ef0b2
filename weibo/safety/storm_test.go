package safety_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/weibohbase/gateway/fsck"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestBlockStorm: concurrent blocks and unblocks, follows and unfollows,
// likes and comments among the same four users, on both backends (the
// embedded store's calls jittered). Once they quiesce, no follow stands
// across a standing block (either way), and fsck over the whole store —
// every blockCount, followCount, fanCount, likeCount and commentCount
// against its rows, every blocked-by cell against its block — finds
// nothing.
func TestBlockStorm(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	const (
		calls       = 300
		concurrency = 16
	)
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := domaintest.OwnStore(t, b)
			if b.Name == hbase.BackendEmbedded {
				st = domaintest.Jittery{StoreAdmin: st}
			}
			svc := domaintest.Quiet(st, domain.WithRepairGrace(10*time.Second), domain.WithOutboxSweep(time.Second))
			if err := svc.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer svc.Close(context.Background())
			var users []weibo.UserID
			var posts []weibo.PostID
			for i := range 4 {
				u := domaintest.MustUser(t, svc, domaintest.Uniq(fmt.Sprintf("storm%d", i)))
				users = append(users, u.ID)
				p, err := svc.Feed.Publish(ctx, u.ID, fmt.Sprintf("post %d", i))
				if err != nil {
					t.Fatal(err)
				}
				posts = append(posts, p.ID)
			}
			pair := func() (weibo.UserID, weibo.UserID) {
				i := rand.IntN(len(users))
				return users[i], users[(i+1+rand.IntN(len(users)-1))%len(users)]
			}
			var (
				mu       sync.Mutex
				failures = map[string]int{}
				wg       sync.WaitGroup
			)
			sem := make(chan struct{}, concurrency)
			for i := range calls {
				wg.Add(1)
				sem <- struct{}{}
				go func() {
					defer func() { <-sem; wg.Done() }()
					a, b := pair()
					var err error
					switch i % 8 {
					case 0:
						_, err = svc.Safety.Block(ctx, a, b)
					case 1:
						_, err = svc.Safety.Unblock(ctx, a, b)
					case 2, 3:
						_, err = svc.Follows.Follow(ctx, a, b)
					case 4:
						_, err = svc.Follows.Unfollow(ctx, a, b)
					case 5:
						_, err = svc.Likes.Like(ctx, a, posts[rand.IntN(len(posts))])
					case 6:
						_, err = svc.Likes.Unlike(ctx, a, posts[rand.IntN(len(posts))])
					default:
						_, err = svc.Comments.AddComment(ctx, a, posts[rand.IntN(len(posts))], "a comment", nil)
					}
					if err != nil && weibo.CodeOf(err) != weibo.CodeForbidden {
						mu.Lock()
						failures[err.Error()]++
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			if len(failures) > 0 {
				t.Fatalf("failures: %v", failures)
			}
			domaintest.WaitQuiet(t, svc, time.Minute)

			for _, a := range users {
				set, err := svc.Safety.SetOf(ctx, a)
				if err != nil {
					t.Fatal(err)
				}
				for _, b := range users {
					if a == b || !set.Blocks(b) {
						continue
					}
					f, err := svc.Follows.IsFollowing(ctx, a, []weibo.UserID{b})
					if err != nil {
						t.Fatal(err)
					}
					g, err := svc.Follows.IsFollowing(ctx, b, []weibo.UserID{a})
					if err != nil {
						t.Fatal(err)
					}
					if f[0] || g[0] {
						t.Errorf("%s blocks %s, yet %s → %s: %v, %s → %s: %v", a, b, a, b, f[0], b, a, g[0])
					}
					r, err := svc.Store().Get(ctx, &hbase.Get{Table: tables.Safety, Row: tables.SafetyKey(b)})
					if err != nil {
						t.Fatal(err)
					}
					if r.Value(tables.FamSafetyBlockedBy, tables.BlockedByQualifier(a)) == nil {
						t.Errorf("%s blocks %s without its blocked-by cell", a, b)
					}
				}
			}
			rep, err := fsck.Run(ctx, svc, fsck.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Issues) != 0 {
				t.Errorf("fsck after the storm: %+v", rep.Issues)
			}
		})
	}
}
