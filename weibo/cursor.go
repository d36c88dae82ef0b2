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
		return nil, badInput("after", "malformed cursor %q", *after)
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
