package gqlfield_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/transport"

	"github.com/weibohbase/gateway/graph"
	"github.com/weibohbase/gateway/internal/gqlfield"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/tables"
)

// root answers homeTimeline with page and nothing else (every other
// resolver is the nil interface: a query reaching one fails the test).
type root struct {
	graph.ResolverRoot
	page *feed.PostConnection
}

func (r root) Query() graph.QueryResolver { return query{page: r.page} }

type query struct {
	graph.QueryResolver
	page *feed.PostConnection
}

func (q query) HomeTimeline(context.Context, *int, *string, *int, *string) (*feed.PostConnection, error) {
	return q.page, nil
}

// pass lets every field through its directive.
func pass(ctx context.Context, _ any, next graphql.Resolver) (any, error) { return next(ctx) }

// serve runs one GraphQL request on the generated executable schema, with
// the plain path on or off, and returns the response body.
func serve(t *testing.T, page *feed.PostConnection, plain bool, q string, vars map[string]any) []byte {
	t.Helper()
	gqlfield.SetPlain(plain)
	t.Cleanup(func() { gqlfield.SetPlain(true) })
	srv := handler.New(graph.NewExecutableSchema(graph.Config{
		Resolvers:  root{page: page},
		Directives: graph.DirectiveRoot{Authenticated: pass},
	}))
	srv.AddTransport(transport.POST{})
	body, err := json.Marshal(map[string]any{"query": q, "variables": vars})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	return rec.Body.Bytes()
}

// page is a home-timeline page of posts whose texts need escaping, one of
// them a repost.
func page() *feed.PostConnection {
	orig := tables.PostID{Author: 7, Millis: 1_583_020_800_000}
	posts := []*feed.Post{
		{ID: tables.PostID{Author: 22732, Millis: 1_583_020_800_123}, Content: `"quoted" \ back` + "\n\ttab \x01 #话题#", AuthorName: "alice"},
		{ID: tables.PostID{Author: 5, Millis: 1_583_020_900_000}, Content: "转发", AuthorName: "bob", RepostOfID: &orig, LikeCount: 3},
	}
	end := "c2"
	c := &feed.PostConnection{PageInfo: weibo.PageInfo{HasNextPage: true, EndCursor: &end}}
	for i, p := range posts {
		c.Edges = append(c.Edges, feed.PostEdge{Post: p, Cursor: "c" + string(rune('1'+i))})
	}
	return c
}

// TestPlainSameAnswers: the plain path writes exactly the field sets'
// bytes — aliases, __typename, fragments, nullable values — and runs for
// plain selections only.
func TestPlainSameAnswers(t *testing.T) {
	for _, tc := range []struct {
		name  string
		query string
		vars  map[string]any
		plain bool // whether objects are written by the plain path
	}{
		{"home page", `{ homeTimeline { edges { cursor node { id content createdAt author { id username } } } pageInfo { hasNextPage endCursor } } }`, nil, true},
		{"aliases and typenames", `{ homeTimeline { __typename edges { __typename c: cursor cursor node { __typename i: id id author { u: username __typename username } } } } }`, nil, true},
		{"fragments", `query { homeTimeline { edges { ...E node { ... on Post { likeCount repostOfId } ...P } } } }
			fragment E on PostEdge { cursor } fragment P on Post { content author { ...U } } fragment U on User { id }`, nil, true},
		{"variables in directives", `query($x: Boolean!) { homeTimeline { edges { cursor @include(if: $x) node { id content @skip(if: $x) } } } }`, map[string]any{"x": true}, false},
		{"variables in directives, off", `query($x: Boolean!) { homeTimeline { edges { cursor @include(if: $x) node { id content @skip(if: $x) } } } }`, map[string]any{"x": false}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			off := serve(t, page(), false, tc.query, tc.vars)
			before := gqlfield.PlainWritten()
			on := serve(t, page(), true, tc.query, tc.vars)
			written := gqlfield.PlainWritten() - before
			if !bytes.Equal(on, off) {
				t.Errorf("plain path:\n%s\nfield sets:\n%s", on, off)
			}
			if bytes.Contains(on, []byte(`"errors"`)) {
				t.Errorf("errors: %s", on)
			}
			if got := written > 0; got != tc.plain {
				t.Errorf("plain objects written: %d, want some: %v", written, tc.plain)
			}
		})
	}
}

// TestPlainNullsAsFieldSets: a non-null object field whose value is nil
// stops the plain path, and the field sets null the edge's parents and
// report the error at the field's path, as without the plain path.
func TestPlainNullsAsFieldSets(t *testing.T) {
	p := page()
	p.Edges[1].Post = nil
	q := `{ homeTimeline { edges { cursor node { id author { id } } } } }`
	off := serve(t, p, false, q, nil)
	on := serve(t, p, true, q, nil)
	if !bytes.Equal(on, off) {
		t.Errorf("plain path:\n%s\nfield sets:\n%s", on, off)
	}
	var r struct {
		Data   json.RawMessage
		Errors []struct{ Path []any }
	}
	if err := json.Unmarshal(on, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Errors) != 1 || len(r.Errors[0].Path) != 4 || r.Errors[0].Path[3] != "node" {
		t.Errorf("want one error at homeTimeline.edges.1.node, got %s", on)
	}
	if !strings.Contains(string(r.Data), "null") {
		t.Errorf("want the null propagated, got %s", on)
	}
}

// TestRecoverPlain: a panic under RecoverPlain makes the marshaller nil,
// which sends the object to its field set.
func TestRecoverPlain(t *testing.T) {
	write := func() (m graphql.Marshaler) {
		defer gqlfield.RecoverPlain(&m, gqlfield.NewPlainObject())
		m = graphql.Null
		panic("bound method")
	}
	if m := write(); m != nil {
		t.Errorf("after a panic: %v, want nil", m)
	}
}
