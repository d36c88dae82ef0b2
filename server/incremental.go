package server

import (
	"maps"
	"sync"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/validator/core"
	"github.com/vektah/gqlparser/v2/validator/rules"

	"github.com/weibohbase/gateway/graph"
)

// The gateway does not deliver results incrementally: @defer and @stream
// (which would need multipart/mixed responses and a client that merges
// them) are refused when an operation is validated, over HTTP and
// WebSocket alike, and the schema the gateway serves declares neither, so
// clients that read the schema by introspection see that they are absent.

// incrementalMessage is the error a @defer or @stream gets.
const incrementalMessage = `the gateway does not support incremental delivery (@%s): ask for the fields in the operation itself (with @include or @skip for optional parts) or in separate queries`

// servedSchema is the schema the gateway executes and introspects: the
// generated one without gqlparser's built-in @defer directive.
var servedSchema = sync.OnceValue(func() *ast.Schema {
	s := *graph.NewExecutableSchema(graph.Config{}).Schema()
	s.Directives = maps.Clone(s.Directives)
	delete(s.Directives, "defer")
	delete(s.Directives, "stream")
	return &s
})

// validationRules is gqlparser's default rule set with KnownDirectives
// replaced by knownDirectives.
func validationRules() *rules.Rules {
	r := rules.NewDefaultRules()
	r.ReplaceRule(rules.KnownDirectivesRule.Name, knownDirectives)
	return r
}

// knownDirectives is gqlparser's KnownDirectives rule, except that a
// @defer or @stream gets incrementalMessage (GRAPHQL_VALIDATION_FAILED)
// instead of `Unknown directive "@defer".`.
func knownDirectives(observers *core.Events, addError core.AddErrFunc) {
	incremental := false
	// Observers run in the order they were added: this one sees each
	// directive before the wrapped rule's does.
	observers.OnDirective(func(_ *core.Walker, d *ast.Directive) {
		incremental = d.Name == "defer" || d.Name == "stream"
		if incremental {
			addError(core.Message(incrementalMessage, d.Name), core.At(d.Position))
		}
	})
	rules.KnownDirectivesRule.RuleFunc(observers, func(opts ...core.ErrorOption) {
		if !incremental {
			addError(opts...)
		}
	})
}
