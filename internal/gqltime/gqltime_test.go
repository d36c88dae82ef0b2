package gqltime

import (
	"bytes"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
)

// TestSameAsGqlgen: MarshalTime writes exactly what graphql.MarshalTime writes.
func TestSameAsGqlgen(t *testing.T) {
	shanghai := time.FixedZone("CST", 8*3600)
	for _, tc := range []struct {
		name string
		t    time.Time
	}{
		{"zero", time.Time{}},
		{"utc seconds", time.Date(2020, 3, 1, 0, 0, 0, 0, time.UTC)},
		{"utc millis", time.UnixMilli(1_583_020_800_123).UTC()},
		{"nanos", time.Date(2019, 12, 31, 23, 59, 59, 999_999_999, time.UTC)},
		{"trailing zeros", time.Date(2019, 12, 31, 23, 59, 59, 120_000_000, time.UTC)},
		{"offset", time.Date(2020, 3, 1, 8, 0, 0, 0, shanghai)},
		{"local", time.UnixMilli(1_583_020_800_000)},
		{"year 1", time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC)},
		{"year 9999", time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)},
		{"year 10000", time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"negative year", time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got, want bytes.Buffer
			MarshalTime(tc.t).MarshalGQL(&got)
			graphql.MarshalTime(tc.t).MarshalGQL(&want)
			if got.String() != want.String() {
				t.Errorf("MarshalTime(%v) = %s, gqlgen's %s", tc.t, got.String(), want.String())
			}
		})
	}
}

// TestUnmarshal: arguments parse as gqlgen's.
func TestUnmarshal(t *testing.T) {
	for _, in := range []any{nil, "", "2020-03-01T00:00:00+08:00", "2020-03-01T00:00:00.5Z", "2020-03-01 00:00:00", "yesterday", 42} {
		got, err := UnmarshalTime(in)
		want, werr := graphql.UnmarshalTime(in)
		if !got.Equal(want) || (err == nil) != (werr == nil) {
			t.Errorf("UnmarshalTime(%v) = %v, %v; gqlgen: %v, %v", in, got, err, want, werr)
		}
	}
}
