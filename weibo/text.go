package weibo

import (
	"unicode"
	"unicode/utf8"

	"github.com/rivo/uniseg"
)

// TextRule is what user text of one argument must be, besides valid UTF-8
// with a visible character: at most MaxChars user-perceived characters
// (extended grapheme clusters, as github.com/rivo/uniseg counts them: a
// family emoji or a letter with its accents is one) and MaxBytes bytes,
// and on one line (no control character) when OneLine. Field names the
// argument in errors.
type TextRule struct {
	Field              string
	MaxChars, MaxBytes int
	OneLine            bool
}

// ValidateText checks text against the rules of post content (valid UTF-8,
// a visible character) and rule's bounds. Errors: BAD_USER_INPUT on
// rule.Field; messages never quote the text.
func ValidateText(rule TextRule, text string) error {
	f := rule.Field
	if !utf8.ValidString(text) {
		return BadInput(f, "%s is not valid UTF-8", f)
	}
	if len(text) > rule.MaxBytes {
		return BadInput(f, "%s must be at most %d bytes of UTF-8, got %d", f, rule.MaxBytes, len(text))
	}
	if n := uniseg.GraphemeClusterCount(text); n < 1 || n > rule.MaxChars {
		return BadInput(f, "%s must be 1 to %d characters, got %d", f, rule.MaxChars, n)
	}
	shown := false
	for _, r := range text {
		if rule.OneLine && unicode.IsControl(r) {
			return BadInput(f, "%s must be one line, without control characters", f)
		}
		if !shown && visible(r) {
			if !rule.OneLine {
				return nil
			}
			shown = true
		}
	}
	if !shown {
		return BadInput(f, "%s must contain a visible character", f)
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
