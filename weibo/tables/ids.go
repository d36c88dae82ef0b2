package tables

import (
	"errors"
	"strconv"
	"strings"
)

// The id types. In GraphQL every id is a string; in rowkeys and qualifiers
// the numeric ids are 8 bytes big-endian, so byte order equals numeric order.

// ErrInvalidID is returned by the id parsers for a malformed id.
var ErrInvalidID = errors.New("malformed id")

// UserID is a user's numeric id. In GraphQL it is the decimal string
// ("22732"); in rowkeys it is 8 bytes big-endian.
type UserID uint64

// String returns the decimal form used as the GraphQL ID.
func (id UserID) String() string { return strconv.FormatUint(uint64(id), 10) }

// ParseUserID parses a GraphQL user ID: a decimal string of 1 to 20 digits
// with no sign or leading zeros, not 0. It returns ErrInvalidID for
// anything else.
func ParseUserID(s string) (UserID, error) {
	n, err := parseID(s)
	return UserID(n), err
}

// parseID parses the decimal form shared by user, role and department ids.
func parseID(s string) (uint64, error) {
	if s == "" || len(s) > 20 || (len(s) > 1 && s[0] == '0') {
		return 0, ErrInvalidID
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n == 0 {
		return 0, ErrInvalidID
	}
	return n, nil
}

// PostID identifies a post: its author and its creation time in ms. In
// GraphQL it is "<author>_<createdAtMs>" (seed 004's "uid_timestamp"); in
// rowkeys it is the author's 8 bytes and the reversed time (ContentKey).
type PostID struct {
	// Author is the author's user id.
	Author UserID
	// Millis is the creation time, ms since the Unix epoch (>= 0).
	Millis int64
}

// String returns the GraphQL form "<author>_<ms>".
func (p PostID) String() string {
	return p.Author.String() + "_" + strconv.FormatInt(p.Millis, 10)
}

// ParsePostID parses "<author>_<ms>" (author as ParseUserID, ms a
// non-negative decimal); it returns ErrInvalidID when malformed.
func ParsePostID(s string) (PostID, error) {
	author, ms, ok := strings.Cut(s, "_")
	if !ok {
		return PostID{}, ErrInvalidID
	}
	a, err := ParseUserID(author)
	if err != nil {
		return PostID{}, ErrInvalidID
	}
	m, err := strconv.ParseInt(ms, 10, 64)
	if err != nil || m < 0 {
		return PostID{}, ErrInvalidID
	}
	return PostID{Author: a, Millis: m}, nil
}

// RoleID is a role's id, allocated from the sequence of weibo:roles. In
// GraphQL it is the decimal string; in rowkeys and qualifiers 8 bytes
// big-endian.
type RoleID uint64

// String returns the decimal form used as the GraphQL ID.
func (id RoleID) String() string { return strconv.FormatUint(uint64(id), 10) }

// ParseRoleID parses a GraphQL role ID (decimal, 1 to 20 digits, no sign or
// leading zeros, not 0); it returns ErrInvalidID for anything else.
func ParseRoleID(s string) (RoleID, error) {
	n, err := parseID(s)
	return RoleID(n), err
}

// DeptID is a department's id, allocated from the sequence of
// weibo:departments. In GraphQL it is the decimal string; in rowkeys 8
// bytes big-endian. RootDept (0) is the virtual root whose children are the
// top-level departments.
type DeptID uint64

// String returns the decimal form used as the GraphQL ID.
func (id DeptID) String() string { return strconv.FormatUint(uint64(id), 10) }

// ParseDeptID parses a GraphQL department ID (decimal, 1 to 20 digits, no
// sign or leading zeros, not 0); it returns ErrInvalidID for anything else.
func ParseDeptID(s string) (DeptID, error) {
	n, err := parseID(s)
	return DeptID(n), err
}

// RootDept is the virtual root: the parent of the top-level departments.
// It has child rows (DeptChildKey(RootDept, d)) but never a department row.
const RootDept DeptID = 0
