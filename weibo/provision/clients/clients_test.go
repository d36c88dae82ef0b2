package clients_test

import (
	"strings"
	"testing"

	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/provision/clients"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestClients creates, authenticates, lists and revokes clients on both
// backends, and checks what is refused.
func TestClients(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := b.OpenOwn(t, tables.Namespace, "clients")
			if err := tables.Migrate(t.Context(), st); err != nil {
				t.Fatal(err)
			}
			cs := clients.New(st, nil)
			ctx := t.Context()
			okta, c, err := cs.Create(ctx, "okta", clients.DefaultRank)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(okta, clients.TokenPrefix) || c.Name != "okta" || c.Rank != 500 {
				t.Fatalf("Create = %q, %+v", okta, c)
			}
			entra, _, err := cs.Create(ctx, "entra-id", 300)
			if err != nil {
				t.Fatal(err)
			}
			// okta's token with its last character changed (to one it is not).
			last := "A"
			if strings.HasSuffix(okta, last) {
				last = "B"
			}
			for _, tc := range []struct {
				token string
				want  string
				rank  int
			}{
				{okta, "okta", 500},
				{entra, "entra-id", 300},
				{okta[:len(okta)-1] + last, "", 0},
				{"scim_short", "", 0},
				{"eyJhbGciOiJIUzI1NiJ9.e30.sig", "", 0},
				{"", "", 0},
			} {
				got, err := cs.Authenticate(ctx, tc.token)
				if err != nil {
					t.Fatal(err)
				}
				if (got == nil) != (tc.want == "") || got != nil && (got.Name != tc.want || got.Rank != tc.rank) {
					t.Errorf("Authenticate(%.12q…) = %+v, want %q rank %d", tc.token, got, tc.want, tc.rank)
				}
			}
			if _, _, err := cs.Create(ctx, "okta", 10); weibo.CodeOf(err) != weibo.CodeBadUserInput {
				t.Errorf("a second okta: %v", err)
			}
			for _, bad := range []struct {
				name string
				rank int
			}{{"", 1}, {"has space", 1}, {"-dash", 1}, {strings.Repeat("a", 65), 1}, {"fine", 0}, {"fine", 1001}} {
				if _, _, err := cs.Create(ctx, bad.name, bad.rank); weibo.CodeOf(err) != weibo.CodeBadUserInput {
					t.Errorf("Create(%q, %d): %v, want BAD_USER_INPUT", bad.name, bad.rank, err)
				}
			}
			list, err := cs.List(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != 2 || list[0].Name != "entra-id" || list[1].Name != "okta" || list[1].Created.IsZero() {
				t.Fatalf("List = %+v", list)
			}
			if ok, err := cs.Revoke(ctx, "okta"); err != nil || !ok {
				t.Fatalf("Revoke = %v, %v", ok, err)
			}
			if ok, err := cs.Revoke(ctx, "okta"); err != nil || ok {
				t.Fatalf("second Revoke = %v, %v", ok, err)
			}
			if got, err := cs.Authenticate(ctx, okta); err != nil || got != nil {
				t.Fatalf("a revoked token authenticates: %+v, %v", got, err)
			}
			if got, err := cs.Authenticate(ctx, entra); err != nil || got == nil {
				t.Fatalf("another client's token: %+v, %v", got, err)
			}
			again, _, err := cs.Create(ctx, "okta", 200)
			if err != nil || again == okta {
				t.Fatalf("re-created okta: %v (same token %v)", err, again == okta)
			}
		})
	}
}
