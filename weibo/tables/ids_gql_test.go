package tables

import (
	"bytes"
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
		{RoleID(7), `"role:7"`},
		{DeptID(12), `"department:12"`},
		{NodeID{Kind: NodeUser, User: 22732}, `"22732"`},
		{NodeID{Kind: NodePost, Post: PostID{Author: 22732, Millis: 5}}, `"22732_5"`},
		{NodeID{Kind: NodeRole, Role: 1}, `"role:1"`},
		{NodeID{Kind: NodeDepartment, Dept: 1}, `"department:1"`},
	}
	for _, c := range cases {
		var b strings.Builder
		c.id.MarshalGQL(&b)
		if b.String() != c.want {
			t.Errorf("%T %v: MarshalGQL wrote %s, want %s", c.id, c.id, b.String(), c.want)
		}
		// To a bytes.Buffer (appended in its spare capacity) after what it
		// holds, with and without room.
		for _, room := range []int{0, 64} {
			bb := bytes.NewBuffer(make([]byte, 0, 3+room))
			bb.WriteString("[1,")
			c.id.MarshalGQL(bb)
			if want := "[1," + c.want; bb.String() != want {
				t.Errorf("%T %v: MarshalGQL to a bytes.Buffer (room %d) left %s, want %s", c.id, c.id, room, bb.String(), want)
			}
		}
		// The bytes are a JSON string holding the id's String form.
		var s string
		if err := json.Unmarshal([]byte(b.String()), &s); err != nil || s != c.id.(interface{ String() string }).String() {
			t.Errorf("%T %v: %s is not the JSON string of %q (%v)", c.id, c.id, b.String(), s, err)
		}
	}
}

// TestIDMarshalGQLAllocs: an id written to a bytes.Buffer with room
// allocates nothing (a home page writes 100).
func TestIDMarshalGQLAllocs(t *testing.T) {
	var b bytes.Buffer
	b.Grow(1 << 10)
	p := PostID{Author: 22732, Millis: 1583020800123}
	if n := testing.AllocsPerRun(100, func() {
		b.Truncate(0)
		p.MarshalGQL(&b)
	}); n != 0 {
		t.Errorf("PostID.MarshalGQL to a bytes.Buffer: %v allocations, want 0", n)
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
		{"role global", new(RoleID), "role:7", RoleID(7), ""},
		{"role int", new(RoleID), int64(7), RoleID(7), ""},
		{"role prefix only", new(RoleID), "role:", nil, `malformed role id "role:"`},
		{"role zero", new(RoleID), "role:0", nil, `malformed role id "role:0"`},
		{"role leading zero", new(RoleID), "role:07", nil, `malformed role id "role:07"`},
		{"role twice", new(RoleID), "role:role:7", nil, `malformed role id "role:role:7"`},
		{"role upper case", new(RoleID), "Role:7", nil, `malformed role id "Role:7"`},
		{"role of a department", new(RoleID), "department:7", nil, `malformed role id "department:7"`},
		{"department global", new(DeptID), "department:12", DeptID(12), ""},
		{"department of a role", new(DeptID), "role:12", nil, `malformed department id "role:12"`},
		{"department root global", new(DeptID), "department:0", nil, `malformed department id "department:0"`},
		{"node user", new(NodeID), "22732", NodeID{Kind: NodeUser, User: 22732}, ""},
		{"node user int", new(NodeID), int64(5), NodeID{Kind: NodeUser, User: 5}, ""},
		{"node post", new(NodeID), "22732_5", NodeID{Kind: NodePost, Post: PostID{Author: 22732, Millis: 5}}, ""},
		{"node role", new(NodeID), "role:1", NodeID{Kind: NodeRole, Role: 1}, ""},
		{"node department", new(NodeID), "department:1", NodeID{Kind: NodeDepartment, Dept: 1}, ""},
		{"node empty", new(NodeID), "", nil, `malformed node id ""`},
		{"node unknown type", new(NodeID), "team:1", nil, `malformed node id "team:1"`},
		{"node bad role", new(NodeID), "role:x", nil, `malformed node id "role:x"`},
		{"node bad post", new(NodeID), "1_x", nil, `malformed node id "1_x"`},
		{"node zero", new(NodeID), "0", nil, `malformed node id "0"`},
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

// TestGlobalIDsUnique checks that no two objects of any types share a
// GraphQL id: the ids of users, posts, roles and departments with the same
// numbers are all distinct, and ParseNodeID gives each back with its type.
func TestGlobalIDsUnique(t *testing.T) {
	nums := []uint64{1, 2, 3, 9, 10, 22732, 1583020800123, math.MaxInt64, math.MaxUint64}
	seen := map[string]NodeID{}
	add := func(n NodeID) {
		s := n.String()
		if prev, dup := seen[s]; dup {
			t.Errorf("id %q names both %+v and %+v", s, prev, n)
		}
		seen[s] = n
		got, err := ParseNodeID(s)
		if err != nil || got != n {
			t.Errorf("ParseNodeID(%q) = %+v, %v; want %+v", s, got, err, n)
		}
	}
	for _, a := range nums {
		add(NodeID{Kind: NodeUser, User: UserID(a)})
		add(NodeID{Kind: NodeRole, Role: RoleID(a)})
		add(NodeID{Kind: NodeDepartment, Dept: DeptID(a)})
		for _, b := range nums {
			if b <= math.MaxInt64 {
				add(NodeID{Kind: NodePost, Post: PostID{Author: UserID(a), Millis: int64(b)}})
			}
		}
	}
	if len(seen) != 3*len(nums)+len(nums)*(len(nums)-1) {
		t.Errorf("%d distinct ids", len(seen))
	}
}
