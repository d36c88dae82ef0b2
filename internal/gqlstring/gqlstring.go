// Package gqlstring is the GraphQL String scalar bound to Go's string:
// gqlgen's own (graphql.MarshalString, graphql.UnmarshalString) with a
// marshaller that reads each string once, byte by byte.
//
// gqlgen quotes a string by decoding it rune by rune and writing each run
// between escapes with io.WriteString (an interface conversion a call). It escapes exactly the runes below U+0020, '\\' and '"' — all
// ASCII — and writes every other byte as it is, invalid UTF-8 included: in
// UTF-8 no byte of a multi-byte sequence is below 0x80, and an invalid byte
// decodes to U+FFFD, so looking at bytes finds the same escapes. A
// home-timeline page quotes 150 strings, 50 of them post contents, and
// decoding their runes was most of the time spent quoting them.
package gqlstring

import (
	"io"

	"github.com/99designs/gqlgen/graphql"
)

// MarshalString writes s as a JSON string: the same bytes as
// graphql.MarshalString.
func MarshalString(s string) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) { WriteQuoted(w, s) })
}

// UnmarshalString reads a String argument as gqlgen does
// (graphql.UnmarshalString): a string, or a number or boolean in its text
// form; null is "".
func UnmarshalString(v any) (string, error) { return graphql.UnmarshalString(v) }

// needsEscape marks the bytes gqlgen escapes in a string.
var needsEscape = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['\\'], t['"'] = true, true
	return t
}()

const hex = "0123456789ABCDEF"

// WriteQuoted writes s to w between double quotes, escaped as gqlgen's
// writeQuotedString escapes it: \t \r \n \\ \" by name, other bytes below
// 0x20 as \u00XX (upper-case hex), everything else as it is.
func WriteQuoted(w io.Writer, s string) {
	sw, ok := w.(io.StringWriter)
	if !ok {
		sw = stringWriter{w}
	}
	_, _ = sw.WriteString(`"`)
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !needsEscape[c] {
			continue
		}
		_, _ = sw.WriteString(s[start:i])
		switch c {
		case '\t':
			_, _ = sw.WriteString(`\t`)
		case '\r':
			_, _ = sw.WriteString(`\r`)
		case '\n':
			_, _ = sw.WriteString(`\n`)
		case '\\':
			_, _ = sw.WriteString(`\\`)
		case '"':
			_, _ = sw.WriteString(`\"`)
		default:
			_, _ = sw.WriteString(`\u00` + hex[c>>4:c>>4+1] + hex[c&0xf:c&0xf+1])
		}
		start = i + 1
	}
	_, _ = sw.WriteString(s[start:])
	_, _ = sw.WriteString(`"`)
}

// stringWriter is an io.StringWriter over a writer that has no WriteString.
type stringWriter struct{ w io.Writer }

func (s stringWriter) WriteString(str string) (int, error) { return io.WriteString(s.w, str) }
