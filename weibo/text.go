package weibo

import (
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/rivo/uniseg"
	"golang.org/x/text/unicode/norm"
	"golang.org/x/text/unicode/runenames"
)

// TextRule is what user text of one argument must be, besides valid UTF-8
// with a visible character: at most MaxChars user-perceived characters
// (extended grapheme clusters, as github.com/rivo/uniseg counts them: a
// family emoji or a letter with its accents is one) and MaxBytes bytes,
// and on one line (no control character) when OneLine. Field names the
// argument in errors. Plain is the rule of a name or a bio, texts that
// speak for a user: no bidirectional control and no default-ignorable code
// point (Unicode UAX #9 and UAX #44; UTS #39's identifier rules as a
// guide), so "admin" followed by a right-to-left override and a zero-width
// space cannot pass for "admin". Inside an emoji sequence (a grapheme
// cluster that starts with a symbol) the zero-width joiner and the emoji
// variation selectors are allowed: they join and style emoji (👨‍👩‍👧, ❤️).
type TextRule struct {
	Field              string
	MaxChars, MaxBytes int
	OneLine            bool
	Plain              bool
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
	if rule.Plain {
		if err := checkPlain(f, text); err != nil {
			return err
		}
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

// NormalizeText returns text in Unicode Normalization Form C, the form
// names and bios are stored in, so that two spellings of one name (é as
// one code point or as e and a combining accent) are the same bytes.
// Invalid UTF-8 is returned as it is, for ValidateText to refuse.
func NormalizeText(text string) string {
	if !utf8.ValidString(text) {
		return text
	}
	return norm.NFC.String(text)
}

// checkPlain refuses the bidirectional controls and default-ignorable code
// points of text (TextRule.Plain), naming the first one found.
func checkPlain(field, text string) error {
	g := uniseg.NewGraphemes(text)
	for g.Next() {
		cluster := g.Runes()
		emoji := unicode.Is(unicode.So, cluster[0])
		for _, r := range cluster {
			why := ""
			switch {
			case unicode.Is(unicode.Bidi_Control, r):
				why = "a bidirectional control"
			case emoji && (r == '\u200d' || r == '\ufe0e' || r == '\ufe0f'):
				// Joins or styles the emoji this cluster is.
			case defaultIgnorable(r):
				why = "an invisible (default-ignorable) character"
			}
			if why != "" {
				return BadInput(field, "%s must not contain %s, %s", field, runeName(r), why)
			}
		}
	}
	return nil
}

// defaultIgnorable reports whether r has Unicode's derived property
// Default_Ignorable_Code_Point (DerivedCoreProperties.txt): the
// Other_Default_Ignorable_Code_Point ones, format characters (Cf),
// variation selectors, less white space, the interlinear annotation
// characters U+FFF9..U+FFFB, the Egyptian hieroglyph format controls and
// the prepended concatenation marks, which show.
func defaultIgnorable(r rune) bool {
	switch {
	case unicode.Is(unicode.White_Space, r),
		r >= 0xFFF9 && r <= 0xFFFB,
		r >= 0x13430 && r <= 0x1343F,
		unicode.Is(unicode.Prepended_Concatenation_Mark, r):
		return false
	}
	return unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) ||
		unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Variation_Selector, r)
}

// runeName names r for an error message: "U+202E RIGHT-TO-LEFT OVERRIDE".
func runeName(r rune) string {
	if n := runenames.Name(r); n != "" {
		return fmt.Sprintf("U+%04X %s", r, n)
	}
	return fmt.Sprintf("U+%04X", r)
}
