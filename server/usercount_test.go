package server_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/weibohbase/gateway/fsck"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestUsersTotalCount: Query.users' totalCount without a filter is the
// number of all users, from the kept counter: exact after registrations
// over HTTP and concurrent ones through the domain, not moved by a
// registration refused, equal to the length of the unfiltered list;
// with a filter it stays what the filter's counter gives (null for a
// username prefix). fsck finds nothing. Each backend's store is one of
// its own, so the count is this test's users.
func TestUsersTotalCount(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g := startGateway(t, b.OpenOwn(t, tables.Namespace, "users"))
			tag := strings.ToLower(uniqueName("tc"))
			total := func(token string, filter map[string]any) *int {
				t.Helper()
				return g.users(token, filter, 2, nil).TotalCount
			}
			want := func(token string, n int) {
				t.Helper()
				if got := total(token, nil); got == nil || *got != n {
					t.Fatalf("users.totalCount = %v, want %d", got, n)
				}
			}
			a := g.register(tag + "a")
			g.makeAdmin(a) // users needs MANAGE_USERS; the grant adds no user
			want(a.token, 1)
			for i := range 3 {
				g.register(fmt.Sprintf("%su%d", tag, i))
			}
			want(a.token, 4)
			g.fails("", "BAD_USER_INPUT", `mutation($u: String!) { register(username: $u, password: "correct horse") { token } }`,
				map[string]any{"u": strings.ToUpper(tag + "a")})
			want(a.token, 4)

			// Concurrent registrations, through the domain (sign-ups over
			// HTTP are rate limited per address).
			var wg sync.WaitGroup
			errs := make([]error, 40)
			for i := range errs {
				wg.Go(func() {
					_, errs[i] = g.svc.Accounts.Register(context.Background(), fmt.Sprintf("%sc%02d", tag, i), "correct horse")
				})
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			want(a.token, 44)
			if got := g.allUsers(a.token, nil, 10); len(got) != 44 {
				t.Errorf("users lists %d users, totalCount 44", len(got))
			}
			var only struct{ Users struct{ TotalCount *int } }
			g.ok(a.token, `{ users { totalCount } }`, nil, &only)
			if n := only.Users.TotalCount; n == nil || *n != 44 {
				t.Errorf("users { totalCount } = %v, want 44", n)
			}
			if n := total(a.token, map[string]any{}); n == nil || *n != 44 {
				t.Errorf("users(filter: {}).totalCount = %v, want 44", n)
			}
			if n := total(a.token, map[string]any{"usernamePrefix": tag + "u"}); n != nil {
				t.Errorf("users(filter: {usernamePrefix}).totalCount = %d, want null", *n)
			}
			rep, err := fsck.Run(t.Context(), g.svc, fsck.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Issues) > 0 {
				t.Errorf("fsck: %+v", rep.Issues)
			}
		})
	}
}
