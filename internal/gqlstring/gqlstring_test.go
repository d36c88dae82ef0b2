package gqlstring

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
)

// gqlgenQuoted is what gqlgen writes for s.
func gqlgenQuoted(s string) string {
	var b bytes.Buffer
	graphql.MarshalString(s).MarshalGQL(&b)
	return b.String()
}

// onlyWriter hides a writer's WriteString.
type onlyWriter struct{ w io.Writer }

func (o onlyWriter) Write(p []byte) (int, error) { return o.w.Write(p) }

// TestSameAsGqlgen: MarshalString writes exactly what graphql.MarshalString
// writes, to a writer with WriteString and to one without.
func TestSameAsGqlgen(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	for _, s := range []string{
		"", "plain ascii", `quote " and backslash \ and slash /`, "tab\tcr\rlf\n",
		"\x00\x01\x1f\x7f", "中文微博内容，带标点。", "emoji 😀 and U+2028\u2028 U+2029\u2029",
		"\xff\xfe invalid \xc3 utf-8 \xe4\xb8", "\xed\xa0\x80 surrogate", string(all),
		strings.Repeat("长内容\"", 100),
	} {
		want := gqlgenQuoted(s)
		var b bytes.Buffer
		MarshalString(s).MarshalGQL(&b)
		if b.String() != want {
			t.Errorf("MarshalString(%q) = %s, gqlgen's %s", s, b.String(), want)
		}
		b.Reset()
		MarshalString(s).MarshalGQL(onlyWriter{&b})
		if b.String() != want {
			t.Errorf("MarshalString(%q) to a Writer = %s, gqlgen's %s", s, b.String(), want)
		}
	}
}

// FuzzSameAsGqlgen compares MarshalString with gqlgen's on any bytes.
func FuzzSameAsGqlgen(f *testing.F) {
	for _, s := range []string{"", "a\"b\\c\n", "中文\x00", "\xff\xc3("} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var b bytes.Buffer
		MarshalString(s).MarshalGQL(&b)
		if want := gqlgenQuoted(s); b.String() != want {
			t.Errorf("MarshalString(%q) = %s, gqlgen's %s (valid UTF-8: %v)", s, b.String(), want, utf8.ValidString(s))
		}
	})
}

// TestUnmarshal: arguments read as gqlgen's.
func TestUnmarshal(t *testing.T) {
	for _, in := range []any{nil, "", "x", 42, int64(-7), 1.5, true, []int{1}} {
		got, err := UnmarshalString(in)
		want, werr := graphql.UnmarshalString(in)
		if got != want || (err == nil) != (werr == nil) {
			t.Errorf("UnmarshalString(%v) = %q, %v; gqlgen: %q, %v", in, got, err, want, werr)
		}
	}
}
