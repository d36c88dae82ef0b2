package safety

import (
	"sync"
	"unicode/utf8"
	"unsafe"

	"golang.org/x/text/cases"

	"github.com/weibohbase/gateway/weibo"
)

// HomeView is a Set made ready to judge many posts of one home-timeline
// read (or live event stream): its HOME filters with, for each, the byte
// pairs its folded phrase holds, so that a post whose text lacks one of
// them is not searched for it. Make one per read with Set.HomeView; it is
// not safe for concurrent use (it folds texts into a buffer of its own).
// A nil *HomeView hides nothing.
type HomeView struct {
	set     *Set
	filters []homeFilter
	grams   bool   // filter by byte pairs (enough filters to pay for them)
	key     uint64 // the filters' verdicts' key (verdicts.go)
	buf     []byte // a text with its ASCII capitals lowered
}

// homeFilter is a HOME filter and the byte pairs of its folded phrase.
type homeFilter struct {
	f     *filter
	pairs []uint16 // gram hashes, distinct
}

// minGramFilters is how many HOME filters make hashing a text's byte
// pairs cheaper than searching it for each phrase.
const minGramFilters = 4

// HomeView returns s made ready for Home; nil for a nil Set.
func (s *Set) HomeView() *HomeView {
	if s == nil {
		return nil
	}
	v := &HomeView{set: s}
	for i := range s.filters {
		f := &s.filters[i]
		if f.Contexts&byte(ContextHome) == 0 || f.folded == "" {
			continue
		}
		hf := homeFilter{f: f}
		for j := 0; j+1 < len(f.folded); j++ {
			if h := gram(f.folded[j], f.folded[j+1]); !contains16(hf.pairs, h) {
				hf.pairs = append(hf.pairs, h)
			}
		}
		v.filters = append(v.filters, hf)
	}
	v.grams = len(v.filters) >= minGramFilters
	v.key = filterSetKey(v.filters)
	return v
}

// Home reports how the viewer's home timeline (and its live events) shows
// the post id, a repost of root (nil for an original post), whose own text
// is text: hide when either author is blocked either way or muted
// (Set.HidesPost) or a HOME filter that hides matches the text; otherwise
// warn lists the HOME filters with WARN that match, in their order (nil
// when none). It matches as Set.Match does (Unicode case folding,
// wholeWord for Latin phrases), on the post's own text only (a repost's
// comment, not its root's); text must be the post id's (a post's text
// never changes: the filters' verdict on it is remembered, verdicts.go).
//
// It allocates nothing for a post it shows without a warning, unless the
// text holds runes that folding changes.
func (v *HomeView) Home(id weibo.PostID, root *weibo.PostID, text string) (hide bool, warn []FilterResult) {
	if v == nil {
		return false, nil
	}
	if v.set.HidesPost(id, root) {
		return true, nil
	}
	if len(v.filters) == 0 {
		return false, nil
	}
	k := verdictKey{filters: v.key, post: id}
	if d, ok := verdicts.get(k); ok {
		return d.hide, d.warn
	}
	hide, warn = v.match(text)
	verdicts.put(k, verdict{hide: hide, warn: warn})
	return hide, warn
}

// match is Home's verdict of the filters on text.
func (v *HomeView) match(text string) (hide bool, warn []FilterResult) {
	var have [4096 / 64]uint64 // the folded text's byte pairs, by gram
	folded := v.fold(text, &have)
	for i := range v.filters {
		hf := &v.filters[i]
		if v.grams && !hasAll(&have, hf.pairs) || !hf.f.matches(folded) {
			continue
		}
		if Action(hf.f.Action) == Hide {
			return true, nil
		}
		warn = append(warn, FilterResult{Phrase: hf.f.Phrase, Action: Warn})
	}
	return false, warn
}

// fold returns Fold(text) and, when v.grams, adds its byte pairs to have:
// in one pass over text when every rune but ASCII capitals folds to
// itself (most Chinese text), the capitals lowered into v.buf (the string
// returned then lives until the next call); otherwise Fold, then a pass
// over its result.
func (v *HomeView) fold(text string, have *[4096 / 64]uint64) string {
	stableOnce.Do(makeStable)
	upper := false
	var prev byte
	for i := 0; i < len(text); {
		c := text[i]
		n := 1
		switch {
		case c < utf8.RuneSelf:
			if 'A' <= c && c <= 'Z' {
				upper, c = true, c+'a'-'A'
			}
		case c&0xF0 == 0xE0 && i+2 < len(text): // three bytes: the BMP above U+07FF (CJK)
			c1, c2 := text[i+1], text[i+2]
			r := rune(c&0x0F)<<12 | rune(c1&0x3F)<<6 | rune(c2&0x3F)
			if c1&0xC0 != 0x80 || c2&0xC0 != 0x80 || r < 0x800 || stableBMP[r>>6]&(1<<(r&63)) == 0 {
				return v.foldSlow(text, have)
			}
			n = 3
		default:
			r, w := utf8.DecodeRuneInString(text[i:])
			if r == utf8.RuneError || !stable(r) {
				return v.foldSlow(text, have)
			}
			n = w
		}
		if v.grams {
			if i > 0 {
				h := gram(prev, c)
				have[h>>6] |= 1 << (h & 63)
			}
			for k := 1; k < n; k++ {
				h := gram(text[i+k-1], text[i+k])
				have[h>>6] |= 1 << (h & 63)
			}
			prev = text[i+n-1]
			if n == 1 {
				prev = c
			}
		}
		i += n
	}
	if !upper {
		return text
	}
	v.buf = append(v.buf[:0], text...)
	for i, c := range v.buf {
		if 'A' <= c && c <= 'Z' {
			v.buf[i] = c + 'a' - 'A'
		}
	}
	return unsafe.String(unsafe.SliceData(v.buf), len(v.buf))
}

// foldSlow is fold for a text with runes that folding changes.
func (v *HomeView) foldSlow(text string, have *[4096 / 64]uint64) string {
	folded := Fold(text)
	if v.grams {
		clear(have[:])
		for j := 0; j+1 < len(folded); j++ {
			h := gram(folded[j], folded[j+1])
			have[h>>6] |= 1 << (h & 63)
		}
	}
	return folded
}

// gram hashes the byte pair a, b into 0…4095.
func gram(a, b byte) uint16 { return uint16((uint32(a)<<8 | uint32(b)) * 0x9E3779B1 >> 20) }

// hasAll reports whether every gram of pairs is in have.
func hasAll(have *[4096 / 64]uint64, pairs []uint16) bool {
	for _, h := range pairs {
		if have[h>>6]&(1<<(h&63)) == 0 {
			return false
		}
	}
	return true
}

func contains16(s []uint16, v uint16) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// stable reports whether Fold leaves the rune r (not ASCII) as it is: a
// table of the BMP, made on first use; outside it, emoji and pictographs.
func stable(r rune) bool {
	if r > 0xFFFF {
		return 0x1F300 <= r && r <= 0x1FAFF
	}
	stableOnce.Do(makeStable)
	return stableBMP[r>>6]&(1<<(r&63)) != 0
}

var (
	stableOnce sync.Once
	stableBMP  [0x10000 / 64]uint64 // bit r: Fold(string(r)) == string(r)
)

// makeStable fills stableBMP: the runes above ASCII, but surrogates, that
// folding's own span check passes unchanged.
func makeStable() {
	c := cases.Fold()
	var buf [utf8.UTFMax]byte
	for r := rune(utf8.RuneSelf); r <= 0xFFFF; r++ {
		if 0xD800 <= r && r <= 0xDFFF {
			continue
		}
		b := utf8.AppendRune(buf[:0], r)
		if n, err := c.Span(b, true); err == nil && n == len(b) {
			stableBMP[r>>6] |= 1 << (r & 63)
		}
	}
}
