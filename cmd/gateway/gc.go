package main

import (
	"log/slog"
	"os"
	"runtime/debug"
)

// The garbage collector settings of gateway serve, unless the environment
// sets Go's own GOGC or GOMEMLIMIT (which then win, each on its own).
//
// The gateway's live heap is small (tens of MiB: caches, the store's
// buffers, the requests in flight), so at Go's default GOGC=100 it collects
// every few MiB allocated, and a page of 50 edges allocates about 320 KB. At
// GOGC=400 it collects about a quarter as often: k6 `home`, embedded store,
// 32 VUs, alternated, 0.87-0.89 -> 0.63-0.64 ms of gateway CPU per page,
// p99 96-100 -> 62-63 ms, peak RSS 49-50 -> 66-67 MiB (docs/benchmarks.md).
// The soft memory limit keeps a heap that grows (the demo import at start,
// heavy requests) from taking all of GOGC=400's room: near it the collector
// runs as often as needed (Go bounds its CPU share). TestBinaryHostileRSS
// (bound 300 MB) peaks at about 205 MiB with these settings, 140 MiB with
// Go's defaults: the import at start is the peak.
const (
	defaultGCPercent   = 400
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
