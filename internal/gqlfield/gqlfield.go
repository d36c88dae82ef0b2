// Package gqlfield executes the GraphQL fields that only read memory — a
// field bound to a Go struct field, or to a method that takes no context and
// returns no error — without gqlgen's per-field machinery, and writes each
// object's fields without a map of the aliases written (FieldSet).
//
// gqlgen runs every field through graphql.ResolveField: a new FieldContext,
// a context carrying it, a closure for the field middleware chain, the value
// boxed into an interface (twice), and a closure for the result. On a
// home-timeline page of 50 edges (cursor, node { id content createdAt
// author { id username } }) that is 400 fields, each of which only copies a
// value out of a struct: the largest share of the page's CPU after the
// store. The field middleware has nothing to do there: the project's only
// field interceptor (server/guard.go) returns at once for fields that are
// not resolvers, and no directive is attached to such fields (a field with
// directives, arguments, a context or an error is never rewritten).
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
// not see these fields (so neither can it mark one non-null with
// graphql.MarkNonNull), FieldContext.Result is not set, and an error a
// leaf's own marshaller reports (gqlgen's "the requested element is null
// which the schema does not allow", for a nil pointer or a zero time.Time
// bound to a non-null type) carries the path of the field's parent object,
// not the field's; and a leaf bound to a struct field is read without a
// recover of its own (reading a struct field panics only through a nil
// embedded pointer, which the project's types do not have), so such a panic
// would null the nearest list item or resolver above it. The values
// marshalled and every other error are the same.
//
// Everything here uses gqlgen's exported API only. FieldSet in particular
// does not embed graphql.FieldSet: a graphql.FieldSet holds its fields in
// unexported state that only its constructor sets, which an embedded zero
// value lacks, so a method of it promoted to the generated code (as
// ResolveConcurrently would be) could read fields that are not there. A
// FieldSet instead has the methods the generated object marshallers call,
// and the generated code does not compile against it when gqlgen starts
// calling another.
package gqlfield

import (
	"context"
	"io"
	"sync/atomic"

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

// FieldSet is the fields of one object of the response, with the API of
// graphql.FieldSet the generated object marshallers use (Values, Invalids,
// ResolveConcurrently, ResolveRootConcurrently, Dispatch) and a MarshalGQL
// of its own. `make generate` makes every generated object marshaller build
// its fields with NewFieldSet instead of graphql.NewFieldSet, and its group
// of deferred fields with NewDeferredGroup.
//
// graphql.FieldSet.MarshalGQL fills a map of the aliases written so far, to
// skip a repeated alias, and quotes each alias as it would any string. The
// fields of an object's FieldSet come from CollectFields, which merges
// fields of the same alias into one, and an alias is a GraphQL Name
// (/[_A-Za-z][_0-9A-Za-z]*/, checked by the parser), which JSON needs no
// escaping for: MarshalGQL writes the same bytes with neither (a repeated
// alias is still skipped, found by comparing with the aliases before it).
// A home-timeline page has 150 objects.
//
// The fields gqlgen resolves concurrently (resolvers, methods with a
// context) are scheduled on a graphql.FieldSet of the same fields, made by
// graphql.NewFieldSet when the object's first such field is scheduled: an
// object whose selection has none (every object of a home-timeline page but
// the root) costs one allocation, the FieldSet itself.
type FieldSet struct {
	// Values holds each field's value, in the order of the fields; the
	// generated code sets the values of the fields it resolves at once,
	// Dispatch those of the fields scheduled.
	Values []graphql.Marshaler
	// Invalids counts the fields resolved at once whose value nulls the
	// object; after Dispatch it counts the scheduled ones too.
	Invalids uint32

	fields []graphql.CollectedField
	// concurrent is nil until a field is scheduled; then Values is its
	// Values.
	concurrent *graphql.FieldSet
	// values holds Values for an object of at most inlineValues fields: one
	// allocation an object instead of two (every object of a home-timeline
	// page has 2 or 4).
	values [inlineValues]graphql.Marshaler
}

// inlineValues is how many fields' Values a FieldSet holds without a slice
// of its own.
const inlineValues = 4

// NewFieldSet returns the FieldSet of fields, with a Values slot each.
func NewFieldSet(fields []graphql.CollectedField) *FieldSet {
	s := &FieldSet{fields: fields}
	if len(fields) <= inlineValues {
		s.Values = s.values[:len(fields):len(fields)]
	} else {
		s.Values = make([]graphql.Marshaler, len(fields))
	}
	return s
}

// scheduler returns the graphql.FieldSet the concurrent fields are
// scheduled on, made on the first call: Values becomes its Values, with the
// values set so far.
func (s *FieldSet) scheduler() *graphql.FieldSet {
	if s.concurrent == nil {
		s.concurrent = graphql.NewFieldSet(s.fields)
		copy(s.concurrent.Values, s.Values)
		s.Values = s.concurrent.Values
	}
	return s.concurrent
}

// ResolveConcurrently schedules field i, as graphql.FieldSet's
// ResolveConcurrently does: a field with @defer on deferred, completing it
// first when it comes from NewDeferredGroup.
func (s *FieldSet) ResolveConcurrently(oc *graphql.OperationContext, deferred *graphql.DeferredGroup, i int,
	recoverFromPanic, nonNull bool, resolve func(ctx context.Context) graphql.Marshaler) {
	if deferred.FieldSet == nil && s.fields[i].IsDeferred() {
		*deferred = graphql.NewDeferredGroup(deferred.Context)
	}
	s.scheduler().ResolveConcurrently(oc, deferred, i, recoverFromPanic, nonNull, resolve)
}

// ResolveRootConcurrently schedules field i of a Query or Mutation, as
// graphql.FieldSet's ResolveRootConcurrently does.
func (s *FieldSet) ResolveRootConcurrently(ctx context.Context, oc *graphql.OperationContext, i int,
	recoverFromPanic, nonNull bool, resolve func(ctx context.Context) graphql.Marshaler) {
	s.scheduler().ResolveRootConcurrently(ctx, oc, i, recoverFromPanic, nonNull, resolve)
}

// SetReady sets field i to m, the value of a resolver field its resolver
// knew at once (the generated _<Object>_<field>_ready functions), counted
// in Invalids when it is null and the field non-null, as the generated
// code does for the fields it resolves at once.
func (s *FieldSet) SetReady(i int, m graphql.Marshaler, nonNull bool) {
	s.Values[i] = m
	if nonNull && m == graphql.Null {
		atomic.AddUint32(&s.Invalids, 1)
	}
}

// Dispatch resolves the scheduled fields (graphql.FieldSet.Dispatch: one in
// the calling goroutine, the others in a goroutine each; it returns when
// all are resolved) and adds those whose value nulls the object to
// Invalids.
func (s *FieldSet) Dispatch(ctx context.Context) {
	if s.concurrent == nil {
		return
	}
	s.concurrent.Dispatch(ctx)
	s.Invalids += atomic.LoadUint32(&s.concurrent.Invalids)
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

// NewDeferredGroup returns the group of an object's fields with @defer, as
// graphql.NewDeferredGroup(ctx) does, but empty until FieldSet's
// ResolveConcurrently schedules such a field: Context is ctx, the other
// fields are zero (no Defers, so the generated code processes nothing).
// `make generate` makes every generated object marshaller start its group
// with it.
//
// graphql.NewDeferredGroup computes the object's path, a field set and a
// map, for every object of the response (three allocations and the path's
// own); the gateway refuses @defer (server/incremental.go), so none is
// used. Filled when used, the group is graphql.NewDeferredGroup(ctx)
// itself: gqlgen schedules on it exactly the fields with @defer
// (graphql.CollectedField.IsDeferred).
func NewDeferredGroup(ctx context.Context) graphql.DeferredGroup {
	return graphql.DeferredGroup{Context: ctx}
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
