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
	"github.com/weibohbase/gateway/weibo/safety"
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
// The viewer's blocks, mutes and keyword filters (package safety) are read
// in the first batched read with the page's posts (their safety row: no
// store call of its own), and the page honours them (visible.go): a post
// whose author, or for a repost whose root's author, the viewer blocks, is
// blocked by or mutes is skipped, as is one a HOME filter with HIDE
// matches; one a HOME filter with WARN matches is returned with
// Post.Filtered naming it. This holds for the inbox's entries, the large
// accounts' posts merged at read time and the look beyond the cursor.
//
// An inbox entry whose post is gone or whose author the viewer no longer
// follows (an unfollow or a fan-out still settling, or the trace of one
// that died, which the repairer removes), or that the viewer's Set hides,
// is skipped; only then does a page need another scan, so that a page of
// first: n holds n edges while that many exist. The bound on those extra
// reads: at most timelineRounds inbox scans per page, each followed by one
// GetMany; a scan reads the entries the page still needs, and once the Set
// has hidden some, that times the rows read per entry shown so far, at
// most maxScanRows (an entry of an author the Set hides costs no content
// read after the first chunk). A large account's posts the Set hides make
// its scan go on the same way: at most timelineRounds ScanManys in all,
// and a large account the Set hides is not read at all. When the rounds run
// out first, the page is shorter and, if it has an edge, says hasNextPage;
// the next page goes on after its last edge. The look beyond the cursor
// (hasPreviousPage on a forward page) reads at most a few rows and so may
// answer false when only hidden posts lie at its edge. Without entries
// to skip, a page's store calls are as above, Set or no Set. Reads never
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
	posts, keys, frontier, err := t.readInbox(ctx, sc, want)
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
		merged, largeFrontier, err := t.largePosts(ctx, w, want)
		if err != nil {
			return nil, nil, err
		}
		frontier = nearer(frontier, largeFrontier, w.Backward)
		items = mergeTimeline(items, merged, frontier, w.Backward, want)
	}
	beyond, items, err := s.beyondCursor(ctx, t, &q, w, near, items)
	if err != nil {
		return nil, nil, err
	}
	return timelinePage(&q, w, items, beyond, frontier != nil), t.followed, nil
}

// timelineRead is the state of one home-timeline page's reads: the large
// accounts, read on another goroutine while the inbox is scanned, which of
// them the viewer follows and the viewer's Set, learned with the first
// chunk's batched read. verify runs on the page's goroutine, one call at
// a time.
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

	set     *safety.Set      // the viewer's blocks, mutes and filters, once setRead
	view    *safety.HomeView // set, made ready to judge the page's posts
	setRead bool
	rows    int // inbox rows verified
	shown   int // of them, entries returned
	hidden  int // of them, entries the Set hid
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
// authors, and with the first chunk those of the large accounts and the
// viewer's safety row too; the posts the viewer's Set hides are skipped
// (nil), those of authors it hides without reading them once it is known.
func (t *timelineRead) verify(ctx context.Context, rows []*hbase.Result) ([]*feed.Post, error) {
	if err := t.learn(); err != nil {
		return nil, err
	}
	t.rows += len(rows)
	ids := make([]weibo.PostID, 0, len(rows))
	at := make([]int, 0, len(rows)) // ids[j] is the entry of rows[at[j]]
	for i, r := range rows {
		owner, id, ok := tables.DecodeInboxKey(r.Row)
		switch {
		case !ok || owner != t.uid:
		case t.set.HidesAuthor(id.Author) || t.s.suspended(id.Author):
			t.hidden++
		default:
			ids = append(ids, id)
			at = append(at, i)
		}
	}
	out := make([]*feed.Post, len(rows))
	var extra []weibo.UserID
	if !t.checked {
		t.checked, extra = true, t.candidates
	}
	if len(ids) == 0 && len(extra) == 0 && t.setRead {
		return out, nil
	}
	posts, follows, set, err := t.s.posts.ResolveEntries(ctx, t.uid, ids, extra, t.cached, !t.setRead)
	if err != nil {
		return nil, err
	}
	t.noteSet(set)
	t.noteFollowed(extra, follows)
	for j, p := range posts {
		if p != nil {
			if p = t.show(p); p == nil {
				t.hidden++
			} else {
				t.shown++
			}
		}
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
	_, follows, set, err := t.s.posts.ResolveEntries(ctx, t.uid, nil, t.candidates, false, !t.setRead)
	if err != nil {
		return err
	}
	t.noteSet(set)
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
	beyond, err = t.largeBeyond(ctx, near, w.Backward)
	return beyond, items, err
}

// timelinePage cuts items (up to one more than the page, in scan order) to
// the window's page and builds its edges and page info; short says the
// reads stopped before the end of the range (a frontier), so that more
// edges may follow the last item.
func timelinePage(q *paging.Query, w paging.Window, items []timelineItem, beyond, short bool) *feed.PostConnection {
	more := len(items) > w.N || short && len(items) > 0
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

// largePosts reads the newest posts (at most limit shown each) of the
// large accounts the viewer follows within w, as timeline items in the
// window's direction: one ScanMany of the accounts the viewer's Set does
// not hide (visible.go). An account's scan whose posts the Set hid goes on
// after its last row, all such in one ScanMany, at most timelineRounds
// ScanManys in all; frontier is, when the rounds ran out first, the inbox
// key of the nearest last row an unfinished scan read (items beyond it may
// miss that account's posts), nil otherwise.
func (t *timelineRead) largePosts(ctx context.Context, w paging.Window, limit int) (items []timelineItem, frontier []byte, err error) {
	type account struct {
		scan        *hbase.Scan
		read, shown int
		hid         bool
	}
	var accounts []*account
	for _, a := range slices.Sorted(maps.Keys(t.followed)) {
		if !t.set.HidesAuthor(a) && !t.s.suspended(a) {
			accounts = append(accounts, &account{scan: largeScan(a, w, limit)})
		}
	}
	for round := 1; len(accounts) > 0; round++ {
		scans := make([]*hbase.Scan, len(accounts))
		for i, a := range accounts {
			scans[i] = a.scan
		}
		res, err := hbase.ScanMany(ctx, t.s.st, scans)
		if err != nil {
			return nil, nil, err
		}
		var more []*account
		for i, rows := range res {
			a := accounts[i]
			a.read += len(rows)
			for _, r := range rows {
				id, ok := tables.DecodeContentKey(r.Row)
				if !ok {
					continue
				}
				k := tables.InboxKey(t.uid, id)
				p := feed.PostFromRow(id, r)
				if p == nil || !inWindow(k, w) {
					continue
				}
				if p = t.show(p); p == nil {
					a.hid = true
					continue
				}
				a.shown++
				items = append(items, timelineItem{key: k, post: p})
			}
			if len(rows) < a.scan.Limit || a.shown >= limit || !a.hid {
				continue // read to its end, or enough, or nothing hidden (as without a Set)
			}
			last := rows[len(rows)-1].Row
			if round == timelineRounds {
				if id, ok := tables.DecodeContentKey(last); ok {
					frontier = nearer(frontier, tables.InboxKey(t.uid, id), w.Backward)
				}
				continue
			}
			next := *a.scan
			if next.Reversed {
				next.Stop = bytes.Clone(last)
			} else {
				next.Start = append(bytes.Clone(last), 0)
			}
			next.Limit = widen(limit-a.shown, a.read, a.shown)
			a.scan = &next
			more = append(more, a)
		}
		accounts = more
	}
	return items, frontier, nil
}

// largeBeyond reports whether a post of a followed large account lies
// beyond the cursor row near (before it when paging forward, after it when
// paging backward): one ScanMany of one row per account (more when the
// viewer's Set hides posts there).
func (t *timelineRead) largeBeyond(ctx context.Context, near []byte, backward bool) (bool, error) {
	var w paging.Window
	if backward {
		w = paging.Window{After: near} // forward from the cursor, exclusive of it
	} else {
		w = paging.Window{Before: near, Backward: true} // reversed up to the cursor, exclusive
	}
	// The window above includes near on one side; exclude it explicitly.
	items, _, err := t.largePosts(ctx, w, 1)
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
