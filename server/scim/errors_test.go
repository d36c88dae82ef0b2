package scim_test

import (
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weibohbase/gateway/auth"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/server/scim"
)

// TestErrors answers every error status of RFC 7644 §3.12 the handler
// gives, as a SCIM error body.
func TestErrors(t *testing.T) {
	forBackends(t, func(t *testing.T, b testenv.Backend) {
		e := start(t, b, nil)
		ctx := t.Context()
		name := e.name("err.user")
		user := e.want(e.do(http.MethodPost, "/Users", body(`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"{{n}}"}`, "n", name)),
			http.StatusCreated, "create")
		uid, v0 := user.str("id"), user.str("meta.version")

		// 400 invalidFilter: bad syntax, an unknown attribute.
		for _, f := range []string{`userName eq`, `userName zz "x"`, `nickName eq "x"`, `(userName eq "x"`} {
			e.wantError(e.do(http.MethodGet, "/Users"+q(f), ""), http.StatusBadRequest, "invalidFilter", "filter "+f)
		}
		// 400 invalidSyntax: not JSON; no schemas.
		e.wantError(e.do(http.MethodPost, "/Users", `{"userName": `), http.StatusBadRequest, "invalidSyntax", "malformed body")
		e.wantError(e.do(http.MethodPost, "/Users", `{"userName":"x`+e.tag+`"}`), http.StatusBadRequest, "invalidSyntax", "no schemas")
		// 400 invalidValue: no userName; a userName over 128 characters;
		// a control character; a boolean that is no boolean; a bad PATCH.
		for what, b := range map[string]string{
			"no userName":        `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"displayName":"x"}`,
			"userName too long":  `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"` + strings.Repeat("a", 129) + `"}`,
			"control character":  `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"a\u0007b` + e.tag + `"}`,
			"active not boolean": `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"a` + e.tag + `","active":"maybe"}`,
		} {
			e.wantError(e.do(http.MethodPost, "/Users", b), http.StatusBadRequest, "invalidValue", what)
		}
		e.wantError(e.do(http.MethodPatch, "/Users/"+uid, `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[]}`),
			http.StatusBadRequest, "invalidValue", "PATCH without operations")
		// 400 mutability: a user's groups.
		e.wantError(e.do(http.MethodPatch, "/Users/"+uid, `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
			"Operations":[{"op":"add","path":"groups","value":[{"value":"role:1"}]}]}`), http.StatusBadRequest, "mutability", "PATCH groups")

		// 401: no header, another scheme, a GraphQL token, a revoked token.
		issuer := auth.NewIssuer(auth.RandomSecret(), time.Hour)
		jwt, err := issuer.Issue(1, time.Now(), 0)
		if err != nil {
			t.Fatal(err)
		}
		spare, _, err := e.cl.Create(ctx, e.name("spare-"), 500)
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := e.cl.Revoke(ctx, e.name("spare-")); err != nil || !ok {
			t.Fatalf("revoke: %v %v", ok, err)
		}
		for what, tok := range map[string]string{"no token": "", "GraphQL token": jwt, "revoked token": spare, "garbage": "scim_nope"} {
			r := e.call(http.MethodGet, "/Users/"+uid, tok, "")
			e.wantError(r, http.StatusUnauthorized, "", what)
			if !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("%s: WWW-Authenticate %q", what, r.header.Get("WWW-Authenticate"))
			}
		}
		basic := e.call(http.MethodGet, "/ServiceProviderConfig", "", "", "Authorization", "Basic dXNlcjpwYXNz")
		e.wantError(basic, http.StatusUnauthorized, "", "basic auth")

		// 404: an unknown user, an id that is none, an unknown group, an
		// unknown endpoint.
		for _, p := range []string{"/Users/999999999999", "/Users/abc", "/Things"} {
			e.wantError(e.do(http.MethodGet, p, ""), http.StatusNotFound, "", "GET "+p)
		}

		// 409 uniqueness: the userName in another case.
		e.wantError(e.do(http.MethodPost, "/Users", body(`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"{{n}}"}`, "n", strings.ToUpper(name))),
			http.StatusConflict, "uniqueness", "userName taken")

		// 412: a stale If-Match on PUT, PATCH and DELETE; the fresh one
		// passes.
		v1 := e.want(e.do(http.MethodPatch, "/Users/"+uid, `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
			"Operations":[{"op":"replace","path":"displayName","value":"One"}]}`, "If-Match", v0), http.StatusOK, "PATCH with If-Match").str("meta.version")
		if v1 == v0 {
			t.Fatalf("version did not change: %s", v1)
		}
		e.wantError(e.do(http.MethodPatch, "/Users/"+uid, `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
			"Operations":[{"op":"replace","path":"displayName","value":"Two"}]}`, "If-Match", v0), http.StatusPreconditionFailed, "", "stale PATCH")
		e.wantError(e.do(http.MethodPut, "/Users/"+uid, body(`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"{{n}}"}`, "n", name), "If-Match", v0),
			http.StatusPreconditionFailed, "", "stale PUT")
		e.wantError(e.do(http.MethodDelete, "/Users/"+uid, "", "If-Match", v0), http.StatusPreconditionFailed, "", "stale DELETE")
		if got := e.want(e.do(http.MethodGet, "/Users/"+uid, ""), http.StatusOK, "user").str("displayName"); got != "One" {
			t.Errorf("a refused write changed the user: displayName %q", got)
		}
		e.want(e.do(http.MethodDelete, "/Users/"+uid, "", "If-Match", v1), http.StatusNoContent, "DELETE with If-Match")
	})
}

// gatewayExt is the gateway's Group extension.
const gatewayExt = "urn:weibohbase:params:scim:schemas:extension:gateway:2.0:Group"

// TestGroupErrors answers the error statuses of groups.
func TestGroupErrors(t *testing.T) {
	forBackends(t, func(t *testing.T, b testenv.Backend) {
		e := start(t, b, nil)
		uid := e.want(e.do(http.MethodPost, "/Users", body(`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"{{n}}"}`, "n", e.name("grp.err"))),
			http.StatusCreated, "create user").str("id")
		// 400 invalidValue: a member that is no user id.
		e.wantError(e.do(http.MethodPost, "/Groups", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:Group"],"displayName":"g`+e.tag+`","members":[{"value":"nobody"}]}`),
			http.StatusBadRequest, "invalidValue", "a member that is no user id")
		// 400 mutability: a group's kind.
		dept := e.want(e.do(http.MethodPost, "/Groups", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:Group"],"displayName":"Dept `+e.tag+`"}`),
			http.StatusCreated, "create department").str("id")
		e.wantError(e.do(http.MethodPatch, "/Groups/"+dept, `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
			"Operations":[{"op":"replace","path":"urn:weibohbase:params:scim:schemas:extension:gateway:2.0:Group:kind","value":"role"}]}`),
			http.StatusBadRequest, "mutability", "PATCH kind")
		e.wantError(e.do(http.MethodPut, "/Groups/"+dept, `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:Group"],"displayName":"Dept `+e.tag+`",
			"urn:weibohbase:params:scim:schemas:extension:gateway:2.0:Group":{"kind":"role"}}`), http.StatusBadRequest, "mutability", "PUT kind")

		// 403: the rank rule. A role of priority at or above the client's
		// rank (500) cannot be made, nor a role raised there; a refused
		// request writes nothing.
		e.wantError(e.do(http.MethodPost, "/Groups", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:Group"],"displayName":"High `+e.tag+`",
			"urn:weibohbase:params:scim:schemas:extension:gateway:2.0:Group":{"kind":"role","priority":500}}`), http.StatusForbidden, "", "a role at the client's rank")
		if l := e.want(e.do(http.MethodGet, "/Groups"+q(`displayName eq "High `+e.tag+`"`), ""), http.StatusOK, "refused role"); l.get("totalResults") != float64(0) {
			t.Errorf("a refused create wrote a role: %s", l.raw)
		}
		low := e.want(e.do(http.MethodPost, "/Groups", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:Group"],"displayName":"Low `+e.tag+`",
			"members":[{"value":"`+uid+`"}],
			"urn:weibohbase:params:scim:schemas:extension:gateway:2.0:Group":{"kind":"role","priority":10}}`), http.StatusCreated, "create low role").str("id")
		e.wantError(e.do(http.MethodPatch, "/Groups/"+low, `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
			"Operations":[{"op":"replace","path":"urn:weibohbase:params:scim:schemas:extension:gateway:2.0:Group:priority","value":600}]}`),
			http.StatusForbidden, "", "raise a role to the client's rank")
		if g := e.want(e.do(http.MethodGet, "/Groups/"+low, ""), http.StatusOK, "low role"); g.ext(gatewayExt, "priority") != float64(10) || len(g.list("members")) != 1 {
			t.Errorf("a refused PATCH changed the role: %s", g.raw)
		}

		// 404: an unknown group.
		for _, p := range []string{"/Groups/role:999999999", "/Groups/department:999999999", "/Groups/nothing"} {
			e.wantError(e.do(http.MethodGet, p, ""), http.StatusNotFound, "", "GET "+p)
		}
		// 409 uniqueness: a role's name, ignoring case.
		e.wantError(e.do(http.MethodPost, "/Groups", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:Group"],"displayName":"low `+e.tag+`",
			"urn:weibohbase:params:scim:schemas:extension:gateway:2.0:Group":{"kind":"role"}}`), http.StatusConflict, "uniqueness", "role name taken")

		// 412: a stale If-Match on a group's PATCH.
		gv := e.want(e.do(http.MethodGet, "/Groups/"+dept, ""), http.StatusOK, "department").header.Get("ETag")
		e.want(e.do(http.MethodPatch, "/Groups/"+dept, `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
			"Operations":[{"op":"replace","path":"displayName","value":"Dept2 `+e.tag+`"}]}`, "If-Match", gv), http.StatusNoContent, "group PATCH with If-Match")
		e.wantError(e.do(http.MethodPatch, "/Groups/"+dept, `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
			"Operations":[{"op":"replace","path":"displayName","value":"Dept3 `+e.tag+`"}]}`, "If-Match", gv), http.StatusPreconditionFailed, "", "stale group PATCH")
	})
}

// TestRateLimit spends a client's budget: the next request is 429 with
// Retry-After, another client is not affected, and the budget comes back
// with time.
func TestRateLimit(t *testing.T) {
	forBackends(t, func(t *testing.T, b testenv.Backend) {
		var now atomic.Int64
		now.Store(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano())
		e := start(t, b, func(c *scim.Config) { c.RateLimit = 6; c.Now = func() time.Time { return time.Unix(0, now.Load()) } })
		for i := range 6 {
			e.want(e.do(http.MethodGet, "/ServiceProviderConfig", ""), http.StatusOK, "request "+strconv.Itoa(i+1))
		}
		r := e.do(http.MethodGet, "/ServiceProviderConfig", "")
		e.wantError(r, http.StatusTooManyRequests, "", "over the budget")
		if r.header.Get("Retry-After") != "10" {
			t.Errorf("Retry-After %q, want 10 (a unit per 10 s)", r.header.Get("Retry-After"))
		}
		// Another client has its own budget; a PATCH costs a unit per
		// operation and per member too, and a refused one spends nothing.
		other, _, err := e.cl.Create(t.Context(), e.name("other-"), 500)
		if err != nil {
			t.Fatal(err)
		}
		e.want(e.call(http.MethodGet, "/ServiceProviderConfig", other, ""), http.StatusOK, "another client")
		big := `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[
			{"op":"add","path":"members","value":[{"value":"1"},{"value":"2"},{"value":"3"},{"value":"4"}]}]}`
		e.wantError(e.call(http.MethodPatch, "/Groups/department:1", other, big), http.StatusTooManyRequests, "", "a PATCH of 6 units with 5 left")
		for i := range 5 {
			e.want(e.call(http.MethodGet, "/ServiceProviderConfig", other, ""), http.StatusOK, "another client's unit "+strconv.Itoa(i+2))
		}
		now.Add(int64(10 * time.Second))
		e.want(e.do(http.MethodGet, "/ServiceProviderConfig", ""), http.StatusOK, "after 10 s")
		e.wantError(e.do(http.MethodGet, "/ServiceProviderConfig", ""), http.StatusTooManyRequests, "", "one unit only")
	})
}
