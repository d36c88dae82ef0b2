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

// ValidateContent checks a post's content: valid UTF-8, at most
// MaxPostBytes bytes, 1 to MaxPostLength user-perceived characters
// (extended grapheme clusters, as github.com/rivo/uniseg counts them: a
// family emoji or a letter with its accents is one), and at least one
// visible character (see visible). Errors: BAD_USER_INPUT on "content".
func ValidateContent(content string) error {
	return validateText(textRule{field: "content", maxChars: MaxPostLength, maxBytes: MaxPostBytes}, content)
}

// textRule is what user text of one argument must be, besides valid UTF-8
// with a visible character: at most maxChars user-perceived characters and
// maxBytes bytes, and on one line (no control character) when oneLine.
type textRule struct {
	field              string
	maxChars, maxBytes int
	oneLine            bool
}

// validateText checks text against the rules of post content (valid UTF-8,
// a visible character) and rule's bounds. Errors: BAD_USER_INPUT on
// rule.field; messages never quote the text.
func validateText(rule textRule, text string) error {
	f := rule.field
	if !utf8.ValidString(text) {
		return weibo.BadInput(f, "%s is not valid UTF-8", f)
	}
	if len(text) > rule.maxBytes {
		return weibo.BadInput(f, "%s must be at most %d bytes of UTF-8, got %d", f, rule.maxBytes, len(text))
	}
	if n := uniseg.GraphemeClusterCount(text); n < 1 || n > rule.maxChars {
		return weibo.BadInput(f, "%s must be 1 to %d characters, got %d", f, rule.maxChars, n)
	}
	shown := false
	for _, r := range text {
		if rule.oneLine && unicode.IsControl(r) {
			return weibo.BadInput(f, "%s must be one line, without control characters", f)
		}
		if !shown && visible(r) {
			if !rule.oneLine {
				return nil
			}
			shown = true
		}
	}
	if !shown {
		return weibo.BadInput(f, "%s must contain a visible character", f)
	}
	return nil
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
