// Package resolvers implements the GraphQL schema (schema.graphqls and
// schema/*.graphqls). Every resolver reads straight down: it parses its
// arguments, takes the viewer from the context when the field needs one,
// calls the domain or the request's dataloaders (package loaders), and
// returns. The resolvers depend on the domain only through narrow
// interfaces of their own (services.go): Resolver.Svc is a Services, one
// field per module named as domain.Domain's (Accounts, Likes, Org.Roles,
// ...), each an interface listing exactly the methods the resolvers call,
// so that r.Svc.Likes.Like(...) reads as on the domain while the resolvers
// name no more of it than they use; the server fills Services from a
// *domain.Domain. Package weibo/domain is still named for the user
// search's types (domain.UserFilter, domain.UserSearchConnection). The resolvers of a schema file's fields are in
// <file name>.resolvers.go (accounts.resolvers.go for
// schema/accounts.graphqls), written by gqlgen, which keeps their bodies;
// the helpers they call are in the other files, by capability. The
// @hasRole directive is in directives.go; the wiring in graph/ is generated
// by gqlgen.
//
// Ids: an `id` field is the domain's id type itself, which marshals itself
// (weibo.UserID and friends implement graphql.Marshaler). ID arguments
// arrive as strings, because gqlgen binds every argument of a scalar to the
// same Go type, and the resolvers parse them with parseID, so that a
// malformed id is BAD_USER_INPUT naming the argument.
package resolvers

// `go generate ./...` from the module root is `make generate`: gqlgen, then
// internal/generate's rewrites of its output (graph/ and the resolver files here).
//go:generate go run github.com/weibohbase/gateway/internal/generate

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"github.com/weibohbase/gateway/auth"
	"github.com/weibohbase/gateway/graph/model"
	"github.com/weibohbase/gateway/loaders"
	"github.com/weibohbase/gateway/weibo"
)

// Resolver is the root resolver: the dependencies every resolver shares.
type Resolver struct {
	// Svc is what the resolvers call of the domain, one narrow interface
	// per module (Services); the server fills it from a *domain.Domain.
	Svc Services
	// Tokens issues the tokens that register and login return.
	Tokens *auth.Issuer
	// EndingsOverBus says that Tokens hears the token endings of every
	// instance sharing the bus (server: account.Service.OnTokensEnded): while
	// the bus is connected, subscriptions do not read their users rows to
	// learn of them (whileTokenValid).
	EndingsOverBus bool
	// Uploads limits each user's uploadMedia calls (nil: no limit).
	Uploads *UploadLimiter
}

// parseID parses s, the ID argument named field, into an id type (for
// example parseID[weibo.UserID]) with the type's UnmarshalGQL. A malformed
// id is a *weibo.Error with code BAD_USER_INPUT and Field field.
func parseID[T any, PT interface {
	*T
	graphql.Unmarshaler
}](field, s string) (T, error) {
	var id T
	if err := PT(&id).UnmarshalGQL(s); err != nil {
		return id, &weibo.Error{Code: weibo.CodeBadUserInput, Field: field, Message: err.Error()}
	}
	return id, nil
}

// complete returns u with every users-row field loaded: a User built from a
// post's denormalized author carries only ID and Username, and the rest comes
// through the request's user dataloader (one batched GetMany per level).
func complete(ctx context.Context, u *weibo.User) (*weibo.User, error) {
	if u.Complete {
		return u, nil
	}
	return loadUser(ctx, u.ID)
}

// loadUser loads a user through the dataloader; a missing user is NOT_FOUND.
func loadUser(ctx context.Context, id weibo.UserID) (*weibo.User, error) {
	u, err := loaders.For(ctx).Users().Load(ctx, id)()
	if err == nil && u == nil {
		err = &weibo.Error{Code: weibo.CodeNotFound, Message: "user " + id.String() + " not found"}
	}
	return u, err
}

// userNow reads one user without waiting for a loader batch (nil when
// absent) and primes the request's user loader with it: a root field reads
// at once instead of waiting for a dataloader batch, and the viewer's row,
// which the token check may have read already, is read once.
func (r *Resolver) userNow(ctx context.Context, uid weibo.UserID) (*weibo.User, error) {
	return loaders.For(ctx).ReadUser(ctx, uid)
}

// authPayload issues a token for u (its id, creation time and token
// generation).
func (r *Resolver) authPayload(u *weibo.User) (*model.AuthPayload, error) {
	token, err := r.Tokens.Issue(u.ID, u.CreatedAt, u.TokenGeneration)
	if err != nil {
		return nil, err
	}
	return &model.AuthPayload{Token: token, User: u}, nil
}
