package weibo

import (
	"bytes"
	"context"
	"maps"
	"slices"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo/tables"
)

// HomeTimeline pages through uid's home timeline: uid's own posts and the
// posts of everyone uid follows, newest first (ties in one millisecond by
// author id).
//
// One page costs one prefix scan of weibo:inbox (the tall
// "receive-content-email" table: one row per entry, so the scan returns the
// page already in order), in parallel with one Get of the large-accounts
// row (hybrid fan-out, large.go), then one batched GetMany that reads the
// posts' content rows together with the viewer's attends rows of their
// authors and of the large accounts, and — when the viewer follows large
// accounts — one ScanMany that reads each one's newest posts within the
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
// writers settle the inbox themselves, see repair.go).
//
// It pages both ways (Page): a page before the start cursor of the first
// page a client showed (Last, Before) holds the posts that reached the
// timeline since, oldest of them last; the reversed scan costs the same.
//
// Errors: BAD_USER_INPUT for bad paging arguments.
func (s *Service) HomeTimeline(ctx context.Context, uid UserID, p Page) (*PostConnection, error) {
	c, _, err := s.homeTimeline(ctx, uid, p)
	return c, err
}

// timelineItem is one merged entry of a home-timeline page.
type timelineItem struct {
	key  []byte // the viewer's inbox rowkey of the post (whether or not the row exists)
	post *Post
}

// homeTimeline is HomeTimeline; it also returns the large accounts the
// viewer follows (for the live hub).
func (s *Service) homeTimeline(ctx context.Context, uid UserID, p Page) (*PostConnection, map[UserID]bool, error) {
	q := pageQuery{kind: cursorTimeline, rowLen: tables.InboxKeyLen, rounds: timelineRounds,
		scan: hbase.Scan{Table: tables.Inbox, Prefix: tables.InboxPrefix(uid)}}
	w, err := q.window(p)
	if err != nil {
		return nil, nil, err
	}
	// The large accounts, read while the inbox is scanned; learn waits for
	// them (verify runs on this goroutine, one call at a time).
	var (
		large      map[UserID]largeCell
		largeErr   error
		got        = make(chan struct{})
		learned    bool
		followed   map[UserID]bool // the large accounts the viewer follows, once known
		candidates []UserID        // the large accounts whose attends rows to read
	)
	go func() { large, largeErr = s.largeAccounts(ctx); close(got) }()
	learn := func() error {
		if !learned {
			<-got
			learned = true
			followed = map[UserID]bool{}
			for a := range large {
				if a != uid {
					candidates = append(candidates, a)
				}
			}
			slices.Sort(candidates)
		}
		return largeErr
	}
	checked := false
	verify := func(ctx context.Context, rows []*hbase.Result) ([]*Post, error) {
		if err := learn(); err != nil {
			return nil, err
		}
		ids := make([]PostID, 0, len(rows))
		at := make([]int, 0, len(rows)) // ids[j] is the entry of rows[at[j]]
		for i, r := range rows {
			if owner, id, ok := tables.DecodeInboxKey(r.Row); ok && owner == uid {
				ids = append(ids, id)
				at = append(at, i)
			}
		}
		var extra []UserID
		if !checked {
			checked, extra = true, candidates
		}
		posts, follows, err := s.resolveEntriesWith(ctx, uid, ids, extra)
		if err != nil {
			return nil, err
		}
		for i, a := range extra {
			if follows[i] {
				followed[a] = true
			}
		}
		out := make([]*Post, len(rows))
		for j, p := range posts {
			out[at[j]] = p
		}
		return out, nil
	}

	sc, want, near := w.scan(q.scan)
	posts, keys, frontier, err := scanVerifiedUpTo(ctx, s.st, &sc, want-1, q.rounds, verify)
	if err != nil {
		return nil, nil, err
	}
	if err := learn(); err != nil {
		return nil, nil, err
	}
	if !checked && len(candidates) > 0 {
		// The inbox range was empty: read the attends rows alone.
		checked = true
		_, follows, err := s.resolveEntriesWith(ctx, uid, nil, candidates)
		if err != nil {
			return nil, nil, err
		}
		for i, a := range candidates {
			if follows[i] {
				followed[a] = true
			}
		}
	}
	items := make([]timelineItem, len(posts))
	for i := range posts {
		items[i] = timelineItem{key: keys[i], post: posts[i]}
	}
	if len(followed) > 0 {
		merged, err := s.largePosts(ctx, uid, followed, w, want)
		if err != nil {
			return nil, nil, err
		}
		items = mergeTimeline(items, merged, frontier, w.backward, want)
	}
	// beyond: whether an edge lies beyond the near cursor (at or behind it).
	beyond := false
	if near != nil {
		if len(items) > 0 && bytes.Equal(items[0].key, near) {
			beyond, items = true, items[1:]
		} else if beyond, err = edgeBeyond(ctx, s.st, &q, near, w.backward, verify); err != nil {
			return nil, nil, err
		} else if !beyond && len(followed) > 0 {
			beyond, err = s.largeBeyond(ctx, uid, followed, near, w.backward)
			if err != nil {
				return nil, nil, err
			}
		}
	}
	more := len(items) > w.n
	if more {
		items = items[:w.n]
	}
	if w.backward {
		slices.Reverse(items)
	}
	ps := make([]*Post, len(items))
	ks := make([][]byte, len(items))
	for i, it := range items {
		ps[i], ks[i] = it.post, it.key
	}
	edges, info := buildPage(ps, ks, w.n, func(dst, key []byte) []byte {
		return appendCursor(dst, q.kind, key[len(q.scan.Prefix):])
	}, postEdge)
	info.HasNextPage, info.HasPreviousPage = more, beyond
	if w.backward {
		info.HasNextPage, info.HasPreviousPage = beyond, more
	}
	return &PostConnection{Edges: edges, PageInfo: info}, followed, nil
}

// largeScan is the scan of author's posts within window w of viewer's
// timeline (in inbox-key space: forward [after, before), backward (after,
// before]), in the window's direction, at most limit rows (plus the one a
// cursor of the same millisecond may hold).
func largeScan(author UserID, w window, limit int) *hbase.Scan {
	prefix := tables.ContentPrefix(author)
	sc := &hbase.Scan{Table: tables.Content, Prefix: prefix, Families: []string{tables.FamPost}, Limit: limit + 1, Reversed: w.backward}
	// A cursor's rev(8) bounds the content rowkeys of every author; rows of
	// the cursor's own millisecond are filtered by inWindow.
	if w.after != nil {
		sc.Start = append(bytes.Clone(prefix), revOf(w.after)...)
	}
	if w.before != nil {
		sc.Stop = append(append(bytes.Clone(prefix), revOf(w.before)...), 0)
	}
	return sc
}

// revOf returns the rev(8) of an inbox rowkey.
func revOf(inboxKey []byte) []byte { return inboxKey[tables.IDKeyLen : tables.IDKeyLen+8] }

// inWindow reports whether inbox key k lies in w.
func inWindow(k []byte, w window) bool {
	if w.backward {
		return (w.after == nil || bytes.Compare(k, w.after) > 0) && (w.before == nil || bytes.Compare(k, w.before) <= 0)
	}
	return (w.after == nil || bytes.Compare(k, w.after) >= 0) && (w.before == nil || bytes.Compare(k, w.before) < 0)
}

// largePosts reads, with one ScanMany, the newest posts (at most limit
// each) of the large accounts viewer follows within w, as timeline items
// in the window's direction.
func (s *Service) largePosts(ctx context.Context, viewer UserID, followed map[UserID]bool, w window, limit int) ([]timelineItem, error) {
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
			if p := postFromRow(id, r); p != nil && inWindow(k, w) {
				out = append(out, timelineItem{key: k, post: p})
			}
		}
	}
	return out, nil
}

// largeBeyond reports whether a post of a followed large account lies
// beyond the cursor row near (before it when paging forward, after it when
// paging backward): one ScanMany of one row per account.
func (s *Service) largeBeyond(ctx context.Context, viewer UserID, followed map[UserID]bool, near []byte, backward bool) (bool, error) {
	var w window
	if backward {
		w = window{after: near} // forward from the cursor, exclusive of it
	} else {
		w = window{before: near, backward: true} // reversed up to the cursor, exclusive
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

// resolveEntriesWith reads, in one GetMany, the content rows of ids and the
// owner's attends rows of their authors and of the users extra; it returns
// the posts, nil for entries to skip (post gone, author not followed), and
// for each of extra whether the owner follows them.
func (s *Service) resolveEntriesWith(ctx context.Context, owner UserID, ids []PostID, extra []UserID) ([]*Post, []bool, error) {
	// The Gets and their rowkeys are allocated together, each rowkey a
	// full slice expression of keys (a page: 2 allocations, not 200).
	n := 2*len(ids) + len(extra)
	gs := make([]hbase.Get, 0, n)
	gets := make([]*hbase.Get, 0, n)
	keys := make([]byte, 0, len(ids)*tables.ContentKeyLen+(len(ids)+len(extra))*tables.RelationKeyLen)
	add := func(table string, start int) {
		gs = append(gs, hbase.Get{Table: table, Row: keys[start:len(keys):len(keys)]})
		gets = append(gets, &gs[len(gs)-1])
	}
	for _, id := range ids {
		start := len(keys)
		keys = tables.AppendContentKey(keys, id)
		add(tables.Content, start)
	}
	relIdx := make(map[UserID]int, len(ids)+len(extra))
	attends := func(a UserID) {
		if _, seen := relIdx[a]; !seen && a != owner {
			relIdx[a] = len(gets)
			start := len(keys)
			keys = tables.AppendRelationKey(keys, owner, tables.Attends, a)
			add(tables.Relations, start)
		}
	}
	for _, id := range ids {
		attends(id.Author)
	}
	for _, a := range extra {
		attends(a)
	}
	rs, err := s.st.GetMany(ctx, gets)
	if err != nil {
		return nil, nil, err
	}
	posts := make([]*Post, len(ids))
	for i, id := range ids {
		p := postFromRow(id, rs[i])
		if j, ok := relIdx[id.Author]; ok && !rs[j].Exists() {
			p = nil
		}
		posts[i] = p
	}
	follows := make([]bool, len(extra))
	for i, a := range extra {
		if j, ok := relIdx[a]; ok {
			follows[i] = rs[j].Exists()
		}
	}
	return posts, follows, nil
}
