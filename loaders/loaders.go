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
	"github.com/weibohbase/gateway/resolvers/mediamodel"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/comment"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/moderation/report"
	"github.com/weibohbase/gateway/weibo/notify"
	"github.com/weibohbase/gateway/weibo/org"
	"github.com/weibohbase/gateway/weibo/safety"
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
	ldUsers              *dataloader.Loader[weibo.UserID, *weibo.User]
	ldPosts              *dataloader.Loader[weibo.PostID, *feed.Post]
	ldVisiblePosts       *dataloader.Loader[weibo.PostID, *feed.Post]
	ldFollowedByViewer   *dataloader.Loader[weibo.UserID, bool]
	ldLikedByViewer      *dataloader.Loader[weibo.PostID, bool]
	ldRoles              *dataloader.Loader[weibo.RoleID, *org.Role]
	ldDepartments        *dataloader.Loader[weibo.DeptID, *org.Department]
	ldUserRoles          *dataloader.Loader[weibo.UserID, []*org.RoleAssignment]
	ldUserDepartments    *dataloader.Loader[weibo.UserID, *org.Department]
	ldManagedDepartments *dataloader.Loader[weibo.UserID, []*org.Department]
	ldComments           *dataloader.Loader[weibo.CommentID, *comment.Comment]
	ldTopics             *dataloader.Loader[string, *weibo.Topic]
	ldNotifications      *dataloader.Loader[weibo.NotificationID, *notify.Notification]
	ldNotificationActors *dataloader.Loader[weibo.NotificationID, []tables.NotifActor]
	ldReports            *dataloader.Loader[weibo.ReportID, *report.Report]
	ldMedia              *dataloader.Loader[string, *mediamodel.Media]

	// KnownPosts and KnownLiked are the values of Posts and LikedByViewer
	// primed through PrimePost and PrimeLiked.
	KnownPosts Known[weibo.PostID, *feed.Post]
	KnownLiked Known[weibo.PostID, bool]

	svc   *domain.Domain
	lmu   sync.Mutex // guards the ld fields
	mu    sync.Mutex
	users map[weibo.UserID]*weibo.User // read by ReadUser (nil until one is)

	smu         sync.Mutex // guards the safety fields, held across their read
	safetySet   *safety.Set
	safetyOwner weibo.UserID
	safetyRead  bool // whether safetySet holds safetyOwner's Set

	standing standingMemo // ViewerStanding's
}

// The loaders are made on first use: a request (or an idle subscription)
// holds only those it used.

// made returns *p, made with mk's batch function on first use; mu guards
// *p.
func made[K comparable, V any](mu *sync.Mutex, p **dataloader.Loader[K, V], mk func() dataloader.BatchFunc[K, V]) *dataloader.Loader[K, V] {
	mu.Lock()
	defer mu.Unlock()
	if *p == nil {
		*p = dataloader.NewBatchedLoader(mk(), dataloader.WithWait[K, V](Wait))
	}
	return *p
}

// Users loads users rows by id (nil for a missing user).
func (l *Loaders) Users() *dataloader.Loader[weibo.UserID, *weibo.User] {
	return made(&l.lmu, &l.ldUsers, func() dataloader.BatchFunc[weibo.UserID, *weibo.User] { return batch(l.svc.Accounts.GetUsers) })
}

// Posts loads content rows by post id (nil for a missing post).
func (l *Loaders) Posts() *dataloader.Loader[weibo.PostID, *feed.Post] {
	return made(&l.lmu, &l.ldPosts, func() dataloader.BatchFunc[weibo.PostID, *feed.Post] { return batch(l.svc.Feed.GetPosts) })
}

// FollowedByViewer loads whether the request's viewer follows a user.
func (l *Loaders) FollowedByViewer() *dataloader.Loader[weibo.UserID, bool] {
	return made(&l.lmu, &l.ldFollowedByViewer, func() dataloader.BatchFunc[weibo.UserID, bool] { return viewerBatch(l.svc.Follows.IsFollowing) })
}

// LikedByViewer loads whether the request's viewer likes a post.
func (l *Loaders) LikedByViewer() *dataloader.Loader[weibo.PostID, bool] {
	return made(&l.lmu, &l.ldLikedByViewer, func() dataloader.BatchFunc[weibo.PostID, bool] { return viewerBatch(l.svc.Likes.IsLiked) })
}

// Roles loads role rows by id (nil for a missing role).
func (l *Loaders) Roles() *dataloader.Loader[weibo.RoleID, *org.Role] {
	return made(&l.lmu, &l.ldRoles, func() dataloader.BatchFunc[weibo.RoleID, *org.Role] { return batch(l.svc.Org.Roles.Get) })
}

// Departments loads department rows by id (nil for a missing department).
func (l *Loaders) Departments() *dataloader.Loader[weibo.DeptID, *org.Department] {
	return made(&l.lmu, &l.ldDepartments, func() dataloader.BatchFunc[weibo.DeptID, *org.Department] { return batch(l.svc.Org.Departments.Get) })
}

// UserRoles loads users' roles, highest priority first (two GetMany per batch).
func (l *Loaders) UserRoles() *dataloader.Loader[weibo.UserID, []*org.RoleAssignment] {
	return made(&l.lmu, &l.ldUserRoles, func() dataloader.BatchFunc[weibo.UserID, []*org.RoleAssignment] {
		return batch(l.svc.Org.Roles.OfUsers)
	})
}

// UserDepartments loads users' departments (nil for none; two GetMany per batch).
func (l *Loaders) UserDepartments() *dataloader.Loader[weibo.UserID, *org.Department] {
	return made(&l.lmu, &l.ldUserDepartments, func() dataloader.BatchFunc[weibo.UserID, *org.Department] {
		return batch(l.svc.Org.Departments.OfUsers)
	})
}

// ManagedDepartments loads the departments users manage (two GetMany per batch).
func (l *Loaders) ManagedDepartments() *dataloader.Loader[weibo.UserID, []*org.Department] {
	return made(&l.lmu, &l.ldManagedDepartments, func() dataloader.BatchFunc[weibo.UserID, []*org.Department] {
		return batch(l.svc.Org.Departments.Managed)
	})
}

// Comments loads comment rows by id (nil for a missing comment, or one
// whose author is suspended: comment.Service.VisibleComments).
func (l *Loaders) Comments() *dataloader.Loader[weibo.CommentID, *comment.Comment] {
	return made(&l.lmu, &l.ldComments, func() dataloader.BatchFunc[weibo.CommentID, *comment.Comment] {
		return batch(l.svc.Comments.VisibleComments)
	})
}

// Topics loads topic rows by name (nil for a topic no post has).
func (l *Loaders) Topics() *dataloader.Loader[string, *weibo.Topic] {
	return made(&l.lmu, &l.ldTopics, func() dataloader.BatchFunc[string, *weibo.Topic] { return batch(l.svc.Topics.GetTopics) })
}

// Notifications loads notifications by id (nil for a missing one; any
// user's: the caller checks the recipient).
func (l *Loaders) Notifications() *dataloader.Loader[weibo.NotificationID, *notify.Notification] {
	return made(&l.lmu, &l.ldNotifications, func() dataloader.BatchFunc[weibo.NotificationID, *notify.Notification] {
		// As the viewer's list shows them: none of an actor across a
		// block, of a muted one, or hidden by a filter.
		return batch(func(ctx context.Context, ids []weibo.NotificationID) ([]*notify.Notification, error) {
			viewer, _ := auth.OptionalViewer(ctx)
			return l.svc.Notify.VisibleNotifications(ctx, viewer, ids)
		})
	})
}

// Reports loads reports by id (nil for a missing one; anyone's: the
// caller checks who may see it).
func (l *Loaders) Reports() *dataloader.Loader[weibo.ReportID, *report.Report] {
	return made(&l.lmu, &l.ldReports, func() dataloader.BatchFunc[weibo.ReportID, *report.Report] { return batch(l.svc.Reports.Get) })
}

// NotificationActors loads every actor of notifications, newest first
// (for actors(first:) beyond the newest a notification keeps).
func (l *Loaders) NotificationActors() *dataloader.Loader[weibo.NotificationID, []tables.NotifActor] {
	return made(&l.lmu, &l.ldNotificationActors, func() dataloader.BatchFunc[weibo.NotificationID, []tables.NotifActor] {
		return batch(l.svc.Notify.NotificationActors)
	})
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
	us, err := l.svc.Accounts.GetUsers(ctx, []weibo.UserID{uid})
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	if l.users == nil {
		l.users = map[weibo.UserID]*weibo.User{}
	}
	l.users[uid] = us[0]
	l.mu.Unlock()
	l.Users().Prime(ctx, uid, us[0])
	return us[0], nil
}

// checkViewer is the request's auth.UserCheck: it reads the viewer's
// users row with its ended tokens (one Get of families i, c and t) and
// primes the request's user loader with the user, so that me, user and the
// viewer as a post's author read no row again.
func (l *Loaders) checkViewer(ctx context.Context, t auth.Token) (auth.TokenState, error) {
	u, ended, err := l.svc.Accounts.ReadUserTokens(ctx, t.User)
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
	if l.users == nil {
		l.users = map[weibo.UserID]*weibo.User{}
	}
	l.users[uid] = u
	l.mu.Unlock()
	l.Users().Clear(context.Background(), uid).Prime(context.Background(), uid, u)
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

// TokenReader reads a user's row for a token check
// (account.Service.ReadUserTokens): the user, nil when absent, and the ids
// of its tokens ended on their own that have not expired.
type TokenReader interface {
	ReadUserTokens(ctx context.Context, uid weibo.UserID) (_ *weibo.User, ended []weibo.TokenID, err error)
}

// FreshCheck returns an auth.UserCheck that reads the users row anew
// through accounts on every call (no request cache): for the checks a
// subscription repeats while it runs (auth.Issuer.Recheck).
func FreshCheck(accounts TokenReader) auth.UserCheck {
	return func(ctx context.Context, t auth.Token) (auth.TokenState, error) {
		u, ended, err := accounts.ReadUserTokens(ctx, t.User)
		if err != nil {
			return 0, err
		}
		return TokenState(u, ended, t), nil
	}
}

// New returns fresh loaders over svc for one request.
func New(svc *domain.Domain) *Loaders {
	return &Loaders{svc: svc}
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
			next.ServeHTTP(w, r.WithContext(Fresh(r.Context(), svc)))
		})
	}
}

// Fresh returns ctx carrying new Loaders, with the token checked through
// them, as Middleware gives each request: a long-lived request (a
// subscription) takes fresh ones for each event, so that no cache outlives
// what it served.
func Fresh(ctx context.Context, svc *domain.Domain) context.Context {
	l := New(svc)
	return auth.WithUserCheck(With(ctx, l), l.checkViewer)
}

// With returns ctx carrying l.
func With(ctx context.Context, l *Loaders) context.Context {
	return context.WithValue(ctx, ctxKey{}, l)
}

// For returns the request's loaders; it panics when the middleware did not run.
func For(ctx context.Context) *Loaders {
	switch v := ctx.Value(ctxKey{}).(type) {
	case *Loaders:
		return v
	case *scope:
		return v.get()
	}
	panic("loaders: no loaders in the context")
}

// Scoped returns ctx carrying new Loaders (with the token checked through
// them, as Fresh) until release is called; after it, For gives each call
// new ones. For a context that outlives the work its loaders serve, as a
// subscription's does its setup: nothing it read stays cached for the
// subscription's life.
func Scoped(ctx context.Context, svc *domain.Domain) (_ context.Context, release func()) {
	sc := &scope{l: New(svc), svc: svc}
	ctx = context.WithValue(ctx, ctxKey{}, sc)
	ctx = auth.WithUserCheck(ctx, func(ctx context.Context, t auth.Token) (auth.TokenState, error) {
		return sc.get().checkViewer(ctx, t)
	})
	return ctx, sc.release
}

// scope holds the Loaders of Scoped.
type scope struct {
	mu  sync.Mutex
	l   *Loaders // nil once released
	svc *domain.Domain
}

func (sc *scope) get() *Loaders {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.l == nil {
		return New(sc.svc)
	}
	return sc.l
}

func (sc *scope) release() {
	sc.mu.Lock()
	sc.l = nil
	sc.mu.Unlock()
}
