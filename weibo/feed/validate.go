package feed

import (
	"unicode"
	"unicode/utf8"

	"github.com/rivo/uniseg"
	"github.com/weibohbase/gateway/weibo"
)

// MaxPostBytes caps a post's content in bytes (UTF-8), on top of the
// MaxPostLength characters: 64 KiB holds 10,000 characters of any script or
// single-code-point emoji (at most 4 bytes each), and 2,600 of the longest
// common emoji sequences (a family emoji is 25 bytes).
const MaxPostBytes = 64 << 10

// validateContent checks a post's content: valid UTF-8, at most
// MaxPostBytes bytes, 1 to MaxPostLength user-perceived characters
// (extended grapheme clusters, as github.com/rivo/uniseg counts them: a
// family emoji or a letter with its accents is one), and at least one
// visible character (see visible). Errors: BAD_USER_INPUT on "content".
func validateContent(content string) error {
	if !utf8.ValidString(content) {
		return weibo.BadInput("content", "content is not valid UTF-8")
	}
	if len(content) > MaxPostBytes {
		return weibo.BadInput("content", "content must be at most %d bytes of UTF-8, got %d", MaxPostBytes, len(content))
	}
	if n := uniseg.GraphemeClusterCount(content); n < 1 || n > MaxPostLength {
		return weibo.BadInput("content", "content must be 1 to %d characters, got %d", MaxPostLength, n)
	}
	for _, r := range content {
		if visible(r) {
			return nil
		}
	}
	return weibo.BadInput("content", "content must contain a visible character")
}

// visible reports whether r shows as something on screen by itself: a
// letter, number, punctuation or symbol that is not a default-ignorable
// code point (such as U+3164 HANGUL FILLER) nor U+2800 BRAILLE PATTERN
// BLANK. White space, controls (NUL), format characters (zero-width space
// U+200B, zero-width joiner, U+FEFF), separators, combining marks on their
// own, variation selectors and unassigned code points are not visible.
func visible(r rune) bool {
	if !unicode.In(r, unicode.L, unicode.N, unicode.P, unicode.S) {
		return false
	}
	return r != '\u2800' && !unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r)
}
