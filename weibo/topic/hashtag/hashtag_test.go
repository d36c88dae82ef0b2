package hashtag

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestExtract(t *testing.T) {
	long := strings.Repeat("话", MaxLen)
	tests := []struct {
		name string
		text string
		want []string
	}{
		{"none", "no topic here", nil},
		{"one", "#新冠肺炎#今天", []string{"新冠肺炎"}},
		{"in the middle", "看 #武汉加油# 了", []string{"武汉加油"}},
		{"two", "#a# text #b#", []string{"a", "b"}},
		{"adjacent pairs", "#a##b#", []string{"a", "b"}},
		{"each # used once", "#a#b#c#", []string{"a", "c"}},
		{"empty ##", "##", nil},
		{"empty ## then one", "## #x#", []string{"x"}},
		{"only white space", "#   #", nil},
		{"unclosed", "#abc", nil},
		{"unclosed after one", "#a# and #b", []string{"a"}},
		{"three #", "#a#b", []string{"a"}},
		{"trimmed", "#  疫情 \t#", []string{"疫情"}},
		{"ideographic space trimmed", "#\u3000抗疫\u3000#", []string{"抗疫"}},
		{"inner space kept", "# a b #", []string{"a b"}},
		{"line break", "#a\nb#", nil},
		{"line break trimmed away", "#\na\n#", []string{"a"}},
		{"CR", "#a\rb#", nil},
		{"line separator", "#a\u2028b#", nil},
		{"64 characters", "#" + long + "#", []string{long}},
		{"65 characters", "#" + long + "话#", nil},
		{"65 with spaces trimmed to 64", "# " + long + " #", []string{long}},
		{"duplicates kept once", "#a# #b# #a#", []string{"a", "b"}},
		{"exact compare", "#A# #a# #ａ#", []string{"A", "a", "ａ"}},
		{"emoji", "#🙂#", []string{"🙂"}},
		{"emoji sequence", "#👨‍👩‍👧‍👦 家#", []string{"👨‍👩‍👧‍👦 家"}},
		{"64 emoji", "#" + strings.Repeat("🙂", 64) + "#", []string{strings.Repeat("🙂", 64)}},
		{"65 emoji", "#" + strings.Repeat("🙂", 65) + "#", nil},
		{"full-width # is not a #", "＃a＃", nil},
		{"question marks (crawled emoji)", "#????# 好", []string{"????"}},
		{"a long one skipped, the next kept", "#" + long + "x# #y#", []string{"y"}},
		{"invalid pair skipped, # consumed", "#a\nb#c#", nil},
		{"empty text", "", nil},
		{"only #", "#", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Extract(tc.text); !slices.Equal(got, tc.want) {
				t.Fatalf("Extract(%q) = %q, want %q", tc.text, got, tc.want)
			}
		})
	}
}

// pairs returns "#from##from+1#…" up to #to#, and their names.
func pairs(from, to int) (string, []string) {
	var b strings.Builder
	var names []string
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "#%d#", i)
		names = append(names, strconv.Itoa(i))
	}
	return b.String(), names
}

// spam returns the longest "#1##2#…" text of at most n characters, and its
// pairs' names.
func spam(n int) (string, []string) {
	var b strings.Builder
	var names []string
	for i := 1; ; i++ {
		p := "#" + strconv.Itoa(i) + "#"
		if b.Len()+len(p) > n {
			return b.String(), names
		}
		b.WriteString(p)
		names = append(names, strconv.Itoa(i))
	}
}

// TestExtractMaxTopics checks the bound: a text's first MaxTopics distinct
// names are its topics, the pairs after them plain text.
func TestExtractMaxTopics(t *testing.T) {
	if MaxTopics != 30 {
		t.Fatalf("MaxTopics = %d, the documented bound is 30", MaxTopics)
	}
	t29, n29 := pairs(1, 29)
	t30, n30 := pairs(1, 30)
	t31, _ := pairs(1, 31)
	t100, _ := pairs(1, 100)
	long, all := spam(10000)
	if utf8.RuneCountInString(long) < 9990 || len(all) < 1800 {
		t.Fatalf("the spam text: %d characters, %d pairs", utf8.RuneCountInString(long), len(all))
	}
	// Duplicates count once: 29 names, each repeated, then the 30th and
	// 31st distinct ones.
	dup := t29 + t29 + "#x# #29# #y#"
	tests := []struct {
		name string
		text string
		want []string
	}{
		{"0", "", nil},
		{"0 pairs, # only", strings.Repeat("#", 100), nil},
		{"29", t29, n29},
		{"30", t30, n30},
		{"31: the 31st is text", t31, n30},
		{"100", t100, n30},
		{"duplicates counted once", dup, append(slices.Clone(n29), "x")},
		{"a repeated 1st does not use up the bound", strings.Repeat("#a#", 40) + "#b#", []string{"a", "b"}},
		{"invalid pairs do not count", strings.Repeat("# #", 40) + t30 + "#31#", n30},
		{"10,000 characters of #1##2#…", long, all[:30]},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Extract(tc.text)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("Extract = %q (%d), want %q (%d)", got, len(got), tc.want, len(tc.want))
			}
			if len(got) > MaxTopics {
				t.Fatalf("%d topics", len(got))
			}
		})
	}
}

func TestValid(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"a", true},
		{"新冠肺炎", true},
		{"a b", true},
		{"", false},
		{" a", false},
		{"a ", false},
		{"a\nb", false},
		{"a#b", false},
		{strings.Repeat("x", 64), true},
		{strings.Repeat("x", 65), false},
		{"\xff", false},
	}
	for _, tc := range tests {
		if got := Valid(tc.name); got != tc.ok {
			t.Errorf("Valid(%q) = %v, want %v", tc.name, got, tc.ok)
		}
	}
}

// FuzzExtract checks that every name Extract returns is Valid, appears in
// the text between two '#', and is returned once, at most MaxTopics.
func FuzzExtract(f *testing.F) {
	for _, s := range []string{"#a#", "#a##b#", "#a#b#c#", "# x #\n#y#", "##"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got := Extract(text)
		if len(got) > MaxTopics {
			t.Fatalf("Extract(%q): %d topics", text, len(got))
		}
		for i, n := range got {
			if !Valid(n) || !strings.Contains(text, n) || slices.Index(got, n) != i {
				t.Fatalf("Extract(%q) = %q: %q", text, got, n)
			}
		}
	})
}
