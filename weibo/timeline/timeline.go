package timeline

import (
	"bytes"
	"context"
	"maps"
	"slices"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/paging"
	"github.com/weibohbase/gateway/weibo/tables"
)

// HomeTimeline pages through uid's home timeline: uid's own posts and the
// posts of everyone uid follows, newest first (ties in one millisecond by
// author id).
//
// One page costs one prefix scan of weibo:inbox (the tall
// "receive-content-email" table: one row per entry, so the scan returns the
// page already in order), in parallel with one Get of the large-accounts
// row (hybrid fan-out, package feed's large.go), then one batched GetMany
// (feed's ResolveEntries) that reads the posts' content rows together with
// the viewer's attends rows of their authors and of the large accounts,
// and — when the viewer follows large accounts — one ScanMany that reads each one's newest posts within the
// page's window from weibo:content (prefix scans by author, at most one
// page each, all in flight at once). The two lists are merged newest first
// and a post found in both (pushed before its author became large, or
// while it drains) is kept once: a merged position is a PostID, so the
// cursor is the inbox rowkey suffix the post has or would have, exact and
// stable in both directions. So a page costs 3 store calls, 4 with large
// accounts followed, whatever its size.
//
// An inbox entry whose post is gone or whose author the viewer no longer
// follows (an unfollow or a fan-out still settling, or the trace of one
// that died, which the repairer removes) is skipped; only then does a page
// need another scan (at most timelineRounds scans per page). Reads never
// delete: a delete decided from a read could land after a concurrent
// re-follow's backfill and remove an entry the viewer should see (the
// writers settle the inbox themselves, see package counted).
//
// It pages both ways (Page): a page before the start cursor of the first
// page a client showed (Last, Before) holds the posts that reached the
// timeline since, oldest of them last; the reversed scan costs the same.
//
// With WithoutCounts, the posts may come from the post cache (package
// feed's postcache.go) and their counters are zero.
//
// Errors: BAD_USER_INPUT for bad paging arguments.
func (s *Service) HomeTimeline(ctx context.Context, uid weibo.UserID, p weibo.Page, opts ...ReadOption) (_ *feed.PostConnection, err error) {
	defer weibo.Wrap(&err, "home timeline")
	var o readOptions
	for _, f := range opts {
		f(&o)
	}
	c, _, err := s.homeTimeline(ctx, uid, p, o)
	return c, err
}

// ReadOption configures one HomeTimeline read.
type ReadOption func(*readOptions)

type readOptions struct {
	noCounts bool
}

// WithoutCounts says the caller needs none of the posts' counters
// (likeCount, commentCount, repostCount): the page's posts may then come
// from the post cache, their counters zero, and only the posts it misses
// are read (with the viewer's attends rows, in the same batched read).
func WithoutCounts() ReadOption { return func(o *readOptions) { o.noCounts = true } }

// timelineItem is one merged entry of a home-timeline page.
type timelineItem struct {
	key  []byte // the viewer's inbox rowkey of the post (whether or not the row exists)
	post *feed.Post
}

// homeTimeline is HomeTimeline; it also returns the large accounts the
// viewer follows (for the live hub). Its steps: validate the window; start
// reading the large accounts; scan the inbox, verifying each chunk with
// one batched read (timelineRead.verify); merge the followed large
// accounts' posts; learn whether an edge lies beyond the near cursor; cut
// and build the page.
func (s *Service) homeTimeline(ctx context.Context, uid weibo.UserID, p weibo.Page, o readOptions) (*feed.PostConnection, map[weibo.UserID]bool, error) {
	q := paging.Query{Kind: paging.CursorTimeline, RowLen: tables.InboxKeyLen, Rounds: timelineRounds,
		Scan: hbase.Scan{Table: tables.Inbox, Prefix: tables.InboxPrefix(uid)}}
	w, err := q.Window(p)
	if err != nil {
		return nil, nil, err
	}
	t := s.startTimelineRead(ctx, uid)
	t.cached = o.noCounts
	sc, want, near := w.Scan(q.Scan)
	posts, keys, frontier, err := paging.ScanVerifiedUpTo(ctx, s.st, &sc, want-1, q.Rounds, t.verify)
	if err != nil {
		return nil, nil, err
	}
	if err := t.checkLargeAlone(ctx); err != nil {
		return nil, nil, err
	}
	items := make([]timelineItem, len(posts))
	for i := range posts {
		items[i] = timelineItem{key: keys[i], post: posts[i]}
	}
	if len(t.followed) > 0 {
		merged, err := s.largePosts(ctx, uid, t.followed, w, want)
		if err != nil {
			return nil, nil, err
		}
		items = mergeTimeline(items, merged, frontier, w.Backward, want)
	}
	beyond, items, err := s.beyondCursor(ctx, t, &q, w, near, items)
	if err != nil {
		return nil, nil, err
	}
	return timelinePage(&q, w, items, beyond), t.followed, nil
}

// timelineRead is the state of one home-timeline page's reads: the large
// accounts, read on another goroutine while the inbox is scanned, and
// which of them the viewer follows, learned with the first chunk's
// batched read. verify runs on the page's goroutine, one call at a time.
type timelineRead struct {
	s   *Service
	uid weibo.UserID

	large    map[weibo.UserID]bool // the large accounts (true: draining)
	largeErr error
	got      chan struct{} // closed once large and largeErr are set

	cached     bool // the posts may come from the post cache (WithoutCounts)
	learned    bool
	candidates []weibo.UserID        // the large accounts whose attends rows to read
	checked    bool                  // the candidates' attends rows were read
	followed   map[weibo.UserID]bool // the large accounts the viewer follows, once checked
}

// startTimelineRead starts reading the large accounts for uid's page.
func (s *Service) startTimelineRead(ctx context.Context, uid weibo.UserID) *timelineRead {
	t := &timelineRead{s: s, uid: uid, got: make(chan struct{})}
	go func() { t.large, t.largeErr = s.accounts.LargeAccounts(ctx); close(t.got) }()
	return t
}

// learn waits for the large accounts and lists the candidates (all but the
// viewer, in id order).
func (t *timelineRead) learn() error {
	if !t.learned {
		<-t.got
		t.learned = true
		t.followed = map[weibo.UserID]bool{}
		for a := range t.large {
			if a != t.uid {
				t.candidates = append(t.candidates, a)
			}
		}
		slices.Sort(t.candidates)
	}
	return t.largeErr
}

// verify resolves a chunk of inbox rows (paging.ScanVerifiedUpTo): one
// batched read of their posts and the viewer's attends rows of their
// authors, and with the first chunk those of the large accounts too.
func (t *timelineRead) verify(ctx context.Context, rows []*hbase.Result) ([]*feed.Post, error) {
	if err := t.learn(); err != nil {
		return nil, err
	}
	ids := make([]weibo.PostID, 0, len(rows))
	at := make([]int, 0, len(rows)) // ids[j] is the entry of rows[at[j]]
	for i, r := range rows {
		if owner, id, ok := tables.DecodeInboxKey(r.Row); ok && owner == t.uid {
			ids = append(ids, id)
			at = append(at, i)
		}
	}
	var extra []weibo.UserID
	if !t.checked {
		t.checked, extra = true, t.candidates
	}
	posts, follows, err := t.s.posts.ResolveEntries(ctx, t.uid, ids, extra, t.cached)
	if err != nil {
		return nil, err
	}
	t.noteFollowed(extra, follows)
	out := make([]*feed.Post, len(rows))
	for j, p := range posts {
		out[at[j]] = p
	}
	return out, nil
}

// checkLargeAlone reads the candidates' attends rows when no chunk did
// (the inbox range was empty).
func (t *timelineRead) checkLargeAlone(ctx context.Context) error {
	if err := t.learn(); err != nil {
		return err
	}
	if t.checked || len(t.candidates) == 0 {
		return nil
	}
	t.checked = true
	_, follows, err := t.s.posts.ResolveEntries(ctx, t.uid, nil, t.candidates, false)
	if err != nil {
		return err
	}
	t.noteFollowed(t.candidates, follows)
	return nil
}

// noteFollowed records which of accounts (read with follows) the viewer follows.
func (t *timelineRead) noteFollowed(accounts []weibo.UserID, follows []bool) {
	for i, a := range accounts {
		if follows[i] {
			t.followed[a] = true
		}
	}
}

// beyondCursor reports whether an edge lies beyond the near cursor (at or
// behind it), dropping the cursor's own item from items when it leads
// them; without the cursor's own row it reads at most a few rows of the
// inbox, then of the followed large accounts.
func (s *Service) beyondCursor(ctx context.Context, t *timelineRead, q *paging.Query, w paging.Window, near []byte, items []timelineItem) (bool, []timelineItem, error) {
	if near == nil {
		return false, items, nil
	}
	if len(items) > 0 && bytes.Equal(items[0].key, near) {
		return true, items[1:], nil
	}
	beyond, err := paging.EdgeBeyond(ctx, s.st, q, near, w.Backward, t.verify)
	if err != nil || beyond || len(t.followed) == 0 {
		return beyond, items, err
	}
	beyond, err = s.largeBeyond(ctx, t.uid, t.followed, near, w.Backward)
	return beyond, items, err
}

// timelinePage cuts items (up to one more than the page, in scan order) to
// the window's page and builds its edges and page info.
func timelinePage(q *paging.Query, w paging.Window, items []timelineItem, beyond bool) *feed.PostConnection {
	more := len(items) > w.N
	if more {
		items = items[:w.N]
	}
	if w.Backward {
		slices.Reverse(items)
	}
	ps := make([]*feed.Post, len(items))
	ks := make([][]byte, len(items))
	for i, it := range items {
		ps[i], ks[i] = it.post, it.key
	}
	edges, info := paging.Build(ps, ks, w.N, func(dst, key []byte) []byte {
		return paging.AppendCursor(dst, q.Kind, key[len(q.Scan.Prefix):])
	}, feed.NewPostEdge)
	info.HasNextPage, info.HasPreviousPage = more, beyond
	if w.Backward {
		info.HasNextPage, info.HasPreviousPage = beyond, more
	}
	return &feed.PostConnection{Edges: edges, PageInfo: info}
}

// largeScan is the scan of author's posts within window w of viewer's
// timeline (in inbox-key space: forward [after, before), backward (after,
// before]), in the window's direction, at most limit rows (plus the one a
// cursor of the same millisecond may hold).
func largeScan(author weibo.UserID, w paging.Window, limit int) *hbase.Scan {
	prefix := tables.ContentPrefix(author)
	sc := &hbase.Scan{Table: tables.Content, Prefix: prefix, Families: []string{tables.FamPost}, Limit: limit + 1, Reversed: w.Backward}
	// A cursor's rev(8) bounds the content rowkeys of every author; rows of
	// the cursor's own millisecond are filtered by inWindow.
	if w.After != nil {
		sc.Start = append(bytes.Clone(prefix), revOf(w.After)...)
	}
	if w.Before != nil {
		sc.Stop = append(append(bytes.Clone(prefix), revOf(w.Before)...), 0)
	}
	return sc
}

// revOf returns the rev(8) of an inbox rowkey.
func revOf(inboxKey []byte) []byte { return inboxKey[tables.IDKeyLen : tables.IDKeyLen+8] }

// inWindow reports whether inbox key k lies in w.
func inWindow(k []byte, w paging.Window) bool {
	if w.Backward {
		return (w.After == nil || bytes.Compare(k, w.After) > 0) && (w.Before == nil || bytes.Compare(k, w.Before) <= 0)
	}
	return (w.After == nil || bytes.Compare(k, w.After) >= 0) && (w.Before == nil || bytes.Compare(k, w.Before) < 0)
}

// largePosts reads, with one ScanMany, the newest posts (at most limit
// each) of the large accounts viewer follows within w, as timeline items
// in the window's direction.
func (s *Service) largePosts(ctx context.Context, viewer weibo.UserID, followed map[weibo.UserID]bool, w paging.Window, limit int) ([]timelineItem, error) {
	authors := slices.Sorted(maps.Keys(followed))
	scans := make([]*hbase.Scan, len(authors))
	for i, a := range authors {
		scans[i] = largeScan(a, w, limit)
	}
	res, err := hbase.ScanMany(ctx, s.st, scans)
	if err != nil {
		return nil, err
	}
	var out []timelineItem
	for _, rows := range res {
		for _, r := range rows {
			id, ok := tables.DecodeContentKey(r.Row)
			if !ok {
				continue
			}
			k := tables.InboxKey(viewer, id)
			if p := feed.PostFromRow(id, r); p != nil && inWindow(k, w) {
				out = append(out, timelineItem{key: k, post: p})
			}
		}
	}
	return out, nil
}

// largeBeyond reports whether a post of a followed large account lies
// beyond the cursor row near (before it when paging forward, after it when
// paging backward): one ScanMany of one row per account.
func (s *Service) largeBeyond(ctx context.Context, viewer weibo.UserID, followed map[weibo.UserID]bool, near []byte, backward bool) (bool, error) {
	var w paging.Window
	if backward {
		w = paging.Window{After: near} // forward from the cursor, exclusive of it
	} else {
		w = paging.Window{Before: near, Backward: true} // reversed up to the cursor, exclusive
	}
	// The window above includes near on one side; exclude it explicitly.
	items, err := s.largePosts(ctx, viewer, followed, w, 1)
	if err != nil {
		return false, err
	}
	for _, it := range items {
		if !bytes.Equal(it.key, near) {
			return true, nil
		}
	}
	return false, nil
}

// mergeTimeline merges the inbox's items and the large accounts' items
// (both in the window's direction), keeping a post found in both once, and
// returns the first limit. Large items beyond the inbox's frontier (the
// last row the inbox scan read when it stopped early) are dropped: inbox
// rows there were not read.
func mergeTimeline(inbox, large []timelineItem, frontier []byte, backward bool, limit int) []timelineItem {
	cmpKeys := func(a, b timelineItem) int {
		if backward {
			return bytes.Compare(b.key, a.key)
		}
		return bytes.Compare(a.key, b.key)
	}
	all := append(slices.Clone(inbox), large...)
	if frontier != nil {
		all = slices.DeleteFunc(all, func(it timelineItem) bool {
			return cmpKeys(it, timelineItem{key: frontier}) > 0
		})
	}
	slices.SortStableFunc(all, cmpKeys)
	all = slices.CompactFunc(all, func(a, b timelineItem) bool { return bytes.Equal(a.key, b.key) })
	if len(all) > limit {
		all = all[:limit]
	}
	return all
}

// timelineRounds bounds the inbox scans of one home-timeline page: a page
// whose entries keep turning out stale stops after this many (a shorter
// page with a cursor; the next page goes on after it).
const timelineRounds = 9
