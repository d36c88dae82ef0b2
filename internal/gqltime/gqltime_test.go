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

// TestBytesBuffer: to a bytes.Buffer MarshalTime appends after what the
// buffer holds, with or without room, and allocates nothing when it has room.
func TestBytesBuffer(t *testing.T) {
	tm := time.UnixMilli(1_583_020_800_123).UTC()
	var want bytes.Buffer
	graphql.MarshalTime(tm).MarshalGQL(&want)
	m := MarshalTime(tm)
	for _, room := range []int{0, 64} {
		b := bytes.NewBuffer(make([]byte, 0, 3+room))
		b.WriteString("[1,")
		m.MarshalGQL(b)
		if b.String() != "[1,"+want.String() {
			t.Errorf("room %d: %s, want [1,%s", room, b.String(), want.String())
		}
	}
	var b bytes.Buffer
	b.Grow(1 << 10)
	if n := testing.AllocsPerRun(100, func() {
		b.Truncate(0)
		m.MarshalGQL(&b)
	}); n != 0 {
		t.Errorf("MarshalGQL to a bytes.Buffer: %v allocations, want 0", n)
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
