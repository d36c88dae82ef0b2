package respbuf

import (
	"strings"
	"testing"
)

func TestRelease(t *testing.T) {
	// A released buffer's storage comes back from Buffer, empty (sync.Pool
	// may drop an item, at random under the race detector: a few tries).
	reused := false
	for range 100 {
		b := Buffer()
		b.WriteString(strings.Repeat("x", 1000))
		data := b.Bytes()
		Release(data)
		next := Buffer()
		if next.Len() != 0 {
			t.Fatalf("Buffer returned %d bytes", next.Len())
		}
		if next.Cap() >= len(data) && &next.AvailableBuffer()[:1][0] == &data[0] {
			reused = true
			break
		}
	}
	if !reused {
		t.Error("a released buffer was never handed out again")
	}

	// A buffer over MaxPooled is not kept.
	big := make([]byte, MaxPooled+1)
	Release(big)
	for range 10 {
		if b := Buffer(); b.Cap() > MaxPooled {
			t.Fatalf("Buffer returned a buffer of capacity %d > MaxPooled", b.Cap())
		}
	}
	Release(nil) // no-op
}
