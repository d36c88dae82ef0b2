// Package hashtag is the topic rule (Weibo's #话题#), the contract every
// writer, importer, test and client of the gateway relies on: which topics
// a post's text has.
//
// A post's topics are the texts between a '#' and the next '#', scanning
// left to right and using each '#' once, with the white space around them
// trimmed (unicode.IsSpace), kept when 1 to MaxLen characters (Unicode
// code points) long and without a line break (LineBreak); names compare
// exactly (byte for byte, no case or width folding); a post's topics are
// distinct, in the order of their first appearance. "#a##b#" has the
// topics a and b; "#a#b#c#" has a and c ("b" sits between the second and
// the third '#', which are used by a and c); "#a" none (an unclosed '#'
// opens nothing). A post has at most MaxTopics topics, its first
// MaxTopics distinct names: the pairs after them are plain text, so that
// hashtag spam costs a write, a list and the counters no more than
// MaxTopics topics do. The rule applies to every post's content alike:
// posts, reposts' comments and the imported data set.
//
// The package imports only the standard library, so that the byte layout
// (package weibo/tables, for topic ids) and the domain share it.
package hashtag

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxLen is the longest topic name, in Unicode code points.
const MaxLen = 64

// MaxTopics is the most topics one post has: its first MaxTopics distinct
// names; later ones are plain text.
const MaxTopics = 30

// Extract returns text's topics by the rule of the package comment: names
// distinct, in order of first appearance, at most MaxTopics; nil when there
// is none. It stops scanning at the MaxTopics-th name, so its cost does not
// grow with the pairs after it.
func Extract(text string) []string {
	var out []string
	for len(out) < MaxTopics {
		open := strings.IndexByte(text, '#')
		if open < 0 {
			return out
		}
		rest := text[open+1:]
		end := strings.IndexByte(rest, '#')
		if end < 0 {
			return out
		}
		if name := strings.TrimSpace(rest[:end]); Valid(name) && !contains(out, name) {
			out = append(out, name)
		}
		text = rest[end+1:]
	}
	return out
}

// Valid reports whether name can be a topic: 1 to MaxLen code points of
// valid UTF-8, no '#', no line break, no white space at either end (the
// form Extract returns). Query arguments are checked with it.
func Valid(name string) bool {
	if name == "" || !utf8.ValidString(name) || strings.ContainsFunc(name, LineBreak) || strings.IndexByte(name, '#') >= 0 {
		return false
	}
	if n := utf8.RuneCountInString(name); n > MaxLen {
		return false
	}
	first, _ := utf8.DecodeRuneInString(name)
	last, _ := utf8.DecodeLastRuneInString(name)
	return !unicode.IsSpace(first) && !unicode.IsSpace(last)
}

// LineBreak reports whether r breaks a line: LF, VT, FF, CR, NEL (U+0085),
// LINE SEPARATOR (U+2028) or PARAGRAPH SEPARATOR (U+2029), the mandatory
// breaks of Unicode's line breaking algorithm.
func LineBreak(r rune) bool {
	switch r {
	case '\n', '\v', '\f', '\r', '\u0085', '\u2028', '\u2029':
		return true
	}
	return false
}

func contains(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}
