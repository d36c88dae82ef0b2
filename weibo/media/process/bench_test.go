package process

import (
	"bytes"
	"context"
	"image"
	"image/jpeg"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// photo12MP is a 4000 × 3000 JPEG (quality 90) that compresses like a
// phone's photo: smooth shading, edges and textures of several
// frequencies and a little sensor noise; made once per test binary.
var photo12MP = sync.OnceValue(func() []byte {
	const w, h = 4000, 3000
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(12, 34))
	for y := range h {
		row := m.Pix[y*m.Stride:]
		fy := float64(y)
		for x := range w {
			fx := float64(x)
			shade := 0.5 + 0.5*math.Sin(fx/700+fy/900)
			texture := 0.5 + 0.5*math.Sin(fx/9)*math.Cos(fy/13)
			edge := 0.0
			if (x/500+y/400)%2 == 0 {
				edge = 0.2
			}
			n := float64(r.IntN(17)) - 8
			row[4*x] = clamp(255*(0.6*shade+0.2*texture+edge) + n)
			row[4*x+1] = clamp(255*(0.4*shade+0.3*texture) + n)
			row[4*x+2] = clamp(255*(0.3+0.3*texture-edge) + n)
			row[4*x+3] = 0xff
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, m, &jpeg.Options{Quality: 90}); err != nil {
		panic(err)
	}
	return buf.Bytes()
})

func clamp(v float64) uint8 {
	return uint8(max(0, min(255, v)))
}

// BenchmarkProcess12MP processes a 12-megapixel JPEG, one at a time, and
// reports the median and 99th percentile of an operation's duration.
//
//	go test -run '^$' -bench 'Process12MP$' -benchtime 20x ./weibo/media/process/
func BenchmarkProcess12MP(b *testing.B) {
	data := photo12MP()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var took []time.Duration
	for b.Loop() {
		start := time.Now()
		if _, err := Process(context.Background(), data, Limits{}); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	b.ReportMetric(ms(percentile(took, 0.50)), "p50-ms")
	b.ReportMetric(ms(percentile(took, 0.99)), "p99-ms")
	b.ReportMetric(float64(len(data))/1e6, "input-MB")
}

// BenchmarkProcess8Parallel12MP processes eight 12-megapixel JPEGs at once
// per operation and reports the process's peak resident memory
// (/proc/self/status VmHWM, reset through /proc/self/clear_refs once the
// input is made) and the wall time of the eight.
//
//	go test -run '^$' -bench 'Process8Parallel12MP$' -benchtime 5x ./weibo/media/process/
func BenchmarkProcess8Parallel12MP(b *testing.B) {
	data := photo12MP()
	runtime.GC()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Skipf("cannot reset the peak RSS: %v", err)
	}
	baseline := status(b, "VmHWM")
	var took []time.Duration
	for b.Loop() {
		start := time.Now()
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				if _, err := Process(context.Background(), data, Limits{}); err != nil {
					b.Error(err)
				}
			})
		}
		wg.Wait()
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	b.ReportMetric(float64(baseline)/1024, "baseline-RSS-MB")
	b.ReportMetric(float64(status(b, "VmHWM"))/1024, "peak-RSS-MB")
	b.ReportMetric(ms(percentile(took, 0.50)), "p50-ms/8")
}

// status reads a kB field of /proc/self/status.
func status(b *testing.B, field string) int64 {
	b.Helper()
	s, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skipf("no /proc/self/status: %v", err)
	}
	for line := range strings.SplitSeq(string(s), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb
		}
	}
	b.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// percentile returns the q-quantile (0-1) of sorted durations, nearest
// rank.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
