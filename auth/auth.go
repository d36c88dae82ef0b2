// Package auth issues and checks the gateway's bearer tokens: HS256 JWTs
// (github.com/golang-jwt/jwt/v5) whose subject is the user id, whose claim
// ct is the user's creation time, whose claim gen is the user's token
// generation when the token was issued and whose jti is the token's own
// random id; and it puts the viewer into the request context. A token is
// good only while its users row accepts it: Viewer checks the token against
// the row once per request, through the check the server installs
// (WithUserCheck): the row must exist with the token's ct (a token outlives
// neither its user nor a store reset after which the same id names someone
// else), hold the token's generation (changePassword and logoutEverywhere
// move it on) and not name the token as ended (logout).
//
// An instance remembers a token it found good for a short while (10 s by
// default, WithRecheckAfter) and does not read the row again meanwhile, so
// another instance that ends the token is obeyed here within that window.
// The instance that ends a token tells its Issuer (Ended, EndedAll): it then
// refuses the token at once, in requests under way too, and closes the
// token's subscriptions (Watch). The server does the same with the endings
// other instances publish on the event bus, so instances sharing a bus
// refuse an ended token at once, not after the window.
package auth

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/weibohbase/gateway/weibo"
)

// Token is what a valid token says: whose it is and which one.
type Token struct {
	// User is the token's user (claim sub).
	User weibo.UserID
	// Created is the user's creation time, ms since the epoch (claim ct):
	// with User it names one user, not a later user given the same id.
	Created int64
	// Generation is the user's token generation when the token was issued
	// (claim gen): the token is good while the users row holds it.
	Generation int64
	// ID is the token's own id (claim jti), by which logout ends it alone.
	ID weibo.TokenID
	// Expires is the token's expiry (claim exp); it is valid strictly
	// before it.
	Expires time.Time
}

// Issuer signs and verifies tokens with one HMAC secret, and remembers
// which tokens this instance found good or ended.
type Issuer struct {
	secret   []byte
	ttl      time.Duration
	now      func() time.Time
	known    *knownTokens
	verified *lru.Cache[string, verifiedToken]
	refused  func(weibo.UserID) bool // RefuseUsers; nil: none
}

// verifiedTokens is how many verified tokens an Issuer remembers (about
// 300 bytes each).
const verifiedTokens = 10_000

// verifiedToken is what Verify found in a token that it accepted, and
// when: a token (the exact string, whose HMAC covers every claim) is
// accepted again without parsing it while the clock is between at and its
// expiry. Client requests send the same token again and again; parsing and
// checking it is a noticeable share of a home-timeline page's CPU.
type verifiedToken struct {
	Token
	at time.Time
}

// Issuer name written into and required in every token ("iss").
const issuerName = "weibo-gateway"

// DefaultRecheckAfter is how long a token found good counts as checked by
// default (WithRecheckAfter): the longest another instance's ending of a
// token may take to be obeyed by this one.
const DefaultRecheckAfter = 10 * time.Second

// Option configures an Issuer.
type Option func(*Issuer)

// WithClock sets the clock of issue times, expiries and the known-token
// window (default time.Now); tests move it.
func WithClock(now func() time.Time) Option { return func(i *Issuer) { i.now = now } }

// WithRecheckAfter sets how long a token found good (at issue or by a
// request's check) counts as checked, so that requests within it skip the
// read of its users row (default DefaultRecheckAfter); 0 or less checks
// every request.
func WithRecheckAfter(d time.Duration) Option { return func(i *Issuer) { i.known.window = d } }

// NewIssuer returns an Issuer for secret (at least 32 bytes is advised) whose
// tokens live ttl.
func NewIssuer(secret []byte, ttl time.Duration, opts ...Option) *Issuer {
	verified, _ := lru.New[string, verifiedToken](verifiedTokens)
	i := &Issuer{secret: secret, ttl: ttl, now: time.Now, known: newKnownTokens(DefaultRecheckAfter), verified: verified}
	for _, o := range opts {
		o(i)
	}
	i.known.life = ttl
	return i
}

// RandomSecret returns 32 random bytes, for a process without a configured secret.
func RandomSecret() []byte {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return b
}

// tokenClaims are a token's claims: the registered ones (jti among them),
// ct and gen.
type tokenClaims struct {
	jwt.RegisteredClaims
	// Created is the user's creation time, ms since the epoch (the users
	// row's i:ct).
	Created int64 `json:"ct"`
	// Generation is the user's token generation at issue (i:tg).
	Generation int64 `json:"gen"`
}

// Issue returns a signed token for user uid created at created (the users
// row's creation time, kept to the millisecond) at token generation gen
// (the row's i:tg): claims sub (decimal user id), ct (created, ms since the
// epoch), gen, jti (16 random bytes, unpadded base64url), iss, iat and exp
// (now + the Issuer's ttl). The caller has just read or written the users
// row, so the token counts as checked for the recheck window (see Viewer).
func (i *Issuer) Issue(uid weibo.UserID, created time.Time, gen int64) (string, error) {
	now := i.now()
	var id weibo.TokenID
	if _, err := rand.Read(id[:]); err != nil {
		return "", err
	}
	t := Token{User: uid, Created: created.UnixMilli(), Generation: gen, ID: id, Expires: now.Add(i.ttl)}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, tokenClaims{RegisteredClaims: jwt.RegisteredClaims{
		Subject:   uid.String(),
		Issuer:    issuerName,
		ID:        id.String(),
		IssuedAt:  jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(t.Expires),
	}, Created: t.Created, Generation: gen}).SignedString(i.secret)
	if err == nil {
		i.known.add(t, now)
	}
	return tok, err
}

// Verify checks a token's signature, algorithm, issuer and expiry and
// returns what it says. A token without ct or without jti (issued before
// they existed) is refused: its user logs in again. An accepted token is
// remembered and accepted again without parsing until its expiry. Verify
// does not consult the users row: Viewer does.
func (i *Issuer) Verify(token string) (Token, error) {
	now := i.now()
	if v, ok := i.verified.Get(token); ok && now.Before(v.Expires) && !now.Before(v.at) {
		return v.Token, nil
	}
	var claims tokenClaims
	_, err := jwt.ParseWithClaims(token, &claims, func(*jwt.Token) (any, error) { return i.secret, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithIssuer(issuerName), jwt.WithExpirationRequired(), jwt.WithTimeFunc(i.now))
	if err != nil {
		return Token{}, err
	}
	if claims.Created <= 0 {
		return Token{}, errors.New("the token has no user creation time (ct): log in again")
	}
	if claims.ID == "" {
		return Token{}, errors.New("the token has no id (jti): log in again")
	}
	id, err := weibo.ParseTokenID(claims.ID)
	if err != nil {
		return Token{}, errors.New("the token's id (jti) is malformed: log in again")
	}
	if claims.Generation < 0 {
		return Token{}, errors.New("the token's generation (gen) is negative")
	}
	uid, err := weibo.ParseUserID(claims.Subject)
	if err != nil {
		return Token{}, err
	}
	t := Token{User: uid, Created: claims.Created, Generation: claims.Generation, ID: id, Expires: claims.ExpiresAt.Time}
	// An accepted token has an expiry (WithExpirationRequired); it is
	// valid strictly before it, as the parser judges.
	i.verified.Add(token, verifiedToken{Token: t, at: now})
	return t, nil
}

type ctxKey struct{}

// viewer is what a request's Authorization says, and the outcome of its
// check against the users row, made at most once per request.
type viewer struct {
	tok     Token
	err     error     // a token was sent but is not valid
	trusted bool      // WithViewer: no token to check
	iss     *Issuer   // for its known tokens
	once    sync.Once // the check
	checked error     // its outcome
	epoch   uint64    // the Issuer's ending epoch when the check was made
}

type checkKey struct{}

// TokenState is what a token's users row says of it.
type TokenState int

// The states of a token, as a UserCheck finds them.
const (
	// TokenValid: the row exists with the token's ct and generation, and
	// does not name the token as ended.
	TokenValid TokenState = iota
	// TokenUserGone: there is no such user, or the id is another user's
	// (a store reset).
	TokenUserGone
	// TokenEnded: logout, logoutEverywhere or changePassword ended it.
	TokenEnded
)

// UserCheck reads the users row of t.User and says whether it accepts t.
// Errors are the store's.
type UserCheck func(ctx context.Context, t Token) (TokenState, error)

// WithUserCheck returns ctx in which Viewer checks the token against its
// users row with check, once per request. The per-request dataloader
// middleware installs it, reading the users row through the request's
// loaders so that a request that reads the viewer's row anyway reads it
// once.
func WithUserCheck(ctx context.Context, check UserCheck) context.Context {
	return context.WithValue(ctx, checkKey{}, check)
}

// The UNAUTHENTICATED errors of a token its users row does not accept.
var (
	errUserGone = &weibo.Error{Code: weibo.CodeUnauthenticated,
		Message: "invalid token: its user no longer exists (the store was reset?); log in again"}
	errTokenEnded = &weibo.Error{Code: weibo.CodeUnauthenticated,
		Message: "invalid token: it was ended (logout, logoutEverywhere or changePassword); log in again"}
	errTokenExpired = &weibo.Error{Code: weibo.CodeUnauthenticated, Message: "invalid token: it has expired; log in again"}
	errSuspended    = &weibo.Error{Code: weibo.CodeUnauthenticated, Reason: weibo.ReasonAccountSuspended,
		Message: "invalid token: the account is suspended"}
)

// RefuseUsers makes the Issuer refuse, from the next check of a request
// or subscription on (Viewer, Recheck, RecheckNow), the tokens of the
// users refused reports (a suspended account: UNAUTHENTICATED with reason
// ACCOUNT_SUSPENDED), even tokens found good within the recheck window.
// refused is asked once per check, must not block and makes no store
// call (an in-memory registry). Call it before serving.
func (i *Issuer) RefuseUsers(refused func(weibo.UserID) bool) { i.refused = refused }

// stateError returns the error of a token in state s, nil when valid.
func stateError(s TokenState) error {
	switch s {
	case TokenValid:
		return nil
	case TokenEnded:
		return errTokenEnded
	default:
		return errUserGone
	}
}

// Middleware reads "Authorization: Bearer <token>". A valid token puts its
// user id into the context; a missing one leaves the request anonymous; an
// invalid one is remembered so that operations needing a viewer say why.
func (i *Issuer) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(i.WithAuthorization(r.Context(), r.Header.Get("Authorization"))))
	})
}

// WithAuthorization returns ctx carrying the viewer of an Authorization
// value "Bearer <token>" (from an HTTP header, or a WebSocket
// connection_init payload); "" leaves ctx as it is (anonymous).
func (i *Issuer) WithAuthorization(ctx context.Context, h string) context.Context {
	if h == "" {
		return ctx
	}
	v := &viewer{iss: i}
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		v.err = errors.New("the Authorization header must be \"Bearer <token>\"")
	} else if v.tok, v.err = i.Verify(strings.TrimSpace(tok)); v.err != nil {
		v.err = fmt.Errorf("invalid token: %w", v.err)
	}
	return context.WithValue(ctx, ctxKey{}, v)
}

// WithViewer returns ctx carrying uid as the authenticated viewer, trusted
// without a check (tests, CLI).
func WithViewer(ctx context.Context, uid weibo.UserID) context.Context {
	return context.WithValue(ctx, ctxKey{}, &viewer{tok: Token{User: uid}, trusted: true})
}

// Viewer returns the authenticated user id of ctx. Without a token, with an
// invalid one, or with one its users row does not accept (the check of
// WithUserCheck, run once per request unless the token was found good
// within the recheck window), it returns a *weibo.Error with code
// UNAUTHENTICATED; a store error of the check is returned as it is. A
// token this instance ended after the request's check is refused too.
func Viewer(ctx context.Context) (weibo.UserID, error) {
	v, ok := ctx.Value(ctxKey{}).(*viewer)
	switch {
	case !ok:
		return 0, weibo.ErrUnauthenticated
	case v.err != nil:
		return 0, &weibo.Error{Code: weibo.CodeUnauthenticated, Message: v.err.Error()}
	case v.trusted:
		return v.tok.User, nil
	}
	if check, ok := ctx.Value(checkKey{}).(UserCheck); ok {
		v.once.Do(func() {
			v.epoch = v.iss.known.epoch.Load()
			v.checked = v.iss.check(ctx, v.tok, check)
		})
		if v.checked != nil {
			return 0, v.checked
		}
		// An ending on this instance since the check (a logout earlier in
		// this request, or in another one): one atomic load unless there was.
		if e := v.iss.known.epoch.Load(); e != v.epoch && v.iss.known.isEnded(v.tok) {
			return 0, errTokenEnded
		}
	}
	return v.tok.User, nil
}

// check judges t at now: refused when this instance ended it, accepted when
// it was found good within the recheck window, else judged by check (and
// remembered when good).
func (i *Issuer) check(ctx context.Context, t Token, check UserCheck) error {
	if i.refused != nil && i.refused(t.User) {
		return errSuspended
	}
	now := i.now()
	switch i.known.state(t, now) {
	case knownEnded:
		return errTokenEnded
	case knownGood:
		return nil
	}
	s, err := check(ctx, t)
	if err != nil {
		return err
	}
	if s == TokenValid {
		i.known.add(t, now)
	}
	return stateError(s)
}

// Recheck checks the token of ctx's viewer again, as a long-lived
// operation (a subscription) does while it runs: the token must not have
// expired nor been ended on this instance, and must have been found good
// within the recheck window or be accepted by check now (which must read
// the row afresh, not through a request's cache). It returns nil for a
// good token (and for a trusted viewer), an UNAUTHENTICATED *weibo.Error
// otherwise, or check's store error.
func (i *Issuer) Recheck(ctx context.Context, check UserCheck) error {
	v, err := i.recheckable(ctx)
	if v == nil {
		return err
	}
	return i.check(ctx, v.tok, check)
}

// recheckable returns ctx's viewer when its token is still to be checked
// against the users row, else nil and the answer without a read: nil for
// a trusted viewer, UNAUTHENTICATED for none, an invalid or an expired
// token.
func (i *Issuer) recheckable(ctx context.Context) (*viewer, error) {
	v, ok := ctx.Value(ctxKey{}).(*viewer)
	switch {
	case !ok:
		return nil, weibo.ErrUnauthenticated
	case v.err != nil:
		return nil, &weibo.Error{Code: weibo.CodeUnauthenticated, Message: v.err.Error()}
	case v.trusted:
		return nil, nil
	case !i.now().Before(v.tok.Expires):
		return nil, errTokenExpired
	}
	return v, nil
}

// RecheckNow is Recheck reading the users row (check) even when the token
// was found good within the recheck window: for a subscription that learns
// other instances' endings over the bus and may have missed some while
// the bus was away.
func (i *Issuer) RecheckNow(ctx context.Context, check UserCheck) error {
	v, err := i.recheckable(ctx)
	if v == nil {
		return err
	}
	now := i.now()
	if i.known.isEnded(v.tok) {
		return errTokenEnded
	}
	if i.refused != nil && i.refused(v.tok.User) {
		return errSuspended
	}
	s, err := check(ctx, v.tok)
	if err != nil {
		return err
	}
	if s == TokenValid {
		i.known.add(v.tok, now)
	}
	return stateError(s)
}

// ViewerToken returns the token of ctx's viewer, and false when ctx has no
// valid token (anonymous, an invalid token, or a trusted viewer without
// one). It does not check the users row: call Viewer first.
func ViewerToken(ctx context.Context) (Token, bool) {
	v, ok := ctx.Value(ctxKey{}).(*viewer)
	if !ok || v.err != nil || v.trusted {
		return Token{}, false
	}
	return v.tok, true
}

// ViewerIfAny tells apart the three cases: an authenticated viewer (id,
// true, nil), an anonymous request (0, false, nil) and an invalid token (0,
// false, an UNAUTHENTICATED *weibo.Error).
func ViewerIfAny(ctx context.Context) (weibo.UserID, bool, error) {
	if _, sent := ctx.Value(ctxKey{}).(*viewer); !sent {
		return 0, false, nil
	}
	id, err := Viewer(ctx)
	return id, err == nil, err
}

// OptionalViewer returns the viewer's id, or 0 and false when anonymous or
// the token is invalid.
func OptionalViewer(ctx context.Context) (weibo.UserID, bool) {
	id, err := Viewer(ctx)
	return id, err == nil
}

// Ended records that t was ended (logout) through this instance, after
// the store's write: this instance refuses it from now on, in requests
// under way too, and closes its subscriptions (Watch).
func (i *Issuer) Ended(t Token) { i.known.end(t, i.now()) }

// EndedAll records that every token of uid issued below generation gen was
// ended (changePassword, logoutEverywhere) through this instance, after the
// store's write; as Ended.
func (i *Issuer) EndedAll(uid weibo.UserID, gen int64) { i.known.endAll(uid, gen, i.now()) }

// Watch returns a channel that is closed when this instance ends the token
// of ctx's viewer (Ended, EndedAll), and a function that stops watching;
// nil (never closed) without a token.
func (i *Issuer) Watch(ctx context.Context) (<-chan struct{}, func()) {
	t, ok := ViewerToken(ctx)
	if !ok {
		return nil, func() {}
	}
	return i.known.watch(t, nil)
}

// WatchFunc is Watch with a function instead of a channel: f runs once, in
// a goroutine of its own, when this instance ends the token of ctx's
// viewer; nothing waits meanwhile. It returns the function that stops
// watching; without a token f never runs.
func (i *Issuer) WatchFunc(ctx context.Context, f func()) func() {
	t, ok := ViewerToken(ctx)
	if !ok {
		return func() {}
	}
	_, stop := i.known.watch(t, f)
	return stop
}
