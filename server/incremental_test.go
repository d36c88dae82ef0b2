package server_test

import (
	"strings"
	"testing"

	"github.com/weibohbase/gateway/internal/testenv"
)

// TestDefer checks over HTTP that @defer and @stream are refused at
// validation (HTTP 200 with one GRAPHQL_VALIDATION_FAILED error and no
// data for application/json, 400 for application/graphql-response+json)
// with a message that names incremental delivery, that @include and @skip
// still work, and that introspection lists neither @defer nor @stream.
func TestDefer(t *testing.T) {
	g := startGateway(t, testenv.Embedded(t))
	a := g.register(uniqueName("deferrer"))
	vars := map[string]any{"id": a.ID}
	refused := []struct {
		name, query, directive, accept string
		status                         int
	}{
		{"@defer on an inline fragment", `query($id: ID!) { user(id: $id) { id ... @defer { username } } }`, "@defer", "", 200},
		{"@defer with a label on a fragment spread", `query($id: ID!) { user(id: $id) { id ...F @defer(label: "f") } } fragment F on User { username }`, "@defer", "", 200},
		{"@defer(if: false)", `query($id: ID!) { user(id: $id) { id ... @defer(if: false) { username } } }`, "@defer", "", 200},
		{"@stream on a list", `query($id: ID!) { user(id: $id) { posts(first: 2) { edges @stream(initialCount: 1) { cursor } } } }`, "@stream", "", 200},
		{"@defer, graphql-response+json", `query($id: ID!) { user(id: $id) { id ... @defer { username } } }`, "@defer", "application/graphql-response+json", 400},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			var header []string
			if tc.accept != "" {
				header = []string{"Accept", tc.accept}
			}
			r := g.raw("POST", a.token, mustJSON(map[string]any{"query": tc.query, "variables": vars}), header...)
			var body errorBody
			if err := jsonUnmarshal(r.body, &body); err != nil {
				t.Fatalf("body %s: %v", r.body, err)
			}
			if r.status != tc.status || len(body.Errors) != 1 || body.Data != nil {
				t.Fatalf("want HTTP %d, one error and no data; got %d %s", tc.status, r.status, r.body)
			}
			e := body.Errors[0]
			if e.Extensions["code"] != "GRAPHQL_VALIDATION_FAILED" ||
				!strings.Contains(e.Message, "does not support incremental delivery ("+tc.directive+")") ||
				!strings.Contains(e.Message, "@include") {
				t.Errorf("error: %+v", e)
			}
		})
	}

	t.Run("@include and @skip", func(t *testing.T) {
		var d struct {
			User struct {
				ID        string  `json:"id"`
				Username  *string `json:"username"`
				PostCount *int    `json:"postCount"`
			} `json:"user"`
		}
		g.ok(a.token, `query($id: ID!, $yes: Boolean!) { user(id: $id) { id ... @include(if: $yes) { username } postCount @skip(if: $yes) } }`,
			map[string]any{"id": a.ID, "yes": true}, &d)
		if d.User.ID != a.ID || d.User.Username == nil || *d.User.Username != a.Username || d.User.PostCount != nil {
			t.Errorf("got %+v", d.User)
		}
	})

	t.Run("introspection", func(t *testing.T) {
		var d struct {
			Schema struct {
				Directives []struct{ Name string } `json:"directives"`
			} `json:"__schema"`
		}
		g.ok("", `{ __schema { directives { name } } }`, nil, &d)
		names := map[string]bool{}
		for _, dir := range d.Schema.Directives {
			names[dir.Name] = true
		}
		if names["defer"] || names["stream"] || !names["include"] || !names["skip"] || !names["hasRole"] {
			t.Errorf("directives: %v", names)
		}
	})
}
