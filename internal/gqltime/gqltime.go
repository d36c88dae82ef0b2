// Package gqltime is the GraphQL Time scalar of the schema (an RFC 3339
// date-time) bound to time.Time: gqlgen's own (graphql.MarshalTime) with a
// marshaller that formats into one buffer. gqlgen's formats the time into a
// string and quotes it with strconv.Quote, which reads it again rune by rune;
// a home-timeline page writes 50 createdAt values.
package gqltime

import (
	"bytes"
	"io"
	"time"

	"github.com/99designs/gqlgen/graphql"
)

// MarshalTime writes t as a JSON string in RFC 3339 with nanoseconds
// (time.RFC3339Nano), in t's location, and the zero time as null: the same
// bytes as graphql.MarshalTime (RFC 3339 output is ASCII without quotes or
// backslashes, so quoting it is adding the two quotes).
func MarshalTime(t time.Time) graphql.Marshaler {
	if t.IsZero() {
		return graphql.Null
	}
	return graphql.WriterFunc(func(w io.Writer) {
		// To a bytes.Buffer (the generated executor's, package respbuf) in
		// its spare capacity (AvailableBuffer): no allocation while it has room.
		var b []byte
		if bb, ok := w.(*bytes.Buffer); ok {
			b = bb.AvailableBuffer()
		}
		b = append(b, '"')
		b = t.AppendFormat(b, time.RFC3339Nano)
		_, _ = w.Write(append(b, '"'))
	})
}

// UnmarshalTime reads a Time argument as gqlgen does (graphql.UnmarshalTime):
// RFC 3339 with or without fractional seconds, or "2006-01-02 15:04:05";
// null and "" are the zero time; anything else is an error.
func UnmarshalTime(v any) (time.Time, error) { return graphql.UnmarshalTime(v) }
