// Package gqllist marshals the items of a GraphQL list of objects in the
// goroutine of the list field when no item can wait on anything, and in a
// goroutine each (gqlgen's graphql.MarshalSliceConcurrently) otherwise.
//
// gqlgen starts a goroutine per item of every list of objects, so that the
// resolvers under the items run at once and their dataloader calls meet in
// one batch. A home-timeline page of 50 edges whose fields are all read
// from memory (cursor, node { id content createdAt author { id username } })
// would pay for 50 goroutines, their stack growth and their scheduling, for
// no wait to overlap. The generated list marshallers (graph/generated.go,
// rewritten by internal/generate) call Marshal instead, with the table
// Objects of which fields gqlgen runs concurrently, i.e. which are
// resolvers or methods taking a context: when the list's selection reaches
// none of them, through any depth of object fields, fragments and inline
// fragments, the items are marshalled one after another. A selection that
// reaches an interface or union field, whose concrete type is known only
// per item, is taken as reaching a concurrent field. A Ready field (one
// whose resolver answers at once from the list's prefetch) is not.
package gqllist

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/weibohbase/gateway/internal/gqlfield"
)

// Object is what Marshal needs to know of one GraphQL object type.
type Object struct {
	// Implements is the type's name followed by the interfaces it
	// implements: the type conditions its selections satisfy.
	Implements []string
	// Concurrent holds the names of the fields gqlgen resolves in a
	// goroutine of their own (resolvers, methods with a context).
	Concurrent map[string]bool
	// Ready holds the concurrent fields whose resolvers answer at once
	// what the request already knows (internal/generate's readyFields):
	// every resolver of a list of such objects prefetches them for all
	// its items, so they do not make the list's items wait.
	Ready map[string]bool
}

// Objects maps each GraphQL object type name to its Object; graph's
// generated listObjects holds every object of the schema.
type Objects map[string]Object

// Marshal marshals a list field's n items with marshalElement (the
// arguments of graphql.MarshalSliceConcurrently): in the calling goroutine
// when the list field's selection reaches no field of objs' Concurrent (see
// the package comment), else with graphql.MarshalSliceConcurrently. ctx
// carries the list field's FieldContext.
//
// In the calling goroutine each item gets a FieldContext with its Index, as
// gqlgen gives it, and a panic is recovered unless omitPanicHandler. An
// item that panics, or ctx found cancelled (checked every 16 items), is
// recorded as an error and ends the list: Marshal returns nil. (gqlgen's
// concurrent marshalling returns the list with graphql.Null for such items
// instead.)
func Marshal(ctx context.Context, objs Objects, n int, workerLimit int64, omitPanicHandler bool,
	marshalElement func(ctx context.Context, i int) graphql.Marshaler) graphql.Array {
	if n < 2 || !objs.inline(ctx) {
		return graphql.MarshalSliceConcurrently(ctx, n, workerLimit, omitPanicHandler, marshalElement)
	}
	ret := make(graphql.Array, n)
	fcs := make([]graphql.FieldContext, n)
	idx := make([]int, n)
	for i := range n {
		idx[i] = i
		fcs[i].Index = &idx[i]
		childCtx := graphql.WithFieldContext(ctx, &fcs[i])
		if i%16 == 15 && ctx.Err() != nil {
			graphql.AddError(childCtx, ctx.Err())
			return nil
		}
		if !marshalOne(childCtx, ret, i, omitPanicHandler, marshalElement) {
			return nil
		}
	}
	return ret
}

// marshalOne sets ret[i] to item i; false when the item panicked (the panic
// is recorded as the item's error, as gqlgen does).
func marshalOne(ctx context.Context, ret graphql.Array, i int, omitPanicHandler bool,
	marshalElement func(ctx context.Context, i int) graphql.Marshaler) (ok bool) {
	if !omitPanicHandler {
		defer func() {
			if r := recover(); r != nil {
				graphql.AddError(ctx, graphql.Recover(ctx, r))
				ok = false
			}
		}()
	}
	ret[i] = marshalElement(ctx, i)
	return true
}

// inline reports whether the list field of ctx can marshal its items in
// one goroutine: its items are objects of objs and its selection reaches
// no concurrent field.
func (objs Objects) inline(ctx context.Context) bool {
	fc := graphql.GetFieldContext(ctx)
	oc := graphql.GetOperationContext(ctx)
	if fc == nil || oc == nil || fc.Field.Field == nil || fc.Field.Definition == nil {
		return false
	}
	return !objs.mayWait(oc, fc.Field.Definition.Type.Name(), fc.Field.Selections)
}

// mayWait reports whether selecting sel on an object of type typeName may
// run a concurrent field (or one whose type is not in objs).
func (objs Objects) mayWait(oc *graphql.OperationContext, typeName string, sel ast.SelectionSet) bool {
	o, ok := objs[typeName]
	if !ok {
		return true
	}
	for _, f := range gqlfield.CollectFields(oc, sel, o.Implements) {
		if o.Concurrent[f.Name] && !o.Ready[f.Name] {
			return true
		}
		if len(f.Selections) == 0 {
			continue
		}
		if f.Definition == nil || objs.mayWait(oc, f.Definition.Type.Name(), f.Selections) {
			return true
		}
	}
	return false
}
