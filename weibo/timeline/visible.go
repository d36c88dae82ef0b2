package timeline

import (
	"bytes"
	"context"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/paging"
	"github.com/weibohbase/gateway/weibo/safety"
)

// maxScanRows bounds the rows of one inbox scan, or of one account's scan
// in a large accounts' ScanMany, made to read on past posts the viewer's
// Set hid.
const maxScanRows = 500

// noteSet records the viewer's Set read with a batched read (nil: that
// read did not ask for it).
func (t *timelineRead) noteSet(set *safety.Set) {
	if !t.setRead && set != nil {
		t.set, t.view, t.setRead = set, set.HomeView(), true
	}
}

// show returns how the page shows p by the viewer's Set (HomeView.Home)
// and the suspensions: nil when they hide p, a copy naming the WARN
// filters p matched, or p. p itself is never changed (the post cache
// shares it).
func (t *timelineRead) show(p *feed.Post) *feed.Post {
	if t.s.suspendedPost(p.ID, p.RepostOfID) {
		return nil
	}
	hide, warn := t.view.Home(p.ID, p.RepostOfID, p.Content)
	switch {
	case hide:
		return nil
	case warn != nil:
		return p.WithFiltered(warn)
	}
	return p
}

// readInbox reads the inbox rows of sc and verifies each chunk with one
// batched read (verify) until want entries are found, the range ends or
// timelineRounds scans were made; frontier is, when the rounds ran out
// first, the last row read (rows beyond it unread), nil otherwise. A scan
// reads the entries still wanted, and once the viewer's Set has hidden
// some, more (widen).
func (t *timelineRead) readInbox(ctx context.Context, sc hbase.Scan, want int) (posts []*feed.Post, keys [][]byte, frontier []byte, err error) {
	for round := 1; ; round++ {
		need := want - len(posts)
		n := need
		if t.hidden > 0 {
			n = widen(need, t.rows, t.shown)
		}
		ps, ks, fr, err := paging.ScanVerifiedUpTo(ctx, t.s.st, &sc, n-1, 1, t.verify)
		if err != nil {
			return nil, nil, nil, err
		}
		if len(ps) >= need || fr == nil {
			k := min(len(ps), need)
			return append(posts, ps[:k]...), append(keys, ks[:k]...), nil, nil
		}
		posts, keys = append(posts, ps...), append(keys, ks...)
		if round == timelineRounds {
			return posts, keys, fr, nil
		}
		if sc.Reversed {
			sc.Stop = bytes.Clone(fr)
		} else {
			sc.Start = append(bytes.Clone(fr), 0)
		}
	}
}

// widen returns how many rows to read for need more entries shown, read
// rows having shown shown so far: need times the rows read per entry
// shown, at least need and at most maxScanRows.
func widen(need, read, shown int) int {
	n := need * read / max(shown, 1)
	return max(need, min(n, maxScanRows))
}

// nearer returns whichever of the frontiers a and b (inbox keys, nil for
// none) comes first in the scan's direction: the one that cuts more.
func nearer(a, b []byte, backward bool) []byte {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case (bytes.Compare(a, b) < 0) != backward:
		return a
	}
	return b
}
