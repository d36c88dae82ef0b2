// Package account is the accounts of the weibo (the weibo:users and
// weibo:usernames tables): registration and login with bcrypt-hashed
// passwords, reading users by id and by username, the tokens that end
// (logout, logoutEverywhere, changePassword) and their endings published
// over the bus to every gateway instance, and the profile (display name
// and bio).
//
// One file per concern: accounts.go (Register, Login, the users' reads),
// usercount.go (the number of all users, a counter kept by every
// registration on package counted's protocol),
// password.go (hashing and comparing, bounded by the bcrypt slots, and a
// failed login's timing), provisioned.go (a provisioned user's create,
// with a login name of its own beside a derived username, and the claim
// and release of login names), tokens.go (the token generation and the tokens
// ended on their own), tokenevents.go (token endings on the bus) and
// profile.go (UpdateProfile).
//
// Errors meant for API callers are *weibo.Error values; every other error
// is an internal store failure, wrapped with the operation it served.
package account

import (
	"context"

	"golang.org/x/crypto/bcrypt"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/events"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Service is the accounts' API. It is safe for concurrent use.
type Service struct {
	st      hbase.Store
	w       *counted.Protocol
	rel     *counted.Relation // the registration, counting the users (usercount.go)
	events  *events.Emitter   // token endings (tokenevents.go)
	bcryptC int
	susp    Suspensions // SetSuspensions; nil: none
}

type options struct {
	bcryptCost int
}

// Option configures a Service.
type Option func(*options)

// WithBcryptCost sets the bcrypt cost of new password hashes (default
// bcrypt.DefaultCost; tests lower it).
func WithBcryptCost(c int) Option { return func(o *options) { o.bcryptCost = c } }

// New returns the accounts over st, on the clock and logger of w, and
// publishing token endings with ev (shared with the domain's other
// modules, so that they travel on the one bus), and registers the
// registration's counted write and the user count on w
// (RegisterCounted). The weibo tables must exist (tables.Migrate).
func New(st hbase.Store, w *counted.Protocol, ev *events.Emitter, opts ...Option) *Service {
	o := options{bcryptCost: bcrypt.DefaultCost}
	for _, f := range opts {
		f(&o)
	}
	return &Service{st: st, w: w, rel: RegisterCounted(st, w), events: ev, bcryptC: o.bcryptCost}
}

// The accounts' errors, *weibo.Error values with the codes and reasons of
// package weibo.

// errBadLogin is Login's answer for an unknown user and a wrong password alike.
var errBadLogin = &weibo.Error{Code: weibo.CodeUnauthenticated, Message: "wrong username or password"}

func errTaken(username string) error {
	return weibo.BadReason("username", weibo.ReasonUsernameTaken, "username "+username+" is taken")
}

// Counter is the CounterSpec of a counter kept on the users row (family
// c: qualifier qual, its operation sequence seq) that count counts for a
// user: a user without a users row has none (Count reports !exists).
// users reads the row (an *account.Service).
func Counter(users interface {
	GetUsers(ctx context.Context, ids []weibo.UserID) ([]*weibo.User, error)
}, kind counted.CounterKind, qual, seq string, count func(ctx context.Context, uid weibo.UserID) (int64, error)) *counted.CounterSpec {
	return &counted.CounterSpec{
		Kind: kind,
		Cell: func(c counted.Counter) (string, []byte, string, string) {
			return tables.Users, tables.UserKey(weibo.UserID(c.Owner)), qual, seq
		},
		Count: func(ctx context.Context, c counted.Counter) (int64, bool, error) {
			us, err := users.GetUsers(ctx, []weibo.UserID{weibo.UserID(c.Owner)})
			if err != nil || us[0] == nil {
				return 0, false, err
			}
			n, err := count(ctx, weibo.UserID(c.Owner))
			return n, true, err
		},
	}
}
