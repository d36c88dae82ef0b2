package server

import (
	"context"
	"strings"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/vektah/gqlparser/v2/ast"
)

// FieldUsage is the Prometheus counter
// gateway_graphql_field_usage_total{type, field}: for each executed
// operation, one increment per distinct field of the schema its validated
// document selects (through fragments too), labelled with the type the
// field is selected on (an interface's name where the selection is on the
// interface) and the field's name. Introspection fields (__typename,
// __schema, __type) and the introspection types are not counted, so the
// label set is bounded by the schema. Operations refused before execution
// (parse, validation, limits, trusted documents) count nothing. With the
// schema's deprecations it tells which deprecated fields are still read
// (README, "Metrics").
var FieldUsage = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "gateway_graphql_field_usage_total",
	Help: "Executed operations selecting each field, by the type it is selected on and the field's name.",
}, []string{"type", "field"})

// DocumentOperations is the Prometheus counter
// gateway_graphql_document_operations_total{document}: one increment per
// executed operation, labelled with the id of the registered document it
// ran ("sha256:<hex>", weibo/documents), or "none" for an operation sent
// as text (or an automatic persisted query). Its label set is bounded by
// the registered documents.
var DocumentOperations = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "gateway_graphql_document_operations_total",
	Help: "Executed operations by the registered document they ran (\"none\": sent as text).",
}, []string{"document"})

// FieldDeprecated is the Prometheus gauge
// gateway_graphql_field_deprecated{type, field}: 1 for each field of the
// served schema marked @deprecated, so that a query joins it with
// FieldUsage to list the deprecated fields still read (README,
// "Metrics"). Set when the first handler is built (markDeprecated).
var FieldDeprecated = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "gateway_graphql_field_deprecated",
	Help: "1 for each field of the served schema marked @deprecated, by type and field.",
}, []string{"type", "field"})

func init() { prometheus.MustRegister(FieldUsage, DocumentOperations, FieldDeprecated) }

// markDeprecated sets FieldDeprecated from the served schema, once.
var markDeprecated = sync.OnceFunc(func() {
	for _, def := range servedSchema().Types {
		if strings.HasPrefix(def.Name, "__") {
			continue
		}
		for _, f := range def.Fields {
			if f.Directives.ForName("deprecated") != nil {
				FieldDeprecated.WithLabelValues(def.Name, f.Name).Set(1)
			}
		}
	}
})

// noDocument is the document label of an operation sent as text.
const noDocument = "none"

// usage is the gqlgen extension behind FieldUsage and DocumentOperations:
// it counts each operation as it starts executing.
type usage struct{}

var (
	_ graphql.HandlerExtension     = usage{}
	_ graphql.OperationInterceptor = usage{}
)

// ExtensionName implements graphql.HandlerExtension.
func (usage) ExtensionName() string { return "FieldUsage" }

// Validate implements graphql.HandlerExtension.
func (usage) Validate(graphql.ExecutableSchema) error { return nil }

// InterceptOperation implements graphql.OperationInterceptor.
func (usage) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	opCtx := graphql.GetOperationContext(ctx)
	if opCtx != nil && opCtx.Operation != nil {
		doc := documentOf(opCtx)
		if doc == "" {
			doc = noDocument
		}
		DocumentOperations.WithLabelValues(doc).Inc()
		for f := range fieldsOf(opCtx.Doc, opCtx.Operation) {
			FieldUsage.WithLabelValues(f.typ, f.field).Inc()
		}
	}
	return next(ctx)
}

// typeField is a field of the schema as a selection names it.
type typeField struct{ typ, field string }

// fieldsOf returns the distinct fields op selects, through the fragments
// of doc (each fragment walked once), without introspection.
func fieldsOf(doc *ast.QueryDocument, op *ast.OperationDefinition) map[typeField]struct{} {
	out := map[typeField]struct{}{}
	seen := map[string]bool{}
	var walk func(ast.SelectionSet)
	walk = func(set ast.SelectionSet) {
		for _, sel := range set {
			switch s := sel.(type) {
			case *ast.Field:
				if s.ObjectDefinition != nil && s.Definition != nil &&
					!strings.HasPrefix(s.Name, "__") && !strings.HasPrefix(s.ObjectDefinition.Name, "__") {
					out[typeField{s.ObjectDefinition.Name, s.Name}] = struct{}{}
				}
				walk(s.SelectionSet)
			case *ast.InlineFragment:
				walk(s.SelectionSet)
			case *ast.FragmentSpread:
				if seen[s.Name] {
					continue
				}
				seen[s.Name] = true
				if f := fragment(doc, s); f != nil {
					walk(f.SelectionSet)
				}
			}
		}
	}
	walk(op.SelectionSet)
	return out
}

// fragment returns the definition a spread names.
func fragment(doc *ast.QueryDocument, s *ast.FragmentSpread) *ast.FragmentDefinition {
	if s.Definition != nil {
		return s.Definition
	}
	if doc != nil {
		return doc.Fragments.ForName(s.Name)
	}
	return nil
}
