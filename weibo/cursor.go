package weibo

import (
	"encoding/base64"
)

// Page sizes of every connection: `first` defaults to DefaultPageSize and
// must be within [1, MaxPageSize].
const (
	DefaultPageSize = 20
	MaxPageSize     = 100
)

// Cursor kinds: the first byte of a decoded cursor says which list it belongs to.
const (
	cursorTimeline byte = 'T' // + reverse ms(8) + author(8): an inbox rowkey suffix
	cursorPosts    byte = 'P' // + reverse ms(8): a content rowkey suffix
	cursorUsers    byte = 'U' // + user id(8): a relation rowkey suffix
)

// Cursors are opaque to clients: base64url (no padding) of one kind byte
// followed by the rowkey suffix of the edge's row. Paging resumes at the row
// strictly after it, so rows written meanwhile before the cursor (newer posts)
// neither shift nor repeat the next page.
func encodeCursor(kind byte, suffix []byte) string {
	return base64.RawURLEncoding.EncodeToString(append([]byte{kind}, suffix...))
}

// decodeCursor returns the rowkey suffix of a cursor of kind with payload
// length n; a nil or empty cursor gives nil. A malformed one gives a
// BAD_USER_INPUT error on argument "after".
func decodeCursor(after *string, kind byte, n int) ([]byte, error) {
	if after == nil || *after == "" {
		return nil, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(*after)
	if err != nil || len(b) != n+1 || b[0] != kind {
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

// after returns the start row for a scan of prefix resuming strictly after
// the rowkey prefix+suffix (suffix nil: from the prefix itself).
func after(prefix, suffix []byte) []byte {
	if suffix == nil {
		return nil
	}
	k := append(append([]byte{}, prefix...), suffix...)
	return append(k, 0)
}

// pageStart validates a connection's first and after (a cursor of kind
// whose payload is the n-byte rowkey suffix after prefix) and returns the
// page size and the start row of the scan (nil: from prefix itself).
// Errors: BAD_USER_INPUT on "first" or "after".
func pageStart(first *int, afterCur *string, kind byte, n int, prefix []byte) (int, []byte, error) {
	size, err := pageSize(first)
	if err != nil {
		return 0, nil, err
	}
	suffix, err := decodeCursor(afterCur, kind, n)
	if err != nil {
		return 0, nil, err
	}
	return size, after(prefix, suffix), nil
}

// buildPage turns up to n+1 items (one more than the page, to learn
// HasNextPage) into at most n edges and their page info; cursor points at
// an edge's cursor.
func buildPage[T, E any](items []T, n int, edge func(i int, item T) E, cursor func(*E) *string) ([]E, PageInfo) {
	var info PageInfo
	if len(items) > n {
		items, info.HasNextPage = items[:n], true
	}
	edges := make([]E, len(items))
	for i, it := range items {
		edges[i] = edge(i, it)
	}
	setBounds(&info, edges, cursor)
	return edges, info
}

// setBounds sets the start and end cursors of info from edges.
func setBounds[E any](info *PageInfo, edges []E, cursor func(*E) *string) {
	if k := len(edges); k > 0 {
		info.StartCursor, info.EndCursor = cursor(&edges[0]), cursor(&edges[k-1])
	}
}
