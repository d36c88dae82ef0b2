package provision_test

import (
	"testing"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/provision"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestFsckRepairs damages provisioning's rows behind its back, on both
// backends, and checks that fsck reports each damage once, repairs it,
// and finds nothing after.
func TestFsckRepairs(t *testing.T) {
	eachBackend(t, func(t *testing.T, d *domain.Domain, _ *domaintest.Faults) {
		ctx := t.Context()
		st := d.Store()
		p := d.Provision
		a := must(p.CreateUser(ctx, okta, provision.UserInput{UserName: "alice@corp.example", ExternalID: "ext-a", Active: true}))
		b := must(p.CreateUser(ctx, okta, provision.UserInput{UserName: "bob@corp.example", ExternalID: "ext-b", Active: true}))
		c := must(p.CreateUser(ctx, okta, provision.UserInput{UserName: "carol@corp.example", Active: true}))
		dept := must(p.CreateGroup(ctx, okta, provision.GroupInput{DisplayName: "Legal", ExternalID: "ext-legal", Members: []weibo.UserID{c.ID}}))
		n := must(weibo.ParseNodeID(dept.ID))
		want := domaintest.Damaged(t, []domaintest.Damage{
			{Kind: provision.IssueLoginMissing, Do: func() error {
				return st.Delete(ctx, &hbase.Delete{Table: tables.Usernames, Row: tables.UsernameKey("alice@corp.example")})
			}},
			{Kind: provision.IssueUsernameStale, Do: func() error {
				return st.Put(ctx, &hbase.Put{Table: tables.Usernames, Row: tables.UsernameKey("old.name@corp.example"),
					Values: hbase.Values{tables.FamName: {tables.ColUID: tables.EncodeID(b.ID)}}})
			}},
			{Kind: provision.IssueManagedMissing, Do: func() error {
				return st.Delete(ctx, &hbase.Delete{Table: tables.Scim, Row: tables.ScimManagedUserKey(b.ID)})
			}},
			{Kind: provision.IssueManagedStale, Do: func() error {
				return st.Put(ctx, &hbase.Put{Table: tables.Scim, Row: tables.ScimManagedUserKey(987654321),
					Values: hbase.Values{tables.FamScim: {tables.ColScimClient: []byte("okta")}}})
			}},
			{Kind: provision.IssueIndexMissing, Do: func() error {
				return st.Delete(ctx, &hbase.Delete{Table: tables.Scim, Row: tables.ScimExternalIDKey('d', "ext-legal", uint64(n.Dept))})
			}},
			{Kind: provision.IssueIndexStale, Do: func() error {
				return st.Put(ctx, &hbase.Put{Table: tables.Scim, Row: tables.ScimExternalIDKey('u', "ext-zzz", uint64(a.ID)),
					Values: hbase.Values{tables.FamScim: {tables.ColScimAt: tables.EncodeMillis(1)}}})
			}},
			{Kind: provision.IssueCloseUnfinished, Do: func() error { // and its managed row is stale
				return st.Put(ctx, &hbase.Put{Table: tables.Users, Row: tables.UserKey(c.ID),
					Values: hbase.Values{tables.FamInfo: {tables.ColClosedAt: tables.EncodeMillis(1)}}})
			}},
		})
		want[provision.IssueManagedStale]++
		domaintest.FsckRepairs(t, d, want)
		if got := must(p.UserByName(ctx, "ALICE@corp.example")); got == nil || got.ID != a.ID {
			t.Errorf("login name not claimed again: %+v", got)
		}
		if got := must(p.GetGroup(ctx, dept.ID, true)); len(got.Members) != 0 {
			t.Errorf("closed user still a member: %+v", got.Members)
		}
		if got := must(p.GroupsByExternalID(ctx, "ext-legal")); len(got) != 1 {
			t.Errorf("index row not written again: %+v", got)
		}
	})
}
