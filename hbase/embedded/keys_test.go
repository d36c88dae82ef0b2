package embedded

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// Tests of the key encoding: encoded row prefixes sort as the rowkeys do,
// and the comparer's Split cuts a key at its row prefix.

func TestKeyOrder(t *testing.T) {
	// Rowkeys from a small alphabet rich in the bytes the escaping treats
	// specially: encoded row prefixes must sort as the rowkeys do, and the
	// scan bound encoding must select exactly the rows >= / < a key.
	alphabet := []byte{0x00, 0x01, 0x02, 0xfe, 0xff, 'a'}
	tb := &embTable{prefix: []byte{keyspaceData, 0, 0, 1, 0}}
	r := rand.New(rand.NewPCG(1, 2))
	key := func() []byte {
		k := make([]byte, r.IntN(5))
		for i := range k {
			k[i] = alphabet[r.IntN(len(alphabet))]
		}
		return k
	}
	for range 20000 {
		a, b := key(), key()
		ea, eb := appendRowPrefix(nil, tb, a), appendRowPrefix(nil, tb, b)
		if got, want := bytes.Compare(ea, eb), bytes.Compare(a, b); got != want {
			t.Fatalf("rows %x, %x: encoded order %d, want %d", a, b, got, want)
		}
		// A cell key of a against the bound encoding of b.
		cell := appendTS(appendSegString(appendSegString(ea, "f"), "q\x00"), 42)
		bound := appendEscaped(bytes.Clone(tb.prefix), b)
		if got, want := bytes.Compare(cell, bound) >= 0, bytes.Compare(a, b) >= 0; got != want {
			t.Fatalf("row %x vs bound %x: cell >= bound is %v, want %v", a, b, got, want)
		}
		// Decoding.
		n := embeddedSplit(cell)
		if n != len(ea) {
			t.Fatalf("split of a cell of row %x = %d, want %d", a, n, len(ea))
		}
		if got := unescape(cell[tableHeaderLen : n-2]); !bytes.Equal(got, a) {
			t.Fatalf("decoded row %x, want %x", got, a)
		}
		famSeg, rest, _ := nextSeg(cell[n:])
		qualSeg, tsb, _ := nextSeg(rest)
		if string(famSeg) != "f" || string(unescape(qualSeg)) != "q\x00" || len(tsb) != tsLen || keyTS(cell) != 42 {
			t.Fatalf("decoded cell %q %q %d", famSeg, unescape(qualSeg), keyTS(cell))
		}
	}
}

func TestComparerSplit(t *testing.T) {
	// Compare (bytewise) must agree with "prefixes bytewise, then suffixes
	// bytewise" for the Split (pebble's requirement), on cell keys, scan
	// bounds and metadata keys alike.
	r := rand.New(rand.NewPCG(3, 4))
	tb := &embTable{prefix: []byte{keyspaceData, 0, 0, 0, 1}}
	alphabet := []byte{0x00, 0x01, 0x02, 0xff, 'a'}
	randBytes := func(n int) []byte {
		k := make([]byte, r.IntN(n))
		for i := range k {
			k[i] = alphabet[r.IntN(len(alphabet))]
		}
		return k
	}
	mk := func() []byte {
		switch r.IntN(5) {
		case 0:
			return appendEscaped(bytes.Clone(tb.prefix), randBytes(4)) // scan bound
		case 1:
			return segEnd(nil, appendRowPrefix(nil, tb, randBytes(4))) // row end
		case 2:
			return append([]byte{keyspaceMeta}, randBytes(6)...)
		default:
			rp := appendRowPrefix(nil, tb, randBytes(4))
			return appendTS(appendSeg(appendSegString(rp, "f"), randBytes(3)), r.Int64N(1<<50))
		}
	}
	split := embeddedComparer.Split
	for range 50000 {
		a, b := mk(), mk()
		an, bn := split(a), split(b)
		want := bytes.Compare(a[:an], b[:bn])
		if want == 0 {
			want = bytes.Compare(a[an:], b[bn:])
		}
		if got := bytes.Compare(a, b); got != want {
			t.Fatalf("keys %x / %x: Compare %d, prefix-then-suffix %d", a, b, got, want)
		}
		if an < len(a) && bytes.Compare(a[:an], a) >= 0 {
			t.Fatalf("prefix of %x does not sort before the key", a)
		}
	}
}
