package role_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/org"
)

// The helpers the weibo, fsck and seed tests share (internal/domaintest).
var (
	uniq      = domaintest.Uniq
	mustUser  = domaintest.MustUser
	userRoles = domaintest.UserRoles
	members   = domaintest.Members
	role      = domaintest.Role
)

// TestRoles covers create, rename, assign (with re-assign), revoke and
// delete, the priority order and bad input, on both backends.
func TestRoles(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := t.Context()
			svc := domaintest.Service(t, b.Open(t))
			tag := uniq("r")
			ming, hong := mustUser(t, svc, uniq("ming")), mustUser(t, svc, uniq("hong"))
			sport, err := svc.Org.Roles.Create(ctx, "  体育委员"+tag+" ")
			if err != nil {
				t.Fatal(err)
			}
			if sport.Name != "体育委员"+tag {
				t.Fatalf("name not trimmed: %q", sport.Name)
			}
			labor, _ := svc.Org.Roles.Create(ctx, "劳动委员"+tag)
			study, _ := svc.Org.Roles.Create(ctx, "学习委员"+tag)
			tieA, _ := svc.Org.Roles.Create(ctx, "a-tie"+tag)

			// Bad input writes nothing.
			_, err = svc.Org.Roles.Create(ctx, "   ")
			domaintest.WantCode(t, err, weibo.CodeBadUserInput, "empty role name")
			_, err = svc.Org.Roles.Create(ctx, "体育委员"+tag)
			domaintest.WantCode(t, err, weibo.CodeBadUserInput, "duplicate role name")
			if e, ok := errors.AsType[*weibo.Error](err); !ok || e.Reason != weibo.ReasonRoleNameTaken {
				t.Fatalf("duplicate name reason: %v", err)
			}
			_, err = svc.Org.Roles.Create(ctx, "A-TIE"+tag)
			domaintest.WantCode(t, err, weibo.CodeBadUserInput, "duplicate role name ignoring case")
			for _, p := range []int{org.MinPriority - 1, org.MaxPriority + 1, -5} {
				_, err = svc.Org.Roles.Assign(ctx, ming.ID, sport.ID, p)
				domaintest.WantCode(t, err, weibo.CodeBadUserInput, fmt.Sprintf("priority %d", p))
			}
			_, err = svc.Org.Roles.Assign(ctx, ming.ID, 999_999_999, 5)
			domaintest.WantCode(t, err, weibo.CodeNotFound, "unknown role")
			_, err = svc.Org.Roles.Assign(ctx, 999_999_999_999, sport.ID, 5)
			domaintest.WantCode(t, err, weibo.CodeNotFound, "unknown user")
			_, err = svc.Org.Roles.Revoke(ctx, ming.ID, 999_999_999)
			domaintest.WantCode(t, err, weibo.CodeNotFound, "revoke unknown role")
			_, err = svc.Org.Roles.Rename(ctx, 999_999_999, "x")
			domaintest.WantCode(t, err, weibo.CodeNotFound, "rename unknown role")
			_, err = svc.Org.Roles.Delete(ctx, 999_999_999)
			domaintest.WantCode(t, err, weibo.CodeNotFound, "delete unknown role")
			if got := userRoles(t, svc, ming.ID); len(got) != 0 {
				t.Fatalf("failed assigns wrote roles: %v", got)
			}
			if r := role(t, svc, sport.ID); r.MemberCount != 0 {
				t.Fatalf("member count after failed assigns = %d", r.MemberCount)
			}

			// The seed's examples: 小明 劳动委员 > 体育委员; 小红 学习委员 > 劳动委员 > 体育委员.
			assign := func(u *weibo.User, r *org.Role, p int) {
				t.Helper()
				if _, err := svc.Org.Roles.Assign(ctx, u.ID, r.ID, p); err != nil {
					t.Fatalf("assign: %v", err)
				}
			}
			assign(ming, sport, 9)
			assign(ming, labor, 10)
			assign(hong, sport, 8)
			assign(hong, labor, 9)
			assign(hong, study, 10)
			assign(hong, study, 10) // repeat: idempotent
			if got, want := userRoles(t, svc, hong.ID), []string{study.Name + ":10", labor.Name + ":9", sport.Name + ":8"}; !slices.Equal(got, want) {
				t.Fatalf("小红's roles = %v, want %v", got, want)
			}
			if got, want := userRoles(t, svc, ming.ID), []string{labor.Name + ":10", sport.Name + ":9"}; !slices.Equal(got, want) {
				t.Fatalf("小明's roles = %v, want %v", got, want)
			}
			// Ties by role name.
			assign(ming, tieA, 9)
			if got, want := userRoles(t, svc, ming.ID), []string{labor.Name + ":10", tieA.Name + ":9", sport.Name + ":9"}; !slices.Equal(got, want) {
				t.Fatalf("tie order = %v, want %v", got, want)
			}
			// Re-assigning updates the priority, not the count.
			assign(ming, sport, 100)
			if got := userRoles(t, svc, ming.ID); got[0] != sport.Name+":100" {
				t.Fatalf("after re-assign: %v", got)
			}
			if r := role(t, svc, sport.ID); r.MemberCount != 2 {
				t.Fatalf("体育委员 members = %d, want 2", r.MemberCount)
			}
			lo, hi := ming.ID, hong.ID
			plo, phi := 100, 8
			if hi < lo {
				lo, hi, plo, phi = hi, lo, phi, plo
			}
			if got, want := members(t, svc, sport.ID, 1), []string{fmt.Sprintf("%d:%d", lo, plo), fmt.Sprintf("%d:%d", hi, phi)}; !slices.Equal(got, want) {
				t.Fatalf("members paged by 1 = %v, want %v", got, want)
			}

			// Rename: to a taken name fails, case-only works, then a fresh name.
			_, err = svc.Org.Roles.Rename(ctx, sport.ID, labor.Name)
			domaintest.WantCode(t, err, weibo.CodeBadUserInput, "rename to a taken name")
			_, err = svc.Org.Roles.Rename(ctx, sport.ID, "")
			domaintest.WantCode(t, err, weibo.CodeBadUserInput, "rename to empty")
			if r, err := svc.Org.Roles.Rename(ctx, tieA.ID, "A-TIE"+tag); err != nil || r.Name != "A-TIE"+tag {
				t.Fatalf("case-only rename: %v %v", r, err)
			}
			renamed := "体育委员-renamed" + tag
			if _, err := svc.Org.Roles.Rename(ctx, sport.ID, renamed); err != nil {
				t.Fatal(err)
			}
			if r, _ := svc.Org.Roles.ByName(ctx, sport.Name); r != nil {
				t.Fatalf("old name still resolves to %+v", r)
			}
			if r, _ := svc.Org.Roles.ByName(ctx, renamed); r == nil || r.ID != sport.ID {
				t.Fatalf("new name resolves to %+v", r)
			}
			if _, err := svc.Org.Roles.Create(ctx, sport.Name); err != nil {
				t.Fatalf("old name not free after rename: %v", err)
			}

			// Roles list, by name, paged; contains ours in order.
			var listed []string
			var after *string
			two := 2
			for {
				p, err := svc.Org.Roles.List(ctx, &two, after)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range p.Edges {
					listed = append(listed, e.Role.Name)
				}
				if !p.PageInfo.HasNextPage {
					break
				}
				after = p.PageInfo.EndCursor
			}
			for _, n := range []string{tieA.Name, labor.Name, study.Name, renamed} {
				if !slices.Contains(listed, n) && !slices.Contains(listed, "A-TIE"+tag) {
					t.Fatalf("roles list misses %q: %v", n, listed)
				}
			}

			// Revoke, idempotent.
			for range 2 {
				if _, err := svc.Org.Roles.Revoke(ctx, hong.ID, labor.ID); err != nil {
					t.Fatal(err)
				}
			}
			if got, want := userRoles(t, svc, hong.ID), []string{study.Name + ":10", renamed + ":8"}; !slices.Equal(got, want) {
				t.Fatalf("after revoke: %v, want %v", got, want)
			}
			if r := role(t, svc, labor.ID); r.MemberCount != 1 {
				t.Fatalf("劳动委员 members after revoke = %d", r.MemberCount)
			}

			// HasRole / RequireRole.
			if ok, _ := svc.Org.Authz.HasRole(ctx, hong.ID, study.Name); !ok {
				t.Fatal("HasRole false for a held role")
			}
			if ok, _ := svc.Org.Authz.HasRole(ctx, ming.ID, study.Name); ok {
				t.Fatal("HasRole true for a role not held")
			}
			domaintest.WantCode(t, svc.Org.Authz.RequireRole(ctx, ming.ID, study.Name), weibo.CodeForbidden, "RequireRole")

			// Delete removes the role from every user.
			if ok, err := svc.Org.Roles.Delete(ctx, sport.ID); err != nil || !ok {
				t.Fatalf("delete: %v", err)
			}
			if role(t, svc, sport.ID) != nil {
				t.Fatal("deleted role still readable")
			}
			if got := userRoles(t, svc, ming.ID); slices.Contains(got, renamed+":100") || len(got) != 2 {
				t.Fatalf("小明's roles after delete = %v", got)
			}
			if got := members(t, svc, sport.ID, 10); len(got) != 0 {
				t.Fatalf("deleted role has members %v", got)
			}
			if _, err := svc.Org.Roles.Create(ctx, renamed); err != nil {
				t.Fatalf("name of a deleted role not free: %v", err)
			}
		})
	}
}
