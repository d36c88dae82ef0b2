package weibo

import (
	"testing"
)

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
