package resolvers

import "github.com/weibohbase/gateway/graph"

// The ready fields' resolvers (internal/generate's readyFields): without
// these methods the fields still resolve, each in a goroutine of its own.
// (Checked in a test file: gqlgen's generation compiles this package
// before internal/generate adds the interfaces to graph.)
var (
	_ graph.PostLikedByViewerReady = (*postResolver)(nil)
	_ graph.PostRepostOfReady      = (*postResolver)(nil)
)
