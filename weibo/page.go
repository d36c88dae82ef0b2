package weibo

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
