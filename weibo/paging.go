package weibo

import (
	"bytes"
	"context"
	"encoding/base64"

	"github.com/weibohbase/gateway/hbase"
)

// Paging. Every connection of the API — follows, fans, a user's posts, the
// home timeline, roles, a role's members, a department's children and
// members — is one page of the rows under one prefix of one table, in
// rowkey order, and is read by readPage: validate first and after, scan
// from the row after the cursor, keep the rows that verify accepts (one
// batched read per chunk of rows), and build at most first edges.

// Page sizes of every connection: `first` defaults to DefaultPageSize and
// must be within [1, MaxPageSize].
const (
	DefaultPageSize = 20
	MaxPageSize     = 100
)

// PageInfo is the Relay page info of a connection page.
type PageInfo struct {
	// HasNextPage tells whether rows follow the last edge.
	HasNextPage bool
	// HasPreviousPage is always false: connections page forward only.
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
	return base64.RawURLEncoding.EncodeToString(append([]byte{byte(kind)}, suffix...))
}

// decodeCursor returns the rowkey suffix of a cursor of kind whose payload
// has lo to hi bytes; a nil or empty cursor gives nil. A malformed one
// gives a BAD_USER_INPUT error on argument "after".
func decodeCursor(after *string, kind cursorKind, lo, hi int) ([]byte, error) {
	if after == nil || *after == "" {
		return nil, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(*after)
	if err != nil || len(b) < lo+1 || len(b) > hi+1 || b[0] != byte(kind) {
		return nil, badInput("after", "malformed cursor %s", Excerpt(*after))
	}
	return b[1:], nil
}

// pageSize validates `first`.
func pageSize(first *int) (int, error) {
	if first == nil {
		return DefaultPageSize, nil
	}
	if *first < 1 || *first > MaxPageSize {
		return 0, badInput("first", "first must be between 1 and %d, got %d", MaxPageSize, *first)
	}
	return *first, nil
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
// row of the page's scan: the row strictly after the cursor's, or nil (the
// prefix itself) without a cursor. Errors: BAD_USER_INPUT on "first" or
// "after".
func (q *pageQuery) start(first *int, after *string) (int, []byte, error) {
	n, err := pageSize(first)
	if err != nil {
		return 0, nil, err
	}
	lo, hi := q.rowLen-len(q.scan.Prefix), q.rowLen-len(q.scan.Prefix)
	if q.rowLen == 0 {
		lo, hi = 1, q.maxRowLen-len(q.scan.Prefix)
	}
	suffix, err := decodeCursor(after, q.kind, lo, hi)
	if err != nil || suffix == nil {
		return n, nil, err
	}
	k := append(bytes.Clone(q.scan.Prefix), suffix...)
	return n, append(k, 0), nil
}

// readPage reads one page of the connection q describes: it validates
// first and after, reads the rows from the cursor on with scanVerified
// (verify returns one entry per row, nil for a row to skip), and turns each
// kept item and its cursor into an edge with edge. Errors: BAD_USER_INPUT
// on "first" or "after", and the store's.
func readPage[T, E any](ctx context.Context, st hbase.Store, q pageQuery, first *int, after *string,
	verify func(context.Context, []*hbase.Result) ([]*T, error),
	edge func(item *T, cursor string) E) ([]E, PageInfo, error) {
	n, start, err := q.start(first, after)
	if err != nil {
		return nil, PageInfo{}, err
	}
	sc := q.scan
	sc.Start = start
	items, keys, err := scanVerified(ctx, st, &sc, n, q.rounds, verify)
	if err != nil {
		return nil, PageInfo{}, err
	}
	edges, info := buildPage(items, keys, n, func(key []byte) string {
		return encodeCursor(q.kind, key[len(q.scan.Prefix):])
	}, edge)
	return edges, info, nil
}

// scanVerified reads the rows of sc (whose Start is where the page begins)
// chunk by chunk and asks verify, with one batched read per chunk, which of
// them are valid (nil: skip, e.g. the index half of a half-written pair or
// a stale inbox entry). It stops once n+1 valid rows are found, the range
// ends, or after rounds scans (0: no bound), and returns the valid items
// with their rowkeys.
func scanVerified[T any](ctx context.Context, st hbase.Store, sc *hbase.Scan, n, rounds int,
	verify func(context.Context, []*hbase.Result) ([]*T, error)) ([]*T, [][]byte, error) {
	var (
		items []*T
		keys  [][]byte
	)
	scan := *sc
	for round := 1; ; round++ {
		want := n + 1 - len(items)
		scan.Limit = want
		rows, err := hbase.ScanAll(ctx, st, &scan)
		if err != nil {
			return nil, nil, err
		}
		if len(rows) == 0 {
			break
		}
		scan.Start = append(bytes.Clone(rows[len(rows)-1].Row), 0)
		vs, err := verify(ctx, rows)
		if err != nil {
			return nil, nil, err
		}
		for i, v := range vs {
			if v != nil {
				items = append(items, v)
				keys = append(keys, rows[i].Row)
			}
		}
		if len(items) > n || len(rows) < want || round == rounds {
			break
		}
	}
	return items, keys, nil
}

// buildPage turns up to n+1 items (one more than the page, to learn
// HasNextPage) and their rowkeys into at most n edges, each with the cursor
// cursor makes of its rowkey, and their page info.
func buildPage[T, E any](items []*T, keys [][]byte, n int, cursor func(key []byte) string,
	edge func(item *T, cursor string) E) ([]E, PageInfo) {
	var info PageInfo
	if len(items) > n {
		items, info.HasNextPage = items[:n], true
	}
	edges := make([]E, len(items))
	for i, it := range items {
		c := cursor(keys[i])
		edges[i] = edge(it, c)
		if i == 0 {
			info.StartCursor = &c
		}
		if i == len(items)-1 {
			info.EndCursor = &c
		}
	}
	return edges, info
}
