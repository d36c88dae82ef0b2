package paging

import (
	"strings"
	"testing"

	"github.com/weibohbase/gateway/weibo"
)

// FuzzDecodeCursor: any string given as a cursor either decodes to a
// payload of the kind's length or fails with BAD_USER_INPUT and a short
// message; a decoded cursor re-encodes to one that decodes the same.
func FuzzDecodeCursor(f *testing.F) {
	for _, s := range []string{"", "UAAAAAAAAAE", EncodeCursor(CursorPosts, []byte("12345678")), EncodeCursor(CursorUsers, []byte("abcdefgh")),
		EncodeCursor(CursorTimeline, []byte("0123456789abcdef")), "UA==", "!!!!", strings.Repeat("Zm9v", 300), "\xff\xfe", "VAAAAAAAAAAAAAAAAAAAAAA"} {
		f.Add(s)
	}
	kinds := []struct {
		kind CursorKind
		n    int
	}{{CursorPosts, 8}, {CursorUsers, 8}, {CursorTimeline, 16}}
	f.Fuzz(func(t *testing.T, s string) {
		for _, k := range kinds {
			b, err := DecodeCursor(&s, k.kind, k.n, k.n)
			if err != nil {
				if weibo.CodeOf(err) != weibo.CodeBadUserInput || len(err.Error()) > 200 {
					t.Fatalf("error %q (code %q)", err, weibo.CodeOf(err))
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
			again := EncodeCursor(k.kind, b)
			if b2, err := DecodeCursor(&again, k.kind, k.n, k.n); err != nil || string(b2) != string(b) {
				t.Fatalf("re-encoded cursor %q decodes to %x, %v; want %x", again, b2, err, b)
			}
		}
	})
}
