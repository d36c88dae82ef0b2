package auth

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/weibohbase/gateway/weibo"
)

// handID is the jti of the hand-made tokens.
var handID = weibo.TokenID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}

func TestVerify(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	iss := NewIssuer(secret, time.Hour)
	good, err := iss.Issue(42, time.UnixMilli(1583020800123), 3)
	if err != nil {
		t.Fatal(err)
	}
	sign := func(method jwt.SigningMethod, key any, claims jwt.Claims) string {
		s, err := jwt.NewWithClaims(method, claims).SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	now := time.Now()
	valid := jwt.RegisteredClaims{Subject: "42", Issuer: issuerName, ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour))}
	expired, otherIssuer, noExpiry, badSubject := valid, valid, valid, valid
	expired.ExpiresAt = jwt.NewNumericDate(now.Add(-time.Minute))
	otherIssuer.Issuer = "someone-else"
	noExpiry.ExpiresAt = nil
	badSubject.Subject = "042"
	valid.ID = handID.String()
	noID, badID := valid, valid
	noID.ID = ""
	badID.ID = "not-a-token-id"
	withCT := func(c jwt.RegisteredClaims) tokenClaims {
		return tokenClaims{RegisteredClaims: c, Created: 1583020800123, Generation: 3}
	}
	negativeGen := withCT(valid)
	negativeGen.Generation = -1
	for _, c := range []struct {
		name, token string
		ok          bool
	}{
		{"issued", good, true},
		{"hand-made valid", sign(jwt.SigningMethodHS256, secret, withCT(valid)), true},
		{"no ct (issued before it existed)", sign(jwt.SigningMethodHS256, secret, valid), false},
		{"no jti (issued before it existed)", sign(jwt.SigningMethodHS256, secret, withCT(noID)), false},
		{"no jti nor gen", sign(jwt.SigningMethodHS256, secret, tokenClaims{RegisteredClaims: noID, Created: 1583020800123}), false},
		{"malformed jti", sign(jwt.SigningMethodHS256, secret, withCT(badID)), false},
		{"negative gen", sign(jwt.SigningMethodHS256, secret, negativeGen), false},
		{"expired", sign(jwt.SigningMethodHS256, secret, withCT(expired)), false},
		{"other issuer", sign(jwt.SigningMethodHS256, secret, withCT(otherIssuer)), false},
		{"no expiry", sign(jwt.SigningMethodHS256, secret, withCT(noExpiry)), false},
		{"malformed subject", sign(jwt.SigningMethodHS256, secret, withCT(badSubject)), false},
		{"wrong secret", sign(jwt.SigningMethodHS256, []byte("another secret another secret !!"), withCT(valid)), false},
		{"other algorithm", sign(jwt.SigningMethodHS512, secret, withCT(valid)), false},
		{"alg none", sign(jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, withCT(valid)), false},
		{"garbage", "not.a.token", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			tok, err := iss.Verify(c.token)
			if c.ok && (err != nil || tok.User != 42 || tok.Created != 1583020800123 || tok.Generation != 3) {
				t.Fatalf("Verify = %+v, %v; want user 42, ct 1583020800123, gen 3", tok, err)
			}
			if !c.ok && err == nil {
				t.Fatalf("Verify accepted it: %+v", tok)
			}
		})
	}
}

// TestVerifyRemembers: a token accepted once is accepted again without
// parsing it (no allocation), until the clock reaches its expiry; a token
// differing from an accepted one in any byte is parsed and judged on its own.
func TestVerifyRemembers(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	iss := NewIssuer(secret, time.Hour, WithClock(func() time.Time { return now }))
	tok, err := iss.Issue(42, time.UnixMilli(1583020800123), 0)
	if err != nil {
		t.Fatal(err)
	}
	verify := func(token string) (weibo.UserID, int64, error) {
		t.Helper()
		v, err := iss.Verify(token)
		return v.User, v.Created, err
	}
	if uid, ct, err := verify(tok); err != nil || uid != 42 || ct != 1583020800123 {
		t.Fatalf("Verify = %v, %v, %v", uid, ct, err)
	}
	if allocs := testing.AllocsPerRun(20, func() { _, _ = iss.Verify(tok) }); allocs > 0 {
		t.Errorf("Verify of an accepted token allocates %v times: it parsed it again", allocs)
	}
	tampered := []byte(tok)
	tampered[len(tampered)-2] ^= 1 // the signature's last bytes
	if _, _, err := verify(string(tampered)); err == nil {
		t.Errorf("a token differing from an accepted one in its signature is accepted")
	}
	now = now.Add(59 * time.Minute)
	if _, _, err := verify(tok); err != nil {
		t.Errorf("Verify before the expiry: %v", err)
	}
	now = now.Add(time.Minute) // exactly the expiry: expired, as the parser judges
	if _, _, err := verify(tok); err == nil {
		t.Errorf("an accepted token is still accepted at its expiry")
	}
	now = now.Add(-2 * time.Hour) // before it was accepted: parsed again (and valid: no nbf)
	if _, _, err := verify(tok); err != nil {
		t.Errorf("Verify with the clock set back: %v", err)
	}
}

func TestWithAuthorization(t *testing.T) {
	iss := NewIssuer([]byte("0123456789abcdef0123456789abcdef"), time.Hour)
	tok, _ := iss.Issue(7, time.UnixMilli(1583020800123), 0)
	for _, c := range []struct {
		name, header string
		id           weibo.UserID
		sent, ok     bool
	}{
		{"anonymous", "", 0, false, false},
		{"bearer", "Bearer " + tok, 7, true, true},
		{"lower-case scheme", "bearer " + tok, 7, true, true},
		{"basic", "Basic dXNlcjpwdw==", 0, true, false},
		{"no token", "Bearer ", 0, true, false},
		{"bad token", "Bearer x.y.z", 0, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			id, ok, err := ViewerIfAny(iss.WithAuthorization(context.Background(), c.header))
			if id != c.id || ok != c.ok || (err != nil) != (c.sent && !c.ok) {
				t.Fatalf("ViewerIfAny = %v, %v, %v", id, ok, err)
			}
			if err != nil && weibo.CodeOf(err) != weibo.CodeUnauthenticated {
				t.Fatalf("code %q, want UNAUTHENTICATED", weibo.CodeOf(err))
			}
		})
	}
}

// TestRefuseUsers: a token the users row accepts, and that was found good
// within the recheck window, is refused at the next request once its user
// is refused (a suspension), with reason ACCOUNT_SUSPENDED, by Viewer and
// RecheckNow alike; accepted again once the user is not.
func TestRefuseUsers(t *testing.T) {
	iss := NewIssuer([]byte("0123456789abcdef0123456789abcdef"), time.Hour)
	tok, _ := iss.Issue(7, time.UnixMilli(1583020800123), 0)
	var refused bool
	iss.RefuseUsers(func(uid weibo.UserID) bool { return refused && uid == 7 })
	good := func(context.Context, Token) (TokenState, error) { return TokenValid, nil }
	request := func() context.Context {
		return WithUserCheck(iss.WithAuthorization(context.Background(), "Bearer "+tok), good)
	}
	if id, err := Viewer(request()); err != nil || id != 7 {
		t.Fatalf("before: %v, %v", id, err)
	}
	refused = true
	for name, err := range map[string]error{
		"Viewer":     func() error { _, err := Viewer(request()); return err }(),
		"RecheckNow": iss.RecheckNow(request(), good),
	} {
		var e *weibo.Error
		if !errors.As(err, &e) || e.Code != weibo.CodeUnauthenticated || e.Reason != weibo.ReasonAccountSuspended {
			t.Errorf("%s of a refused user: %v", name, err)
		}
	}
	refused = false
	if id, err := Viewer(request()); err != nil || id != 7 {
		t.Fatalf("after: %v, %v", id, err)
	}
}
