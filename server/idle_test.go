package server_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weibohbase/gateway/auth"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/server"
	"github.com/weibohbase/gateway/weibo/tables"
)

// tokenReads counts the reads of users rows that check tokens (the Gets
// asking for the ended-tokens family).
type tokenReads struct {
	hbase.StoreAdmin
	n atomic.Int64
}

func (s *tokenReads) Get(ctx context.Context, g *hbase.Get) (*hbase.Result, error) {
	if g.Table == tables.Users && slices.Contains(g.Families, tables.FamEndedTokens) {
		s.n.Add(1)
	}
	return s.StoreAdmin.Get(ctx, g)
}

// TestIdleSubscriptionsReadNoTokens: with the bus connected, open
// subscriptions (homeTimelineEvents, homeTimelineUpdates and
// notificationAdded) do not read
// their users rows again to recheck their tokens, even with a recheck
// window of 50 ms (every 2 s tick would read); token endings reach them
// over the bus instead (TestEndedTokenSubscriptionCloses).
func TestIdleSubscriptionsReadNoTokens(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := &tokenReads{StoreAdmin: b.Open(t)}
			g := startGatewayWith(t, st, func(c *server.Config) {
				c.Tokens = auth.NewIssuer([]byte(testSecret), time.Hour, auth.WithRecheckAfter(50*time.Millisecond))
			})
			eve := g.register(uniqueName("eve"))
			events := g.timelineEvents(eve.token, nil)
			g.subscribeLive(eve.token) // homeTimelineUpdates, delivering
			g.notificationEvents(eve.token).awaitLive(t, g, g.register(uniqueName("carol")), eve)
			p := g.publish(eve.token, "both live")
			for e := range events.events {
				if e.Post.ID == p.ID {
					break
				}
			}
			before := st.n.Load()
			time.Sleep(5 * time.Second) // two rechecks' ticks
			if n := st.n.Load() - before; n != 0 {
				t.Errorf("idle subscriptions read users rows for their tokens %d times in 5 s with the bus up", n)
			}
		})
	}
}
