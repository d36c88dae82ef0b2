package weibo

import (
	"context"
	"sync"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Live updates of home timelines. A watcher polls the top of its viewer's
// inbox (one prefix scan of weibo:inbox) and emits the entries it has not
// seen; the gateway is stateless, so polling is what makes an entry written
// by another gateway instance reach it. Writes made by this process (a
// publish, a fan-out batch) wake the watchers of the owners at once instead
// of at the next tick.

// watchWindow is how many of the newest inbox entries a poll reads. An entry
// is emitted when it is among them and was not in the previous poll, so a
// burst of more than watchWindow entries between two polls loses the oldest
// of the burst for live delivery (the timeline query still has them).
const watchWindow = 50

// liveHub wakes the watchers of a user when this process writes to the
// user's inbox.
type liveHub struct {
	mu   sync.Mutex
	subs map[UserID]map[chan struct{}]struct{}
}

func (h *liveHub) subscribe(uid UserID) (chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	if h.subs == nil {
		h.subs = map[UserID]map[chan struct{}]struct{}{}
	}
	if h.subs[uid] == nil {
		h.subs[uid] = map[chan struct{}]struct{}{}
	}
	h.subs[uid][ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		delete(h.subs[uid], ch)
		if len(h.subs[uid]) == 0 {
			delete(h.subs, uid)
		}
		h.mu.Unlock()
	}
}

// notify wakes the watchers of owners; it never blocks.
func (h *liveHub) notify(owners ...UserID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, uid := range owners {
		for ch := range h.subs[uid] {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}
}

// WatchTimeline streams the posts that arrive in uid's home timeline from
// now on (uid's own and, after fan-out, their followees'), oldest first,
// until ctx ends; the channel is then closed. Posts older than a minute when
// they arrive (a follow's backfill) are not emitted. interval is the polling
// period (0: 2 s). Errors of a poll are logged and the next poll retries.
func (s *Service) WatchTimeline(ctx context.Context, uid UserID, interval time.Duration) (<-chan *Post, error) {
	if interval <= 0 {
		interval = 2 * time.Second
	}
	since := s.nowMillis() - time.Minute.Milliseconds()
	seen, _, err := s.inboxTop(ctx, uid)
	if err != nil {
		return nil, err
	}
	wake, unsubscribe := s.live.subscribe(uid)
	out := make(chan *Post)
	go func() {
		defer close(out)
		defer unsubscribe()
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-wake:
			case <-tick.C:
			}
			top, ids, err := s.inboxTop(ctx, uid)
			if err != nil {
				if ctx.Err() == nil {
					s.log.Warn("timeline watch: poll failed", "user", uid.String(), "err", err)
				}
				continue
			}
			var fresh []PostID // newest first, as scanned
			for _, id := range ids {
				if !seen[id] && id.Millis >= since {
					fresh = append(fresh, id)
				}
			}
			seen = top
			if len(fresh) == 0 {
				continue
			}
			posts, err := s.resolveEntries(ctx, uid, fresh)
			if err != nil {
				continue
			}
			for i := len(posts) - 1; i >= 0; i-- {
				if posts[i] == nil {
					continue
				}
				select {
				case out <- posts[i]:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out, nil
}

// inboxTop reads the newest watchWindow entries of uid's inbox.
func (s *Service) inboxTop(ctx context.Context, uid UserID) (map[PostID]bool, []PostID, error) {
	set := map[PostID]bool{}
	var ids []PostID
	err := s.st.Scan(ctx, &hbase.Scan{Table: tables.Inbox, Prefix: tables.InboxPrefix(uid), Limit: watchWindow}, func(r *hbase.Result) error {
		if _, id, ok := tables.DecodeInboxKey(r.Row); ok {
			set[id] = true
			ids = append(ids, id)
		}
		return nil
	})
	return set, ids, err
}
