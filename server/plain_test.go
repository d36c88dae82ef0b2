package server_test

import (
	"bytes"
	"fmt"
	"strconv"
	"testing"

	"github.com/weibohbase/gateway/internal/gqlfield"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/seed"
)

// TestPlainObjectsAnswerAsFieldSets sends real queries over HTTP to a
// gateway over the demo data, on both backends, with the plain path of
// package gqlfield off and then on: the data are the same bytes whether the
// selection is plain (the home page, introspection) or not (a resolver
// field below the edges, a variable in a directive), and the path ran for
// the plain ones (PlainWritten counts the whole process, so the others,
// which may still write a plain object below, are not counted).
func TestPlainObjectsAnswerAsFieldSets(t *testing.T) {
	for _, b := range testenv.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			g, ds := seededGateway(t, b.Open(t))
			uid := busiest(ds, 1)[0]
			u, _ := ds.User(uid)
			token := g.login(u.Username, seed.DefaultPassword)
			id := strconv.FormatUint(uid, 10)
			for _, tc := range []struct {
				name  string
				query string
				vars  map[string]any
				plain bool
			}{
				{"home page", `query($first: Int) { homeTimeline(first: $first) { edges { cursor node { id content createdAt author { id username } } } pageInfo { hasNextPage endCursor } } }`,
					map[string]any{"first": 50}, true},
				{"aliases, typenames, fragments", `query { homeTimeline(first: 20) { __typename e: edges { ...E n: node { __typename ... on Post { likeCount repostOfId } ...P } } } }
					fragment E on PostEdge { c: cursor cursor } fragment P on Post { content author { ...U } } fragment U on User { __typename id u: username }`, nil, true},
				{"a resolver below the edges", `{ homeTimeline(first: 20) { edges { cursor node { id likedByViewer author { id followCount } } } } }`, nil, false},
				{"a variable in a directive", `query($x: Boolean!) { homeTimeline(first: 20) { edges { cursor @include(if: $x) node { id content } } } }`,
					map[string]any{"x": true}, false},
				{"introspection", `{ __schema { queryType { name } types { name kind description fields(includeDeprecated: true) { name isDeprecated args { name defaultValue type { name kind ofType { name kind } } } type { name kind ofType { name kind ofType { name } } } } enumValues { name } } } }`,
					nil, true},
				{"a user's posts", `query($id: ID!) { user(id: $id) { id username posts(first: 10) { edges { cursor node { id content createdAt repostOfId } } pageInfo { hasNextPage endCursor } } } }`,
					map[string]any{"id": id}, true},
			} {
				t.Run(tc.name, func(t *testing.T) {
					gqlfield.SetPlain(false)
					off := g.gt.In(t).Post(token, tc.query, tc.vars)
					gqlfield.SetPlain(true)
					before := gqlfield.PlainWritten()
					on := g.gt.In(t).Post(token, tc.query, tc.vars)
					written := gqlfield.PlainWritten() - before
					if len(on.Errors) > 0 || len(off.Errors) > 0 {
						t.Fatalf("errors: %s / %s", on.Body, off.Body)
					}
					// The data, byte for byte (the bodies differ in the
					// budget left, extensions.cost.budget.remaining).
					if !bytes.Equal(on.Data, off.Data) {
						t.Errorf("the data differ: %s", firstDifference(on.Data, off.Data))
					}
					// PlainWritten counts the process's objects: another
					// test's requests may add to it, never take away.
					if tc.plain && written == 0 {
						t.Errorf("the plain path wrote no object")
					}
				})
			}
		})
	}
}

// firstDifference shows where a and b first differ, with some bytes of
// each around it.
func firstDifference(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(i-60, 0)
	return fmt.Sprintf("at byte %d: %q… against %q…", i, a[from:min(i+60, len(a))], b[from:min(i+60, len(b))])
}
