package weibo

import (
	"strings"
	"testing"
)

// FuzzDecodeCursor: any string given as a cursor either decodes to a
// payload of the kind's length or fails with BAD_USER_INPUT and a short
// message; a decoded cursor re-encodes to one that decodes the same.
func FuzzDecodeCursor(f *testing.F) {
	for _, s := range []string{"", "UAAAAAAAAAE", encodeCursor(cursorPosts, []byte("12345678")), encodeCursor(cursorUsers, []byte("abcdefgh")),
		encodeCursor(cursorTimeline, []byte("0123456789abcdef")), "UA==", "!!!!", strings.Repeat("Zm9v", 300), "\xff\xfe", "VAAAAAAAAAAAAAAAAAAAAAA"} {
		f.Add(s)
	}
	kinds := []struct {
		kind cursorKind
		n    int
	}{{cursorPosts, 8}, {cursorUsers, 8}, {cursorTimeline, 16}}
	f.Fuzz(func(t *testing.T, s string) {
		for _, k := range kinds {
			b, err := decodeCursor(&s, k.kind, k.n, k.n)
			if err != nil {
				if CodeOf(err) != CodeBadUserInput || len(err.Error()) > 200 {
					t.Fatalf("error %q (code %q)", err, CodeOf(err))
				}
				continue
			}
			if s == "" {
				if b != nil {
					t.Fatalf("empty cursor decoded to %x", b)
				}
				continue
			}
			if len(b) != k.n {
				t.Fatalf("payload of %d bytes, want %d", len(b), k.n)
			}
			again := encodeCursor(k.kind, b)
			if b2, err := decodeCursor(&again, k.kind, k.n, k.n); err != nil || string(b2) != string(b) {
				t.Fatalf("re-encoded cursor %q decodes to %x, %v; want %x", again, b2, err, b)
			}
		}
	})
}

// FuzzParseIDs: the id parsers never panic, and what they accept prints
// as an id they parse back to the same value.
func FuzzParseIDs(f *testing.F) {
	for _, s := range []string{"1", "22732", "0", "01", "18446744073709551615", "18446744073709551616", "-1", "+1", "1_1583020800000",
		"1_", "_1", "1_-5", "1_+5", "22732_0", "a_b", "1_1_1", " 1", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if id, err := ParseUserID(s); err == nil {
			if id == 0 || id.String() != s {
				t.Fatalf("ParseUserID(%q) = %d: not canonical", s, id)
			}
		}
		if id, err := ParsePostID(s); err == nil {
			back, err := ParsePostID(id.String())
			if err != nil || back != id {
				t.Fatalf("ParsePostID(%q) = %+v, whose String %q parses to %+v, %v", s, id, id.String(), back, err)
			}
		}
	})
}
