// Package auth issues and checks the gateway's bearer tokens: HS256 JWTs
// (github.com/golang-jwt/jwt/v5) whose subject is the user id, and puts the
// viewer into the request context.
package auth

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/weibohbase/gateway/weibo"
)

// Issuer signs and verifies tokens with one HMAC secret.
type Issuer struct {
	secret []byte
	ttl    time.Duration
	now    func() time.Time
}

// Issuer name written into and required in every token ("iss").
const issuerName = "weibo-gateway"

// NewIssuer returns an Issuer for secret (at least 32 bytes is advised) whose
// tokens live ttl.
func NewIssuer(secret []byte, ttl time.Duration) *Issuer {
	return &Issuer{secret: secret, ttl: ttl, now: time.Now}
}

// RandomSecret returns 32 random bytes, for a process without a configured secret.
func RandomSecret() []byte {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return b
}

// Issue returns a signed token for uid: claims sub (decimal user id), iss,
// iat and exp.
func (i *Issuer) Issue(uid weibo.UserID) (string, error) {
	now := i.now()
	return jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.RegisteredClaims{
		Subject:   uid.String(),
		Issuer:    issuerName,
		IssuedAt:  jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(now.Add(i.ttl)),
	}).SignedString(i.secret)
}

// Verify checks a token's signature, algorithm, issuer and expiry and returns its user id.
func (i *Issuer) Verify(token string) (weibo.UserID, error) {
	var claims jwt.RegisteredClaims
	_, err := jwt.ParseWithClaims(token, &claims, func(*jwt.Token) (any, error) { return i.secret, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithIssuer(issuerName), jwt.WithExpirationRequired(), jwt.WithTimeFunc(i.now))
	if err != nil {
		return 0, err
	}
	return weibo.ParseUserID(claims.Subject)
}

type ctxKey struct{}

type viewer struct {
	id  weibo.UserID
	err error // a token was sent but is not valid
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
	var v viewer
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		v.err = errors.New("the Authorization header must be \"Bearer <token>\"")
	} else if v.id, v.err = i.Verify(strings.TrimSpace(tok)); v.err != nil {
		v.err = fmt.Errorf("invalid token: %w", v.err)
	}
	return context.WithValue(ctx, ctxKey{}, v)
}

// WithViewer returns ctx carrying uid as the authenticated viewer (tests, CLI).
func WithViewer(ctx context.Context, uid weibo.UserID) context.Context {
	return context.WithValue(ctx, ctxKey{}, viewer{id: uid})
}

// Viewer returns the authenticated user id of ctx. Without a token, or with
// an invalid one, it returns a *weibo.Error with code UNAUTHENTICATED.
func Viewer(ctx context.Context) (weibo.UserID, error) {
	v, ok := ctx.Value(ctxKey{}).(viewer)
	switch {
	case !ok:
		return 0, weibo.ErrUnauthenticated
	case v.err != nil:
		return 0, &weibo.Error{Code: weibo.CodeUnauthenticated, Message: v.err.Error()}
	}
	return v.id, nil
}

// ViewerIfAny tells apart the three cases: an authenticated viewer (id,
// true, nil), an anonymous request (0, false, nil) and an invalid token (0,
// false, an UNAUTHENTICATED *weibo.Error).
func ViewerIfAny(ctx context.Context) (weibo.UserID, bool, error) {
	if _, sent := ctx.Value(ctxKey{}).(viewer); !sent {
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
