//go:build cgo

package main

// pebbleOffHeap: with cgo, pebble allocates its block cache and memtables
// with C malloc, outside the Go heap that GOGC and GOMEMLIMIT govern.
const pebbleOffHeap = true
