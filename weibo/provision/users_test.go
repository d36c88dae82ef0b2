package provision_test

import (
	"testing"

	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/audit"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/org"
	"github.com/weibohbase/gateway/weibo/provision"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestDeriveUsername pins the derivation the package doc documents.
func TestDeriveUsername(t *testing.T) {
	for _, c := range []struct {
		in   string
		i    int
		want string
	}{
		{"test.user@okta.local", 0, "test_user"},
		{"test.user@okta.local", 1, "test_user_2"},
		{"test.user@okta.local", 98, "test_user_99"},
		{"a@b", 0, "uua"},
		{"..x..@y", 0, "uux"},
		{"@y", 0, "uuu"},
		{"名字.zhang@corp", 0, "zhang"},
		{"very.long.name.that.goes.on.and.on@corp", 0, "very_long_name_that_goes"},
		{"x@y", 100, ""},
	} {
		if got := provision.DeriveUsername(c.in, c.i); got != c.want {
			t.Errorf("DeriveUsername(%q, %d) = %q, want %q", c.in, c.i, got, c.want)
		}
	}
	if h := provision.DeriveUsername("test.user@okta.local", 99); len(h) != len("test_user_")+6 {
		t.Errorf("hash candidate %q", h)
	}
}

// TestUsers creates, reads, replaces, deactivates, finds and closes
// users, on both backends, and ends with a clean fsck.
func TestUsers(t *testing.T) {
	eachBackend(t, func(t *testing.T, d *domain.Domain, _ *domaintest.Faults) {
		ctx := t.Context()
		p := d.Provision
		in := provision.UserInput{UserName: "Test.User@okta.local", ExternalID: "ext-1", DisplayName: "Test User", Active: true,
			Password: "correct horse", Attrs: tables.ScimAttrs{Emails: []tables.ScimEmail{{Value: "test.user@okta.local", Type: "work", Primary: true}}}}
		u := must(p.CreateUser(ctx, okta, in))
		if u.UserName != in.UserName || u.Username != "Test_User" || u.ExternalID != "ext-1" || u.DisplayName != "Test User" ||
			!u.Active || u.Version != 1 || u.ProvisionedBy != "okta" || len(u.Attrs.Emails) != 1 {
			t.Fatalf("created %+v", u)
		}
		// Either name logs in, in any case.
		for _, name := range []string{"test.user@OKTA.local", "TEST_user"} {
			if _, err := d.Accounts.Login(ctx, name, "correct horse"); err != nil {
				t.Errorf("login %s: %v", name, err)
			}
		}
		// userName is unique ignoring case among login names and usernames.
		if _, err := p.CreateUser(ctx, okta, provision.UserInput{UserName: "TEST.USER@okta.local", Active: true}); code(err) != "BAD_USER_INPUT/USERNAME_TAKEN" {
			t.Errorf("same login name: %v", err)
		}
		if _, err := p.CreateUser(ctx, okta, provision.UserInput{UserName: "Test_User", Active: true}); code(err) != "BAD_USER_INPUT/USERNAME_TAKEN" {
			t.Errorf("userName = another's username: %v", err)
		}
		// A second derived from the same stem takes the next candidate.
		u2 := must(p.CreateUser(ctx, okta, provision.UserInput{UserName: "test.user@other.example", Active: true}))
		if u2.Username != "test_user_2" { // the stem ignoring case is taken
			t.Errorf("second username %q", u2.Username)
		}
		if _, err := p.CreateUser(ctx, okta, provision.UserInput{UserName: "bad\x01name", Active: true}); code(err) != "BAD_USER_INPUT" {
			t.Errorf("control character: %v", err)
		}
		// Reads.
		if got := must(p.UserByName(ctx, "TEST.user@okta.local")); got == nil || got.ID != u.ID {
			t.Errorf("by login name: %+v", got)
		}
		if got := must(p.UserByName(ctx, "test_user")); got == nil || got.ID != u.ID {
			t.Errorf("by username: %+v", got)
		}
		if got := must(p.UsersByExternalID(ctx, "ext-1")); len(got) != 1 || got[0].ID != u.ID {
			t.Errorf("by externalId: %+v", got)
		}
		if got := must(p.ListUsers(ctx, 0, 10)); len(got) != 2 || got[0].ID != u.ID || got[1].ID != u2.ID {
			t.Errorf("list: %+v", got)
		}
		if got := must(p.ListUsers(ctx, u.ID, 10)); len(got) != 1 || got[0].ID != u2.ID {
			t.Errorf("list after: %+v", got)
		}
		// Replace: a new login name, externalId, deactivation.
		in.UserName, in.ExternalID, in.Active, in.DisplayName = "renamed@okta.local", "ext-2", false, ""
		in.Password = ""
		stale := int64(0)
		if _, err := p.ReplaceUser(ctx, okta, u.ID, in, &stale); code(err) != "BAD_USER_INPUT/VERSION_MISMATCH" {
			t.Errorf("stale version: %v", err)
		}
		v := u.Version
		r := must(p.ReplaceUser(ctx, okta, u.ID, in, &v))
		if r.UserName != "renamed@okta.local" || r.Username != "Test_User" || r.ExternalID != "ext-2" || r.DisplayName != "" || r.Active || r.Version != 2 {
			t.Errorf("replaced %+v", r)
		}
		if got := must(p.UserByName(ctx, "test.user@okta.local")); got != nil {
			t.Errorf("old login name still finds %+v", got)
		}
		if got := must(p.UsersByExternalID(ctx, "ext-1")); len(got) != 0 {
			t.Errorf("old externalId still finds %+v", got)
		}
		if _, err := d.Accounts.Login(ctx, "renamed@okta.local", "correct horse"); code(err) != weibo.CodeAccountSuspended {
			t.Errorf("login while inactive: %v", err)
		}
		in.Active, in.Password = true, "battery staple"
		if r = must(p.ReplaceUser(ctx, okta, u.ID, in, nil)); !r.Active || r.Version != 3 {
			t.Errorf("reactivated %+v", r)
		}
		if _, err := d.Accounts.Login(ctx, "renamed@okta.local", "battery staple"); err != nil {
			t.Errorf("login after reactivation with the new password: %v", err)
		}
		if _, err := d.Accounts.Login(ctx, "renamed@okta.local", "correct horse"); code(err) != weibo.CodeUnauthenticated {
			t.Errorf("login with the old password: %v", err)
		}
		in.Password = ""
		if _, err := p.ReplaceUser(ctx, okta, u.ID, provision.UserInput{UserName: "u2@x", DisplayName: "  "}, nil); code(err) != weibo.CodeBadUserInput {
			t.Errorf("blank displayName: %v", err)
		}
		cleanFsck(t, d)
		// Close.
		if err := p.DeleteUser(ctx, okta, u.ID, &stale); code(err) != "BAD_USER_INPUT/VERSION_MISMATCH" {
			t.Errorf("stale close: %v", err)
		}
		if err := p.DeleteUser(ctx, okta, u.ID, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := p.GetUser(ctx, u.ID); code(err) != weibo.CodeNotFound {
			t.Errorf("closed user read: %v", err)
		}
		if err := p.DeleteUser(ctx, okta, u.ID, nil); code(err) != weibo.CodeNotFound {
			t.Errorf("closed again: %v", err)
		}
		if _, err := p.CreateUser(ctx, okta, provision.UserInput{UserName: "renamed@okta.local", Active: true}); code(err) != "BAD_USER_INPUT/USERNAME_TAKEN" {
			t.Errorf("a closed user's name: %v", err)
		}
		if got := must(p.ListUsers(ctx, 0, 10)); len(got) != 1 || got[0].ID != u2.ID {
			t.Errorf("list after close: %+v", got)
		}
		if _, err := d.Accounts.Login(ctx, "renamed@okta.local", "battery staple"); code(err) != weibo.CodeAccountSuspended {
			t.Errorf("login of a closed user: %v", err)
		}
		cleanFsck(t, d)
	})
}

// TestAuditClient checks that provisioning records its changes with the
// client's name and no actor: the create, the membership, the close.
func TestAuditClient(t *testing.T) {
	eachBackend(t, func(t *testing.T, d *domain.Domain, _ *domaintest.Faults) {
		ctx := t.Context()
		p := d.Provision
		u := must(p.CreateUser(ctx, okta, provision.UserInput{UserName: "audited@corp.example", Active: true}))
		must(p.CreateGroup(ctx, okta, provision.GroupInput{DisplayName: "Audited", Members: []weibo.UserID{u.ID}}))
		if err := p.DeleteUser(ctx, okta, u.ID, nil); err != nil {
			t.Fatal(err)
		}
		target := org.UserNode(u.ID)
		page := must(d.Org.Audit.Page(ctx, audit.Filter{Target: &target}, new(50), nil))
		seen := map[string]bool{}
		for _, e := range page.Edges {
			if e.Event.Client != "okta" || e.Event.Actor != 0 {
				t.Errorf("event %s: client %q actor %v", e.Event.Action, e.Event.Client, e.Event.Actor)
			}
			seen[e.Event.Action] = true
		}
		for _, a := range []string{provision.ActionProvision, org.ActionDeptSetMember, provision.ActionClose, "user.suspend"} {
			if !seen[a] {
				t.Errorf("no %s event among %v", a, seen)
			}
		}
	})
}
