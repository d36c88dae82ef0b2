package gqlfield

import (
	"reflect"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

const collectSchema = `
type Query { post: Post, node: Node }
interface Node { id: ID! }
type Post implements Node { id: ID!, content: String!, author: User! }
type User implements Node { id: ID!, username: String! }
`

var (
	postSatisfies = []string{"Post", "Node"}
	userSatisfies = []string{"User", "Node"}
)

// operation parses and validates query and returns its operation context
// with variables and the selection set of its first field.
func operation(t *testing.T, query string, vars map[string]any) (*graphql.OperationContext, ast.SelectionSet) {
	t.Helper()
	schema := gqlparser.MustLoadSchema(&ast.Source{Name: "schema", Input: collectSchema})
	doc, errs := gqlparser.LoadQueryWithRules(schema, query, nil) // nil: the default rules
	if errs != nil {
		t.Fatalf("%s: %v", query, errs)
	}
	oc := &graphql.OperationContext{RawQuery: query, Doc: doc, Operation: doc.Operations[0], Variables: vars}
	root := graphql.CollectFields(oc, doc.Operations[0].SelectionSet, []string{"Query"})
	return oc, root[0].Selections
}

func names(fs []graphql.CollectedField) string {
	var s []string
	for _, f := range fs {
		s = append(s, f.Alias)
	}
	return strings.Join(s, ",")
}

// TestCollectFields: CollectFields returns what graphql.CollectFields
// returns, from its cache for a selection set without directives (the same
// slice again, for any variables) and computed anew for one with
// directives (whose @skip/@include may read variables).
func TestCollectFields(t *testing.T) {
	tests := []struct {
		name    string
		query   string
		vars    []map[string]any // each a new operation of the same document
		cached  bool
		results []string // the aliases collected for each of vars
	}{
		{name: "plain fields", query: `{ post { id content author { username } } }`,
			vars: []map[string]any{nil, nil}, cached: true, results: []string{"id,content,author", "id,content,author"}},
		{name: "aliases, a repeated field merged", query: `{ post { a: id content a: id } }`,
			vars: []map[string]any{nil}, cached: true, results: []string{"a,content"}},
		{name: "inline fragments and type conditions", query: `{ node { ... on Node { id } ... on User { username } ... on Post { content } } }`,
			vars: []map[string]any{nil}, cached: true, results: []string{"id,content"}},
		{name: "fragment spreads, one expanded once", query: `query { post { ...P ...P ...N } } fragment P on Post { content } fragment N on Node { id ...P }`,
			vars: []map[string]any{nil}, cached: true, results: []string{"content,id"}},
		{name: "@skip on a field", query: `query($s: Boolean!) { post { id content @skip(if: $s) } }`,
			vars: []map[string]any{{"s": true}, {"s": false}}, results: []string{"id", "id,content"}},
		{name: "@include on an inline fragment", query: `query($i: Boolean!) { post { id ... on Post @include(if: $i) { content } } }`,
			vars: []map[string]any{{"i": false}, {"i": true}}, results: []string{"id", "id,content"}},
		{name: "@skip inside an inline fragment", query: `query($s: Boolean!) { post { id ... { content @skip(if: $s) } } }`,
			vars: []map[string]any{{"s": true}, {"s": false}}, results: []string{"id", "id,content"}},
		{name: "@include on a fragment spread", query: `query($i: Boolean!) { post { id ...P @include(if: $i) } } fragment P on Post { content }`,
			vars: []map[string]any{{"i": false}, {"i": true}}, results: []string{"id", "id,content"}},
		{name: "@skip in a fragment's selections", query: `query($s: Boolean!) { post { id ...P } } fragment P on Post { content @skip(if: $s) }`,
			vars: []map[string]any{{"s": true}, {"s": false}}, results: []string{"id", "id,content"}},
		{name: "a constant @skip", query: `{ post { id content @skip(if: true) } }`,
			vars: []map[string]any{nil}, results: []string{"id"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var first []graphql.CollectedField
			for i, vars := range tt.vars {
				oc, sel := operation(t, tt.query, vars)
				if i > 0 {
					// The same document (gqlgen's query cache): the first
					// operation's selection set.
					oc.Doc, sel = firstDoc, firstSel
				}
				got := CollectFields(oc, sel, postSatisfies)
				want := graphql.CollectFields(oc, sel, postSatisfies)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("operation %d: CollectFields = %s, graphql.CollectFields = %s", i, names(got), names(want))
				}
				if names(got) != tt.results[i] {
					t.Errorf("operation %d: collected %s, want %s", i, names(got), tt.results[i])
				}
				if i == 0 {
					first, firstDoc, firstSel = got, oc.Doc, sel
					continue
				}
				if same := len(got) > 0 && len(first) > 0 && &got[0] == &first[0]; same != tt.cached {
					t.Errorf("operation %d: answered from the cache: %v, want %v", i, same, tt.cached)
				}
			}
			if tt.cached {
				oc, _ := operation(t, tt.query, nil)
				oc.Doc = firstDoc
				if got := CollectFields(oc, firstSel, postSatisfies); &got[0] != &first[0] {
					t.Error("a second call was not answered from the cache")
				}
				// Another satisfies list is another entry.
				if got := CollectFields(oc, firstSel, userSatisfies); len(got) > 0 && &got[0] == &first[0] {
					t.Error("the cache answered for another satisfies list")
				}
			}
		})
	}
}

var (
	firstDoc *ast.QueryDocument
	firstSel ast.SelectionSet
)

// TestCollectCacheBound: the cache empties itself before the source bytes
// it counts pass maxCollectedSource.
func TestCollectCacheBound(t *testing.T) {
	c := collectCache{m: map[collectKey][]graphql.CollectedField{}, plain: map[collectKey]bool{}}
	keys := make([]ast.Selection, 4)
	half := maxCollectedSource/2 - 1
	for i := range 3 {
		store(&c, c.m, collectKey{sel: &keys[i], n: 1}, nil, half)
	}
	if len(c.m) != 1 || c.source != half {
		t.Errorf("after 3 entries of a half each: %d entries, %d bytes; want 1, %d", len(c.m), c.source, half)
	}
	store(&c, c.m, collectKey{sel: &keys[2], n: 1}, nil, half) // present: not counted again
	if c.source != half {
		t.Errorf("an entry added twice counted twice: %d bytes", c.source)
	}
	// A plain verdict counts in the same bound and empties both maps.
	store(&c, c.plain, collectKey{sel: &keys[3], n: 1}, true, half)
	store(&c, c.plain, collectKey{sel: &keys[0], n: 1}, false, half)
	if len(c.m) != 0 || len(c.plain) != 1 || c.source != half {
		t.Errorf("after 2 plain verdicts of a half each: %d fields, %d verdicts, %d bytes; want 0, 1, %d",
			len(c.m), len(c.plain), c.source, half)
	}
}
