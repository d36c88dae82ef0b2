// Package loaders holds the per-request dataloaders
// (github.com/graph-gophers/dataloader/v7): each turns the N keys that the
// GraphQL layer asks for while resolving one level of a query into one
// batched store call (a GetMany, which gohbase sends as multi requests
// grouped by region server).
package loaders

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/graph-gophers/dataloader/v7"

	"github.com/weibohbase/gateway/auth"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/org"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Wait is how long a loader collects keys before it sends its batch. gqlgen
// resolves the items of a list concurrently, so the keys of one level arrive
// within a few hundred microseconds; 5 ms keeps a 100-item page in one batch
// on a loaded 2-core machine (2 ms split it), at the price of 5 ms per level
// that needs a loader.
const Wait = 5 * time.Millisecond

// Loaders are the dataloaders of one request. Their caches live as long as
// the request.
type Loaders struct {
	// Users loads users rows by id (nil for a missing user).
	Users *dataloader.Loader[weibo.UserID, *weibo.User]
	// Posts loads content rows by post id (nil for a missing post).
	Posts *dataloader.Loader[weibo.PostID, *feed.Post]
	// FollowedByViewer loads whether the request's viewer follows a user.
	FollowedByViewer *dataloader.Loader[weibo.UserID, bool]
	// LikedByViewer loads whether the request's viewer likes a post.
	LikedByViewer *dataloader.Loader[weibo.PostID, bool]
	// Roles loads role rows by id (nil for a missing role).
	Roles *dataloader.Loader[weibo.RoleID, *org.Role]
	// Departments loads department rows by id (nil for a missing department).
	Departments *dataloader.Loader[weibo.DeptID, *org.Department]
	// UserRoles loads users' roles, highest priority first (two GetMany per batch).
	UserRoles *dataloader.Loader[weibo.UserID, []*org.RoleAssignment]
	// UserDepartments loads users' departments (nil for none; two GetMany per batch).
	UserDepartments *dataloader.Loader[weibo.UserID, *org.Department]
	// ManagedDepartments loads the departments users manage (two GetMany per batch).
	ManagedDepartments *dataloader.Loader[weibo.UserID, []*org.Department]
	// Comments loads comment rows by id (nil for a missing comment).
	Comments *dataloader.Loader[weibo.CommentID, *feed.Comment]
	// Topics loads topic rows by name (nil for a topic no post has).
	Topics *dataloader.Loader[string, *feed.Topic]
	// Notifications loads notifications by id (nil for a missing one; any
	// user's: the caller checks the recipient).
	Notifications *dataloader.Loader[weibo.NotificationID, *feed.Notification]
	// NotificationActors loads every actor of notifications, newest first
	// (for actors(first:) beyond the newest a notification keeps).
	NotificationActors *dataloader.Loader[weibo.NotificationID, []tables.NotifActor]

	// KnownPosts and KnownLiked are the values of Posts and LikedByViewer
	// primed through PrimePost and PrimeLiked.
	KnownPosts Known[weibo.PostID, *feed.Post]
	KnownLiked Known[weibo.PostID, bool]

	svc   *domain.Domain
	mu    sync.Mutex
	users map[weibo.UserID]*weibo.User // read by ReadUser
}

// ReadUser reads one user at once, without waiting for a batch (nil when
// absent), and primes Users with it; a user read so already in this
// request is not read again. Root fields that need one user (me, user)
// and the viewer's token check use it, so a request that does both reads
// the row once. Errors are the store's.
func (l *Loaders) ReadUser(ctx context.Context, uid weibo.UserID) (*weibo.User, error) {
	l.mu.Lock()
	u, ok := l.users[uid]
	l.mu.Unlock()
	if ok {
		return u, nil
	}
	us, err := l.svc.Feed.GetUsers(ctx, []weibo.UserID{uid})
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.users[uid] = us[0]
	l.mu.Unlock()
	l.Users.Prime(ctx, uid, us[0])
	return us[0], nil
}

// checkViewer is the request's auth.UserCheck: it reads the viewer's
// users row with its ended tokens (one Get of families i, c and t) and
// primes the request's user loader with the user, so that me, user and the
// viewer as a post's author read no row again.
func (l *Loaders) checkViewer(ctx context.Context, t auth.Token) (auth.TokenState, error) {
	u, ended, err := l.svc.Feed.ReadUserTokens(ctx, t.User)
	if err != nil {
		return 0, err
	}
	l.SetUser(t.User, u)
	return TokenState(u, ended, t), nil
}

// SetUser makes u (nil: absent) the request's answer for user uid, in
// ReadUser and the user loader alike, replacing what they read before (a
// mutation that changed the row returns the row as it wrote it).
func (l *Loaders) SetUser(uid weibo.UserID, u *weibo.User) {
	l.mu.Lock()
	l.users[uid] = u
	l.mu.Unlock()
	l.Users.Clear(context.Background(), uid).Prime(context.Background(), uid, u)
}

// TokenState judges token t by its users row: the user u (nil when the row
// does not exist) and the ids of the user's tokens ended on their own.
func TokenState(u *weibo.User, ended []weibo.TokenID, t auth.Token) auth.TokenState {
	switch {
	case u == nil || u.CreatedAt.UnixMilli() != t.Created:
		return auth.TokenUserGone
	case u.TokenGeneration != t.Generation || slices.Contains(ended, t.ID):
		return auth.TokenEnded
	}
	return auth.TokenValid
}

// FreshCheck returns an auth.UserCheck that reads the users row anew on
// every call (no request cache): for the checks a subscription repeats
// while it runs (auth.Issuer.Recheck).
func FreshCheck(svc *domain.Domain) auth.UserCheck {
	return func(ctx context.Context, t auth.Token) (auth.TokenState, error) {
		u, ended, err := svc.Feed.ReadUserTokens(ctx, t.User)
		if err != nil {
			return 0, err
		}
		return TokenState(u, ended, t), nil
	}
}

// New returns fresh loaders over svc for one request.
func New(svc *domain.Domain) *Loaders {
	return &Loaders{
		svc:              svc,
		users:            map[weibo.UserID]*weibo.User{},
		Users:            dataloader.NewBatchedLoader(batch(svc.Feed.GetUsers), dataloader.WithWait[weibo.UserID, *weibo.User](Wait)),
		Posts:            dataloader.NewBatchedLoader(batch(svc.Feed.GetPosts), dataloader.WithWait[weibo.PostID, *feed.Post](Wait)),
		FollowedByViewer: dataloader.NewBatchedLoader(viewerBatch(svc.Feed.IsFollowing), dataloader.WithWait[weibo.UserID, bool](Wait)),
		LikedByViewer:    dataloader.NewBatchedLoader(viewerBatch(svc.Feed.IsLiked), dataloader.WithWait[weibo.PostID, bool](Wait)),
		Roles:            dataloader.NewBatchedLoader(batch(svc.Org.GetRoles), dataloader.WithWait[weibo.RoleID, *org.Role](Wait)),
		Departments:      dataloader.NewBatchedLoader(batch(svc.Org.GetDepartments), dataloader.WithWait[weibo.DeptID, *org.Department](Wait)),
		UserRoles:        dataloader.NewBatchedLoader(batch(svc.Org.UserRoles), dataloader.WithWait[weibo.UserID, []*org.RoleAssignment](Wait)),
		UserDepartments:  dataloader.NewBatchedLoader(batch(svc.Org.UserDepartments), dataloader.WithWait[weibo.UserID, *org.Department](Wait)),
		ManagedDepartments: dataloader.NewBatchedLoader(batch(svc.Org.ManagedDepartments),
			dataloader.WithWait[weibo.UserID, []*org.Department](Wait)),
		Comments: dataloader.NewBatchedLoader(batch(svc.Feed.GetComments), dataloader.WithWait[weibo.CommentID, *feed.Comment](Wait)),
		Topics:   dataloader.NewBatchedLoader(batch(svc.Feed.GetTopics), dataloader.WithWait[string, *feed.Topic](Wait)),
		Notifications: dataloader.NewBatchedLoader(batch(svc.Feed.GetNotifications),
			dataloader.WithWait[weibo.NotificationID, *feed.Notification](Wait)),
		NotificationActors: dataloader.NewBatchedLoader(batch(svc.Feed.NotificationActors),
			dataloader.WithWait[weibo.NotificationID, []tables.NotifActor](Wait)),
	}
}

// viewerBatch adapts a domain batch read of the viewer's relation to keys
// (whether the viewer follows users, likes posts) to a dataloader batch
// function: false for every key without a viewer, with no read.
func viewerBatch[K comparable](fn func(ctx context.Context, viewer weibo.UserID, keys []K) ([]bool, error)) dataloader.BatchFunc[K, bool] {
	return func(ctx context.Context, keys []K) []*dataloader.Result[bool] {
		viewer, ok := auth.OptionalViewer(ctx)
		if !ok {
			out := make([]*dataloader.Result[bool], len(keys))
			for i := range out {
				out[i] = &dataloader.Result[bool]{}
			}
			return out
		}
		return batch(func(ctx context.Context, keys []K) ([]bool, error) { return fn(ctx, viewer, keys) })(ctx, keys)
	}
}

// batch adapts a domain batch read (one result per key, in order) to a
// dataloader batch function.
func batch[K comparable, V any](fn func(context.Context, []K) ([]V, error)) dataloader.BatchFunc[K, V] {
	return func(ctx context.Context, keys []K) []*dataloader.Result[V] {
		vals, err := fn(ctx, keys)
		out := make([]*dataloader.Result[V], len(keys))
		for i := range keys {
			if err != nil {
				out[i] = &dataloader.Result[V]{Error: err}
			} else {
				out[i] = &dataloader.Result[V]{Data: vals[i]}
			}
		}
		return out
	}
}

type ctxKey struct{}

// Middleware puts fresh Loaders into every request's context, and makes
// the request's token checked against the users row through them
// (auth.WithUserCheck: one Get of the viewer's row that also primes
// Loaders.ReadUser and the user loader).
func Middleware(svc *domain.Domain) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			l := New(svc)
			ctx := auth.WithUserCheck(With(r.Context(), l), l.checkViewer)
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}

// With returns ctx carrying l.
func With(ctx context.Context, l *Loaders) context.Context {
	return context.WithValue(ctx, ctxKey{}, l)
}

// For returns the request's loaders; it panics when the middleware did not run.
func For(ctx context.Context) *Loaders {
	return ctx.Value(ctxKey{}).(*Loaders)
}
