package weibo

import "github.com/weibohbase/gateway/weibo/tables"

// The id types live with the byte layout in package tables (their bytes are
// the rowkeys), with all their methods (String, MarshalGQL, UnmarshalGQL);
// these aliases keep them part of the domain's API, so callers write
// weibo.UserID and never need to import tables.
type (
	// UserID is a user's numeric id (tables.UserID).
	UserID = tables.UserID
	// PostID is a post's id: author and creation time (tables.PostID).
	PostID = tables.PostID
	// RoleID is a role's id (tables.RoleID).
	RoleID = tables.RoleID
	// DeptID is a department's id (tables.DeptID).
	DeptID = tables.DeptID
	// NodeID is a global id of any type (tables.NodeID).
	NodeID = tables.NodeID
	// NodeKind is the type of object a NodeID names (tables.NodeKind).
	NodeKind = tables.NodeKind
	// CommentID is a comment's id: its post, time and author (tables.CommentID).
	CommentID = tables.CommentID
	// TokenID is a bearer token's id, its claim jti (tables.TokenID).
	TokenID = tables.TokenID
	// NotificationID is a notification's id: its recipient, kind, subject
	// and generation (tables.NotificationID).
	NotificationID = tables.NotificationID
	// ReportID is a report's id (tables.ReportID).
	ReportID = tables.ReportID
	// MediaID is a picture's id, "media:<n>" (tables.MediaID).
	MediaID = tables.MediaID
)

// The kinds of NodeID (tables.NodeUser and friends).
const (
	// NodeUser is a user.
	NodeUser = tables.NodeUser
	// NodePost is a post.
	NodePost = tables.NodePost
	// NodeRole is a role.
	NodeRole = tables.NodeRole
	// NodeDepartment is a department.
	NodeDepartment = tables.NodeDepartment
	// NodeComment is a comment on a post.
	NodeComment = tables.NodeComment
	// NodeTopic is a topic (#话题#).
	NodeTopic = tables.NodeTopic
	// NodeNotification is a notification.
	NodeNotification = tables.NodeNotification
	// NodeReport is a report of content.
	NodeReport = tables.NodeReport
	// NodeMedia is an uploaded picture.
	NodeMedia = tables.NodeMedia
)

// RootDept is the virtual root whose children are the top-level departments.
const RootDept = tables.RootDept

// ErrInvalidID is returned by the id parsers for a malformed id.
var ErrInvalidID = tables.ErrInvalidID

// ParseUserID parses a GraphQL user ID (tables.ParseUserID).
func ParseUserID(s string) (UserID, error) { return tables.ParseUserID(s) }

// ParsePostID parses a GraphQL post ID "<author>_<ms>" (tables.ParsePostID).
func ParsePostID(s string) (PostID, error) { return tables.ParsePostID(s) }

// ParseRoleID parses a GraphQL role ID (tables.ParseRoleID).
func ParseRoleID(s string) (RoleID, error) { return tables.ParseRoleID(s) }

// ParseDeptID parses a GraphQL department ID (tables.ParseDeptID).
func ParseDeptID(s string) (DeptID, error) { return tables.ParseDeptID(s) }

// ParseTokenID parses a token's jti (tables.ParseTokenID).
func ParseTokenID(s string) (TokenID, error) { return tables.ParseTokenID(s) }

// ParseNodeID parses a global id of any type (tables.ParseNodeID).
func ParseNodeID(s string) (NodeID, error) { return tables.ParseNodeID(s) }

// ParseCommentID parses a GraphQL comment ID "comment:<post>_<ms>_<author>"
// (tables.ParseCommentID).
func ParseCommentID(s string) (CommentID, error) { return tables.ParseCommentID(s) }

// ParseMediaID parses a GraphQL media ID "media:<n>" (tables.ParseMediaID).
func ParseMediaID(s string) (MediaID, error) { return tables.ParseMediaID(s) }
