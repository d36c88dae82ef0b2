package server

import (
	"context"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/weibohbase/gateway/auth"
	"github.com/weibohbase/gateway/loaders"
	"github.com/weibohbase/gateway/weibo"
)

// guard is the gqlgen field interceptor that bounds execution: once the
// request's context is done (its deadline passed, or the client went away)
// no further resolver runs and so no further store call is made; a heavy
// operation's resolvers give way to light operations (lanes); and it
// throttles failed logins, failed password changes and registrations
// (logins) and limits successful registrations per address (signups).
type guard struct {
	logins  *logins  // nil: off
	signups *signups // nil: off
	lanes   *lanes
	now     func() time.Time
}

var (
	_ graphql.HandlerExtension = guard{}
	_ graphql.FieldInterceptor = guard{}
)

// ExtensionName implements graphql.HandlerExtension.
func (guard) ExtensionName() string { return "Guard" }

// Validate implements graphql.HandlerExtension.
func (guard) Validate(graphql.ExecutableSchema) error { return nil }

// InterceptField implements graphql.FieldInterceptor. A field bound to a
// struct field or a method without context (fc.IsResolver false: a post's
// content, a user's username, ...) reads memory only and makes no store
// call, so it runs at once: checking the context and the lanes there would
// cost a context walk per field of every item of a page (several fields
// per home-timeline edge) and bound nothing.
func (g guard) InterceptField(ctx context.Context, next graphql.Resolver) (any, error) {
	fc := graphql.GetFieldContext(ctx)
	if fc != nil && !fc.IsResolver {
		return next(ctx)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	g.lanes.yield(ctx)
	if fc == nil || fc.Object != "Mutation" || g.logins == nil && g.signups == nil {
		return next(ctx)
	}
	var username string
	switch fc.Field.Name {
	case "login":
		username, _ = fc.Args["username"].(string)
		if username == "" {
			username = "\x00" // throttled like a username of its own
		}
	case "register":
	case "changePassword":
		// A wrong current password is a failed login of the account: the
		// same counters as logins of its username (and of the address).
		var ok bool
		if username, ok = viewerUsername(ctx); !ok {
			return next(ctx) // no valid token: @authenticated refuses it
		}
	default:
		return next(ctx)
	}
	addr := clientAddr(ctx)
	if wait := g.logins.begin(username, addr, g.now()); wait > 0 {
		stateOf(ctx).retryAfter(wait)
		return nil, rateLimited(wait, msgFailedAttempts, nil)
	}
	var signup *signupBucket
	if username == "" {
		var wait time.Duration
		if signup, wait = g.signups.begin(addr, g.now()); wait > 0 {
			g.logins.end(username, addr, attemptVoid, g.now())
			stateOf(ctx).retryAfter(wait)
			return nil, rateLimited(wait, msgTooManySignups, nil)
		}
	}
	res, err := next(ctx)
	oc := outcome(username == "", err)
	g.logins.end(username, addr, oc, g.now())
	g.signups.end(signup, oc == attemptSucceeded, g.now())
	return res, err
}

// viewerUsername returns the username of the request's viewer, read
// through the request's loaders (the token check has read the row already,
// unless the token was checked within the last seconds); false without a
// valid viewer or when the read fails.
func viewerUsername(ctx context.Context) (string, bool) {
	uid, err := auth.Viewer(ctx)
	if err != nil {
		return "", false
	}
	u, err := loaders.For(ctx).ReadUser(ctx, uid)
	if err != nil || u == nil {
		return "", false
	}
	return u.Username, true
}

// Messages of the login throttle and of the sign-up limit.
const (
	msgFailedAttempts = "too many failed attempts: retry later"
	msgTooManySignups = "too many sign-ups from this address: retry later"
)

// outcome classifies how a login or a password change (register false) or
// a registration ended, for logins.end: a login failed when its password
// was wrong (UNAUTHENTICATED), a registration when the domain refused it
// (an invalid username or password, or a taken username: BAD_USER_INPUT);
// any other error (a login's bad input, a store error, the request's end)
// is void, and no error is a success.
func outcome(register bool, err error) int {
	switch code := weibo.CodeOf(err); {
	case err == nil:
		return attemptSucceeded
	case register && code != "", !register && code == weibo.CodeUnauthenticated:
		return attemptFailed
	default:
		return attemptVoid
	}
}
