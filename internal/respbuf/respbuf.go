// Package respbuf pools the buffers the generated executor marshals a
// query's or mutation's data into.
//
// gqlgen's Exec marshals each response's data into a new bytes.Buffer,
// which grows by doubling from 64 bytes: a home-timeline page allocates
// its size several times over on the way, the largest share of the bytes a
// page allocates, and so of the collector's work. `make generate`
// (internal/generate) makes the Query and Mutation cases of Exec take their
// buffer from Buffer; the HTTP transport (package server) gives the data
// back with Release once the response is written, and joins a response's
// parts for one Write in a slice from Get. A response that is
// never released (one sent over WebSocket) is left to the collector.
package respbuf

import (
	"bytes"
	"sync"
)

// MaxPooled is the largest capacity, in bytes, a released buffer may have to
// be pooled: a rare huge response does not stay in memory.
const MaxPooled = 64 << 10

// pool holds *[]byte of length 0 and capacity at most MaxPooled.
var pool sync.Pool

// Get returns an empty byte slice, its storage taken from the pool when
// there is one; Put gives it back.
func Get() *[]byte {
	if p, ok := pool.Get().(*[]byte); ok {
		return p
	}
	return new([]byte)
}

// Put gives *p back to the pool (when its capacity is at most MaxPooled).
// The caller must be its last user, as for Release.
func Put(p *[]byte) {
	if cap(*p) > MaxPooled {
		return
	}
	*p = (*p)[:0]
	pool.Put(p)
}

// Buffer returns an empty buffer for a response's data, its storage taken
// from the pool when there is one.
func Buffer() *bytes.Buffer { return bytes.NewBuffer(*Get()) }

// Release gives data, the Bytes of a buffer from Buffer (or any slice),
// back to the pool. The caller must be its last user: nothing may read or
// write data, or any slice of its array, after Release.
func Release(data []byte) {
	if data != nil {
		Put(&data)
	}
}
