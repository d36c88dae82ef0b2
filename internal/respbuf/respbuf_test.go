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

func TestGetPut(t *testing.T) {
	// A slice given back with Put comes back from Get, empty (a few tries:
	// see TestRelease).
	reused := false
	for range 100 {
		p := Get()
		*p = append(*p, strings.Repeat("x", 1000)...)
		first := &(*p)[0]
		Put(p)
		q := Get()
		if len(*q) != 0 {
			t.Fatalf("Get returned %d bytes", len(*q))
		}
		if cap(*q) >= 1000 && &(*q)[:1][0] == first {
			reused = true
			break
		}
	}
	if !reused {
		t.Error("a slice given back was never handed out again")
	}

	// A slice over MaxPooled is not kept.
	big := make([]byte, 0, MaxPooled+1)
	Put(&big)
	for range 10 {
		if p := Get(); cap(*p) > MaxPooled {
			t.Fatalf("Get returned a slice of capacity %d > MaxPooled", cap(*p))
		}
	}
}
