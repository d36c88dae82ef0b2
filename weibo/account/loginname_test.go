package account_test

import (
	"strings"
	"testing"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/account"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestValidLoginName pins the login-name rule: 1 to 128 printable
// characters of UTF-8.
func TestValidLoginName(t *testing.T) {
	for name, want := range map[string]bool{
		"u1": true, "test.user@okta.local": true, "Zhang San 张三": true, strings.Repeat("é", 128): true,
		"": false, strings.Repeat("a", 129): false, "tab\there": false, "nl\n": false, "\xff": false, "zero\u200bwidth": false,
	} {
		if got := account.ValidLoginName(name); got != want {
			t.Errorf("ValidLoginName(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestLoginByLoginName checks, on both backends, that a provisioned
// user logs in with its login name and its username in any case, and
// that a usernames row its user does not name (left by a change that
// died) logs nobody in.
func TestLoginByLoginName(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			d := domaintest.Quiet(domaintest.OwnStore(t, b))
			login := domaintest.Uniq("first.last") + "@corp.example"
			stem := domaintest.Uniq("first_last")
			u, err := d.Accounts.CreateProvisioned(ctx, account.Provisioned{
				Username:  func(i int) string { return []string{stem, ""}[min(i, 1)] },
				LoginName: login, Password: "correct horse",
				Info: map[string][]byte{tables.ColLoginName: []byte(login)},
			}, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{login, strings.ToUpper(login), stem} {
				if got, err := d.Accounts.Login(ctx, name, "correct horse"); err != nil || got.ID != u.ID {
					t.Errorf("Login(%s) = %v, %v", name, got, err)
				}
			}
			stale := domaintest.Uniq("stale") + "@corp.example"
			if err := d.Store().Put(ctx, &hbase.Put{Table: tables.Usernames, Row: tables.UsernameKey(stale),
				Values: hbase.Values{tables.FamName: {tables.ColUID: tables.EncodeID(u.ID)}}}); err != nil {
				t.Fatal(err)
			}
			if _, err := d.Accounts.Login(ctx, stale, "correct horse"); weibo.CodeOf(err) != weibo.CodeUnauthenticated {
				t.Errorf("Login(a stale row) = %v, want UNAUTHENTICATED", err)
			}
			if _, err := d.Accounts.CreateProvisioned(ctx, account.Provisioned{Username: func(int) string { return "" }, LoginName: login}, nil); weibo.CodeOf(err) != weibo.CodeBadUserInput {
				t.Errorf("a taken login name: %v", err)
			}
		})
	}
}
