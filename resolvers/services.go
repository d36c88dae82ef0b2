package resolvers

import (
	"context"
	"time"

	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/audit"
	"github.com/weibohbase/gateway/weibo/comment"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/moderation/suspend"
	"github.com/weibohbase/gateway/weibo/notify"
	"github.com/weibohbase/gateway/weibo/org"
	"github.com/weibohbase/gateway/weibo/safety"
	"github.com/weibohbase/gateway/weibo/tables"
	"github.com/weibohbase/gateway/weibo/timeline"
	"github.com/weibohbase/gateway/weibo/topic"
)

// Services is what the resolvers call of the domain: one field per module
// the resolvers use, named as domain.Domain's field of that module, each an
// interface listing exactly the methods the resolvers (and the prefetches
// and the subscriptions' token check) call on it. The server fills it from
// a *domain.Domain, whose fields satisfy the interfaces; a test may fill a
// field with a fake of its own. A resolver reads r.Svc.Likes.Like(...) as
// it would on the domain. Every method keeps the domain's contract: shapes,
// units and errors are those documented on the module's method.
type Services struct {
	// UserSearch is the admin user search (domain.Domain.SearchUsers),
	// embedded so that r.Svc.SearchUsers reads as on the domain.
	UserSearch
	// Accounts is the users (domain.Domain.Accounts).
	Accounts Accounts
	// Feed is the posts (domain.Domain.Feed).
	Feed Feed
	// Follows is the follow pair (domain.Domain.Follows).
	Follows Follows
	// Timeline is the home timeline (domain.Domain.Timeline).
	Timeline Timeline
	// Notify is the notifications (domain.Domain.Notify).
	Notify Notify
	// Likes is the likes of posts (domain.Domain.Likes).
	Likes Likes
	// Comments is the comments on posts (domain.Domain.Comments).
	Comments Comments
	// Reposts is the reposts of posts (domain.Domain.Reposts).
	Reposts Reposts
	// Topics is the topics of posts (domain.Domain.Topics).
	Topics Topics
	// Org is the organisation (domain.Domain.Org).
	Org Org
	// Safety is the blocks, mutes and keyword filters
	// (domain.Domain.Safety).
	Safety Safety
	// Reports is the reports of content and the moderation queue
	// (domain.Domain.Reports).
	Reports Reports
	// Suspensions is the suspension of users (domain.Domain.Suspensions).
	Suspensions Suspensions
	// Media is the pictures: their processing and store (nil: the picture
	// fields answer UNAVAILABLE, and posts have none).
	Media Media
}

// Suspensions is the suspension of users (suspend.Service): the
// mutations, and each user's suspension from memory.
type Suspensions interface {
	Suspend(ctx context.Context, target weibo.UserID, until *time.Time, reason string) (*suspend.Suspension, error)
	Unsuspend(ctx context.Context, target weibo.UserID) error
	Of(uid weibo.UserID) *suspend.Suspension
}

// Org is what the resolvers call of the organisation: one field per part,
// named as domain.Org's field of that part.
type Org struct {
	// Roles is the roles and their assignments (domain.Org.Roles).
	Roles Roles
	// Departments is the department tree (domain.Org.Departments).
	Departments Departments
	// Members is the department memberships (domain.Org.Members).
	Members Members
	// Authz is the authorization checks (domain.Org.Authz).
	Authz Authz
	// Bulk is the bulk changes (domain.Org.Bulk).
	Bulk Bulk
	// Audit is the audit log (domain.Org.Audit).
	Audit Audit
}

// UserSearch is the admin user search (domain.Domain).
type UserSearch interface {
	SearchUsers(ctx context.Context, f domain.UserFilter, first *int, after *string) (*domain.UserSearchConnection, error)
}

// Accounts is the users: registration, login, tokens, profiles and reads
// (account.Service). ReadUserTokens serves the subscriptions' token check
// (loaders.FreshCheck); UserCount Query.users' totalCount without a filter.
type Accounts interface {
	Register(ctx context.Context, username, password string) (*weibo.User, error)
	Login(ctx context.Context, username, password string) (*weibo.User, error)
	ChangePassword(ctx context.Context, uid weibo.UserID, current, next string) (*weibo.User, error)
	UpdateProfile(ctx context.Context, uid weibo.UserID, displayName, bio *string) (*weibo.User, error)
	EndToken(ctx context.Context, uid weibo.UserID, id weibo.TokenID, expires time.Time) (all bool, gen int64, err error)
	EndAllTokens(ctx context.Context, uid weibo.UserID) (gen int64, err error)
	UserByUsername(ctx context.Context, username string) (*weibo.User, error)
	GetUsers(ctx context.Context, ids []weibo.UserID) ([]*weibo.User, error)
	ReadUserTokens(ctx context.Context, uid weibo.UserID) (_ *weibo.User, ended []weibo.TokenID, err error)
	UserCount(ctx context.Context) (int64, error)
}

// Feed is the posts: publish, delete, reads by id and a user's posts, the
// latter two as a viewer sees them (feed.Service).
type Feed interface {
	Publish(ctx context.Context, author weibo.UserID, content string, media ...weibo.MediaID) (*feed.Post, error)
	DeletePost(ctx context.Context, id weibo.PostID) (bool, error)
	GetPosts(ctx context.Context, ids []weibo.PostID) ([]*feed.Post, error)
	UserPostsFor(ctx context.Context, viewer, uid weibo.UserID, p weibo.Page) (*feed.PostConnection, error)
}

// Follows is the follow pair: follow, unfollow, the lists and the
// viewer's follows of a batch (follow.Service).
type Follows interface {
	Follow(ctx context.Context, viewer, target weibo.UserID) (*weibo.User, error)
	Unfollow(ctx context.Context, viewer, target weibo.UserID) (*weibo.User, error)
	FollowList(ctx context.Context, uid weibo.UserID, first *int, after *string) (*weibo.UserConnection, error)
	FanList(ctx context.Context, uid weibo.UserID, first *int, after *string) (*weibo.UserConnection, error)
	IsFollowing(ctx context.Context, viewer weibo.UserID, targets []weibo.UserID) ([]bool, error)
}

// Timeline is the home timeline: its pages, its live updates and the
// state of the bus they ride on (timeline.Service).
type Timeline interface {
	HomeTimeline(ctx context.Context, uid weibo.UserID, p weibo.Page, opts ...timeline.ReadOption) (*feed.PostConnection, error)
	WatchTimeline(ctx context.Context, uid weibo.UserID, interval time.Duration, poll func(busUp bool)) (<-chan *feed.Post, error)
	TimelineEvents(ctx context.Context, uid weibo.UserID, after *string) (*timeline.EventStream, error)
	BusState() (<-chan struct{}, bool)
}

// Notify is the notifications: a recipient's list, reads by id, marking
// read and live events (notify.Service).
type Notify interface {
	Notifications(ctx context.Context, uid weibo.UserID, first *int, after *string) (*notify.NotificationConnection, error)
	NotificationActors(ctx context.Context, ids []weibo.NotificationID) ([][]tables.NotifActor, error)
	MarkNotificationsRead(ctx context.Context, uid weibo.UserID, upTo *weibo.NotificationID) (int, error)
	NotificationEvents(ctx context.Context, uid weibo.UserID) (*notify.NotificationStream, error)
}

// Likes is the like of a post: like, unlike, the viewer's likes of a
// batch, a post's likers and a user's liked posts (like.Service).
type Likes interface {
	Like(ctx context.Context, viewer weibo.UserID, post weibo.PostID) (*feed.Post, error)
	Unlike(ctx context.Context, viewer weibo.UserID, post weibo.PostID) (*feed.Post, error)
	IsLiked(ctx context.Context, viewer weibo.UserID, posts []weibo.PostID) ([]bool, error)
	PostLikes(ctx context.Context, post weibo.PostID, first *int, after *string) (*weibo.UserConnection, error)
	LikedPosts(ctx context.Context, uid weibo.UserID, first *int, after *string) (*feed.PostConnection, error)
	CountLikedPosts(ctx context.Context, uid weibo.UserID) (int64, error)
}

// Comments is the comments on posts: add, delete, reads by id and a
// post's list as a viewer sees it (comment.Service).
type Comments interface {
	AddComment(ctx context.Context, author weibo.UserID, post weibo.PostID, content string, replyTo *weibo.CommentID) (*comment.Comment, error)
	DeleteComment(ctx context.Context, viewer weibo.UserID, id weibo.CommentID) (bool, error)
	VisibleComments(ctx context.Context, ids []weibo.CommentID) ([]*comment.Comment, error)
	PostCommentsFor(ctx context.Context, viewer weibo.UserID, post weibo.PostID, p weibo.Page) (*comment.CommentConnection, error)
}

// Reposts is the repost of a post: repost and a post's reposts
// (repost.Service).
type Reposts interface {
	Repost(ctx context.Context, author weibo.UserID, target weibo.PostID, comment string) (*feed.Post, error)
	Reposts(ctx context.Context, root weibo.PostID, first *int, after *string) (*feed.PostConnection, error)
}

// Topics is the topics of posts: a topic, its posts, the search by prefix,
// top and trending topics (topic.Service).
type Topics interface {
	Topic(ctx context.Context, name string) (*weibo.Topic, error)
	TopicPosts(ctx context.Context, viewer weibo.UserID, name string, p weibo.Page) (*feed.PostConnection, error)
	SearchTopics(ctx context.Context, prefix string, first *int) ([]*weibo.Topic, error)
	TopTopics(ctx context.Context, since, until time.Time, first *int) ([]*topic.TopicCount, error)
	TrendingTopics(ctx context.Context, at time.Time, window topic.TrendWindow, first *int) ([]*topic.TopicTrend, error)
}

// Roles is the roles: create, rename, delete, assign, revoke, the lists
// and a batch of users' assignments (role.Service).
type Roles interface {
	Create(ctx context.Context, name string, permissions ...org.Permission) (*org.Role, error)
	SetPermissions(ctx context.Context, rid weibo.RoleID, permissions []org.Permission) (*org.Role, error)
	Rename(ctx context.Context, rid weibo.RoleID, name string) (*org.Role, error)
	Delete(ctx context.Context, rid weibo.RoleID) (bool, error)
	Assign(ctx context.Context, uid weibo.UserID, rid weibo.RoleID, priority int) (*weibo.User, error)
	Revoke(ctx context.Context, uid weibo.UserID, rid weibo.RoleID) (*weibo.User, error)
	ByName(ctx context.Context, name string) (*org.Role, error)
	List(ctx context.Context, first *int, after *string) (*org.RoleConnection, error)
	Members(ctx context.Context, rid weibo.RoleID, first *int, after *string) (*org.RoleMemberConnection, error)
	OfUsers(ctx context.Context, uids []weibo.UserID) ([][]*org.RoleAssignment, error)
}

// Departments is the department tree: its changes, managers, members,
// pages and a batch of users' departments (department.Service).
type Departments interface {
	Create(ctx context.Context, name string, parent weibo.DeptID) (*org.Department, error)
	Rename(ctx context.Context, did weibo.DeptID, name string) (*org.Department, error)
	Move(ctx context.Context, did, parent weibo.DeptID) (*org.Department, error)
	Delete(ctx context.Context, did weibo.DeptID, cascade bool) (bool, error)
	AddManager(ctx context.Context, did weibo.DeptID, uid weibo.UserID) (*org.Department, error)
	RemoveManager(ctx context.Context, did weibo.DeptID, uid weibo.UserID) (*org.Department, error)
	Managers(ctx context.Context, did weibo.DeptID) ([]weibo.UserID, error)
	Members(ctx context.Context, did weibo.DeptID, first *int, after *string) (*weibo.UserConnection, error)
	Ancestors(ctx context.Context, d *org.Department) ([]*org.Department, error)
	Children(ctx context.Context, did weibo.DeptID, first *int, after *string) (*org.DepartmentConnection, error)
	Top(ctx context.Context, first *int, afterCur *string) (*org.DepartmentConnection, error)
	OfUsers(ctx context.Context, uids []weibo.UserID) ([]*org.Department, error)
	Managed(ctx context.Context, uids []weibo.UserID) ([][]*org.Department, error)
}

// Members is the department memberships: setting a user's department
// (membership.Service).
type Members interface {
	Set(ctx context.Context, uid weibo.UserID, did weibo.DeptID) (*weibo.User, error)
	SetGuarded(ctx context.Context, uid weibo.UserID, did weibo.DeptID, guard org.MoveGuard) (*weibo.User, error)
}

// Authz is the authorization checks: a role (@hasRole), a permission
// (@hasPermission), the rank rule (ActOn, Assignments), the permissions
// of a role changed (ManageRole), a user's standing, and the holder of
// MANAGE_DEPARTMENTS or manager of the departments or memberships changed
// (authz.Service).
type Authz interface {
	RequireRole(ctx context.Context, uid weibo.UserID, roleName string) error
	RequirePermission(ctx context.Context, viewer weibo.UserID, p org.Permission) error
	ActOn(ctx context.Context, viewer, target weibo.UserID) error
	Assignments(ctx context.Context, viewer weibo.UserID, uids []weibo.UserID, rid weibo.RoleID, priority *int) ([]error, error)
	ManageRole(ctx context.Context, viewer weibo.UserID, rid weibo.RoleID, perms org.PermSet) error
	Standing(ctx context.Context, uid weibo.UserID) (org.Standing, error)
	Departments(ctx context.Context, viewer weibo.UserID, dids ...weibo.DeptID) error
	Memberships(ctx context.Context, viewer weibo.UserID, uids []weibo.UserID, did weibo.DeptID) ([]error, error)
	Moves(ctx context.Context, viewer weibo.UserID, uids []weibo.UserID, did weibo.DeptID) ([]org.MoveDecision, error)
	Guard(viewer weibo.UserID, did weibo.DeptID, seen org.MoveDecision) org.MoveGuard
}

// Bulk is the bulk changes of roles and memberships (bulk.Service).
type Bulk interface {
	AssignRoleBy(ctx context.Context, viewer weibo.UserID, uids []weibo.UserID, rid weibo.RoleID, priority int) (*org.BulkResult, error)
	RevokeRoleBy(ctx context.Context, viewer weibo.UserID, uids []weibo.UserID, rid weibo.RoleID) (*org.BulkResult, error)
	SetDepartment(ctx context.Context, viewer weibo.UserID, uids []weibo.UserID, did weibo.DeptID) (*org.BulkResult, error)
}

// Audit is the audit log's pages (org.Recorder).
type Audit interface {
	Page(ctx context.Context, f audit.Filter, first *int, after *string) (*audit.EventConnection, error)
}

// Safety is the blocks, mutes and keyword filters of a viewer: the
// changes, the lists and the viewer's Set (safety.Service).
type Safety interface {
	Block(ctx context.Context, viewer, target weibo.UserID) (*weibo.User, error)
	Unblock(ctx context.Context, viewer, target weibo.UserID) (*weibo.User, error)
	Mute(ctx context.Context, viewer, target weibo.UserID, duration *int, notifications bool) (*weibo.User, error)
	Unmute(ctx context.Context, viewer, target weibo.UserID) (*weibo.User, error)
	CreateFilter(ctx context.Context, viewer weibo.UserID, in safety.FilterInput) (*safety.Filter, error)
	DeleteFilter(ctx context.Context, viewer weibo.UserID, id string) (bool, error)
	Filters(ctx context.Context, viewer weibo.UserID) ([]*safety.Filter, error)
	BlockedUsers(ctx context.Context, viewer weibo.UserID, first *int, after *string) (*safety.BlockConnection, error)
	MutedUsers(ctx context.Context, viewer weibo.UserID, first *int, after *string) (*safety.MuteConnection, error)
}
