// Package paging reads one page of a connection. Every connection of the API — follows, fans, a user's posts, the
// home timeline, a post's reposts and comments, roles, a role's members, a department's children and
// members, the audit log — is one page of the rows under one prefix of one table, in
// rowkey order, and is read by Read (a topic's posts, spread over four
// buckets, merge four such ranges: package feed's TopicPosts): validate the arguments, scan from
// the cursor, keep the rows that verify accepts (one batched read per chunk
// of rows), and build at most n edges. The home timeline, a user's posts,
// a post's comments and a topic's posts also page backward (last/before: a reversed scan from the cursor, the
// page then put back in list order); the others take first/after only.
//
// Page info follows the Relay specification: paging forward (first),
// hasNextPage tells whether more edges follow the page within the cursors,
// and hasPreviousPage whether an edge of the list lies at or before
// `after`; paging backward (last), hasPreviousPage tells whether more edges
// precede the page within the cursors, and hasNextPage whether an edge lies
// at or after `before`. The scan starts at the cursor's own row (inclusive)
// so that the common case costs nothing more; only when that row is gone
// does one short scan the other way (at most lookRounds rows) answer.
package paging

import (
	"bytes"
	"context"
	"encoding/base64"
	"slices"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
)

// CursorKind is the first byte of a decoded cursor: which list it belongs
// to, so that a cursor of one connection is refused by another.
type CursorKind byte

// Cursor kinds; the payload after the kind byte is the edge's rowkey after
// the connection's prefix.
const (
	CursorTimeline    CursorKind = 'T' // + reverse ms(8) + author(8): an inbox rowkey suffix
	CursorPosts       CursorKind = 'P' // + reverse ms(8): a content rowkey suffix
	CursorUsers       CursorKind = 'U' // + user id(8): a relation or department member rowkey suffix
	CursorRoleMembers CursorKind = 'M' // + uid(8): a role member rowkey suffix
	CursorRoleNames   CursorKind = 'N' // + lower-cased name: a weibo:rolenames rowkey
	CursorDepartments CursorKind = 'D' // + department id(8): a child rowkey suffix
	CursorUsernames   CursorKind = 'S' // + lower-cased username: a weibo:usernames rowkey
	CursorAudit       CursorKind = 'A' // + a weibo:audit rowkey after its marker byte: the index's key, rev(8), nonce(8)
	CursorLikers      CursorKind = 'K' // + like rev(8) + uid(8): a post's likers rowkey suffix (weibo:likes)
	CursorLikedPosts  CursorKind = 'L' // + like rev(8) + author(8) + rev(8): a user's likes rowkey suffix
	CursorReposts     CursorKind = 'R' // + reverse ms(8) + author(8): a weibo:reposts rowkey suffix (after the root's content rowkey)
	CursorComments    CursorKind = 'C' // + the comment's reverse ms(8) + author(8): a weibo:comments rowkey suffix
	CursorTopicPosts  CursorKind = 'H' // + reverse ms(8) + author(8): a weibo:topicposts rowkey suffix (after its bucket's prefix)
	CursorBlocks      CursorKind = 'B' // + rev(at)(8) + uid(8): an entry of a block cell, newest first
	CursorMutes       CursorKind = 'Q' // + rev(at)(8) + uid(8): an entry of a mute cell, newest first
	// CursorNotifications: + rev(at)(8) + kind(1) + subject(32) + ~gen(8), a notification index rowkey suffix.
	CursorNotifications CursorKind = 'O'
)

// Cursors are opaque to clients: base64url (no padding) of one kind byte
// followed by the rowkey suffix of the edge's row. Paging resumes at the row
// strictly after it, so rows written meanwhile before the cursor (newer posts)
// neither shift nor repeat the next page.
func EncodeCursor(kind CursorKind, suffix []byte) string {
	var buf [96]byte // a page's cursors fit: no allocation but the string
	return string(AppendCursor(buf[:0], kind, suffix))
}

// AppendCursor appends EncodeCursor(kind, suffix) to dst.
func AppendCursor(dst []byte, kind CursorKind, suffix []byte) []byte {
	var buf [64]byte
	return base64.RawURLEncoding.AppendEncode(dst, append(append(buf[:0], byte(kind)), suffix...))
}

// DecodeCursor returns the rowkey suffix of the `after` cursor of kind
// whose payload has lo to hi bytes (DecodeCursorArg).
func DecodeCursor(after *string, kind CursorKind, lo, hi int) ([]byte, error) {
	return DecodeCursorArg("after", after, kind, lo, hi)
}

// DecodeCursorArg returns the rowkey suffix of cursor, the argument named
// field, of kind with a payload of lo to hi bytes; a nil or empty cursor
// gives nil. A malformed one gives a BAD_USER_INPUT error on field.
func DecodeCursorArg(field string, cursor *string, kind CursorKind, lo, hi int) ([]byte, error) {
	if cursor == nil || *cursor == "" {
		return nil, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(*cursor)
	if err != nil || len(b) < lo+1 || len(b) > hi+1 || b[0] != byte(kind) {
		return nil, weibo.BadInput(field, "malformed cursor %s", weibo.Excerpt(*cursor))
	}
	return b[1:], nil
}

// Size validates `first`.
func Size(first *int) (int, error) { return SizeArg("first", first) }

// SizeArg validates a page size, the argument named field (first or
// last): nil gives DefaultPageSize.
func SizeArg(field string, n *int) (int, error) {
	if n == nil {
		return weibo.DefaultPageSize, nil
	}
	if *n < 1 || *n > weibo.MaxPageSize {
		return 0, weibo.BadInput(field, "%s must be between 1 and %d, got %d", field, weibo.MaxPageSize, *n)
	}
	return *n, nil
}

// Query says which rows a connection lists and how its cursors look.
type Query struct {
	// Kind is the connection's cursor kind.
	Kind CursorKind
	// Scan names the table, the prefix every row of the connection starts
	// with (nil: the whole table) and the families to read. Its Start and
	// Stop, when set, bound the connection further (a window of time
	// within the prefix): a page scans their intersection with the
	// cursors' range. Its Limit is set per page.
	Scan hbase.Scan
	// RowLen is the length of every rowkey of the connection (a cursor's
	// payload is RowLen - len(prefix) bytes); 0 when rowkeys vary in
	// length, from 1 byte after the prefix up to maxRowLen bytes.
	RowLen, MaxRowLen int
	// Rounds bounds the scans one page may take (each skips the rows verify
	// rejects and reads on); 0 scans until the page is full or the prefix
	// ends. A page of ReadBoth cut short by it ends at the last row read:
	// HasNextPage (HasPreviousPage paging backward) is true and EndCursor
	// (StartCursor) is that row's cursor, which may be no edge's, so that
	// the next page goes on after the rows already read.
	Rounds int
	// With, when not nil, is a scan read in the same store call as the
	// page's first scan (one hbase.ScanMany): a row the page needs, such
	// as the viewer's own, at no store call of its own. Its rows go to
	// WithRows before verify sees any row of the page; an error of
	// WithRows ends the page with that error.
	With     *hbase.Scan
	WithRows func([]*hbase.Result) error
}

// Start validates first and after and returns the page size and the start
// row of a forward scan from after: the row strictly after the cursor's,
// or nil (the prefix itself) without a cursor. Errors: BAD_USER_INPUT on
// "first" or "after".
func (q *Query) Start(first *int, after *string) (int, []byte, error) {
	n, err := Size(first)
	if err != nil {
		return 0, nil, err
	}
	k, err := q.CursorRow("after", after)
	if err != nil || k == nil {
		return n, nil, err
	}
	return n, append(k, 0), nil
}

// CursorRow returns the rowkey of cursor, the argument named field (nil
// without a cursor). Errors: BAD_USER_INPUT on field.
func (q *Query) CursorRow(field string, cursor *string) ([]byte, error) {
	lo, hi := q.RowLen-len(q.Scan.Prefix), q.RowLen-len(q.Scan.Prefix)
	if q.RowLen == 0 {
		lo, hi = 1, q.MaxRowLen-len(q.Scan.Prefix)
	}
	suffix, err := DecodeCursorArg(field, cursor, q.Kind, lo, hi)
	if err != nil || suffix == nil {
		return nil, err
	}
	return append(bytes.Clone(q.Scan.Prefix), suffix...), nil
}

// Window is a validated Page: the page size, the direction and the rowkeys
// of the cursors.
type Window struct {
	// N is the page size.
	N int
	// Backward tells a page taken from the end of the window (last).
	Backward bool
	// After and Before are the cursors' rows; nil without the cursor.
	After, Before []byte
}

// Scan returns base narrowed to w — from after to before, or reversed
// from before down to after when w goes backward, within base's own Start
// and Stop when set — and how many rows to read: one more than the page,
// to learn whether more follow, and one more again for the near cursor's
// own row (the scan includes it, so that a page can tell a cursor whose
// row is gone); near is that cursor's row (nil without it).
func (w Window) Scan(base hbase.Scan) (sc hbase.Scan, want int, near []byte) {
	sc = base
	near = w.After
	start, stop := w.After, w.Before
	if w.Backward {
		near = w.Before
		sc.Reversed = true
		start, stop = nil, nil
		if w.After != nil {
			start = append(bytes.Clone(w.After), 0)
		}
		if w.Before != nil {
			stop = append(bytes.Clone(w.Before), 0)
		}
	}
	sc.Start, sc.Stop = laterStart(base.Start, start), earlierStop(base.Stop, stop)
	want = w.N + 1
	if near != nil {
		want++
	}
	return sc, want, near
}

// laterStart returns the later of two start rows (nil: the table's start).
func laterStart(a, b []byte) []byte {
	if a == nil || (b != nil && bytes.Compare(b, a) > 0) {
		return b
	}
	return a
}

// earlierStop returns the earlier of two stop rows (nil: the table's end).
func earlierStop(a, b []byte) []byte {
	if a == nil || (b != nil && bytes.Compare(b, a) < 0) {
		return b
	}
	return a
}

// Window validates p. Errors: BAD_USER_INPUT on "first", "after", "last"
// or "before".
func (q *Query) Window(p weibo.Page) (Window, error) {
	var (
		w   Window
		err error
	)
	if p.First != nil && p.Last != nil {
		return w, weibo.BadInput("last", "pass first or last, not both")
	}
	if w.Backward = p.Last != nil; w.Backward {
		w.N, err = SizeArg("last", p.Last)
	} else {
		w.N, err = SizeArg("first", p.First)
	}
	if err != nil {
		return w, err
	}
	if w.After, err = q.CursorRow("after", p.After); err != nil {
		return w, err
	}
	w.Before, err = q.CursorRow("before", p.Before)
	return w, err
}

// Read reads one page forward (first/after) of the connection q
// describes: ReadBoth with Page{First: first, After: after}.
func Read[T, E any](ctx context.Context, st hbase.Store, q Query, first *int, after *string,
	verify func(context.Context, []*hbase.Result) ([]*T, error),
	edge func(item *T, cursor string) E) ([]E, weibo.PageInfo, error) {
	return ReadBoth(ctx, st, q, weibo.Page{First: first, After: after}, verify, edge)
}

// lookRounds bounds the rows (one per scan) read to learn whether an edge
// lies beyond a cursor whose own row is gone.
const lookRounds = 3

// ReadBoth reads one page of the connection q describes, forward or
// backward (see Page and Paging above). It validates p, scans from the
// near cursor's own row (inclusive) toward the far one (exclusive) —
// forward from after, or reversed from before — with ScanVerified (verify
// returns one entry per row, nil for a row to skip), and turns each kept
// item and its cursor into an edge with edge, in list order. A page cut
// short by q.Rounds ends at the last row read (see Query.Rounds). Errors:
// BAD_USER_INPUT on "first", "after", "last" or "before", and the store's.
func ReadBoth[T, E any](ctx context.Context, st hbase.Store, q Query, p weibo.Page,
	verify func(context.Context, []*hbase.Result) ([]*T, error),
	edge func(item *T, cursor string) E) ([]E, weibo.PageInfo, error) {
	w, err := q.Window(p)
	if err != nil {
		return nil, weibo.PageInfo{}, err
	}
	sc, want, near := w.Scan(q.Scan)
	items, keys, frontier, err := scanVerifiedUpTo(ctx, st, &sc, want-1, q.Rounds, q.With, q.WithRows, verify)
	if err != nil {
		return nil, weibo.PageInfo{}, err
	}
	// beyond: whether an edge lies beyond the near cursor (at or behind it).
	beyond := false
	if near != nil {
		if len(keys) > 0 && bytes.Equal(keys[0], near) {
			beyond, items, keys = true, items[1:], keys[1:]
		} else if beyond, err = EdgeBeyond(ctx, st, &q, near, w.Backward, verify); err != nil {
			return nil, weibo.PageInfo{}, err
		}
	}
	more := len(items) > w.N
	if more {
		items, keys = items[:w.N], keys[:w.N]
	}
	if w.Backward {
		slices.Reverse(items)
		slices.Reverse(keys)
	}
	edges, info := Build(items, keys, w.N, func(dst, key []byte) []byte {
		return AppendCursor(dst, q.Kind, key[len(q.Scan.Prefix):])
	}, edge)
	if frontier != nil && !more {
		// Rows past the frontier were not read: the page ends there (a
		// page that holds an edge beyond its last ends at that edge).
		more = true
		c := EncodeCursor(q.Kind, frontier[len(q.Scan.Prefix):])
		if w.Backward {
			info.StartCursor = &c
		} else {
			info.EndCursor = &c
		}
	}
	info.HasNextPage, info.HasPreviousPage = more, beyond
	if w.Backward {
		info.HasNextPage, info.HasPreviousPage = beyond, more
	}
	return edges, info, nil
}

// EdgeBeyond reports whether a valid row of the connection lies beyond the
// cursor row near, whose own row is gone: before it (a reversed scan) when
// paging forward, after it when paging backward. It reads at most
// lookRounds rows, one scan each; past them it answers false.
func EdgeBeyond[T any](ctx context.Context, st hbase.Store, q *Query, near []byte, backward bool,
	verify func(context.Context, []*hbase.Result) ([]*T, error)) (bool, error) {
	sc := q.Scan
	if backward {
		sc.Start = laterStart(q.Scan.Start, append(bytes.Clone(near), 0))
	} else {
		sc.Stop, sc.Reversed = earlierStop(q.Scan.Stop, near), true
	}
	items, _, err := ScanVerified(ctx, st, &sc, 0, lookRounds, verify)
	return len(items) > 0, err
}

// ScanVerified reads the rows of sc (whose Start, or Stop when reversed, is
// where the page begins) chunk by chunk and asks verify, with one batched
// read per chunk, which of them are valid (nil: skip, e.g. the index half
// of a half-written pair or a stale inbox entry). It stops once n+1 valid
// rows are found, the range ends, or after rounds scans (0: no bound), and
// returns the valid items with their rowkeys, in scan order.
func ScanVerified[T any](ctx context.Context, st hbase.Store, sc *hbase.Scan, n, rounds int,
	verify func(context.Context, []*hbase.Result) ([]*T, error)) ([]*T, [][]byte, error) {
	items, keys, _, err := ScanVerifiedUpTo(ctx, st, sc, n, rounds, verify)
	return items, keys, err
}

// ScanVerifiedUpTo is ScanVerified that also returns, when it stopped
// after rounds scans with fewer than n+1 valid rows and the range not
// exhausted, the last row it read (frontier): rows beyond it were not
// read. frontier is nil otherwise.
func ScanVerifiedUpTo[T any](ctx context.Context, st hbase.Store, sc *hbase.Scan, n, rounds int,
	verify func(context.Context, []*hbase.Result) ([]*T, error)) (items []*T, keys [][]byte, frontier []byte, err error) {
	return scanVerifiedUpTo(ctx, st, sc, n, rounds, nil, nil, verify)
}

// scanVerifiedUpTo is ScanVerifiedUpTo whose first scan reads with too,
// in one ScanMany, passing its rows to withRows (Query.With).
func scanVerifiedUpTo[T any](ctx context.Context, st hbase.Store, sc *hbase.Scan, n, rounds int,
	with *hbase.Scan, withRows func([]*hbase.Result) error,
	verify func(context.Context, []*hbase.Result) ([]*T, error)) (items []*T, keys [][]byte, frontier []byte, err error) {
	scan := *sc
	for round := 1; ; round++ {
		want := n + 1 - len(items)
		scan.Limit = want
		var rows []*hbase.Result
		if round == 1 && with != nil {
			var both [][]*hbase.Result
			if both, err = hbase.ScanMany(ctx, st, []*hbase.Scan{&scan, with}); err == nil {
				rows = both[0]
				err = withRows(both[1])
			}
		} else {
			rows, err = hbase.ScanAll(ctx, st, &scan)
		}
		if err != nil {
			return nil, nil, nil, err
		}
		if len(rows) == 0 {
			break
		}
		if last := rows[len(rows)-1].Row; scan.Reversed {
			scan.Stop = bytes.Clone(last)
		} else {
			scan.Start = append(bytes.Clone(last), 0)
		}
		vs, err := verify(ctx, rows)
		if err != nil {
			return nil, nil, nil, err
		}
		for i, v := range vs {
			if v != nil {
				items = append(items, v)
				keys = append(keys, rows[i].Row)
			}
		}
		if len(items) > n || len(rows) < want {
			break
		}
		if round == rounds {
			frontier = rows[len(rows)-1].Row
			break
		}
	}
	return items, keys, frontier, nil
}

// Build turns up to n+1 items (one more than the page, to learn
// HasNextPage) and their rowkeys into at most n edges, each with the cursor
// AppendCursor appends of its rowkey, and their page info. The page's
// cursors are one string, each edge's a part of it (one allocation, not one
// an edge).
func Build[T, E any](items []*T, keys [][]byte, n int, appendCursor func(dst, key []byte) []byte,
	edge func(item *T, cursor string) E) ([]E, weibo.PageInfo) {
	var info weibo.PageInfo
	if len(items) > n {
		items, info.HasNextPage = items[:n], true
	}
	if len(items) == 0 {
		return []E{}, info
	}
	buf := make([]byte, 0, 40*len(items)) // a cursor is 23-40 bytes
	ends := make([]int, len(items))
	for i := range items {
		buf = appendCursor(buf, keys[i])
		ends[i] = len(buf)
	}
	all := string(buf)
	edges := make([]E, len(items))
	start := 0
	for i, it := range items {
		edges[i] = edge(it, all[start:ends[i]])
		start = ends[i]
	}
	lastStart := 0
	if len(ends) > 1 {
		lastStart = ends[len(ends)-2]
	}
	first, last := all[:ends[0]], all[lastStart:]
	info.StartCursor, info.EndCursor = &first, &last
	return edges, info
}
