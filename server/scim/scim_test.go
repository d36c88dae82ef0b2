package scim_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
)

// q is a query string of a filter and more pairs.
func q(filter string, more ...string) string {
	v := url.Values{}
	if filter != "" {
		v.Set("filter", filter)
	}
	for i := 0; i+1 < len(more); i += 2 {
		v.Set(more[i], more[i+1])
	}
	return "?" + v.Encode()
}

func TestDiscovery(t *testing.T) {
	forBackends(t, func(t *testing.T, b testenv.Backend) {
		e := start(t, b, nil)
		spc := e.want(e.do(http.MethodGet, "/ServiceProviderConfig", ""), http.StatusOK, "ServiceProviderConfig")
		for path, want := range map[string]any{
			"patch.supported": true, "filter.supported": true, "filter.maxResults": float64(200),
			"etag.supported": true, "bulk.supported": false, "changePassword.supported": false, "sort.supported": false,
		} {
			if got := spc.get(path); got != want {
				t.Errorf("ServiceProviderConfig %s = %v, want %v", path, got, want)
			}
		}
		if s := spc.list("authenticationSchemes"); len(s) != 1 || s[0]["type"] != "oauthbearertoken" {
			t.Errorf("authenticationSchemes = %v", s)
		}
		rt := e.want(e.do(http.MethodGet, "/ResourceTypes", ""), http.StatusOK, "ResourceTypes")
		var endpoints []string
		for _, r := range rt.list("Resources") {
			endpoints = append(endpoints, r["endpoint"].(string))
		}
		if !slices.Equal(endpoints, []string{"/Users", "/Groups"}) {
			t.Errorf("ResourceTypes endpoints = %v", endpoints)
		}
		sc := e.want(e.do(http.MethodGet, "/Schemas", ""), http.StatusOK, "Schemas")
		var ids []string
		for _, s := range sc.list("Resources") {
			ids = append(ids, s["id"].(string))
		}
		for _, id := range []string{"urn:ietf:params:scim:schemas:core:2.0:User", "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User",
			"urn:ietf:params:scim:schemas:core:2.0:Group", "urn:weibohbase:params:scim:schemas:extension:gateway:2.0:Group"} {
			if !slices.Contains(ids, id) {
				t.Errorf("Schemas lacks %s: %v", id, ids)
			}
		}
		user := e.want(e.do(http.MethodGet, "/Schemas/urn:ietf:params:scim:schemas:core:2.0:User", ""), http.StatusOK, "User schema")
		var names []string
		for _, a := range user.list("attributes") {
			names = append(names, a["name"].(string))
		}
		// Exactly what the gateway keeps: no phoneNumbers, addresses, ...
		if want := []string{"userName", "name", "displayName", "title", "preferredLanguage", "locale", "active", "password", "emails", "groups"}; !slices.Equal(names, want) {
			t.Errorf("User attributes = %v, want %v", names, want)
		}
	})
}

// TestUsersRFC7644 runs the user examples of RFC 7644 §3.3, §3.4.2, §3.5.1,
// §3.5.2 and §3.6.
func TestUsersRFC7644(t *testing.T) {
	forBackends(t, func(t *testing.T, b testenv.Backend) {
		e := startOwn(t, b, nil)
		name := e.name("bjensen")
		// RFC 7644 §3.3.
		created := e.want(e.do(http.MethodPost, "/Users", body(`{
			"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],
			"userName":"{{name}}",
			"externalId":"{{name}}",
			"name":{
				"formatted":"Ms. Barbara J Jensen III",
				"familyName":"Jensen",
				"givenName":"Barbara"
			}
		}`, "name", name)), http.StatusCreated, "create")
		id := created.str("id")
		if _, err := weibo.ParseUserID(id); err != nil {
			t.Fatalf("id %q is not a user id", id)
		}
		if created.header.Get("Location") != "/scim/v2/Users/"+id || created.str("meta.location") != "/scim/v2/Users/"+id {
			t.Errorf("Location %q, meta.location %q", created.header.Get("Location"), created.str("meta.location"))
		}
		v1 := created.str("meta.version")
		if !strings.HasPrefix(v1, `W/"`) || created.header.Get("ETag") != v1 {
			t.Errorf("meta.version %q, ETag %q", v1, created.header.Get("ETag"))
		}
		if created.str("userName") != name || created.str("externalId") != name || created.get("active") != true ||
			created.str("name.familyName") != "Jensen" || created.str("meta.resourceType") != "User" {
			t.Errorf("created = %s", created.raw)
		}

		got := e.want(e.do(http.MethodGet, "/Users/"+id, ""), http.StatusOK, "get")
		if got.str("userName") != name || got.header.Get("ETag") != v1 {
			t.Errorf("get = %s (ETag %q)", got.raw, got.header.Get("ETag"))
		}

		// RFC 7644 §3.5.1: PUT replaces (roles is not kept: ignored).
		put := e.want(e.do(http.MethodPut, "/Users/"+id, body(`{
			"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],
			"id":"{{id}}",
			"userName":"{{name}}",
			"externalId":"{{name}}",
			"name":{
				"formatted":"Ms. Barbara J Jensen III",
				"familyName":"Jensen",
				"givenName":"Barbara",
				"middleName":"Jane"
			},
			"roles":[],
			"emails":[
				{"value":"bjensen@example.com"},
				{"value":"babs@jensen.org"}
			]
		}`, "id", id, "name", name), "If-Match", v1), http.StatusOK, "put")
		if put.str("name.middleName") != "Jane" || len(put.list("emails")) != 2 || put.str("meta.version") == v1 {
			t.Errorf("put = %s", put.raw)
		}

		// RFC 7644 §3.5.2.3: replace by a value filter.
		patched := e.want(e.do(http.MethodPatch, "/Users/"+id, `{
			"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
			"Operations":[
				{"op":"replace","path":"emails[value eq \"babs@jensen.org\"]","value":{"value":"babs@jensen.org","type":"home"}},
				{"op":"add","path":"emails[type eq \"work\"].value","value":"barbara@example.com"},
				{"op":"replace","path":"displayName","value":"Babs Jensen"}
			]
		}`), http.StatusOK, "patch")
		emails := patched.list("emails")
		if len(emails) != 3 || emails[1]["type"] != "home" || emails[2]["value"] != "barbara@example.com" || patched.str("displayName") != "Babs Jensen" {
			t.Errorf("patched = %s", patched.raw)
		}

		// RFC 7644 §3.4.2.2 filters.
		for _, f := range []string{
			`userName eq "` + name + `"`,
			`userName eq "` + strings.ToUpper(name) + `"`, // userName is not case exact
			`externalId eq "` + name + `"`,
			`name.familyName co "ense" and externalId eq "` + name + `"`,
			`emails.value eq "barbara@example.com" and userName sw "` + name[:len(name)-2] + `"`,
			`emails[type eq "home" and value ew "jensen.org"] and userName eq "` + name + `"`,
			`(displayName eq "Babs Jensen" or displayName eq "nobody") and active eq true and userName eq "` + name + `"`,
			`meta.lastModified gt "2011-05-13T04:42:34Z" and not (userName eq "x") and userName sw "` + name + `"`,
			`title pr or userName eq "` + name + `"`,
		} {
			list := e.want(e.do(http.MethodGet, "/Users"+q(f), ""), http.StatusOK, f)
			if list.get("totalResults") != float64(1) || len(list.list("Resources")) != 1 || list.list("Resources")[0]["id"] != id {
				t.Errorf("filter %s: %s", f, list.raw)
			}
		}
		for _, f := range []string{`userName eq "` + name + `x"`, `externalId eq "` + strings.ToUpper(name) + `"`, `active eq false and userName eq "` + name + `"`} {
			list := e.want(e.do(http.MethodGet, "/Users"+q(f), ""), http.StatusOK, f)
			if list.get("totalResults") != float64(0) {
				t.Errorf("filter %s: %s", f, list.raw)
			}
		}

		// RFC 7644 §3.4.3: POST .search.
		search := e.want(e.do(http.MethodPost, "/Users/.search", body(`{
			"schemas": ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"],
			"filter": "userName eq \"{{name}}\"",
			"startIndex": 1,
			"count": 10
		}`, "name", name)), http.StatusOK, ".search")
		if search.get("totalResults") != float64(1) || search.list("Resources")[0]["id"] != id {
			t.Errorf(".search: %s", search.raw)
		}

		// RFC 7644 §3.6: DELETE, then 404.
		e.want(e.do(http.MethodDelete, "/Users/"+id, ""), http.StatusNoContent, "delete")
		e.wantError(e.do(http.MethodGet, "/Users/"+id, ""), http.StatusNotFound, "", "get after delete")
		e.wantError(e.do(http.MethodDelete, "/Users/"+id, ""), http.StatusNotFound, "", "delete again")
		// Its names stay taken.
		e.wantError(e.do(http.MethodPost, "/Users", body(`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"{{name}}"}`, "name", name)),
			http.StatusConflict, "uniqueness", "create a deleted user's name")
	})
}

func TestUsersPaging(t *testing.T) {
	forBackends(t, func(t *testing.T, b testenv.Backend) {
		e := startOwn(t, b, nil)
		var ids []string
		for i := range 5 {
			r := e.want(e.do(http.MethodPost, "/Users", body(`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"{{n}}","title":"pager{{tag}}"}`,
				"n", e.name("pager")+string(rune('a'+i)), "tag", e.tag)), http.StatusCreated, "create")
			ids = append(ids, r.str("id"))
		}
		f := `title eq "pager` + e.tag + `"`
		var seen []string
		for start := 1; start <= 5; start += 2 {
			page := e.want(e.do(http.MethodGet, "/Users"+q(f, "startIndex", strconv.Itoa(start), "count", "2"), ""), http.StatusOK, "page")
			if page.get("totalResults") != float64(5) || page.get("startIndex") != float64(start) {
				t.Errorf("page at %d: %s", start, page.raw)
			}
			for _, r := range page.list("Resources") {
				seen = append(seen, r["id"].(string))
			}
		}
		if !slices.Equal(seen, ids) {
			t.Errorf("pages = %v, want %v (id order)", seen, ids)
		}
		zero := e.want(e.do(http.MethodGet, "/Users"+q(f, "count", "0"), ""), http.StatusOK, "count 0")
		if zero.get("totalResults") != float64(5) || len(zero.list("Resources")) != 0 {
			t.Errorf("count 0: %s", zero.raw)
		}
	})
}

// TestPatchNoLostUpdate sends PATCHes of one user at once without
// If-Match: each is applied to the version it read and starts over when
// another landed in between, so every one of them is in the end.
func TestPatchNoLostUpdate(t *testing.T) {
	forBackends(t, func(t *testing.T, b testenv.Backend) {
		e := start(t, b, nil)
		uid := e.want(e.do(http.MethodPost, "/Users", body(`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"{{n}}"}`, "n", e.name("storm."))),
			http.StatusCreated, "create").str("id")
		const writers, each = 4, 3
		var wg sync.WaitGroup
		statuses := make(chan int, writers*each)
		for w := range writers {
			wg.Go(func() {
				for i := range each {
					r := e.call(http.MethodPatch, "/Users/"+uid, "default", fmt.Sprintf(`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
						"Operations":[{"op":"add","path":"emails","value":[{"value":"w%d.%d@example.com"}]}]}`, w, i))
					statuses <- r.status
				}
			})
		}
		wg.Wait()
		close(statuses)
		for s := range statuses {
			if s != http.StatusOK {
				t.Errorf("a PATCH answered %d", s)
			}
		}
		got := e.want(e.do(http.MethodGet, "/Users/"+uid, ""), http.StatusOK, "get")
		if n := len(got.list("emails")); n != writers*each {
			t.Errorf("%d emails, want %d: %s", n, writers*each, got.raw)
		}
		if v := got.str("meta.version"); v != fmt.Sprintf(`W/"%d"`, writers*each+1) {
			t.Errorf("version %s, want %d changes after the create", v, writers*each)
		}
	})
}
