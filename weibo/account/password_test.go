package account

import (
	"errors"
	"strings"
	"testing"

	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestPasswordLength: register and login refuse passwords over 72 bytes
// (bcrypt would ignore the rest) with BAD_USER_INPUT; 72 bytes work.
func TestPasswordLength(t *testing.T) {
	st := testenv.Embedded(t)
	svc := newService(st, 4)
	ctx := t.Context()
	if err := tables.Migrate(ctx, st); err != nil {
		t.Fatal(err)
	}
	pw := strings.Repeat("p", MaxPasswordLen)
	if _, err := svc.Register(ctx, "long_pw", pw+"x"); weibo.CodeOf(err) != weibo.CodeBadUserInput {
		t.Fatalf("register with 73 bytes: %v", err)
	}
	if _, err := svc.Register(ctx, "long_pw", pw); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Login(ctx, "long_pw", pw); err != nil {
		t.Fatalf("login with 72 bytes: %v", err)
	}
	for _, suffix := range []string{"x", "anything at all"} {
		if _, err := svc.Login(ctx, "long_pw", pw+suffix); weibo.CodeOf(err) != weibo.CodeBadUserInput {
			t.Errorf("login with the password plus %q: %v, want BAD_USER_INPUT", suffix, err)
		}
	}
	if _, err := svc.Login(ctx, "long_pw", pw[:71]); weibo.CodeOf(err) != weibo.CodeUnauthenticated {
		t.Errorf("login with 71 bytes of it: %v, want UNAUTHENTICATED", err)
	}
}

// TestUnknownUserComparesAHash: a login for a username that does not exist
// (or cannot exist) goes through a bcrypt comparison at the service's cost,
// like one for a user that does, and fails the same way.
func TestUnknownUserComparesAHash(t *testing.T) {
	const cost = 5 // a cost no other test uses, so the dummy hash is made here
	st := testenv.Embedded(t)
	svc := newService(st, cost)
	ctx := t.Context()
	if err := tables.Migrate(ctx, st); err != nil {
		t.Fatal(err)
	}
	if _, ok := dummyHashes.Load(cost); ok {
		t.Fatal("dummy hash exists before any login")
	}
	for _, name := range []string{"nobody_here", "bad name!"} {
		_, err := svc.Login(ctx, name, "whatever1")
		if !errors.Is(err, errBadLogin) {
			t.Fatalf("login as %q: %v, want the wrong-password error", name, err)
		}
		h, ok := dummyHashes.Load(cost)
		if !ok || !strings.HasPrefix(string(h.([]byte)), "$2a$05$") {
			t.Fatalf("no dummy hash of cost %d after a login as %q", cost, name)
		}
	}
}

func TestCheckLoginPassword(t *testing.T) {
	if err := checkLoginPassword(strings.Repeat("p", MaxPasswordLen)); err != nil {
		t.Errorf("72 bytes: %v", err)
	}
	if err := checkLoginPassword(strings.Repeat("p", MaxPasswordLen+1)); weibo.CodeOf(err) != weibo.CodeBadUserInput {
		t.Errorf("73 bytes: %v, want BAD_USER_INPUT", err)
	}
}
