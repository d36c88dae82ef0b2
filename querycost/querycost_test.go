package querycost

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

const testSDL = `
type Query { me: User  user(id: ID!): User  tags: [String!]!  ranked(first: Int): [User!]! }
type Mutation { post(text: String!): Post! }
type User {
  id: ID!
  name: String!
  follows(first: Int, after: String): UserConnection!
  posts(first: Int, after: String, last: Int, before: String): PostConnection!
  badges: [Badge!]!
}
type Badge { name: String! }
type Post { id: ID! text: String! author: User! }
type PageInfo { hasNextPage: Boolean! endCursor: String }
type UserEdge { cursor: String! node: User! }
type UserConnection { edges: [UserEdge!]! pageInfo: PageInfo! }
type PostEdge { cursor: String! node: Post! }
type PostConnection { edges: [PostEdge!]! pageInfo: PageInfo! }
`

func testSchema(t testing.TB) *ast.Schema {
	t.Helper()
	s, err := gqlparser.LoadSchema(&ast.Source{Input: testSDL})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var testSizes = Sizes{DefaultFirst: 20, MaxFirst: 100, Lists: map[string]int{"User.badges": 5}, DefaultList: 10}

func measure(t testing.TB, s *ast.Schema, q, op string, vars map[string]any, lim Limits) (Cost, error) {
	t.Helper()
	doc, err := parser.ParseQuery(&ast.Source{Input: q})
	if err != nil {
		t.Fatalf("parse %s: %v", q, err)
	}
	sizes := testSizes
	sizes.Lists = map[string]int{"User.badges": 5}
	for k, v := range IntrospectionSizes(s) {
		sizes.Lists[k] = v
	}
	return Measure(s, doc, op, vars, sizes, lim)
}

func TestMeasure(t *testing.T) {
	s := testSchema(t)
	tests := []struct {
		name  string
		query string
		op    string
		vars  map[string]any
		want  Cost
	}{
		{"leaves only", `{ tags }`, "", nil, Cost{Nodes: 0, Depth: 1, Fields: 1}},
		{"one object", `{ me { id name } }`, "", nil, Cost{Nodes: 1, Depth: 2, Fields: 3}},
		// user 1 + follows 1 + edges 10 × (an edge with its node 1) + pageInfo 1
		{"a connection multiplies its edges", `{ user(id: 1) { follows(first: 10) { edges { node { id } } pageInfo { endCursor } } } }`, "", nil,
			Cost{Nodes: 13, Depth: 5, Fields: 7}},
		{"default page size", `{ me { follows { edges { node { id } } } } }`, "", nil, Cost{Nodes: 22, Depth: 5, Fields: 5}},
		// a list sized by its own first: 7 users, each with a connection of 3 edges
		{"a list with its own first", `{ ranked(first: 7) { id follows(first: 3) { edges { cursor } } } }`, "", nil,
			Cost{Nodes: 7 * (1 + 1 + 3), Depth: 4, Fields: 5}},
		{"a list with its own first, by default", `{ ranked { id } }`, "", nil, Cost{Nodes: 20, Depth: 2, Fields: 2}},
		{"first above the maximum counts as the maximum", `{ me { follows(first: 1000000) { edges { cursor } } } }`, "", nil,
			Cost{Nodes: 102, Depth: 4, Fields: 4}},
		{"first from a variable", `query($n: Int) { me { follows(first: $n) { edges { cursor } } } }`, "", map[string]any{"n": json.Number("7")},
			Cost{Nodes: 9, Depth: 4, Fields: 4}},
		{"first from a variable's default", `query($n: Int = 3) { me { follows(first: $n) { edges { cursor } } } }`, "", nil,
			Cost{Nodes: 5, Depth: 4, Fields: 4}},
		{"first from a float variable", `query($n: Int) { me { follows(first: $n) { edges { cursor } } } }`, "", map[string]any{"n": 4.0},
			Cost{Nodes: 6, Depth: 4, Fields: 4}},
		{"last counts like first", `{ me { posts(last: 7) { edges { cursor } } } }`, "", nil,
			Cost{Nodes: 9, Depth: 4, Fields: 4}},
		{"last from a variable, above the maximum", `query($n: Int) { me { posts(last: $n, before: "x") { edges { cursor } } } }`, "", map[string]any{"n": json.Number("1000")},
			Cost{Nodes: 102, Depth: 4, Fields: 4}},
		{"first and last: the larger", `{ me { posts(first: 3, last: 9) { edges { cursor } } } }`, "", nil,
			Cost{Nodes: 11, Depth: 4, Fields: 4}},
		// me 1 + follows 1 + 100 × (edge 1 + follows 1 + 100 × edge 1)
		{"nested connections multiply", `{ me { follows(first: 100) { edges { node { follows(first: 100) { edges { node { id } } } } } } } }`, "", nil,
			Cost{Nodes: 2 + 100*(2+100), Depth: 8, Fields: 8}},
		{"unpaged lists use Sizes.Lists, then DefaultList", `{ me { badges { name } } }`, "", nil, Cost{Nodes: 6, Depth: 3, Fields: 3}},
		{"fragments count where spread", `{ me { ...U } user(id: 2) { ...U } } fragment U on User { posts(first: 2) { edges { node { author { id } } } } }`, "", nil,
			Cost{Nodes: 2 * (1 + 1 + 2*2), Depth: 6, Fields: 2 + 2*5}},
		{"a fragment in a connection's own selection set takes its page size", `{ me { follows(first: 4) { ...C } } } fragment C on UserConnection { edges { cursor } }`, "", nil,
			Cost{Nodes: 1 + 1 + 4, Depth: 4, Fields: 4}},
		{"inline fragments", `{ me { ... on User { badges { name } } } }`, "", nil, Cost{Nodes: 6, Depth: 3, Fields: 3}},
		{"aliases and overlap", `{ me { id id a: id b: name } }`, "", nil, Cost{Nodes: 1, Depth: 2, Fields: 5, Aliases: 2, Overlap: 2}},
		{"overlap across fragments", `{ me { id ...A ...B } } fragment A on User { id } fragment B on User { id ...A }`, "", nil,
			Cost{Nodes: 1, Depth: 2, Fields: 5, Overlap: 8}},
		{"the named operation's nodes, every operation's size", `query A { me { id } } query B { me { badges { name } } }`, "B", nil,
			Cost{Nodes: 6, Depth: 3, Fields: 5}},
		{"no operation named: no nodes", `query A { me { id } } query B { me { id } }`, "", nil, Cost{Nodes: 0, Depth: 2, Fields: 4}},
		{"mutations", `mutation { post(text: "x") { id author { name } } }`, "", nil, Cost{Nodes: 2, Depth: 3, Fields: 4}},
		{"unknown fields are tolerated", `{ nope { deeper { id } } me { alsoNope } }`, "", nil, Cost{Nodes: 3, Depth: 3, Fields: 5}},
		{"fragment cycles end", `{ me { ...A } } fragment A on User { id ...B } fragment B on User { name ...A }`, "", nil,
			Cost{Nodes: 1, Depth: 2, Fields: 3}},
		{"unused fragments count once", `{ me { id } } fragment A on User { name id }`, "", nil, Cost{Nodes: 1, Depth: 2, Fields: 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := measure(t, s, tt.query, tt.op, tt.vars, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			got.Introspection = false
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestMeasureIntrospection(t *testing.T) {
	s := testSchema(t)
	sizes := IntrospectionSizes(s)
	got, err := measure(t, s, `{ __schema { types { name fields { name } } } }`, "", nil, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	types, fields := int64(sizes["__Schema.types"]), int64(sizes["__Type.fields"])
	if want := 1 + types*(1+fields); got.Nodes != want || !got.Introspection {
		t.Errorf("nodes %d (introspection %v), want %d", got.Nodes, got.Introspection, want)
	}
	// The deepest type of the test schema is [UserEdge!]!: three ofType
	// levels, then null.
	q := `{ __type(name: "User") { ofType { ofType { ofType { ofType { ofType { name } } } } } } }`
	got, err = measure(t, s, q, "", nil, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Nodes != 4 || got.Depth != 7 {
		t.Errorf("ofType chain: %+v, want 4 nodes, depth 7", got)
	}
	got, _ = measure(t, s, `{ __typename me { __typename } }`, "", nil, Limits{})
	if got.Introspection {
		t.Error("__typename counted as introspection")
	}
}

func TestLimits(t *testing.T) {
	s := testSchema(t)
	nested := `{ me { follows(first: 100) { edges { node { follows(first: 100) { edges { node { follows(first: 100) { edges { node { id } } } } } } } } } } }`
	tests := []struct {
		name    string
		query   string
		lim     Limits
		measure string
	}{
		{"nodes", nested, Limits{MaxNodes: 10000}, MeasureNodes},
		{"depth", `{ me { follows { edges { node { follows { edges { node { id } } } } } } } }`, Limits{MaxDepth: 6}, MeasureDepth},
		{"fields", `{ me { ` + strings.Repeat("name ", 50) + ` } }`, Limits{MaxFields: 20}, MeasureFields},
		{"aliases", `{ me { ` + aliases(30) + ` } }`, Limits{MaxAliases: 10}, MeasureAliases},
		{"overlap", `{ me { ` + strings.Repeat("name ", 50) + ` } }`, Limits{MaxOverlap: 10}, MeasureOverlap},
		{"doubling fragments", doubling(40), Limits{MaxFields: 1000}, MeasureFields},
		{"doubling fragments, overlap", doubling(40), Limits{MaxOverlap: 100}, MeasureOverlap},
		{"size before nodes", nested, Limits{MaxNodes: 10, MaxFields: 5}, MeasureFields},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := measure(t, s, tt.query, "", nil, tt.lim)
			var ex *Exceeded
			if !errors.As(err, &ex) || ex.Measure != tt.measure || ex.Value <= ex.Max {
				t.Fatalf("got %v, want %s exceeded", err, tt.measure)
			}
			if ex.Error() == "" {
				t.Error("empty message")
			}
		})
	}
	if _, err := measure(t, s, nested, "", nil, Limits{MaxNodes: 1_020_202, MaxDepth: 11, MaxFields: 11, MaxOverlap: 1}); err != nil {
		t.Errorf("at the limits: %v", err)
	}
}

// TestOverlap: repeating a connection k times with k fields in each costs
// about (k·(k+3))²/2, the comparisons validation makes.
func TestOverlap(t *testing.T) {
	s := testSchema(t)
	inner := "follows { edges { node { " + strings.Repeat("id ", 10) + "} } } "
	got, err := measure(t, s, "{ me { "+strings.Repeat(inner, 10)+"} }", "", nil, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	// me's set: follows ×10, each of size 13 → 130²/2; inside each node,
	// id ×10 → 10²/2, ten times.
	if want := int64(130*130/2 + 10*(10*10/2)); got.Overlap != want {
		t.Errorf("overlap %d, want %d", got.Overlap, want)
	}
}

func aliases(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "a%d: name ", i)
	}
	return b.String()
}

// doubling returns a query whose fragment k spreads fragment k-1 twice:
// 2^k fields once expanded, in a few hundred bytes.
func doubling(k int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "{ me { ...F%d } }\nfragment F0 on User { id name }\n", k)
	for i := 1; i <= k; i++ {
		fmt.Fprintf(&b, "fragment F%d on User { ...F%d ...F%d }\n", i, i-1, i-1)
	}
	return b.String()
}

// TestMeasureSaturates: a document whose expansion passes 2^52 fields is
// measured without limits at all in linear time and saturates.
func TestMeasureSaturates(t *testing.T) {
	s := testSchema(t)
	got, err := measure(t, s, doubling(200), "", nil, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Fields != capValue || got.Overlap != capValue {
		t.Errorf("got %+v, want saturated fields and repeats", got)
	}
}

func TestNumber(t *testing.T) {
	tests := []struct {
		in   any
		want int64
		ok   bool
	}{
		{json.Number("12"), 12, true},
		{json.Number("1e3"), 1000, true},
		{json.Number("1.5"), 0, false},
		{json.Number("1e400"), 0, false},
		{3.0, 3, true},
		{3.5, 0, false},
		{1e300, 1<<63 - 1, true},
		{7, 7, true},
		{"7", 0, false},
		{nil, 0, false},
	}
	for _, tt := range tests {
		got, ok := number(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("number(%#v) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// TestWeights: a weighted field counts its weight per object instead of
// one, under aliases and lists too.
func TestWeights(t *testing.T) {
	s := testSchema(t)
	sizes := testSizes
	sizes.Weights = map[string]int64{"Mutation.post": 500, "User.badges": 3}
	for _, tt := range []struct {
		query string
		want  int64
	}{
		{`mutation { post(text: "x") { id author { name } } }`, 500 + 1},
		{`mutation { a: post(text: "x") { id } b: post(text: "y") { id } }`, 2 * 500},
		{`{ me { badges { name } } }`, 1 + 5*3},
		{`{ me { id } }`, 1},
	} {
		doc, err := parser.ParseQuery(&ast.Source{Input: tt.query})
		if err != nil {
			t.Fatal(err)
		}
		got, err := Measure(s, doc, "", nil, sizes, Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Nodes != tt.want {
			t.Errorf("%s: %d nodes, want %d", tt.query, got.Nodes, tt.want)
		}
	}
}
