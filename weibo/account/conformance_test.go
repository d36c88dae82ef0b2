package account_test

import (
	"context"
	"testing"

	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo/account"
	"github.com/weibohbase/gateway/weibo/counted/countedtest"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestRegisterConformance runs the conformance suite of counted relations
// (countedtest) over the registration, through the domain's API, on both
// backends: a register is killed at every step the relation declares and
// outlives its budget; after the restart's repair the number of all users
// is exact, the user exists exactly when the call got past its usernames
// row and fsck finds nothing. A registration has no reverse.
func TestRegisterConformance(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := domaintest.OwnStore(t, b)
			m := domaintest.DomainModule(tables.PendingRegister, "", nil, registerPair)
			m.NoReverse = true
			countedtest.Run(t, st, m)
		})
	}
}

// registerPair is the registration of a fresh username.
func registerPair(t *testing.T, d *domain.Domain) *countedtest.Pair[*domain.Domain] {
	name := domaintest.Uniq("newcomer")
	return &countedtest.Pair[*domain.Domain]{
		Do: func(ctx context.Context, d *domain.Domain) error {
			_, err := d.Accounts.Register(ctx, name, "correct horse")
			return err
		},
		Present: func(ctx context.Context, d *domain.Domain) (bool, error) {
			u, err := d.Accounts.UserByUsername(ctx, name)
			return u != nil, err
		},
	}
}

// The user count is the one counter of every registration.
var _ = account.UserCounter
