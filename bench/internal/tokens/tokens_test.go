package tokens_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/weibohbase/gateway/bench/internal/tokens"
	"github.com/weibohbase/gateway/internal/gatewaytest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/server"
	"github.com/weibohbase/gateway/weibo"
)

// TestMint mints tokens for more users than fit in two requests through a
// real gateway and checks that the gateway takes each as its user's.
func TestMint(t *testing.T) {
	g := gatewaytest.Start(t, testenv.Embedded(t), gatewaytest.WithConfig(func(c *server.Config) { c.Signups.Rate = -1 }))
	n := 2*tokens.Batch + 7
	ids := make([]weibo.UserID, n)
	for i := range ids {
		a := g.Register(fmt.Sprintf("reader%d", i))
		id, err := weibo.ParseUserID(a.ID)
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = id
	}
	// Reverse the order: the tokens must follow ids, not the registration.
	for i, j := 0, n-1; i < j; i, j = i+1, j-1 {
		ids[i], ids[j] = ids[j], ids[i]
	}
	toks, err := tokens.Mint(t.Context(), g.URL, []byte(gatewaytest.Secret), ids)
	if err != nil {
		t.Fatal(err)
	}
	if len(toks) != n {
		t.Fatalf("%d tokens for %d users", len(toks), n)
	}
	for i, tok := range toks {
		var d struct{ Me *struct{ ID string } }
		g.OK(tok, `{ me { id } }`, nil, &d)
		if d.Me == nil || d.Me.ID != ids[i].String() {
			t.Fatalf("token %d: me is %+v, want user %s", i, d.Me, ids[i])
		}
	}

	// Signed with another secret, the gateway takes the tokens for no one.
	other, err := tokens.Mint(t.Context(), g.URL, []byte("another-secret-another-secret-another"), ids[:1])
	if err != nil {
		t.Fatal(err)
	}
	if r := g.Post(other[0], `{ me { id } }`, nil); len(r.Errors) == 0 && !strings.Contains(string(r.Data), `"me":null`) {
		t.Fatalf("a token of another secret: %s", r.Data)
	}
}

func TestMintErrors(t *testing.T) {
	g := gatewaytest.Start(t, testenv.Embedded(t))
	a := g.Register("reader")
	id, err := weibo.ParseUserID(a.ID)
	if err != nil {
		t.Fatal(err)
	}
	secret := []byte(gatewaytest.Secret)
	if _, err := tokens.Mint(t.Context(), g.URL, nil, []weibo.UserID{id}); err == nil {
		t.Error("no secret: no error")
	}
	if _, err := tokens.Mint(t.Context(), g.URL, secret, []weibo.UserID{id, id + 1000}); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("an unknown user: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := tokens.Mint(ctx, g.URL, secret, []weibo.UserID{id}); err == nil {
		t.Error("an ended context: no error")
	}
	if toks, err := tokens.Mint(t.Context(), g.URL, secret, nil); err != nil || len(toks) != 0 {
		t.Errorf("no users: %v, %v", toks, err)
	}
}
