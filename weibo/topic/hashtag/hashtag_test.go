package hashtag

import (
	"slices"
	"strings"
	"testing"
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
// the text between two '#', and is returned once.
func FuzzExtract(f *testing.F) {
	for _, s := range []string{"#a#", "#a##b#", "#a#b#c#", "# x #\n#y#", "##"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got := Extract(text)
		for i, n := range got {
			if !Valid(n) || !strings.Contains(text, n) || slices.Index(got, n) != i {
				t.Fatalf("Extract(%q) = %q: %q", text, got, n)
			}
		}
	})
}
