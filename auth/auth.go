// Package auth issues and checks the gateway's bearer tokens: HS256 JWTs
// (github.com/golang-jwt/jwt/v5) whose subject is the user id and whose
// claim ct is the user's creation time, and puts the viewer into the
// request context. A token is good only while its user exists as it was
// when the token was issued: Viewer checks (sub, ct) against the users row
// once per request, through the check the server installs (WithUserCheck),
// so a token outlives neither its user nor a store reset after which the
// same id names someone else.
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

// Issuer signs and verifies tokens with one HMAC secret.
type Issuer struct {
	secret   []byte
	ttl      time.Duration
	now      func() time.Time
	known    knownUsers
	verified *lru.Cache[string, verifiedToken]
}

// verifiedTokens is how many verified tokens an Issuer remembers (about
// 250 bytes each).
const verifiedTokens = 10_000

// verifiedToken is what Verify found in a token that it accepted, and
// when: a token (the exact string, whose HMAC covers every claim) is
// accepted again without parsing it while the clock is between at and exp.
// Client requests send the same token again and again; parsing and
// checking it is a noticeable share of a home-timeline page's CPU.
type verifiedToken struct {
	uid     weibo.UserID
	ct      int64
	at, exp time.Time
}

// Issuer name written into and required in every token ("iss").
const issuerName = "weibo-gateway"

// NewIssuer returns an Issuer for secret (at least 32 bytes is advised) whose
// tokens live ttl.
func NewIssuer(secret []byte, ttl time.Duration) *Issuer {
	verified, _ := lru.New[string, verifiedToken](verifiedTokens)
	return &Issuer{secret: secret, ttl: ttl, now: time.Now, known: knownUsers{m: map[knownUser]time.Time{}}, verified: verified}
}

// RandomSecret returns 32 random bytes, for a process without a configured secret.
func RandomSecret() []byte {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return b
}

// tokenClaims are a token's claims: the registered ones and ct.
type tokenClaims struct {
	jwt.RegisteredClaims
	// Created is the user's creation time, ms since the epoch (the users
	// row's i:ct): with the id it names one user, not a later user given
	// the same id.
	Created int64 `json:"ct"`
}

// Issue returns a signed token for user uid created at created (the users
// row's creation time, kept to the millisecond): claims sub (decimal user
// id), ct (created, ms since the epoch), iss, iat and exp. The caller has
// just read or written the users row, so the user counts as checked for a
// few seconds (see Viewer).
func (i *Issuer) Issue(uid weibo.UserID, created time.Time) (string, error) {
	now := i.now()
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, tokenClaims{RegisteredClaims: jwt.RegisteredClaims{
		Subject:   uid.String(),
		Issuer:    issuerName,
		IssuedAt:  jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(now.Add(i.ttl)),
	}, Created: created.UnixMilli()}).SignedString(i.secret)
	if err == nil {
		i.known.add(knownUser{uid, created.UnixMilli()}, now)
	}
	return tok, err
}

// Verify checks a token's signature, algorithm, issuer and expiry and
// returns its user id and the user's creation time (claim ct, ms since the
// epoch). A token without ct (issued before it existed) is refused. An
// accepted token is remembered (verifiedToken) and accepted again without
// parsing until its expiry.
func (i *Issuer) Verify(token string) (weibo.UserID, int64, error) {
	now := i.now()
	if v, ok := i.verified.Get(token); ok && now.Before(v.exp) && !now.Before(v.at) {
		return v.uid, v.ct, nil
	}
	var claims tokenClaims
	_, err := jwt.ParseWithClaims(token, &claims, func(*jwt.Token) (any, error) { return i.secret, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithIssuer(issuerName), jwt.WithExpirationRequired(), jwt.WithTimeFunc(i.now))
	if err != nil {
		return 0, 0, err
	}
	if claims.Created <= 0 {
		return 0, 0, errors.New("the token has no user creation time (ct): log in again")
	}
	uid, err := weibo.ParseUserID(claims.Subject)
	if err != nil {
		return 0, 0, err
	}
	// An accepted token has an expiry (WithExpirationRequired); it is
	// valid strictly before it, as the parser judges.
	i.verified.Add(token, verifiedToken{uid: uid, ct: claims.Created, at: now, exp: claims.ExpiresAt.Time})
	return uid, claims.Created, nil
}

// knownTTL is how long a user found as a token names it (at issue, or by a
// request's check) counts as checked: requests within it skip the read.
// A users row disappears, or its id is given to another user, only when
// the store is reset, so this only delays by a few seconds what a reset
// does to the tokens of the users of a gateway that kept running.
const knownTTL = 10 * time.Second

// knownUser is a (user id, creation time) pair that a token names.
type knownUser struct {
	id weibo.UserID
	ct int64
}

// knownUsers remembers the pairs found recently, with the time found.
type knownUsers struct {
	mu sync.Mutex
	m  map[knownUser]time.Time
}

func (k *knownUsers) add(u knownUser, now time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.m) >= 100_000 {
		for key, at := range k.m {
			if now.Sub(at) >= knownTTL {
				delete(k.m, key)
			}
		}
		if len(k.m) >= 100_000 {
			clear(k.m)
		}
	}
	k.m[u] = now
}

func (k *knownUsers) has(u knownUser, now time.Time) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	at, ok := k.m[u]
	return ok && now.Sub(at) < knownTTL
}

type ctxKey struct{}

// viewer is what a request's Authorization says, and the outcome of its
// check against the users row, made at most once per request.
type viewer struct {
	id      weibo.UserID
	ct      int64     // the token's ct claim
	err     error     // a token was sent but is not valid
	trusted bool      // WithViewer: no token to check
	iss     *Issuer   // for its known users
	once    sync.Once // the check
	checked error     // its outcome
}

type checkKey struct{}

// UserCheck reports whether user uid exists and was created at created (ms
// since the epoch): whether a token's (sub, ct) still names its user.
// Errors are the store's.
type UserCheck func(ctx context.Context, uid weibo.UserID, created int64) (bool, error)

// WithUserCheck returns ctx in which Viewer checks the token's user with
// check, once per request. The per-request dataloader middleware installs
// it, reading the users row through the request's loaders so that a
// request that reads the viewer's row anyway reads it once.
func WithUserCheck(ctx context.Context, check UserCheck) context.Context {
	return context.WithValue(ctx, checkKey{}, check)
}

// errUserGone is Viewer's answer for a token whose user does not exist as
// the token knew it.
var errUserGone = &weibo.Error{Code: weibo.CodeUnauthenticated,
	Message: "invalid token: its user no longer exists (the store was reset?); log in again"}

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
	} else if v.id, v.ct, v.err = i.Verify(strings.TrimSpace(tok)); v.err != nil {
		v.err = fmt.Errorf("invalid token: %w", v.err)
	}
	return context.WithValue(ctx, ctxKey{}, v)
}

// WithViewer returns ctx carrying uid as the authenticated viewer, trusted
// without a check (tests, CLI).
func WithViewer(ctx context.Context, uid weibo.UserID) context.Context {
	return context.WithValue(ctx, ctxKey{}, &viewer{id: uid, trusted: true})
}

// Viewer returns the authenticated user id of ctx. Without a token, with an
// invalid one, or with one whose user does not exist as the token knew it
// (the check of WithUserCheck, run once per request unless the user was
// found less than 10 s ago), it returns a *weibo.Error with code
// UNAUTHENTICATED; a store error of the check is returned as it is.
func Viewer(ctx context.Context) (weibo.UserID, error) {
	v, ok := ctx.Value(ctxKey{}).(*viewer)
	switch {
	case !ok:
		return 0, weibo.ErrUnauthenticated
	case v.err != nil:
		return 0, &weibo.Error{Code: weibo.CodeUnauthenticated, Message: v.err.Error()}
	}
	if check, ok := ctx.Value(checkKey{}).(UserCheck); ok && !v.trusted {
		v.once.Do(func() {
			u, now := knownUser{v.id, v.ct}, v.iss.now()
			if v.iss.known.has(u, now) {
				return
			}
			found, err := check(ctx, v.id, v.ct)
			switch {
			case err != nil:
				v.checked = err
			case !found:
				v.checked = errUserGone
			default:
				v.iss.known.add(u, now)
			}
		})
		if v.checked != nil {
			return 0, v.checked
		}
	}
	return v.id, nil
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
