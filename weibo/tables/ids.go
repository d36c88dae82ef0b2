package tables

import (
	"cmp"
	"encoding"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"

	"github.com/weibohbase/gateway/weibo/topic/hashtag"
)

// The id types. In GraphQL every id is a string, unique across types (see
// RoleIDPrefix); in rowkeys and qualifiers the numeric ids are 8 bytes
// big-endian, so byte order equals numeric order.

// ErrInvalidID is returned by the id parsers for a malformed id.
var ErrInvalidID = errors.New("malformed id")

// UserID is a user's numeric id. In GraphQL it is the decimal string
// ("22732"); in rowkeys it is 8 bytes big-endian.
type UserID uint64

// String returns the decimal form used as the GraphQL ID.
func (id UserID) String() string { return strconv.FormatUint(uint64(id), 10) }

// AppendText appends String's form to b (encoding.TextAppender); it never
// fails.
func (id UserID) AppendText(b []byte) ([]byte, error) {
	return strconv.AppendUint(b, uint64(id), 10), nil
}

// ParseUserID parses a GraphQL user ID: a decimal string of 1 to 20 digits
// with no sign or leading zeros, not 0. It returns ErrInvalidID for
// anything else.
func ParseUserID(s string) (UserID, error) {
	n, err := parseID(s)
	return UserID(n), err
}

// parseID parses the decimal shared by user, role and department ids.
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
func (p PostID) String() string { return textOf(p) }

// Compare orders post ids by author, then time: -1, 0 or +1 as p is
// before, equal to or after q.
func (p PostID) Compare(q PostID) int {
	return cmp.Or(cmp.Compare(p.Author, q.Author), cmp.Compare(p.Millis, q.Millis))
}

// AppendText appends String's form to b (encoding.TextAppender); it never
// fails.
func (p PostID) AppendText(b []byte) ([]byte, error) {
	b = strconv.AppendUint(b, uint64(p.Author), 10)
	b = append(b, '_')
	return strconv.AppendInt(b, p.Millis, 10), nil
}

// ParsePostID parses "<author>_<ms>" (author as ParseUserID, ms a
// non-negative decimal without leading zeros or sign: the form String
// gives); it returns ErrInvalidID when malformed.
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
	if err != nil || m < 0 || strconv.FormatInt(m, 10) != ms {
		// Only the canonical decimal: one post, one id ("1_05" and "1_+5"
		// are not "1_5").
		return PostID{}, ErrInvalidID
	}
	return PostID{Author: a, Millis: m}, nil
}

// Global ids (Relay's Global Object Identification): the GraphQL id of
// every object is unique across types. A user's is the bare decimal
// ("22732"), a post's "<author>_<ms>" ("22732_1583020800123"), a role's
// RoleIDPrefix and the decimal ("role:3"), a department's DeptIDPrefix and
// the decimal ("department:2"), a comment's CommentIDPrefix and its post,
// time and author ("comment:2_1583020800123_1583020900000_7"): digits
// only, digits around '_', and a lower-case type name before ':' never
// meet. ParseNodeID tells them apart.
const (
	// RoleIDPrefix starts the GraphQL id of a role.
	RoleIDPrefix = "role:"
	// DeptIDPrefix starts the GraphQL id of a department.
	DeptIDPrefix = "department:"
)

// RoleID is a role's id, allocated from the sequence of weibo:roles. In
// GraphQL it is "role:<decimal>"; in rowkeys and qualifiers 8 bytes
// big-endian.
type RoleID uint64

// String returns the GraphQL ID, e.g. "role:3".
func (id RoleID) String() string { return textOf(id) }

// AppendText appends String's form to b (encoding.TextAppender); it never
// fails.
func (id RoleID) AppendText(b []byte) ([]byte, error) {
	return strconv.AppendUint(append(b, RoleIDPrefix...), uint64(id), 10), nil
}

// ParseRoleID parses a GraphQL role ID: "role:<n>", n decimal (1 to 20
// digits, no sign or leading zeros, not 0). The bare "<n>" of the ids
// before global ids is still accepted (deprecated). It returns ErrInvalidID
// for anything else.
func ParseRoleID(s string) (RoleID, error) {
	n, err := parseID(strings.TrimPrefix(s, RoleIDPrefix))
	return RoleID(n), err
}

// DeptID is a department's id, allocated from the sequence of
// weibo:departments. In GraphQL it is "department:<decimal>"; in rowkeys 8
// bytes big-endian. RootDept (0) is the virtual root whose children are the
// top-level departments.
type DeptID uint64

// String returns the GraphQL ID, e.g. "department:2".
func (id DeptID) String() string { return textOf(id) }

// AppendText appends String's form to b (encoding.TextAppender); it never
// fails.
func (id DeptID) AppendText(b []byte) ([]byte, error) {
	return strconv.AppendUint(append(b, DeptIDPrefix...), uint64(id), 10), nil
}

// ParseDeptID parses a GraphQL department ID: "department:<n>", n decimal
// (1 to 20 digits, no sign or leading zeros, not 0). The bare "<n>" of the
// ids before global ids is still accepted (deprecated). It returns
// ErrInvalidID for anything else.
func ParseDeptID(s string) (DeptID, error) {
	n, err := parseID(strings.TrimPrefix(s, DeptIDPrefix))
	return DeptID(n), err
}

// RootDept is the virtual root: the parent of the top-level departments.
// It has child rows (DeptChildKey(RootDept, d)) but never a department row.
const RootDept DeptID = 0

// NodeKind is the type of object a global id names.
type NodeKind uint8

// The kinds of NodeID.
const (
	// NodeUser is a user: NodeID.User is set.
	NodeUser NodeKind = iota + 1
	// NodePost is a post: NodeID.Post is set.
	NodePost
	// NodeRole is a role: NodeID.Role is set.
	NodeRole
	// NodeDepartment is a department: NodeID.Dept is set.
	NodeDepartment
	// NodeComment is a comment on a post: NodeID.Comment is set.
	NodeComment
	// NodeTopic is a topic (#话题#): NodeID.Topic is set.
	NodeTopic
	// NodeNotification is a notification: NodeID.Notification is set.
	NodeNotification
	// NodeReport is a report of content: NodeID.Report is set.
	NodeReport
	// NodeMedia is an uploaded picture: NodeID.Media is set.
	NodeMedia
)

// TopicIDPrefix starts the GraphQL id of a topic: "topic:<name>", the name
// as it is (package weibo/topic's rule: 1 to 64 code points).
const TopicIDPrefix = "topic:"

// NodeID is a parsed global id (the argument of Query.node and
// Query.nodes): Kind says which one of the other fields holds the id.
type NodeID struct {
	// Kind is the type of the object.
	Kind NodeKind
	// User is the id of a NodeUser.
	User UserID
	// Post is the id of a NodePost.
	Post PostID
	// Role is the id of a NodeRole.
	Role RoleID
	// Dept is the id of a NodeDepartment.
	Dept DeptID
	// Comment is the id of a NodeComment.
	Comment CommentID
	// Topic is the name of a NodeTopic.
	Topic string
	// Notification is the id of a NodeNotification.
	Notification NotificationID
	// Report is the id of a NodeReport.
	Report ReportID
	// Media is the id of a NodeMedia.
	Media MediaID
}

// String returns the global id: the String of the id Kind names.
func (n NodeID) String() string { return textOf(n) }

// AppendText appends String's form to b (encoding.TextAppender): the
// AppendText of the id Kind names, nothing for an unknown Kind; it never
// fails.
func (n NodeID) AppendText(b []byte) ([]byte, error) {
	switch n.Kind {
	case NodeUser:
		return n.User.AppendText(b)
	case NodePost:
		return n.Post.AppendText(b)
	case NodeRole:
		return n.Role.AppendText(b)
	case NodeDepartment:
		return n.Dept.AppendText(b)
	case NodeComment:
		return n.Comment.AppendText(b)
	case NodeTopic:
		return append(append(b, TopicIDPrefix...), n.Topic...), nil
	case NodeNotification:
		return n.Notification.AppendText(b)
	case NodeReport:
		return n.Report.AppendText(b)
	case NodeMedia:
		return n.Media.AppendText(b)
	}
	return b, nil
}

// ParseNodeID parses a global id of any type, strictly: "role:<n>",
// "department:<n>" (the bare decimal is a user here),
// "comment:<post>_<ms>_<author>", "topic:<name>" (a name by the topic
// rule, package weibo/topic), "<author>_<ms>" a post, "<n>" a user. It returns ErrInvalidID for anything else.
// "department:<n>" (the bare decimal is a user here) and
// "comment:<post>_<ms>_<author>", "notification:<...>" (ParseNotificationID), "report:<n>", "media:<n>", "<author>_<ms>" a post, "<n>" a user. It returns ErrInvalidID for anything else.
func ParseNodeID(s string) (NodeID, error) {
	var (
		n   NodeID
		err error
	)
	switch {
	case strings.HasPrefix(s, RoleIDPrefix):
		n.Kind = NodeRole
		n.Role, err = ParseRoleID(s)
	case strings.HasPrefix(s, DeptIDPrefix):
		n.Kind = NodeDepartment
		n.Dept, err = ParseDeptID(s)
	case strings.HasPrefix(s, CommentIDPrefix):
		n.Kind = NodeComment
		n.Comment, err = ParseCommentID(s)
	case strings.HasPrefix(s, TopicIDPrefix):
		n.Kind, n.Topic = NodeTopic, s[len(TopicIDPrefix):]
		if !hashtag.Valid(n.Topic) {
			err = ErrInvalidID
		}
	case strings.HasPrefix(s, NotificationIDPrefix):
		n.Kind = NodeNotification
		n.Notification, err = ParseNotificationID(s)
	case strings.HasPrefix(s, ReportIDPrefix):
		n.Kind = NodeReport
		n.Report, err = ParseReportID(s)
	case strings.HasPrefix(s, MediaIDPrefix):
		n.Kind = NodeMedia
		n.Media, err = ParseMediaID(s)
	case strings.Contains(s, "_"):
		n.Kind = NodePost
		n.Post, err = ParsePostID(s)
	default:
		n.Kind = NodeUser
		n.User, err = ParseUserID(s)
	}
	if err != nil {
		return NodeID{}, ErrInvalidID
	}
	return n, nil
}

// textOf returns id's text (its AppendText) as a string, built in a stack
// buffer.
func textOf[T encoding.TextAppender](id T) string {
	var b [48]byte
	t, _ := id.AppendText(b[:0])
	return string(t)
}

// TokenIDLen is the length of a token id in bytes.
const TokenIDLen = 16

// TokenID is a bearer token's id (its JWT claim jti): 16 random bytes,
// written in a token as 22 characters of unpadded base64url. An ended
// token's record in weibo:users is keyed by these bytes (EndedTokenQualifier).
type TokenID [TokenIDLen]byte

// String returns the id as a token carries it: unpadded base64url.
func (id TokenID) String() string { return base64.RawURLEncoding.EncodeToString(id[:]) }

// ParseTokenID parses the jti of a token (unpadded base64url of 16 bytes);
// anything else is ErrInvalidID.
func ParseTokenID(s string) (TokenID, error) {
	var id TokenID
	if base64.RawURLEncoding.DecodedLen(len(s)) != TokenIDLen {
		return id, ErrInvalidID
	}
	// Strict: one id has one spelling (no stray bits in the last character).
	if n, err := base64.RawURLEncoding.Strict().Decode(id[:], []byte(s)); err != nil || n != TokenIDLen {
		return TokenID{}, ErrInvalidID
	}
	return id, nil
}
