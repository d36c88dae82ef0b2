package main

import (
	"io"
	"log/slog"
	"math"
	"os"
	"runtime/debug"
	"testing"
)

// TestTuneGC: serve's collector settings apply where Go's own variables
// are unset, each on its own, and not to a cgo-less embedded store.
func TestTuneGC(t *testing.T) {
	pct, limit := debug.SetGCPercent(-1), debug.SetMemoryLimit(-1)
	debug.SetGCPercent(pct)
	t.Cleanup(func() { debug.SetGCPercent(pct); debug.SetMemoryLimit(limit) })
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	tests := []struct {
		name      string
		env       map[string]string
		embedded  bool
		wantPct   int
		wantLimit int64
	}{
		{name: "hbase, nothing set", wantPct: defaultGCPercent, wantLimit: defaultMemoryLimit},
		{name: "GOGC set", env: map[string]string{"GOGC": "100"}, wantPct: 100, wantLimit: defaultMemoryLimit},
		{name: "GOMEMLIMIT set", env: map[string]string{"GOMEMLIMIT": "1GiB"}, wantPct: defaultGCPercent, wantLimit: math.MaxInt64},
		{name: "both set", env: map[string]string{"GOGC": "100", "GOMEMLIMIT": "1GiB"}, wantPct: 100, wantLimit: math.MaxInt64},
		{name: "embedded", embedded: true, wantPct: defaultGCPercent, wantLimit: defaultMemoryLimit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []string{"GOGC", "GOMEMLIMIT"} {
				t.Setenv(k, "") // restored after the test
				os.Unsetenv(k)
			}
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			debug.SetGCPercent(100) // what the runtime took from the environment, here
			debug.SetMemoryLimit(math.MaxInt64)
			tuneGC(log, tt.embedded)
			if tt.embedded && !pebbleOffHeap {
				tt.wantPct, tt.wantLimit = 100, math.MaxInt64
			}
			gotPct := debug.SetGCPercent(-1)
			debug.SetGCPercent(gotPct)
			if gotLimit := debug.SetMemoryLimit(-1); gotPct != tt.wantPct || gotLimit != tt.wantLimit {
				t.Errorf("GOGC %d, memory limit %d; want %d, %d", gotPct, gotLimit, tt.wantPct, tt.wantLimit)
			}
		})
	}
}
