package weibo

import "time"

// User is a user as stored in weibo:users. A User built from a post's
// denormalized author name has only ID and Username (Complete false); the
// API layer loads the rest through a batched read when asked for it.
type User struct {
	// ID is the user's id.
	ID UserID
	// Username is the name chosen at registration ("u<id>" for seeded users).
	Username string
	// CreatedAt is the registration (or import) time.
	CreatedAt time.Time
	// FollowCount, FanCount and PostCount are the counters of family c.
	FollowCount, FanCount, PostCount int64
	// DisplayName is the name the user chose to show (1 to 30
	// characters), "" when not set.
	DisplayName string
	// Bio is the user's self-description (at most 160 characters), ""
	// when not set.
	Bio string
	// TokenGeneration is the users row's token generation: tokens carry the
	// generation they were issued at and are good only while it is the
	// row's (changePassword and logoutEverywhere move it on).
	TokenGeneration int64
	// UnreadNotifications is the user's unread notification count (the
	// kept counter of family c; the API shows it to the user only).
	UnreadNotifications int64
	// BlockCount is the number of users the user blocks (the kept
	// counter of family c; the API shows it to the user only).
	BlockCount int64
	// LoginName is the login name a provisioning client gave (SCIM
	// userName, up to 128 printable characters), "" when the user logs
	// in with the username only.
	LoginName string
	// ExternalID is the provisioning client's id of the user (SCIM
	// externalId, case exact), "" when none.
	ExternalID string
	// ProvisionedBy is the name of the provisioning client that created
	// the user or first changed it through SCIM, "" for a user SCIM never
	// touched.
	ProvisionedBy string
	// Closed is true when a provisioning client closed the account (SCIM
	// DELETE): it is suspended for good.
	Closed bool
	// Complete is true when every field above was read from the users row.
	Complete bool
}

// NodeID returns u's global id.
func (u *User) NodeID() NodeID { return NodeID{Kind: NodeUser, User: u.ID} }

// UserEdge is one edge of a UserConnection.
type UserEdge struct {
	// User is the other user (only the id; load the rest in a batch).
	User UserID
	// Cursor is the edge's opaque cursor.
	Cursor string
}

// UserConnection is one page of a list of users: follows, fans or a
// department's members, in user-id order.
type UserConnection struct {
	// Edges are the page's edges in user-id order.
	Edges []UserEdge
	// PageInfo is the Relay page info.
	PageInfo PageInfo
	// TotalCount is the length of the whole list from the owner's kept
	// counter (followCount or fanCount). The GraphQL layer fills it in when
	// a query asks for it; the domain leaves it 0.
	TotalCount int
}

// NewUserEdge makes the UserEdge of a user id (for paging.Read).
func NewUserEdge(uid *UserID, cursor string) UserEdge { return UserEdge{User: *uid, Cursor: cursor} }
