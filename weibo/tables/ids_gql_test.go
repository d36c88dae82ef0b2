package tables

import (
	"encoding/json"
	"errors"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// gqlID is an id type as gqlgen sees it (graphql.Marshaler and
// graphql.Unmarshaler on the pointer).
type gqlID interface {
	MarshalGQL(w io.Writer)
	UnmarshalGQL(v any) error
}

func TestIDMarshalGQL(t *testing.T) {
	cases := []struct {
		id   interface{ MarshalGQL(io.Writer) }
		want string
	}{
		{UserID(22732), `"22732"`},
		{UserID(math.MaxUint64), `"18446744073709551615"`},
		{PostID{Author: 22732, Millis: 1583020800123}, `"22732_1583020800123"`},
		{PostID{Author: 1, Millis: 0}, `"1_0"`},
		{PostID{Author: math.MaxUint64, Millis: math.MaxInt64}, `"18446744073709551615_9223372036854775807"`},
		{RoleID(7), `"7"`},
		{DeptID(12), `"12"`},
	}
	for _, c := range cases {
		var b strings.Builder
		c.id.MarshalGQL(&b)
		if b.String() != c.want {
			t.Errorf("%T %v: MarshalGQL wrote %s, want %s", c.id, c.id, b.String(), c.want)
		}
		// The bytes are a JSON string holding the id's String form.
		var s string
		if err := json.Unmarshal([]byte(b.String()), &s); err != nil || s != c.id.(interface{ String() string }).String() {
			t.Errorf("%T %v: %s is not the JSON string of %q (%v)", c.id, c.id, b.String(), s, err)
		}
	}
}

func TestIDUnmarshalGQL(t *testing.T) {
	long := strings.Repeat("1", 100)
	cases := []struct {
		name  string
		dst   gqlID
		input any
		want  any    // the id, when valid
		err   string // the error message, when not
	}{
		{"user", new(UserID), "22732", UserID(22732), ""},
		{"user max", new(UserID), "18446744073709551615", UserID(math.MaxUint64), ""},
		{"user json.Number", new(UserID), json.Number("5"), UserID(5), ""},
		{"user int64", new(UserID), int64(5), UserID(5), ""},
		{"user int", new(UserID), 5, UserID(5), ""},
		{"user zero", new(UserID), "0", nil, `malformed user id "0"`},
		{"user negative", new(UserID), "-1", nil, `malformed user id "-1"`},
		{"user leading zero", new(UserID), "012", nil, `malformed user id "012"`},
		{"user overflow", new(UserID), "18446744073709551616", nil, `malformed user id "18446744073709551616"`},
		{"user empty", new(UserID), "", nil, `malformed user id ""`},
		{"user long", new(UserID), long, nil, `malformed user id "` + long[:64] + `…"`},
		{"user bool", new(UserID), true, nil, "malformed user id: got bool, want a string: malformed id"},
		{"user nil", new(UserID), nil, nil, "malformed user id: got <nil>, want a string: malformed id"},
		{"post", new(PostID), "22732_1583020800123", PostID{Author: 22732, Millis: 1583020800123}, ""},
		{"post no author", new(PostID), "_12", nil, `malformed post id "_12"`},
		{"post no millis", new(PostID), "12_", nil, `malformed post id "12_"`},
		{"post negative millis", new(PostID), "12_-1", nil, `malformed post id "12_-1"`},
		{"post no separator", new(PostID), "12", nil, `malformed post id "12"`},
		{"post int", new(PostID), 12, nil, `malformed post id "12"`},
		{"role", new(RoleID), "7", RoleID(7), ""},
		{"role malformed", new(RoleID), "r7", nil, `malformed role id "r7"`},
		{"department", new(DeptID), "12", DeptID(12), ""},
		{"department root", new(DeptID), "0", nil, `malformed department id "0"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.dst.UnmarshalGQL(c.input)
			if c.err != "" {
				if err == nil {
					t.Fatalf("UnmarshalGQL(%#v) = nil, want %q", c.input, c.err)
				}
				if err.Error() != c.err || !errors.Is(err, ErrInvalidID) {
					t.Errorf("UnmarshalGQL(%#v) = %q (wraps ErrInvalidID: %v), want %q", c.input, err, errors.Is(err, ErrInvalidID), c.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("UnmarshalGQL(%#v): %v", c.input, err)
			}
			if got := reflect.ValueOf(c.dst).Elem().Interface(); got != c.want {
				t.Fatalf("UnmarshalGQL(%#v) = %v, want %v", c.input, got, c.want)
			}
			// Round trip: what MarshalGQL writes unmarshals to the same id.
			var b strings.Builder
			c.dst.MarshalGQL(&b)
			s, err := strconv.Unquote(b.String())
			if err != nil {
				t.Fatalf("MarshalGQL wrote %s: %v", b.String(), err)
			}
			if err := c.dst.UnmarshalGQL(s); err != nil {
				t.Fatalf("UnmarshalGQL(%q) of MarshalGQL's output: %v", s, err)
			}
			if got := reflect.ValueOf(c.dst).Elem().Interface(); got != c.want {
				t.Errorf("round trip through %s gave %v, want %v", b.String(), got, c.want)
			}
		})
	}
}
