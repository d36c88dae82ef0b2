//go:build !cgo

package main

// pebbleOffHeap: without cgo, pebble allocates its block cache (128 MiB)
// and memtables in the Go heap, where a soft memory limit sized for the
// gateway's own heap would make the collector run without pause.
const pebbleOffHeap = false
