package feed

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/weibohbase/gateway/weibo"
)

func TestValidateContent(t *testing.T) {
	family := "\U0001F468\u200D\U0001F469\u200D\U0001F467\u200D\U0001F466" // 7 code points, 25 bytes, one character
	tests := []struct {
		name    string
		content string
		ok      bool
	}{
		{"ascii", "hello", true},
		{"chinese", "你好，微博", true},
		{"10,000 letters", strings.Repeat("a", MaxPostLength), true},
		{"10,001 letters", strings.Repeat("a", MaxPostLength+1), false},
		{"2,500 family emoji are 2,500 characters", strings.Repeat(family, 2500), true},
		{"10,000 emoji of 4 bytes", strings.Repeat("😀", MaxPostLength), true},
		{"10,000 letters with a combining accent", strings.Repeat("e\u0301", MaxPostLength), true},
		{"10,001 letters with a combining accent", strings.Repeat("e\u0301", MaxPostLength+1), false},
		{"over the byte cap in fewer characters", strings.Repeat(family, 3000), false},
		{"a visible character among invisible ones", "\u200b\u00a0x\ufeff", true},
		{"empty", "", false},
		{"white space", " \t\n\u3000", false},
		{"NULs", "\x00\x00\x00", false},
		{"zero-width spaces", "\u200b\u200b", false},
		{"byte order mark", "\ufeff", false},
		{"zero-width joiners", "\u200d\u2060", false},
		{"hangul filler", "\u3164\u3164", false},
		{"braille blank", "\u2800", false},
		{"combining marks alone", "\u0301\u0302", false},
		{"variation selectors", "\ufe0f\ufe0e", false},
		{"invalid UTF-8", "ok \xff\xfe", false},
		{"a lone surrogate (as WTF-8)", "\xed\xa0\x80", false},
		{"one emoji", "🙂", true},
		{"one digit", "7", true},
		{"one punctuation mark", "。", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateContent(tt.content)
			if (err == nil) != tt.ok {
				t.Fatalf("validateContent = %v, want ok %v", err, tt.ok)
			}
			if err != nil {
				if weibo.CodeOf(err) != weibo.CodeBadUserInput {
					t.Errorf("code %q, want BAD_USER_INPUT", weibo.CodeOf(err))
				}
				if msg := err.Error(); len(msg) > 120 {
					t.Errorf("message quotes the content or is long: %q", msg)
				}
			}
		})
	}
}

func TestExcerpt(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"", `""`},
		{"short", `"short"`},
		{strings.Repeat("x", 32), `"` + strings.Repeat("x", 32) + `"`},
		{strings.Repeat("x", 33), `"` + strings.Repeat("x", 32) + `"… (33 bytes)`},
		{strings.Repeat("微", 40), `"` + strings.Repeat("微", 10) + `"… (120 bytes)`},
		{strings.Repeat("\xc5", 40), `"` + strings.Repeat(`\xc5`, 32) + `"… (40 bytes)`},
		{"a\xffb", `"a\xffb"`},
		{"quote\"d", `"quote\"d"`},
	}
	for _, tt := range tests {
		if got := weibo.Excerpt(tt.in); got != tt.want {
			t.Errorf("Excerpt(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
	if got := weibo.Excerpt(strings.Repeat("A", 1<<20)); len(got) > 64 || !utf8.ValidString(got) {
		t.Errorf("Excerpt of 1 MiB = %q (%d bytes)", got, len(got))
	}
}
