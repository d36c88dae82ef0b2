package tables

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// The id types are GraphQL ID scalars (gqlgen's graphql.Marshaler and
// graphql.Unmarshaler, listed under ID in gqlgen.yml): an output `id` field
// writes the type's String form as a JSON string, and UnmarshalGQL accepts
// exactly what the type's parser accepts. This file needs only the standard
// library and the id types' parsers.
//
// gqlgen binds every ID argument to the scalar's first model (graphql.ID, a
// string), so an argument reaches a resolver as a string; the resolvers
// parse it with UnmarshalGQL and report a failure as BAD_USER_INPUT naming
// the argument. The error of UnmarshalGQL wraps ErrInvalidID and its
// message, e.g. `malformed user id "abc"`, is meant for the API caller.

// MarshalGQL writes id as a GraphQL ID: the decimal string, e.g. "22732".
func (id UserID) MarshalGQL(w io.Writer) { writeAppended(w, id) }

// UnmarshalGQL sets id from a GraphQL ID input (a string, or an integer
// literal) in ParseUserID's form; it returns an error wrapping ErrInvalidID
// for anything else.
func (id *UserID) UnmarshalGQL(v any) error { return unmarshalID(v, "user", ParseUserID, id) }

// MarshalGQL writes p as a GraphQL ID: "<author>_<ms>", e.g. "22732_1583020800000".
func (p PostID) MarshalGQL(w io.Writer) { writeAppended(w, p) }

// UnmarshalGQL sets p from a GraphQL ID input in ParsePostID's form
// ("<author>_<ms>"); it returns an error wrapping ErrInvalidID for anything
// else.
func (p *PostID) UnmarshalGQL(v any) error { return unmarshalID(v, "post", ParsePostID, p) }

// MarshalGQL writes id as a GraphQL ID, e.g. "role:7".
func (id RoleID) MarshalGQL(w io.Writer) { writeAppended(w, id) }

// UnmarshalGQL sets id from a GraphQL ID input in ParseRoleID's form
// ("role:7", or the deprecated "7", also as an integer literal); it returns
// an error wrapping ErrInvalidID for anything else.
func (id *RoleID) UnmarshalGQL(v any) error { return unmarshalID(v, "role", ParseRoleID, id) }

// MarshalGQL writes id as a GraphQL ID, e.g. "department:12".
func (id DeptID) MarshalGQL(w io.Writer) { writeAppended(w, id) }

// UnmarshalGQL sets id from a GraphQL ID input in ParseDeptID's form
// ("department:12", or the deprecated "12", also as an integer literal); it
// returns an error wrapping ErrInvalidID for anything else.
func (id *DeptID) UnmarshalGQL(v any) error { return unmarshalID(v, "department", ParseDeptID, id) }

// MarshalGQL writes id as a GraphQL ID, e.g. "report:1663205227970560".
func (id ReportID) MarshalGQL(w io.Writer) { writeAppended(w, id) }

// UnmarshalGQL sets id from a GraphQL ID input in ParseReportID's form
// ("report:<n>"); it returns an error wrapping ErrInvalidID for anything
// else.
func (id *ReportID) UnmarshalGQL(v any) error { return unmarshalID(v, "report", ParseReportID, id) }

// MarshalGQL writes n as a GraphQL ID: the global id of its object.
func (n NodeID) MarshalGQL(w io.Writer) { writeAppended(w, n) }

// UnmarshalGQL sets n from a global id of any type (ParseNodeID: a string,
// or an integer literal for a user); it returns an error wrapping
// ErrInvalidID for anything else.
func (n *NodeID) UnmarshalGQL(v any) error { return unmarshalID(v, "node", ParseNodeID, n) }

// writeAppended writes id's text (its String form) as a JSON string, in
// one write of one buffer: an id is digits, '_', and a lower-case type name
// before ':', none of which JSON escapes, so there is no quoting pass (and
// an id on every edge of a page builds no string). To a bytes.Buffer (the
// generated executor's, package respbuf) it appends in the buffer's spare
// capacity (AvailableBuffer): no allocation while the buffer has room.
func writeAppended[T encoding.TextAppender](w io.Writer, id T) {
	var b []byte
	if bb, ok := w.(*bytes.Buffer); ok {
		b = bb.AvailableBuffer()
	}
	b = append(b, '"')
	b, _ = id.AppendText(b)
	_, _ = w.Write(append(b, '"'))
}

// unmarshalID parses the GraphQL ID input v with parse into *dst. An ID
// input arrives as a string, or from an integer literal as json.Number or
// int64 (gqlgen's decoding of variables and literals); kind ("user",
// "post", ...) names the id in the error.
func unmarshalID[T any](v any, kind string, parse func(string) (T, error), dst *T) error {
	var s string
	switch v := v.(type) {
	case string:
		s = v
	case json.Number:
		s = v.String()
	case int64:
		s = strconv.FormatInt(v, 10)
	case int:
		s = strconv.Itoa(v)
	default:
		return fmt.Errorf("malformed %s id: got %T, want a string: %w", kind, v, ErrInvalidID)
	}
	id, err := parse(s)
	if err != nil {
		return &idError{kind: kind, input: s}
	}
	*dst = id
	return nil
}

// idError is a malformed GraphQL ID input.
type idError struct{ kind, input string }

// Error says which kind of id is malformed and quotes the input, cut to 64
// bytes.
func (e *idError) Error() string {
	s := e.input
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return "malformed " + e.kind + " id \"" + s + "\""
}

// Unwrap returns ErrInvalidID, so errors.Is(err, ErrInvalidID) holds.
func (e *idError) Unwrap() error { return ErrInvalidID }
