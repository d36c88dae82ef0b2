package weibo

import (
	"bytes"
	"context"
	"encoding/base64"
	"slices"

	"github.com/weibohbase/gateway/hbase"
)

// Paging. Every connection of the API — follows, fans, a user's posts, the
// home timeline, roles, a role's members, a department's children and
// members — is one page of the rows under one prefix of one table, in
// rowkey order, and is read by readPage: validate the arguments, scan from
// the cursor, keep the rows that verify accepts (one batched read per chunk
// of rows), and build at most n edges. The home timeline and a user's posts
// also page backward (last/before: a reversed scan from the cursor, the
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

// Page sizes of every connection: `first` defaults to DefaultPageSize and
// must be within [1, MaxPageSize].
const (
	DefaultPageSize = 20
	MaxPageSize     = 100
)

// PageInfo is the Relay page info of a connection page (see Paging above).
type PageInfo struct {
	// HasNextPage tells whether edges follow the page's last edge: within
	// the cursors when paging forward, at or after `before` when paging
	// backward.
	HasNextPage bool
	// HasPreviousPage tells whether edges precede the page's first edge: at
	// or before `after` when paging forward, within the cursors when paging
	// backward.
	HasPreviousPage bool
	// StartCursor is the cursor of the first edge, nil for an empty page.
	StartCursor *string
	// EndCursor is the cursor of the last edge, nil for an empty page.
	EndCursor *string
}

// cursorKind is the first byte of a decoded cursor: which list it belongs
// to, so that a cursor of one connection is refused by another.
type cursorKind byte

// Cursor kinds; the payload after the kind byte is the edge's rowkey after
// the connection's prefix.
const (
	cursorTimeline    cursorKind = 'T' // + reverse ms(8) + author(8): an inbox rowkey suffix
	cursorPosts       cursorKind = 'P' // + reverse ms(8): a content rowkey suffix
	cursorUsers       cursorKind = 'U' // + user id(8): a relation or department member rowkey suffix
	cursorRoleMembers cursorKind = 'M' // + uid(8): a role member rowkey suffix
	cursorRoleNames   cursorKind = 'N' // + lower-cased name: a weibo:rolenames rowkey
	cursorDepartments cursorKind = 'D' // + department id(8): a child rowkey suffix
)

// Cursors are opaque to clients: base64url (no padding) of one kind byte
// followed by the rowkey suffix of the edge's row. Paging resumes at the row
// strictly after it, so rows written meanwhile before the cursor (newer posts)
// neither shift nor repeat the next page.
func encodeCursor(kind cursorKind, suffix []byte) string {
	var buf [96]byte // a page's cursors fit: no allocation but the string
	return string(appendCursor(buf[:0], kind, suffix))
}

// appendCursor appends encodeCursor(kind, suffix) to dst.
func appendCursor(dst []byte, kind cursorKind, suffix []byte) []byte {
	var buf [64]byte
	return base64.RawURLEncoding.AppendEncode(dst, append(append(buf[:0], byte(kind)), suffix...))
}

// decodeCursor returns the rowkey suffix of the `after` cursor of kind
// whose payload has lo to hi bytes (decodeCursorArg).
func decodeCursor(after *string, kind cursorKind, lo, hi int) ([]byte, error) {
	return decodeCursorArg("after", after, kind, lo, hi)
}

// decodeCursorArg returns the rowkey suffix of cursor, the argument named
// field, of kind with a payload of lo to hi bytes; a nil or empty cursor
// gives nil. A malformed one gives a BAD_USER_INPUT error on field.
func decodeCursorArg(field string, cursor *string, kind cursorKind, lo, hi int) ([]byte, error) {
	if cursor == nil || *cursor == "" {
		return nil, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(*cursor)
	if err != nil || len(b) < lo+1 || len(b) > hi+1 || b[0] != byte(kind) {
		return nil, badInput(field, "malformed cursor %s", Excerpt(*cursor))
	}
	return b[1:], nil
}

// pageSize validates `first`.
func pageSize(first *int) (int, error) { return pageSizeArg("first", first) }

// pageSizeArg validates a page size, the argument named field (first or
// last): nil gives DefaultPageSize.
func pageSizeArg(field string, n *int) (int, error) {
	if n == nil {
		return DefaultPageSize, nil
	}
	if *n < 1 || *n > MaxPageSize {
		return 0, badInput(field, "%s must be between 1 and %d, got %d", field, MaxPageSize, *n)
	}
	return *n, nil
}

// Page is the paging arguments of a connection that pages both ways, as the
// schema names them (Relay's cursor connections): First with After pages
// forward, Last with Before backward. Either cursor may come with either
// size; First and Last together are refused. With neither size, First is
// DefaultPageSize.
type Page struct {
	// First is how many edges to take from the start of the window, 1 to MaxPageSize.
	First *int
	// After is the cursor after which the window starts (nil: the list's start).
	After *string
	// Last is how many edges to take from the end of the window, 1 to MaxPageSize.
	Last *int
	// Before is the cursor before which the window ends (nil: the list's end).
	Before *string
}

// pageQuery says which rows a connection lists and how its cursors look.
type pageQuery struct {
	// kind is the connection's cursor kind.
	kind cursorKind
	// scan names the table, the prefix every row of the connection starts
	// with (nil: the whole table) and the families to read. Its Start and
	// Limit are set per page.
	scan hbase.Scan
	// rowLen is the length of every rowkey of the connection (a cursor's
	// payload is rowLen - len(prefix) bytes); 0 when rowkeys vary in
	// length, from 1 byte after the prefix up to maxRowLen bytes.
	rowLen, maxRowLen int
	// rounds bounds the scans one page may take (each skips the rows verify
	// rejects and reads on); 0 scans until the page is full or the prefix
	// ends.
	rounds int
}

// start validates first and after and returns the page size and the start
// row of a forward scan from after: the row strictly after the cursor's,
// or nil (the prefix itself) without a cursor. Errors: BAD_USER_INPUT on
// "first" or "after".
func (q *pageQuery) start(first *int, after *string) (int, []byte, error) {
	n, err := pageSize(first)
	if err != nil {
		return 0, nil, err
	}
	k, err := q.cursorRow("after", after)
	if err != nil || k == nil {
		return n, nil, err
	}
	return n, append(k, 0), nil
}

// cursorRow returns the rowkey of cursor, the argument named field (nil
// without a cursor). Errors: BAD_USER_INPUT on field.
func (q *pageQuery) cursorRow(field string, cursor *string) ([]byte, error) {
	lo, hi := q.rowLen-len(q.scan.Prefix), q.rowLen-len(q.scan.Prefix)
	if q.rowLen == 0 {
		lo, hi = 1, q.maxRowLen-len(q.scan.Prefix)
	}
	suffix, err := decodeCursorArg(field, cursor, q.kind, lo, hi)
	if err != nil || suffix == nil {
		return nil, err
	}
	return append(bytes.Clone(q.scan.Prefix), suffix...), nil
}

// window is a validated Page: the page size, the direction and the rowkeys
// of the cursors.
type window struct {
	n             int
	backward      bool
	after, before []byte // cursor rows; nil without the cursor
}

// scan returns base narrowed to w — from after to before, or reversed
// from before down to after when w goes backward — and how many rows to
// read: one more than the page, to learn whether more follow, and one more
// again for the near cursor's own row (the scan includes it, so that a
// page can tell a cursor whose row is gone); near is that cursor's row (nil
// without it).
func (w window) scan(base hbase.Scan) (sc hbase.Scan, want int, near []byte) {
	sc = base
	near = w.after
	sc.Start, sc.Stop = w.after, w.before
	if w.backward {
		near = w.before
		sc.Reversed = true
		if w.after != nil {
			sc.Start = append(bytes.Clone(w.after), 0)
		}
		if w.before != nil {
			sc.Stop = append(bytes.Clone(w.before), 0)
		}
	}
	want = w.n + 1
	if near != nil {
		want++
	}
	return sc, want, near
}

// window validates p. Errors: BAD_USER_INPUT on "first", "after", "last"
// or "before".
func (q *pageQuery) window(p Page) (window, error) {
	var (
		w   window
		err error
	)
	if p.First != nil && p.Last != nil {
		return w, badInput("last", "pass first or last, not both")
	}
	if w.backward = p.Last != nil; w.backward {
		w.n, err = pageSizeArg("last", p.Last)
	} else {
		w.n, err = pageSizeArg("first", p.First)
	}
	if err != nil {
		return w, err
	}
	if w.after, err = q.cursorRow("after", p.After); err != nil {
		return w, err
	}
	w.before, err = q.cursorRow("before", p.Before)
	return w, err
}

// readPage reads one page forward (first/after) of the connection q
// describes: readPageBoth with Page{First: first, After: after}.
func readPage[T, E any](ctx context.Context, st hbase.Store, q pageQuery, first *int, after *string,
	verify func(context.Context, []*hbase.Result) ([]*T, error),
	edge func(item *T, cursor string) E) ([]E, PageInfo, error) {
	return readPageBoth(ctx, st, q, Page{First: first, After: after}, verify, edge)
}

// lookRounds bounds the rows (one per scan) read to learn whether an edge
// lies beyond a cursor whose own row is gone.
const lookRounds = 3

// readPageBoth reads one page of the connection q describes, forward or
// backward (see Page and Paging above). It validates p, scans from the
// near cursor's own row (inclusive) toward the far one (exclusive) —
// forward from after, or reversed from before — with scanVerified (verify
// returns one entry per row, nil for a row to skip), and turns each kept
// item and its cursor into an edge with edge, in list order. Errors:
// BAD_USER_INPUT on "first", "after", "last" or "before", and the store's.
func readPageBoth[T, E any](ctx context.Context, st hbase.Store, q pageQuery, p Page,
	verify func(context.Context, []*hbase.Result) ([]*T, error),
	edge func(item *T, cursor string) E) ([]E, PageInfo, error) {
	w, err := q.window(p)
	if err != nil {
		return nil, PageInfo{}, err
	}
	sc, want, near := w.scan(q.scan)
	items, keys, err := scanVerified(ctx, st, &sc, want-1, q.rounds, verify)
	if err != nil {
		return nil, PageInfo{}, err
	}
	// beyond: whether an edge lies beyond the near cursor (at or behind it).
	beyond := false
	if near != nil {
		if len(keys) > 0 && bytes.Equal(keys[0], near) {
			beyond, items, keys = true, items[1:], keys[1:]
		} else if beyond, err = edgeBeyond(ctx, st, &q, near, w.backward, verify); err != nil {
			return nil, PageInfo{}, err
		}
	}
	more := len(items) > w.n
	if more {
		items, keys = items[:w.n], keys[:w.n]
	}
	if w.backward {
		slices.Reverse(items)
		slices.Reverse(keys)
	}
	edges, info := buildPage(items, keys, w.n, func(dst, key []byte) []byte {
		return appendCursor(dst, q.kind, key[len(q.scan.Prefix):])
	}, edge)
	info.HasNextPage, info.HasPreviousPage = more, beyond
	if w.backward {
		info.HasNextPage, info.HasPreviousPage = beyond, more
	}
	return edges, info, nil
}

// edgeBeyond reports whether a valid row of the connection lies beyond the
// cursor row near, whose own row is gone: before it (a reversed scan) when
// paging forward, after it when paging backward. It reads at most
// lookRounds rows, one scan each; past them it answers false.
func edgeBeyond[T any](ctx context.Context, st hbase.Store, q *pageQuery, near []byte, backward bool,
	verify func(context.Context, []*hbase.Result) ([]*T, error)) (bool, error) {
	sc := q.scan
	if backward {
		sc.Start = append(bytes.Clone(near), 0)
	} else {
		sc.Stop, sc.Reversed = near, true
	}
	items, _, err := scanVerified(ctx, st, &sc, 0, lookRounds, verify)
	return len(items) > 0, err
}

// scanVerified reads the rows of sc (whose Start, or Stop when reversed, is
// where the page begins) chunk by chunk and asks verify, with one batched
// read per chunk, which of them are valid (nil: skip, e.g. the index half
// of a half-written pair or a stale inbox entry). It stops once n+1 valid
// rows are found, the range ends, or after rounds scans (0: no bound), and
// returns the valid items with their rowkeys, in scan order.
func scanVerified[T any](ctx context.Context, st hbase.Store, sc *hbase.Scan, n, rounds int,
	verify func(context.Context, []*hbase.Result) ([]*T, error)) ([]*T, [][]byte, error) {
	items, keys, _, err := scanVerifiedUpTo(ctx, st, sc, n, rounds, verify)
	return items, keys, err
}

// scanVerifiedUpTo is scanVerified that also returns, when it stopped
// after rounds scans with fewer than n+1 valid rows and the range not
// exhausted, the last row it read (frontier): rows beyond it were not
// read. frontier is nil otherwise.
func scanVerifiedUpTo[T any](ctx context.Context, st hbase.Store, sc *hbase.Scan, n, rounds int,
	verify func(context.Context, []*hbase.Result) ([]*T, error)) (items []*T, keys [][]byte, frontier []byte, err error) {
	scan := *sc
	for round := 1; ; round++ {
		want := n + 1 - len(items)
		scan.Limit = want
		rows, err := hbase.ScanAll(ctx, st, &scan)
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

// buildPage turns up to n+1 items (one more than the page, to learn
// HasNextPage) and their rowkeys into at most n edges, each with the cursor
// appendCursor appends of its rowkey, and their page info. The page's
// cursors are one string, each edge's a part of it (one allocation, not one
// an edge).
func buildPage[T, E any](items []*T, keys [][]byte, n int, appendCursor func(dst, key []byte) []byte,
	edge func(item *T, cursor string) E) ([]E, PageInfo) {
	var info PageInfo
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
