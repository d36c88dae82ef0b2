package account

import (
	"context"
	"errors"
	"runtime"
	"sync"

	"golang.org/x/crypto/bcrypt"

	"github.com/weibohbase/gateway/weibo"
)

// Passwords are stored as bcrypt hashes of cost 10 (bcrypt.DefaultCost,
// WithBcryptCost changes it): one hash or comparison takes about 50-80 ms of
// one core. bcrypt reads at most 72 bytes, so passwords are 8 to 72 bytes
// (MinPasswordLen, MaxPasswordLen) and a longer one is refused with
// BAD_USER_INPUT by Register and Login alike, never silently truncated.

// bcryptSlots bounds how many bcrypt computations run at once in the
// process: half the cores (at least one), so that logins and registrations
// — however many arrive — always leave cores for everything else.
var bcryptSlots = make(chan struct{}, max(1, runtime.GOMAXPROCS(0)/2))

// withBcryptSlot runs fn holding a bcrypt slot, or returns ctx's error when
// ctx ends first.
func withBcryptSlot(ctx context.Context, fn func() error) error {
	select {
	case bcryptSlots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-bcryptSlots }()
	return fn()
}

// hashPassword returns the bcrypt hash of password at the service's cost.
func (s *Service) hashPassword(ctx context.Context, password string) ([]byte, error) {
	var hash []byte
	err := withBcryptSlot(ctx, func() (err error) {
		hash, err = bcrypt.GenerateFromPassword([]byte(password), s.bcryptC)
		return err
	})
	return hash, err
}

// comparePassword compares password with a stored hash; a mismatch is
// bcrypt.ErrMismatchedHashAndPassword.
func comparePassword(ctx context.Context, hash []byte, password string) error {
	return withBcryptSlot(ctx, func() error { return bcrypt.CompareHashAndPassword(hash, []byte(password)) })
}

// dummyHashes holds, per bcrypt cost, the hash of a password nobody has.
var dummyHashes sync.Map // int → []byte

// failLogin spends the time of a password comparison at the service's
// bcrypt cost, against a hash nobody's password matches, and returns the
// same error as a wrong password: a login for a username that does not
// exist takes as long as one for a username that does, so answers' timing
// does not tell which usernames are taken. It returns ctx's error when ctx
// ends first.
func (s *Service) failLogin(ctx context.Context, password string) error {
	h, ok := dummyHashes.Load(s.bcryptC)
	if !ok {
		hash, err := s.hashPassword(ctx, "no account has this password")
		if err != nil {
			return err
		}
		h, _ = dummyHashes.LoadOrStore(s.bcryptC, hash)
	}
	if err := comparePassword(ctx, h.([]byte), password); err != nil && !errors.Is(err, bcrypt.ErrMismatchedHashAndPassword) {
		return err
	}
	return errBadLogin
}

// checkLoginPassword refuses a password bcrypt cannot check in full
// (BAD_USER_INPUT on "password"); shorter-than-allowed passwords are left
// to fail as wrong ones.
func checkLoginPassword(password string) error {
	if len(password) > MaxPasswordLen {
		return weibo.BadInput("password", "password must be at most %d bytes", MaxPasswordLen)
	}
	return nil
}
