package server

import (
	"context"
	"maps"
	"net/http"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/validator/core"
	"github.com/vektah/gqlparser/v2/validator/rules"

	"github.com/weibohbase/gateway/graph"
)

// Incremental delivery: a query may @defer fragments (gqlgen's executor
// resolves them after the rest, each a payload of its own) and @stream
// list fields (the first initialCount items in the initial payload, each
// further item a payload of its own, see stream.go). Over HTTP the
// payloads go out as a multipart/mixed response (deferSpec=20220824, the
// format Apollo Client and Relay parse) to clients whose Accept header
// names multipart/mixed; any other client gets the operation without the
// two directives, one response as before. Over graphql-transport-ws each
// payload is a "next" message. Mutations and subscriptions are executed
// whole: @defer and @stream are refused in them at validation.

// streamDirective is @stream as the incremental delivery proposal defines
// it; gqlparser's prelude declares @defer but not @stream.
var streamDirective = &ast.DirectiveDefinition{
	Description: "Directs the executor to deliver the first `initialCount` items of this list field with the rest of the result and each further item in a payload of its own.",
	Name:        "stream",
	Arguments: ast.ArgumentDefinitionList{
		{Name: "if", Description: "Streamed when true or undefined.", Type: ast.NonNullNamedType("Boolean", nil),
			DefaultValue: &ast.Value{Kind: ast.BooleanValue, Raw: "true"}},
		{Name: "label", Description: "A name for the streamed payloads.", Type: ast.NamedType("String", nil)},
		{Name: "initialCount", Description: "How many items the initial payload holds.", Type: ast.NonNullNamedType("Int", nil),
			DefaultValue: &ast.Value{Kind: ast.IntValue, Raw: "0"}},
	},
	Locations: []ast.DirectiveLocation{ast.LocationField},
}

// servedSchema is the schema the gateway executes and introspects: the
// generated one with @stream declared beside gqlparser's @defer.
var servedSchema = sync.OnceValue(func() *ast.Schema {
	s := *graph.NewExecutableSchema(graph.Config{}).Schema()
	s.Directives = maps.Clone(s.Directives)
	s.Directives["stream"] = streamDirective
	return &s
})

// validationRules is gqlparser's default rule set with incrementalRule.
func validationRules() *rules.Rules {
	r := rules.NewDefaultRules()
	r.AddRule("IncrementalDelivery", incrementalRule)
	return r
}

// incrementalRule refuses (GRAPHQL_VALIDATION_FAILED) @defer and @stream
// outside a query, @stream on a field that is not a list, and a negative
// initialCount.
func incrementalRule(observers *core.Events, addError core.AddErrFunc) {
	observers.OnDirective(func(w *core.Walker, d *ast.Directive) {
		if d.Name != "defer" && d.Name != "stream" {
			return
		}
		if op := w.CurrentOperation; op != nil && op.Operation != ast.Query {
			addError(core.Message(`@%s is served on queries only, not in a %s: ask for the fields in the %s itself`, d.Name, op.Operation, op.Operation), core.At(d.Position))
		}
	})
	observers.OnField(func(_ *core.Walker, f *ast.Field) {
		d := f.Directives.ForName("stream")
		if d == nil || f.Definition == nil {
			return
		}
		if f.Definition.Type.Elem == nil {
			addError(core.Message(`@stream on "%s", which is not a list: only list fields are streamed`, f.Name), core.At(d.Position))
		}
		if a := d.Arguments.ForName("initialCount"); a != nil && a.Value != nil && a.Value.Kind == ast.IntValue && len(a.Value.Raw) > 0 && a.Value.Raw[0] == '-' {
			addError(core.Message(`@stream(initialCount: %s) on "%s": initialCount is 0 or more`, a.Value.Raw, f.Name), core.At(a.Position))
		}
	})
}

// isIncremental tells whether op has a @defer or @stream anywhere (in its
// fragments too), whatever their "if".
func isIncremental(doc *ast.QueryDocument, op *ast.OperationDefinition) bool {
	seen := map[string]bool{}
	var walk func(ast.SelectionSet) bool
	walk = func(ss ast.SelectionSet) bool {
		for _, sel := range ss {
			switch x := sel.(type) {
			case *ast.Field:
				if x.Directives.ForName("stream") != nil || walk(x.SelectionSet) {
					return true
				}
			case *ast.InlineFragment:
				if x.Directives.ForName("defer") != nil || walk(x.SelectionSet) {
					return true
				}
			case *ast.FragmentSpread:
				if x.Directives.ForName("defer") != nil {
					return true
				}
				if seen[x.Name] {
					continue
				}
				seen[x.Name] = true
				if f := doc.Fragments.ForName(x.Name); f != nil && walk(f.SelectionSet) {
					return true
				}
			}
		}
		return false
	}
	return op != nil && walk(op.SelectionSet)
}

// withoutIncremental gives rc, an operation not yet dispatched, a copy of
// its document without @defer and @stream: the operation is executed
// whole. The document rc had (which the document cache shares) is left as
// it is.
func withoutIncremental(rc *graphql.OperationContext) {
	var strip func(ast.SelectionSet) ast.SelectionSet
	keep := func(ds ast.DirectiveList) ast.DirectiveList {
		var out ast.DirectiveList
		for _, d := range ds {
			if d.Name != "defer" && d.Name != "stream" {
				out = append(out, d)
			}
		}
		return out
	}
	strip = func(ss ast.SelectionSet) ast.SelectionSet {
		out := make(ast.SelectionSet, len(ss))
		for i, sel := range ss {
			switch x := sel.(type) {
			case *ast.Field:
				c := *x
				c.Directives, c.SelectionSet = keep(x.Directives), strip(x.SelectionSet)
				out[i] = &c
			case *ast.InlineFragment:
				c := *x
				c.Directives, c.SelectionSet = keep(x.Directives), strip(x.SelectionSet)
				out[i] = &c
			case *ast.FragmentSpread:
				c := *x
				c.Directives = keep(x.Directives)
				if c.Definition != nil {
					d := *c.Definition
					d.SelectionSet = strip(d.SelectionSet)
					c.Definition = &d
				}
				out[i] = &c
			default:
				out[i] = sel
			}
		}
		return out
	}
	doc := *rc.Doc
	doc.Fragments = make(ast.FragmentDefinitionList, len(rc.Doc.Fragments))
	for i, f := range rc.Doc.Fragments {
		c := *f
		c.SelectionSet = strip(f.SelectionSet)
		doc.Fragments[i] = &c
	}
	op := *rc.Operation
	op.SelectionSet = strip(op.SelectionSet)
	doc.Operations = ast.OperationList{&op}
	rc.Doc, rc.Operation = &doc, &op
}

// incrementalExec is an executor whose operations with @defer or @stream
// deliver their payloads in the incremental delivery format: the first
// response is the initial payload (data, errors, hasNext), each later one
// a subsequent payload ({"incremental": [...], "hasNext": …}) carried
// whole in Extensions[rawPayload] (see rawPayloadOf).
type incrementalExec struct{ graphql.GraphExecutor }

// DispatchOperation implements graphql.GraphExecutor.
func (e incrementalExec) DispatchOperation(ctx context.Context, rc *graphql.OperationContext) (graphql.ResponseHandler, context.Context) {
	next, ctx := e.GraphExecutor.DispatchOperation(ctx, rc)
	if rc.Operation == nil || rc.Operation.Operation != ast.Query || !isIncremental(rc.Doc, rc.Operation) {
		return next, ctx
	}
	return newIncremental(rc, next).response, ctx
}

// incrementalTransport is a graphql.Transport whose operations with @defer
// or @stream deliver their payloads incrementally (incrementalExec): the
// graphql-transport-ws transport, each payload a "next" message.
type incrementalTransport struct{ graphql.Transport }

// Do implements graphql.Transport.
func (t incrementalTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	t.Transport.Do(w, r, incrementalExec{exec})
}

// wholeExec is an executor that executes operations with @defer or
// @stream whole, one response as without them (withoutIncremental): the
// legacy graphql-ws transport's, whose clients do not merge payloads.
type wholeExec struct{ graphql.GraphExecutor }

// DispatchOperation implements graphql.GraphExecutor.
func (e wholeExec) DispatchOperation(ctx context.Context, rc *graphql.OperationContext) (graphql.ResponseHandler, context.Context) {
	if rc.Operation != nil && isIncremental(rc.Doc, rc.Operation) {
		withoutIncremental(rc)
	}
	return e.GraphExecutor.DispatchOperation(ctx, rc)
}
