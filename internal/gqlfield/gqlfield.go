// Package gqlfield executes the GraphQL fields that only read memory — a
// field bound to a Go struct field, or to a method that takes no context and
// returns no error — without gqlgen's per-field machinery, and writes each
// object's fields without a map of the aliases written (FieldSet).
//
// gqlgen v0.17.88 runs every field through graphql.ResolveField: a new
// FieldContext, a context carrying it, a closure for the field middleware
// chain, the value boxed into an interface (twice), and a closure for the
// result. On a home-timeline page of 50 edges (cursor, node { id content
// createdAt author { id username } }) that is 400 fields, each of which
// only copies a value out of a struct (issue 11: the largest share of the
// page's CPU after the store). The field middleware has nothing to do
// there: the project's only field interceptor (server/guard.go) returns at
// once for fields that are not resolvers, and no directive is attached to
// such fields (a field with directives, arguments, a context or an error is
// never rewritten).
//
// `make generate` (internal/generate) rewrites the generated field
// functions of graph/generated.go that gqlgen's codegen data shows are
// plain bindings:
//
//   - a leaf (scalar or enum) bound to a struct field calls its marshaller
//     directly: no FieldContext (see below);
//   - a leaf bound to a method calls Method, which recovers a panic as
//     ResolveField does;
//   - an object or list bound to a struct field calls Value, a method
//     calls Method: both keep the field's FieldContext, because the
//     fields below it take their path from it.
//
// What differs from ResolveField: the field middleware (AroundFields) does
// not see these fields, FieldContext.Result is not set, and an error a
// leaf's own marshaller reports (gqlgen's "the requested element is null
// which the schema does not allow", for a nil pointer or a zero time.Time
// bound to a non-null type) carries the path of the field's parent object,
// not the field's; and a leaf bound to a struct field is read without a
// recover of its own (reading a struct field panics only through a nil
// embedded pointer, which the project's types do not have), so such a panic
// would null the nearest list item or resolver above it. The values
// marshalled and every other error are the same.
package gqlfield

import (
	"context"
	"io"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// FieldContextFunc is gqlgen's generated fieldContext_<Object>_<field>
// function: the FieldContext of one collected field.
type FieldContextFunc func(ctx context.Context, field graphql.CollectedField) (*graphql.FieldContext, error)

// MarshalFunc is a generated marshaller of a field's Go type T.
type MarshalFunc[T any] func(ctx context.Context, sel ast.SelectionSet, v T) graphql.Marshaler

// Value marshals v, the value of an object or list field bound to a struct
// field, under the field's FieldContext (so the fields below report their
// paths through it). It returns graphql.Null when the FieldContext cannot
// be built, as ResolveField does.
func Value[T any](ctx context.Context, field graphql.CollectedField, fieldContext FieldContextFunc, v T, marshal MarshalFunc[T]) graphql.Marshaler {
	fctx, ok := enter(ctx, field, fieldContext)
	if !ok {
		return graphql.Null
	}
	return marshal(fctx, field.Selections, v)
}

// Method marshals get(obj), a field bound to a method without context or
// error. A leaf is marshalled without a FieldContext of its own; any other
// type under it. A panic in get or in the marshaller is recovered as
// ResolveField recovers it: reported through oc with the field's path, and
// the field's value is graphql.Null.
func Method[O, T any](ctx context.Context, oc *graphql.OperationContext, field graphql.CollectedField,
	fieldContext FieldContextFunc, obj O, get func(O) T, marshal MarshalFunc[T], leaf bool) (ret graphql.Marshaler) {
	fctx, entered := ctx, false // fctx: ctx with the field's FieldContext once entered
	defer func() {
		if r := recover(); r != nil {
			ret = graphql.Null
			if !entered {
				if fctx, entered = enter(ctx, field, fieldContext); !entered {
					return
				}
			}
			oc.Error(fctx, oc.Recover(fctx, r))
		}
	}()
	if !leaf {
		if fctx, entered = enter(ctx, field, fieldContext); !entered {
			return graphql.Null
		}
	}
	return marshal(fctx, field.Selections, get(obj))
}

// enter returns ctx with field's FieldContext (its parent the one of ctx),
// or false when fieldContext cannot build it.
func enter(ctx context.Context, field graphql.CollectedField, fieldContext FieldContextFunc) (context.Context, bool) {
	fc, err := fieldContext(ctx, field)
	if err != nil {
		return ctx, false
	}
	return graphql.WithFieldContext(ctx, fc), true
}

// FieldSet is graphql.FieldSet, the fields of one object of the response,
// with a MarshalGQL of its own. `make generate` makes every generated object
// marshaller build its fields with NewFieldSet (gqlgen's deferred field sets
// stay graphql.FieldSets).
//
// graphql.FieldSet.MarshalGQL fills a map of the aliases written so far, to
// skip a repeated alias, and quotes each alias as it would any string. The
// fields of an object's FieldSet come from graphql.CollectFields, which
// merges fields of the same alias into one, and an alias is a GraphQL Name
// (/[_A-Za-z][_0-9A-Za-z]*/, checked by the parser), which JSON needs no
// escaping for: MarshalGQL writes the same bytes with neither (a repeated
// alias is still skipped, found by comparing with the aliases before it).
// On a home-timeline page of 50 edges that is 150 objects.
type FieldSet struct {
	graphql.FieldSet
	fields []graphql.CollectedField
	// values holds Values for an object of at most inlineValues fields: one
	// allocation an object instead of two (every object of a home-timeline
	// page has 2 or 4).
	values [inlineValues]graphql.Marshaler
}

// inlineValues is how many fields' Values a FieldSet holds without a slice
// of its own.
const inlineValues = 4

// NewFieldSet returns the FieldSet of fields, with a Values slot each. The
// embedded graphql.FieldSet has Values (and Invalids, Concurrently and
// Dispatch, which the generated code uses) but not the fields, which only
// its MarshalGQL and AddField read: FieldSet's MarshalGQL replaces the
// first, and the generated code calls the second only on gqlgen's own
// deferred field sets.
func NewFieldSet(fields []graphql.CollectedField) *FieldSet {
	s := &FieldSet{fields: fields}
	if len(fields) <= inlineValues {
		s.Values = s.values[:len(fields):len(fields)]
	} else {
		s.Values = make([]graphql.Marshaler, len(fields))
	}
	return s
}

// MarshalGQL writes the fields as a JSON object: each alias with its value,
// in order, an alias written before skipped.
func (s *FieldSet) MarshalGQL(w io.Writer) {
	_, _ = io.WriteString(w, "{")
	for i, f := range s.fields {
		if seen(s.fields[:i], f.Alias) {
			continue
		}
		if i == 0 {
			_, _ = io.WriteString(w, `"`)
		} else {
			_, _ = io.WriteString(w, `,"`)
		}
		_, _ = io.WriteString(w, f.Alias)
		_, _ = io.WriteString(w, `":`)
		s.Values[i].MarshalGQL(w)
	}
	_, _ = io.WriteString(w, "}")
}

// seen reports whether one of fields has alias.
func seen(fields []graphql.CollectedField, alias string) bool {
	for _, f := range fields {
		if f.Alias == alias {
			return true
		}
	}
	return false
}
