package provision_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/provision"
)

// TestStorm has two clients PATCH the same department and role (adding
// and removing overlapping members) and PUT the same user at once, on
// both backends: every call succeeds or is refused as a concurrent
// update, the member lists match their counters exactly, the user is
// one of the clients' versions, and fsck finds nothing.
func TestStorm(t *testing.T) {
	eachBackend(t, func(t *testing.T, d *domain.Domain, _ *domaintest.Faults) {
		ctx := t.Context()
		p := d.Provision
		us := newUsers(t, d, "storm.", 6)
		target := us[0]
		dept := must(p.CreateGroup(ctx, okta, provision.GroupInput{DisplayName: "Storm", Members: us[1:3]}))
		role := must(p.CreateGroup(ctx, okta, provision.GroupInput{Kind: provision.KindRole, DisplayName: "Stormers", Priority: 5, Members: us[2:4]}))
		clients := []provision.Client{{Name: "okta", Rank: 500}, {Name: "entra", Rank: 600}}
		const rounds = 12
		var wg sync.WaitGroup
		errs := make(chan error, 2*rounds*3)
		for ci, c := range clients {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(ci), 7))
				members := us[1:]
				for i := range rounds {
					pick := func() []weibo.UserID {
						a, b := members[r.IntN(len(members))], members[r.IntN(len(members))]
						return []weibo.UserID{a, b}
					}
					for _, g := range []string{dept.ID, role.ID} {
						if _, err := p.PatchGroup(ctx, c, g, provision.GroupChange{Add: pick(), Remove: pick()}, nil); err != nil {
							errs <- fmt.Errorf("%s patch %s: %w", c.Name, g, err)
						}
					}
					in := provision.UserInput{UserName: fmt.Sprintf("%s.%d@corp.example", c.Name, i), ExternalID: c.Name, Active: i%3 != 0}
					if _, err := p.ReplaceUser(ctx, c, target, in, nil); err != nil {
						errs <- fmt.Errorf("%s replace: %w", c.Name, err)
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if code(err) != "BAD_USER_INPUT/"+weibo.ReasonConcurrentUpdate {
				t.Error(err)
			}
		}
		for _, id := range []string{dept.ID, role.ID} {
			g := must(p.GetGroup(ctx, id, true))
			if n := counts(t, d, g); n != int64(len(g.Members)) {
				t.Errorf("%s: %d members, counter %d", id, len(g.Members), n)
			}
		}
		u := must(p.GetUser(ctx, target))
		if got := must(p.UserByName(ctx, u.UserName)); got == nil || got.ID != target {
			t.Errorf("the user's userName %q finds %+v", u.UserName, got)
		}
		if got := must(p.UsersByExternalID(ctx, u.ExternalID)); len(got) != 1 {
			t.Errorf("the user's externalId %q finds %+v", u.ExternalID, got)
		}
		cleanFsck(t, d)
	})
}
