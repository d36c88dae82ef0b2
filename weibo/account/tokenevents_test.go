package account

import (
	"testing"
	"time"

	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
)

// TestTokensEndedOnTheBus: a logout, a logoutEverywhere and a password
// change each publish their ending, which OnTokensEnded hands back
// decoded: the one token and its expiry (to the ms), or the generation
// below which every token ended. After cancel, nothing more arrives.
func TestTokensEndedOnTheBus(t *testing.T) {
	svc := newTestService(t, testenv.Embedded(t))
	ctx := t.Context()
	u, err := svc.Register(ctx, uniqueUsername("bus"), "a password")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan TokensEnded, 10)
	cancel, err := svc.OnTokensEnded(func(e TokensEnded) { got <- e })
	if err != nil {
		t.Fatal(err)
	}
	next := func(what string) TokensEnded {
		t.Helper()
		select {
		case e := <-got:
			return e
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: no ending published", what)
			return TokensEnded{}
		}
	}
	expires := time.Now().Add(time.Hour)
	if _, _, err := svc.EndToken(ctx, u.ID, weibo.TokenID{7}, expires); err != nil {
		t.Fatal(err)
	}
	if e := next("EndToken"); e.User != u.ID || e.Token != (weibo.TokenID{7}) || e.Expires.UnixMilli() != expires.UnixMilli() || e.Below != 0 {
		t.Errorf("EndToken published %+v, want token 7 of %s expiring at %v", e, u.ID, expires)
	}
	if _, err := svc.EndAllTokens(ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	if e := next("EndAllTokens"); e.User != u.ID || e.Token != (weibo.TokenID{}) || e.Below != 1 {
		t.Errorf("EndAllTokens published %+v, want every token of %s below 1", e, u.ID)
	}
	if _, err := svc.ChangePassword(ctx, u.ID, "a password", "another password"); err != nil {
		t.Fatal(err)
	}
	if e := next("ChangePassword"); e.User != u.ID || e.Token != (weibo.TokenID{}) || e.Below != 2 {
		t.Errorf("ChangePassword published %+v, want every token of %s below 2", e, u.ID)
	}
	cancel()
	if _, err := svc.EndAllTokens(ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-got:
		t.Errorf("after cancel: %+v", e)
	case <-time.After(100 * time.Millisecond):
	}
}
