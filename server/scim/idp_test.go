package scim_test

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/audit"
)

// memberIDs returns the member ids of a group response.
func memberIDs(r response) []string {
	var out []string
	for _, m := range r.list("members") {
		out = append(out, m["value"].(string))
	}
	slices.Sort(out)
	return out
}

// TestEntraID provisions as Microsoft Entra ID does, with the requests of
// its SCIM endpoint guide ("Develop and plan provisioning for a SCIM
// endpoint"): the user query before a create, the create, PATCH with
// op names in capitals and booleans as strings, groups created empty and
// filled by PATCH, deactivation, delete.
func TestEntraID(t *testing.T) {
	forBackends(t, func(t *testing.T, b testenv.Backend) {
		e := start(t, b, nil)
		userName := "Test_User_" + e.tag + "@testuser.com"
		none := e.want(e.do(http.MethodGet, "/Users"+q(`userName eq "`+userName+`"`), ""), http.StatusOK, "query before create")
		if none.get("totalResults") != float64(0) || len(none.list("Resources")) != 0 {
			t.Errorf("query before create: %s", none.raw)
		}
		user := e.want(e.do(http.MethodPost, "/Users", body(`{
			"schemas": [
				"urn:ietf:params:scim:schemas:core:2.0:User",
				"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],
			"externalId": "0a21f0f2-8d2a-4f8e-bf98-{{tag}}",
			"userName": "{{userName}}",
			"active": true,
			"emails": [{
				"primary": true,
				"type": "work",
				"value": "Test_User_fd0ea19b-0777-472c-9f96-4f70d2226f2e@testuser.com"
			}],
			"meta": {"resourceType": "User"},
			"name": {
				"formatted": "givenName familyName",
				"familyName": "familyName",
				"givenName": "givenName"
			},
			"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": {"employeeNumber": "701984", "department": "Tour Operations"},
			"roles": []
		}`, "userName", userName, "tag", e.tag)), http.StatusCreated, "create user")
		uid := user.str("id")
		if user.ext("urn:ietf:params:scim:schemas:extension:enterprise:2.0:User", "employeeNumber") != "701984" {
			t.Errorf("enterprise extension: %s", user.raw)
		}
		found := e.want(e.do(http.MethodGet, "/Users"+q(`userName eq "`+userName+`"`), ""), http.StatusOK, "query after create")
		if found.get("totalResults") != float64(1) || found.list("Resources")[0]["id"] != uid {
			t.Errorf("query after create: %s", found.raw)
		}

		// Update: a multi-valued attribute by a value filter, a name part,
		// an attribute the gateway does not keep (dropped).
		upd := e.want(e.do(http.MethodPatch, "/Users/"+uid, `{
			"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
			"Operations": [
				{"op": "Replace", "path": "emails[type eq \"work\"].value", "value": "updatedEmail@microsoft.com"},
				{"op": "Replace", "path": "name.familyName", "value": "updatedFamilyName"},
				{"op": "Add", "path": "phoneNumbers[type eq \"work\"].value", "value": "+1 555 0100"}
			]
		}`), http.StatusOK, "update user")
		if upd.list("emails")[0]["value"] != "updatedEmail@microsoft.com" || upd.str("name.familyName") != "updatedFamilyName" {
			t.Errorf("update user: %s", upd.raw)
		}

		// A PATCH that changes nothing the gateway keeps writes nothing.
		same := e.want(e.do(http.MethodPatch, "/Users/"+uid, `{
			"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
			"Operations": [
				{"op": "Replace", "path": "name.familyName", "value": "updatedFamilyName"},
				{"op": "Replace", "path": "phoneNumbers[type eq \"mobile\"].value", "value": "+1 555 0101"}
			]
		}`), http.StatusOK, "no-op update")
		if same.str("meta.version") != upd.str("meta.version") {
			t.Errorf("a no-op PATCH made version %s from %s", same.str("meta.version"), upd.str("meta.version"))
		}

		// Groups: created empty, filled and emptied by PATCH.
		second := e.want(e.do(http.MethodPost, "/Users", body(`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"Second_{{tag}}@testuser.com","active":true}`,
			"tag", e.tag)), http.StatusCreated, "second user").str("id")
		// Entra sends the manager as the manager's id, a string.
		mgr := e.want(e.do(http.MethodPatch, "/Users/"+uid, body(`{
			"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
			"Operations": [{"op": "Add", "path": "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager", "value": "{{m}}"}]
		}`, "m", second)), http.StatusOK, "set manager")
		if m, _ := mgr.ext("urn:ietf:params:scim:schemas:extension:enterprise:2.0:User", "manager").(map[string]any); m["value"] != second {
			t.Errorf("set manager: %s", mgr.raw)
		}
		grp := e.want(e.do(http.MethodPost, "/Groups", body(`{
			"schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group", "http://schemas.microsoft.com/2006/11/ResourceManagement/ADSCIM/2.0/Group"],
			"externalId": "8aa1a0c0-c4c3-4bc0-b4a5-{{tag}}",
			"displayName": "Entra {{tag}}",
			"meta": {"resourceType": "Group"}
		}`, "tag", e.tag)), http.StatusCreated, "create group")
		gid := grp.str("id")
		if grp.ext("urn:weibohbase:params:scim:schemas:extension:gateway:2.0:Group", "kind") != "department" || len(grp.list("members")) != 0 {
			t.Errorf("create group: %s", grp.raw)
		}
		byName := e.want(e.do(http.MethodGet, "/Groups"+q(`displayName eq "Entra `+e.tag+`"`, "excludedAttributes", "members"), ""), http.StatusOK, "group by name")
		if byName.get("totalResults") != float64(1) || byName.list("Resources")[0]["id"] != gid || byName.list("Resources")[0]["members"] != nil {
			t.Errorf("group by name: %s", byName.raw)
		}
		byExt := e.want(e.do(http.MethodGet, "/Groups"+q(`externalId eq "8aa1a0c0-c4c3-4bc0-b4a5-`+e.tag+`"`), ""), http.StatusOK, "group by externalId")
		if byExt.get("totalResults") != float64(1) || byExt.list("Resources")[0]["id"] != gid {
			t.Errorf("group by externalId: %s", byExt.raw)
		}
		add := e.do(http.MethodPatch, "/Groups/"+gid, body(`{
			"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
			"Operations": [{
				"op": "Add",
				"path": "members",
				"value": [{"$ref": null, "value": "{{a}}"}, {"$ref": null, "value": "{{b}}"}]
			}]
		}`, "a", uid, "b", second))
		e.want(add, http.StatusNoContent, "add members")
		if add.header.Get("ETag") == "" {
			t.Error("add members: no ETag")
		}
		g := e.want(e.do(http.MethodGet, "/Groups/"+gid, ""), http.StatusOK, "group")
		if want := sorted(uid, second); !slices.Equal(memberIDs(g), want) || g.header.Get("ETag") != add.header.Get("ETag") {
			t.Errorf("members after add = %v, want %v (ETag %q vs %q)", memberIDs(g), want, g.header.Get("ETag"), add.header.Get("ETag"))
		}
		u := e.want(e.do(http.MethodGet, "/Users/"+uid, ""), http.StatusOK, "user in group")
		if gs := u.list("groups"); len(gs) != 1 || gs[0]["value"] != gid {
			t.Errorf("user's groups = %v", gs)
		}
		e.want(e.do(http.MethodPatch, "/Groups/"+gid, body(`{
			"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
			"Operations": [{"op": "Remove", "path": "members", "value": [{"$ref": null, "value": "{{a}}"}]}]
		}`, "a", uid)), http.StatusNoContent, "remove member")
		g = e.want(e.do(http.MethodGet, "/Groups/"+gid, ""), http.StatusOK, "group")
		if !slices.Equal(memberIDs(g), []string{second}) {
			t.Errorf("members after remove = %v", memberIDs(g))
		}

		// Deactivate: Entra sends the boolean as a string.
		off := e.want(e.do(http.MethodPatch, "/Users/"+uid, `{
			"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
			"Operations": [{"op": "Replace", "path": "active", "value": "False"}]
		}`), http.StatusOK, "deactivate")
		if off.get("active") != false {
			t.Errorf("deactivate: %s", off.raw)
		}
		e.want(e.do(http.MethodPatch, "/Users/"+uid, `{
			"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
			"Operations": [{"op": "Replace", "path": "active", "value": "True"}]
		}`), http.StatusOK, "reactivate")

		e.want(e.do(http.MethodDelete, "/Users/"+uid, ""), http.StatusNoContent, "delete user")
		e.wantError(e.do(http.MethodGet, "/Users/"+uid, ""), http.StatusNotFound, "", "deleted user")
		e.want(e.do(http.MethodDelete, "/Groups/"+gid, ""), http.StatusConflict, "delete a department with a member")
	})
}

func sorted(s ...string) []string {
	slices.Sort(s)
	return s
}

// TestOkta provisions as Okta does, with the requests of its SCIM 2.0
// reference: a user created with a password (who then logs in with
// either name), a group pushed with its members, renamed without a path,
// members removed by a value filter and added, the user deactivated with
// a no-path PATCH and reactivated.
func TestOkta(t *testing.T) {
	forBackends(t, func(t *testing.T, b testenv.Backend) {
		e := start(t, b, nil)
		ctx := t.Context()
		userName := "test.user." + e.tag + "@okta.local"
		e.want(e.do(http.MethodGet, "/Users"+q(`userName eq "`+userName+`"`, "startIndex", "1", "count", "100"), ""), http.StatusOK, "check user")
		user := e.want(e.do(http.MethodPost, "/Users", body(`{
			"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"],
			"userName": "{{userName}}",
			"name": {"givenName": "Test", "familyName": "User"},
			"emails": [{"primary": true, "value": "{{userName}}", "type": "work"}],
			"displayName": "Test User",
			"locale": "en-US",
			"externalId": "00ujl29u0le5T6Aj10h7{{tag}}",
			"groups": [],
			"password": "1mz050nq",
			"active": true
		}`, "userName", userName, "tag", e.tag)), http.StatusCreated, "create user")
		uid := user.str("id")
		if user.get("password") != nil || user.str("locale") != "en-US" || user.str("displayName") != "Test User" {
			t.Errorf("create user: %s", user.raw)
		}
		if _, err := e.d.Accounts.Login(ctx, userName, "1mz050nq"); err != nil {
			t.Fatalf("login with the userName: %v", err)
		}
		// The audit log names the client, no actor.
		id, err := weibo.ParseUserID(uid)
		if err != nil {
			t.Fatal(err)
		}
		target := weibo.NodeID{Kind: weibo.NodeUser, User: id}
		first := 10
		evs, err := e.d.Org.Audit.Page(ctx, audit.Filter{Target: &target}, &first, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs.Edges) == 0 {
			t.Errorf("no audit event of the created user")
		}
		for _, ed := range evs.Edges {
			if ed.Event.Client != e.client || ed.Event.Actor != 0 {
				t.Errorf("audit event %s: client %q actor %d, want %q and 0", ed.Event.Action, ed.Event.Client, ed.Event.Actor, e.client)
			}
		}

		other := e.want(e.do(http.MethodPost, "/Users", body(`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"other.{{tag}}@okta.local"}`,
			"tag", e.tag)), http.StatusCreated, "second user").str("id")
		grp := e.want(e.do(http.MethodPost, "/Groups", body(`{
			"schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group", "urn:weibohbase:params:scim:schemas:extension:gateway:2.0:Group"],
			"displayName": "Test SCIMv2 {{tag}}",
			"members": [{"value": "{{a}}", "display": "{{userName}}"}, {"value": "{{b}}"}],
			"urn:weibohbase:params:scim:schemas:extension:gateway:2.0:Group": {"kind": "role", "priority": 20}
		}`, "tag", e.tag, "a", uid, "b", other, "userName", userName)), http.StatusCreated, "push group")
		gid := grp.str("id")
		if want := sorted(uid, other); !slices.Equal(memberIDs(grp), want) {
			t.Errorf("pushed members = %v, want %v", memberIDs(grp), want)
		}
		if grp.ext("urn:weibohbase:params:scim:schemas:extension:gateway:2.0:Group", "priority") != float64(20) {
			t.Errorf("push group: %s", grp.raw)
		}
		e.want(e.do(http.MethodPatch, "/Groups/"+gid, body(`{
			"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
			"Operations": [{"op": "replace", "value": {"id": "{{gid}}", "displayName": "Renamed {{tag}}"}}]
		}`, "gid", gid, "tag", e.tag)), http.StatusNoContent, "rename group")
		e.want(e.do(http.MethodPatch, "/Groups/"+gid, body(`{
			"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
			"Operations": [{"op": "remove", "path": "members[value eq \"{{b}}\"]"}]
		}`, "b", other)), http.StatusNoContent, "remove member")
		v := e.want(e.do(http.MethodGet, "/Groups/"+gid, ""), http.StatusOK, "group").header.Get("ETag")
		same := e.want(e.do(http.MethodPatch, "/Groups/"+gid, body(`{
			"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
			"Operations": [{"op": "replace", "value": {"id": "{{gid}}", "displayName": "Renamed {{tag}}"}}]
		}`, "gid", gid, "tag", e.tag)), http.StatusNoContent, "rename to the same name")
		if same.header.Get("ETag") != v {
			t.Errorf("a no-op group PATCH: ETag %q, was %q", same.header.Get("ETag"), v)
		}
		g := e.want(e.do(http.MethodGet, "/Groups/"+gid, ""), http.StatusOK, "group")
		if g.str("displayName") != "Renamed "+e.tag || !slices.Equal(memberIDs(g), []string{uid}) {
			t.Errorf("after rename and remove: %s", g.raw)
		}
		e.want(e.do(http.MethodPatch, "/Groups/"+gid, body(`{
			"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
			"Operations": [{"op": "add", "path": "members", "value": [{"value": "{{b}}", "display": "other"}]}]
		}`, "b", other)), http.StatusNoContent, "add member")
		g = e.want(e.do(http.MethodGet, "/Groups/"+gid, ""), http.StatusOK, "group")
		if want := sorted(uid, other); !slices.Equal(memberIDs(g), want) {
			t.Errorf("after add = %v, want %v", memberIDs(g), want)
		}
		roles := e.want(e.do(http.MethodGet, "/Users/"+other, ""), http.StatusOK, "member").list("groups")
		if len(roles) != 1 || roles[0]["value"] != gid {
			t.Errorf("member's groups = %v", roles)
		}

		// Deactivate: no path, a map of attributes (one the gateway does
		// not keep, nickName, dropped).
		off := e.want(e.do(http.MethodPatch, "/Users/"+uid, `{
			"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
			"Operations": [{"op": "replace", "value": {"active": false, "nickName": "tu"}}]
		}`), http.StatusOK, "deactivate")
		if off.get("active") != false {
			t.Errorf("deactivate: %s", off.raw)
		}
		if _, err := e.d.Accounts.Login(ctx, userName, "1mz050nq"); weibo.CodeOf(err) != weibo.CodeAccountSuspended {
			t.Errorf("login of a deactivated user: %v, want %s", err, weibo.CodeAccountSuspended)
		}
		inactive := e.want(e.do(http.MethodGet, "/Users"+q(`active eq false and userName eq "`+userName+`"`), ""), http.StatusOK, "inactive users")
		if inactive.get("totalResults") != float64(1) {
			t.Errorf("active eq false: %s", inactive.raw)
		}
		e.want(e.do(http.MethodPatch, "/Users/"+uid, `{
			"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
			"Operations": [{"op": "replace", "value": {"active": true}}]
		}`), http.StatusOK, "reactivate")
		if _, err := e.d.Accounts.Login(ctx, userName, "1mz050nq"); err != nil {
			t.Errorf("login after reactivation: %v", err)
		}
		// Okta's PUT of the whole user, a new password with it.
		put := e.want(e.do(http.MethodPut, "/Users/"+uid, body(`{
			"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"],
			"id": "{{uid}}",
			"userName": "{{userName}}",
			"name": {"givenName": "Another", "familyName": "User"},
			"emails": [{"primary": true, "value": "{{userName}}", "type": "work"}],
			"displayName": "Another User",
			"locale": "en-US",
			"externalId": "00ujl29u0le5T6Aj10h7{{tag}}",
			"password": "t1meMa$heen",
			"active": true
		}`, "uid", uid, "userName", userName, "tag", e.tag)), http.StatusOK, "put user")
		if put.str("name.givenName") != "Another" {
			t.Errorf("put user: %s", put.raw)
		}
		if _, err := e.d.Accounts.Login(ctx, userName, "t1meMa$heen"); err != nil {
			t.Errorf("login with the new password: %v", err)
		}
		// PUT replaces the members.
		put = e.want(e.do(http.MethodPut, "/Groups/"+gid, body(`{
			"schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group", "urn:weibohbase:params:scim:schemas:extension:gateway:2.0:Group"],
			"displayName": "Renamed {{tag}}",
			"members": [{"value": "{{b}}"}],
			"urn:weibohbase:params:scim:schemas:extension:gateway:2.0:Group": {"kind": "role", "priority": 30}
		}`, "tag", e.tag, "b", other)), http.StatusOK, "put group")
		if !slices.Equal(memberIDs(put), []string{other}) || put.ext(gatewayExt, "priority") != float64(30) {
			t.Errorf("put group: %s", put.raw)
		}
		e.want(e.do(http.MethodDelete, "/Groups/"+gid, ""), http.StatusNoContent, "delete role")
		e.wantError(e.do(http.MethodGet, "/Groups/"+gid, ""), http.StatusNotFound, "", "deleted role")
	})
}

// TestGroupStorm has two clients PATCH one role at once, each adding its
// own users one by one, then removing every other one: the members are
// exactly those left, each user's groups agree.
func TestGroupStorm(t *testing.T) {
	forBackends(t, func(t *testing.T, b testenv.Backend) {
		e := start(t, b, nil)
		other, _, err := e.cl.Create(t.Context(), e.name("entra-"), 500)
		if err != nil {
			t.Fatal(err)
		}
		const per = 6
		users := make([][]string, 2)
		for c := range 2 {
			for i := range per {
				users[c] = append(users[c], e.want(e.do(http.MethodPost, "/Users", body(`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"{{n}}"}`,
					"n", fmt.Sprintf("storm%d.%d.%s", c, i, e.tag))), http.StatusCreated, "create").str("id"))
			}
		}
		gid := e.want(e.do(http.MethodPost, "/Groups", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:Group"],"displayName":"Storm `+e.tag+`",
			"urn:weibohbase:params:scim:schemas:extension:gateway:2.0:Group":{"kind":"role","priority":3}}`), http.StatusCreated, "create role").str("id")
		var wg sync.WaitGroup
		bad := make(chan string, 4*per)
		for c, token := range []string{e.token, other} {
			wg.Go(func() {
				patch := func(op, member string) {
					r := e.call(http.MethodPatch, "/Groups/"+gid, token, fmt.Sprintf(`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
						"Operations":[{"op":%q,"path":"members","value":[{"value":%q}]}]}`, op, member))
					if r.status != http.StatusNoContent {
						bad <- fmt.Sprintf("%s %s: %d %s", op, member, r.status, r.raw)
					}
				}
				for _, u := range users[c] {
					patch("Add", u)
				}
				for i, u := range users[c] {
					if i%2 == 1 {
						patch("Remove", u)
					}
				}
			})
		}
		wg.Wait()
		close(bad)
		for s := range bad {
			t.Error(s)
		}
		var want []string
		for c := range 2 {
			for i, u := range users[c] {
				in := e.want(e.do(http.MethodGet, "/Users/"+u, ""), http.StatusOK, "user").list("groups")
				if i%2 == 0 {
					want = append(want, u)
					if len(in) != 1 || in[0]["value"] != gid {
						t.Errorf("user %s's groups = %v, want %s", u, in, gid)
					}
				} else if len(in) != 0 {
					t.Errorf("removed user %s's groups = %v", u, in)
				}
			}
		}
		slices.Sort(want)
		if got := memberIDs(e.want(e.do(http.MethodGet, "/Groups/"+gid, ""), http.StatusOK, "role")); !slices.Equal(got, want) {
			t.Errorf("members = %v, want %v", got, want)
		}
	})
}
