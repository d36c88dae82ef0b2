package gqllist

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// The schema of the tests: the shapes of the gateway's (a connection of
// edges of a Node with an author), with gqlgen's concurrency in objs.
const sdl = `
interface Node { id: ID! }
type Query { feed: [Edge!]! things: [Thing!]! }
type Edge { cursor: String! node: Post! }
type Post implements Node { id: ID! content: String! author: User! liked: Boolean! original: Post }
type User implements Node { id: ID! username: String! followCount: Int! roles: [Role!]! }
type Role { name: String! }
union Thing = Post | User
`

var objs = Objects{
	"Query": {Implements: []string{"Query"}, Concurrent: map[string]bool{"feed": true, "things": true}},
	"Edge":  {Implements: []string{"Edge"}},
	"Post": {Implements: []string{"Post", "Node"}, Concurrent: map[string]bool{"liked": true, "original": true},
		Ready: map[string]bool{"liked": true, "original": true}},
	"User": {Implements: []string{"User", "Node"}, Concurrent: map[string]bool{"followCount": true, "roles": true}},
	"Role": {Implements: []string{"Role"}},
}

// listContext returns the context of the list field `field` of query's
// operation, as gqlgen passes it to a list marshaller.
func listContext(t *testing.T, query, field string) context.Context {
	t.Helper()
	schema := gqlparser.MustLoadSchema(&ast.Source{Input: sdl})
	doc, errs := gqlparser.LoadQueryWithRules(schema, query, nil)
	if errs != nil {
		t.Fatalf("query %q: %v", query, errs)
	}
	oc := &graphql.OperationContext{RawQuery: query, Doc: doc, Operation: doc.Operations[0], Variables: map[string]any{}}
	ctx := graphql.WithOperationContext(context.Background(), oc)
	for _, f := range graphql.CollectFields(oc, doc.Operations[0].SelectionSet, []string{"Query"}) {
		if f.Name == field {
			return graphql.WithFieldContext(ctx, &graphql.FieldContext{Object: "Query", Field: f, IsResolver: true})
		}
	}
	t.Fatalf("query %q selects no %s", query, field)
	return nil
}

func TestInline(t *testing.T) {
	for _, c := range []struct {
		name, query, field string
		inline             bool
	}{
		{"memory fields only", `{ feed { cursor node { id content author { id username } } } }`, "feed", true},
		{"__typename", `{ feed { __typename node { __typename author { __typename } } } }`, "feed", true},
		{"aliases", `{ feed { c: cursor n: node { i: id } } }`, "feed", true},
		{"a resolver two levels down", `{ feed { node { author { followCount } } } }`, "feed", false},
		{"a list resolver", `{ feed { node { author { roles { name } } } } }`, "feed", false},
		{"a resolver in a named fragment", `{ feed { node { ...P } } } fragment P on Post { author { ...U } } fragment U on User { username followCount }`, "feed", false},
		{"a resolver in an inline fragment", `{ feed { node { author { ... on User { followCount } } } } }`, "feed", false},
		{"an interface fragment", `{ feed { node { ... on Node { id } } } }`, "feed", true},
		{"a resolver under a type condition the items never meet", `{ feed { node { ... on Node { id ... on User { followCount } } } } }`, "feed", true},
		{"a resolver under a type condition the items meet", `{ feed { node { ... on Node { ... on Post { author { followCount } } } } } }`, "feed", false},
		{"a skipped resolver", `{ feed { node { author { followCount @skip(if: true) } } } }`, "feed", true},
		{"a list of a union", `{ things { __typename } }`, "things", false},
		{"ready fields", `{ feed { node { liked original { liked content } } } }`, "feed", true},
		{"a resolver under a ready field", `{ feed { node { original { author { followCount } } } } }`, "feed", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := objs.inline(listContext(t, c.query, c.field)); got != c.inline {
				t.Fatalf("inline = %v, want %v", got, c.inline)
			}
		})
	}
}

// goroutineID returns the id of the calling goroutine (from its stack
// trace's header, "goroutine N [...").
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	return string(bytes.Fields(buf)[1])
}

func TestMarshal(t *testing.T) {
	for _, c := range []struct {
		query    string
		sameGoro bool
	}{
		{`{ feed { cursor node { id } } }`, true},
		{`{ feed { node { author { followCount } } } }`, false},
	} {
		ctx := listContext(t, c.query, "feed")
		caller := goroutineID()
		const n = 20
		var ids [n]string
		var idx [n]int
		ret := Marshal(ctx, objs, n, 4, false, func(ctx context.Context, i int) graphql.Marshaler {
			ids[i] = goroutineID()
			idx[i] = *graphql.GetFieldContext(ctx).Index
			return graphql.MarshalInt(i)
		})
		if len(ret) != n {
			t.Fatalf("%s: %d items, want %d", c.query, len(ret), n)
		}
		same := 0
		for i := range n {
			if idx[i] != i {
				t.Fatalf("%s: item %d saw Index %d", c.query, i, idx[i])
			}
			if ids[i] == caller {
				same++
			}
			var b strings.Builder
			ret[i].MarshalGQL(&b)
			if b.String() != strconv.Itoa(i) {
				t.Fatalf("%s: item %d marshalled %q", c.query, i, b.String())
			}
		}
		if want := map[bool]int{true: n, false: 0}[c.sameGoro]; same != want {
			t.Fatalf("%s: %d of %d items in the caller's goroutine, want %d", c.query, same, n, want)
		}
	}
}

// TestMarshalPanic: an item marshalled inline that panics is the item's
// error and ends the list (nil).
func TestMarshalPanic(t *testing.T) {
	ctx := listContext(t, `{ feed { cursor } }`, "feed")
	ctx = graphql.WithResponseContext(ctx, graphql.DefaultErrorPresenter,
		func(context.Context, any) error { return errors.New("recovered") })
	ran := 0
	ret := Marshal(ctx, objs, 5, 4, false, func(ctx context.Context, i int) graphql.Marshaler {
		ran++
		if i == 2 {
			panic("boom")
		}
		return graphql.MarshalInt(i)
	})
	if ret != nil {
		t.Fatalf("list = %v, want nil after a panic", ret)
	}
	if ran != 3 {
		t.Fatalf("%d items ran, want 3 (the panic ends the list)", ran)
	}
	if got := graphql.GetErrors(ctx); len(got) != 1 || got[0].Message != "recovered" {
		t.Fatalf("errors = %v, want the recovered panic", got)
	}
}
