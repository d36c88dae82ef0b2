package server

import (
	"context"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/weibohbase/gateway/weibo"
)

// guard is the gqlgen field interceptor that bounds execution: once the
// request's context is done (its deadline passed, or the client went away)
// no further resolver runs and so no further store call is made; a heavy
// operation's resolvers give way to light operations (lanes); and it
// throttles login and register (logins).
type guard struct {
	logins *logins
	lanes  *lanes
	now    func() time.Time
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
	if fc == nil || fc.Object != "Mutation" || g.logins == nil {
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
	default:
		return next(ctx)
	}
	addr := clientAddr(ctx)
	if wait := g.logins.begin(username, addr, g.now()); wait > 0 {
		stateOf(ctx).retryAfter(wait)
		return nil, rateLimited(wait, "too many failed attempts: retry later", nil)
	}
	res, err := next(ctx)
	outcome := attemptCounted
	switch {
	case username == "" && err != nil:
		outcome = attemptVoid // a registration refused (before hashing, or a store error)
	case username == "" || err == nil:
		// a registration that hashed a password stays counted; a login that worked is not
		if username != "" {
			outcome = attemptSucceeded
		}
	case weibo.CodeOf(err) != weibo.CodeUnauthenticated:
		outcome = attemptVoid // a login refused before comparing (bad input, store error)
	}
	g.logins.end(username, addr, outcome, g.now())
	return res, err
}
