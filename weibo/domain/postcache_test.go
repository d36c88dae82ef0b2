package domain_test

import (
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/tables"
	"github.com/weibohbase/gateway/weibo/timeline"
)

// TestPostCacheDelete: two instances over one store both hold a post in
// their post caches (a home-timeline page without counters read it). The
// instance that deletes it never serves it again once DeletePost returns;
// the other serves it from its cache, while the viewer's inbox still has
// its entry (here put back after the retraction, as a retraction that
// lags would leave it), until the entry's TTL — then not.
func TestPostCacheDelete(t *testing.T) {
	const ttl = 10 * time.Second
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			st := domaintest.OwnStore(t, b)
			clk := &domaintest.Clock{}
			a := domaintest.Quiet(st, clk.Option(), domain.WithPostCache(100, ttl))
			o := domaintest.Quiet(st, clk.Option(), domain.WithPostCache(100, ttl))
			for _, svc := range []*domain.Domain{a, o} {
				if err := svc.Start(ctx); err != nil {
					t.Fatal(err)
				}
				defer svc.Close(t.Context())
			}
			author, fan := mustUser(t, a, uniq("author")).ID, mustUser(t, a, uniq("fan")).ID
			if _, err := a.Follows.Follow(ctx, fan, author); err != nil {
				t.Fatal(err)
			}
			p, err := a.Feed.Publish(ctx, author, "缓存里的微博")
			if err != nil {
				t.Fatal(err)
			}
			if err := a.FlushFanout(ctx); err != nil {
				t.Fatal(err)
			}
			shows := func(svc *domain.Domain, opts ...timeline.ReadOption) bool {
				t.Helper()
				c, err := svc.Timeline.HomeTimeline(ctx, fan, weibo.Page{First: new(10)}, opts...)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range c.Edges {
					if e.Post.ID == p.ID {
						if e.Post.Content != p.Content || e.Post.Author().Username != p.AuthorName {
							t.Fatalf("the page's post %+v is not the one published, %+v", e.Post, p)
						}
						return true
					}
				}
				return false
			}
			for _, svc := range []*domain.Domain{a, o} {
				if !shows(svc, timeline.WithoutCounts()) {
					t.Fatal("the fan's home timeline lacks the post")
				}
			}

			if ok, err := a.Feed.DeletePost(ctx, p.ID); err != nil || !ok {
				t.Fatalf("DeletePost = %v, %v", ok, err)
			}
			if shows(a, timeline.WithoutCounts()) {
				t.Fatal("the deleting instance serves the deleted post from its cache")
			}
			if err := a.FlushFanout(ctx); err != nil {
				t.Fatal(err)
			}
			// The fan's inbox entry back, as a retraction not yet done.
			if err := st.Put(ctx, &hbase.Put{Table: tables.Inbox, Row: tables.InboxKey(fan, p.ID),
				Values: hbase.Values{tables.FamInbox: {tables.ColInboxAt: nil}}}); err != nil {
				t.Fatal(err)
			}
			if shows(a, timeline.WithoutCounts()) || shows(a) || shows(o) {
				t.Fatal("a read of the content rows shows the deleted post")
			}
			if !shows(o, timeline.WithoutCounts()) {
				t.Fatal("the other instance's cache does not serve the post within its TTL: is it cached at all?")
			}
			clk.Advance(ttl)
			if shows(o, timeline.WithoutCounts()) {
				t.Fatal("the other instance serves the deleted post after the cache's TTL")
			}
		})
	}
}
