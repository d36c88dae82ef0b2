package main

import (
	"log/slog"
	"os"
	"runtime/debug"
)

// The garbage collector settings of gateway serve, unless the environment
// sets Go's own GOGC or GOMEMLIMIT (which then win, each on its own).
//
// The gateway's live heap is small (caches, the store's buffers, the
// requests in flight) next to what its pages allocate, so at Go's default
// GOGC the collector runs many times a second under load and takes a
// noticeable share of the CPU. At GOGC=1600 the goal is 17 times the live
// heap: collections are rare, at the cost of a larger peak heap (the
// measurements are in docs/benchmarks.md, "The collector again"). The soft
// memory limit is what bounds the heap: once the live heap passes about
// 7 MiB (the limit over 17), the goal is the limit, and a heap that grows
// (the demo import at start, heavy requests) makes the collector run as
// often as needed near it (Go bounds its CPU share). TestBinaryHostileRSS
// (bound 300 MB) checks the peak with these settings.
const (
	defaultGCPercent   = 1600
	defaultMemoryLimit = 128 << 20 // bytes, Go-managed memory (pebble's cgo memory is outside it)
)

// tuneGC applies defaultGCPercent and defaultMemoryLimit where the
// environment sets neither GOGC nor GOMEMLIMIT, and logs what the collector
// runs with. On the embedded store of a binary built without cgo (pebble's
// memory then in the Go heap, pebbleOffHeap false) it leaves Go's defaults.
func tuneGC(log *slog.Logger, embedded bool) {
	if embedded && !pebbleOffHeap {
		log.Info("garbage collector: Go's defaults (built without cgo: the embedded store's cache is in the Go heap)")
		return
	}
	_, gogc := os.LookupEnv("GOGC")
	if !gogc {
		debug.SetGCPercent(defaultGCPercent)
	}
	_, limit := os.LookupEnv("GOMEMLIMIT")
	if !limit {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
	pct := debug.SetGCPercent(-1)
	debug.SetGCPercent(pct)
	log.Info("garbage collector", "gogc", pct, "memory_limit_mib", debug.SetMemoryLimit(-1)>>20,
		"from_environment", gogc || limit)
}
