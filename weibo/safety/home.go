package safety

import (
	"unicode/utf8"

	"github.com/weibohbase/gateway/weibo"
)

// Home reports how the viewer's home timeline (and its live events) shows
// the post id, a repost of root (nil for an original post), whose own text
// is text: hide when either author is blocked either way or muted
// (HidesPost) or a HOME filter that hides matches the text; otherwise warn
// lists the HOME filters with WARN that match (nil when none). It matches
// as Match does (Unicode case folding, wholeWord for Latin phrases), on
// the post's own text only (a repost's comment, not its root's). A nil
// Set hides nothing.
//
// It costs no allocation for a post by an author the viewer does not hide
// when the viewer has no HOME filters, nor, with filters, for a text
// whose folding changes nothing (Chinese text and lowercase Latin).
func (s *Set) Home(id weibo.PostID, root *weibo.PostID, text string) (hide bool, warn []FilterResult) {
	if s.HidesPost(id, root) {
		return true, nil
	}
	if !s.HasFilters(ContextHome) {
		return false, nil
	}
	folded := foldFast(text)
	for i := range s.filters {
		f := &s.filters[i]
		if f.Contexts&byte(ContextHome) == 0 || !f.matches(folded) {
			continue
		}
		if Action(f.Action) == Hide {
			return true, nil
		}
		warn = append(warn, FilterResult{Phrase: f.Phrase, Action: Warn})
	}
	return false, warn
}

// foldFast is Fold(s), computed without the Unicode case tables when s
// holds only ASCII and runes that folding maps to themselves (caseless):
// s itself when it has no ASCII capital, else a copy with them lowered.
// Any other rune sends the whole text to Fold.
func foldFast(s string) string {
	upper := false
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			upper = upper || 'A' <= c && c <= 'Z'
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if !caseless(r) {
			return Fold(s)
		}
		i += n
	}
	if !upper {
		return s
	}
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// caseless reports whether r is in a block of runes that Unicode case
// folding leaves as they are and that Chinese posts are written in: CJK
// ideographs, symbols and punctuation, kana, Hangul syllables, general
// punctuation, fullwidth punctuation, digits and small letters, emoji.
// (Fullwidth capitals fold; they are not in it.)
func caseless(r rune) bool {
	switch {
	case 0x4E00 <= r && r <= 0x9FFF, // CJK unified ideographs
		0x3400 <= r && r <= 0x4DBF,   // CJK extension A
		0xF900 <= r && r <= 0xFAFF,   // CJK compatibility ideographs
		0x3000 <= r && r <= 0x30FF,   // CJK symbols and punctuation, hiragana, katakana
		0xAC00 <= r && r <= 0xD7A3,   // Hangul syllables
		0x2000 <= r && r <= 0x206F,   // general punctuation
		0xFF01 <= r && r <= 0xFF20,   // fullwidth punctuation and digits
		0xFF3B <= r && r <= 0xFF65,   // fullwidth punctuation and small letters, halfwidth punctuation
		0x1F300 <= r && r <= 0x1FAFF: // emoji and pictographs
		return r != utf8.RuneError
	}
	return false
}
