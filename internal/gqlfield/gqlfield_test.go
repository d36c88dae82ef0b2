package gqlfield

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

type post struct {
	Content string
	Author  *user
}

type user struct{ Name string }

func (p *post) Upper() string    { return "<" + p.Content + ">" }
func (p *post) Writer() *user    { return p.Author }
func (p *post) Broken() string   { panic("broken field") }
func (p *post) BrokenObj() *user { panic("broken object field") }

// parentCtx is the context of a field function's caller: the response and
// operation contexts and the FieldContext of the parent field "node".
func parentCtx(t *testing.T) (context.Context, *graphql.OperationContext) {
	t.Helper()
	ctx := graphql.WithResponseContext(context.Background(), graphql.DefaultErrorPresenter,
		func(ctx context.Context, err any) error { return fmt.Errorf("internal system error: %v", err) })
	oc := &graphql.OperationContext{
		RecoverFunc:        func(ctx context.Context, err any) error { return fmt.Errorf("recovered: %v", err) },
		ResolverMiddleware: func(ctx context.Context, next graphql.Resolver) (any, error) { return next(ctx) },
	}
	ctx = graphql.WithOperationContext(ctx, oc)
	ctx = graphql.WithFieldContext(ctx, &graphql.FieldContext{Object: "PostEdge", Field: graphql.CollectedField{Field: &ast.Field{Alias: "node"}}})
	return ctx, oc
}

func fieldContext(object string) FieldContextFunc {
	return func(_ context.Context, field graphql.CollectedField) (*graphql.FieldContext, error) {
		return &graphql.FieldContext{Object: object, Field: field}, nil
	}
}

func collected(alias string) graphql.CollectedField {
	return graphql.CollectedField{Field: &ast.Field{Alias: alias, Name: alias}}
}

// marshalPath marshals a value as `"value@path"`, path being the path of
// the FieldContext the marshaller sees (what an error it reports, or a
// field below it, would carry).
func marshalPath[T any](ctx context.Context, _ ast.SelectionSet, v T) graphql.Marshaler {
	path := graphql.GetFieldContext(ctx).Path().String()
	return graphql.WriterFunc(func(w io.Writer) { fmt.Fprintf(w, "%q", fmt.Sprintf("%v@%s", v, path)) })
}

func render(m graphql.Marshaler) string {
	var b bytes.Buffer
	m.MarshalGQL(&b)
	return b.String()
}

func TestFields(t *testing.T) {
	p := &post{Content: "hi", Author: &user{Name: "ann"}}
	tests := []struct {
		name string
		run  func(ctx context.Context, oc *graphql.OperationContext) graphql.Marshaler
		want string
		errs []string // "message@path"
	}{
		{
			name: "Value keeps the field's FieldContext",
			run: func(ctx context.Context, _ *graphql.OperationContext) graphql.Marshaler {
				return Value(ctx, collected("author"), fieldContext("Post"), p.Author, marshalPath[*user])
			},
			want: `"&{ann}@node.author"`,
		},
		{
			name: "Method of a leaf marshals under the parent's FieldContext",
			run: func(ctx context.Context, oc *graphql.OperationContext) graphql.Marshaler {
				return Method(ctx, oc, collected("upper"), fieldContext("Post"), p, (*post).Upper, marshalPath[string], true)
			},
			want: `"<hi>@node"`,
		},
		{
			name: "Method of an object keeps the field's FieldContext",
			run: func(ctx context.Context, oc *graphql.OperationContext) graphql.Marshaler {
				return Method(ctx, oc, collected("writer"), fieldContext("Post"), p, (*post).Writer, marshalPath[*user], false)
			},
			want: `"&{ann}@node.writer"`,
		},
		{
			name: "a panicking leaf method is a field error on its path",
			run: func(ctx context.Context, oc *graphql.OperationContext) graphql.Marshaler {
				return Method(ctx, oc, collected("broken"), fieldContext("Post"), p, (*post).Broken, marshalPath[string], true)
			},
			want: "null",
			errs: []string{"recovered: broken field@node.broken"},
		},
		{
			name: "a panicking object method is a field error on its path",
			run: func(ctx context.Context, oc *graphql.OperationContext) graphql.Marshaler {
				return Method(ctx, oc, collected("brokenObj"), fieldContext("Post"), p, (*post).BrokenObj, marshalPath[*user], false)
			},
			want: "null",
			errs: []string{"recovered: broken object field@node.brokenObj"},
		},
		{
			name: "a FieldContext that cannot be built is null, as in ResolveField",
			run: func(ctx context.Context, _ *graphql.OperationContext) graphql.Marshaler {
				fail := func(context.Context, graphql.CollectedField) (*graphql.FieldContext, error) {
					return nil, errors.New("no field context")
				}
				return Value(ctx, collected("author"), fail, p.Author, marshalPath[*user])
			},
			want: "null",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, oc := parentCtx(t)
			if got := render(tt.run(ctx, oc)); got != tt.want {
				t.Errorf("marshalled %s, want %s", got, tt.want)
			}
			var errs []string
			for _, e := range graphql.GetErrors(ctx) {
				errs = append(errs, e.Message+"@"+e.Path.String())
			}
			if fmt.Sprint(errs) != fmt.Sprint(tt.errs) {
				t.Errorf("errors %q, want %q", errs, tt.errs)
			}
		})
	}
}

// TestSameAsResolveField checks that what gqlfield marshals, and the path
// the marshaller of an object field sees, are what graphql.ResolveField
// gives for the same binding.
func TestSameAsResolveField(t *testing.T) {
	p := &post{Content: "hi", Author: &user{Name: "ann"}}
	ctx, oc := parentCtx(t)
	viaGQLGen := render(graphql.ResolveField(ctx, oc, collected("author"), fieldContext("Post"),
		func(context.Context) (any, error) { return p.Author, nil }, nil, marshalPath[*user], true, true))
	viaValue := render(Value(ctx, collected("author"), fieldContext("Post"), p.Author, marshalPath[*user]))
	viaMethod := render(Method(ctx, oc, collected("author"), fieldContext("Post"), p, (*post).Writer, marshalPath[*user], false))
	if viaValue != viaGQLGen || viaMethod != viaGQLGen {
		t.Errorf("ResolveField %s, Value %s, Method %s", viaGQLGen, viaValue, viaMethod)
	}
}

// TestFieldSetSameBytes checks that FieldSet writes what graphql.FieldSet
// writes, for unique aliases and for a repeated one.
func TestFieldSetSameBytes(t *testing.T) {
	tests := []struct {
		name    string
		aliases []string
		want    string
	}{
		{name: "none", want: `{}`},
		{name: "one", aliases: []string{"id"}, want: `{"id":0}`},
		{name: "several", aliases: []string{"cursor", "node", "__typename"}, want: `{"cursor":0,"node":1,"__typename":2}`},
		{name: "a repeated alias is written once", aliases: []string{"a", "b", "a", "c"}, want: `{"a":0,"b":1,"c":3}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fields := make([]graphql.CollectedField, len(tt.aliases))
			for i, a := range tt.aliases {
				fields[i] = collected(a)
			}
			ours, theirs := NewFieldSet(fields), graphql.NewFieldSet(fields)
			for i := range fields {
				ours.Values[i] = graphql.MarshalInt(i)
				theirs.Values[i] = graphql.MarshalInt(i)
			}
			got, want := render(ours), render(theirs)
			if got != tt.want || want != tt.want {
				t.Errorf("FieldSet wrote %s, graphql.FieldSet %s, want %s", got, want, tt.want)
			}
		})
	}
}

// object is a generated object marshaller's loop over fields, run on a
// graphql.FieldSet or a FieldSet: the fields named "sync*" are set at once
// (their value nulls the object when it is graphql.Null), the others are
// scheduled; a field's value is its index, or graphql.Null when its name
// ends in "null". It returns the object's value, as the generated code does.
func object[S interface {
	graphql.Marshaler
	ResolveConcurrently(*graphql.OperationContext, *graphql.DeferredGroup, int, bool, bool, func(context.Context) graphql.Marshaler)
	Dispatch(context.Context)
}](ctx context.Context, oc *graphql.OperationContext, out S, values func(S) []graphql.Marshaler, invalids func(S) *uint32,
	deferred *graphql.DeferredGroup, fields []graphql.CollectedField) graphql.Marshaler {
	value := func(i int) graphql.Marshaler {
		if strings.HasSuffix(fields[i].Alias, "null") {
			return graphql.Null
		}
		return graphql.MarshalInt(i)
	}
	for i, f := range fields {
		if strings.HasPrefix(f.Alias, "sync") {
			values(out)[i] = value(i)
			if values(out)[i] == graphql.Null {
				atomic.AddUint32(invalids(out), 1)
			}
			continue
		}
		out.ResolveConcurrently(oc, deferred, i, true, true, func(context.Context) graphql.Marshaler { return value(i) })
	}
	out.Dispatch(ctx)
	if *invalids(out) > 0 {
		return graphql.Null
	}
	return out
}

// TestFieldSetConcurrent checks that a FieldSet with scheduled fields
// writes what a graphql.FieldSet writes, and nulls the object when
// graphql.FieldSet does, for fields resolved at once before and after the
// scheduled ones.
func TestFieldSetConcurrent(t *testing.T) {
	tests := []struct {
		name    string
		aliases []string
		want    string
	}{
		{name: "scheduled only", aliases: []string{"a", "b"}, want: `{"a":0,"b":1}`},
		{name: "mixed", aliases: []string{"sync1", "a", "sync2", "b", "sync3", "c"}, want: `{"sync1":0,"a":1,"sync2":2,"b":3,"sync3":4,"c":5}`},
		{name: "a scheduled field nulls the object", aliases: []string{"sync1", "anull", "b"}, want: "null"},
		{name: "a field resolved at once nulls the object", aliases: []string{"a", "syncnull", "b"}, want: "null"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, oc := parentCtx(t)
			fields := make([]graphql.CollectedField, len(tt.aliases))
			for i, a := range tt.aliases {
				fields[i] = collected(a)
			}
			theirGroup := graphql.NewDeferredGroup(ctx)
			theirs := render(object(ctx, oc, graphql.NewFieldSet(fields),
				func(s *graphql.FieldSet) []graphql.Marshaler { return s.Values },
				func(s *graphql.FieldSet) *uint32 { return &s.Invalids }, &theirGroup, fields))
			ourGroup := NewDeferredGroup(ctx)
			ours := render(object(ctx, oc, NewFieldSet(fields),
				func(s *FieldSet) []graphql.Marshaler { return s.Values },
				func(s *FieldSet) *uint32 { return &s.Invalids }, &ourGroup, fields))
			if ours != tt.want || theirs != tt.want {
				t.Errorf("FieldSet wrote %s, graphql.FieldSet %s, want %s", ours, theirs, tt.want)
			}
			if ourGroup.FieldSet != nil || len(ourGroup.Defers) != 0 {
				t.Errorf("no field is deferred, but the group was filled: %+v", ourGroup)
			}
		})
	}
}

// TestResolveRootConcurrently checks that a root field scheduled on a
// FieldSet runs under the operation's RootResolverMiddleware and its own
// context, as on a graphql.FieldSet.
func TestResolveRootConcurrently(t *testing.T) {
	ctx, oc := parentCtx(t)
	var seen []string
	oc.RootResolverMiddleware = func(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
		seen = append(seen, ctx.Value(rootKey{}).(string))
		return next(ctx)
	}
	fields := []graphql.CollectedField{collected("me"), collected("__typename")}
	for _, s := range []interface {
		ResolveRootConcurrently(context.Context, *graphql.OperationContext, int, bool, bool, func(context.Context) graphql.Marshaler)
		Dispatch(context.Context)
	}{graphql.NewFieldSet(fields), NewFieldSet(fields)} {
		rootCtx := context.WithValue(ctx, rootKey{}, fmt.Sprintf("%T", s))
		s.ResolveRootConcurrently(rootCtx, oc, 0, true, true, func(ctx context.Context) graphql.Marshaler {
			return graphql.MarshalString(ctx.Value(rootKey{}).(string))
		})
		var values []graphql.Marshaler
		switch s := s.(type) {
		case *graphql.FieldSet:
			s.Values[1] = graphql.MarshalString("Query")
			values = s.Values
		case *FieldSet:
			s.Values[1] = graphql.MarshalString("Query")
			values = s.Values
		}
		s.Dispatch(ctx)
		if got, want := render(values[0])+render(values[1]), strconv.Quote(fmt.Sprintf("%T", s))+`"Query"`; got != want {
			t.Errorf("%T: values %s, want %s", s, got, want)
		}
	}
	if fmt.Sprint(seen) != "[*graphql.FieldSet *gqlfield.FieldSet]" {
		t.Errorf("the middleware saw %v", seen)
	}
}

type rootKey struct{}

// TestDeferredGroup checks that a field with @defer scheduled on a FieldSet
// with a group of NewDeferredGroup lands in the group as it does with
// graphql.FieldSet and graphql.NewDeferredGroup: scheduled on the group's
// field set under its label, null in the object meanwhile.
func TestDeferredGroup(t *testing.T) {
	ctx, oc := parentCtx(t)
	deferredField := collected("later")
	deferredField.Deferrables = []*graphql.Deferrable{{Label: "L"}}
	fields := []graphql.CollectedField{collected("now"), deferredField}
	run := func(out interface {
		graphql.Marshaler
		ResolveConcurrently(*graphql.OperationContext, *graphql.DeferredGroup, int, bool, bool, func(context.Context) graphql.Marshaler)
		Dispatch(context.Context)
	}, group *graphql.DeferredGroup) (string, string) {
		for i := range fields {
			out.ResolveConcurrently(oc, group, i, true, true, func(context.Context) graphql.Marshaler { return graphql.MarshalInt(i) })
		}
		out.Dispatch(ctx)
		if len(group.Defers) != 1 || group.Defers["L"] == nil || group.FieldSet == nil || group.Context != ctx {
			t.Fatalf("%T: group %+v, want one view labelled L", out, group)
		}
		group.FieldSet.Dispatch(ctx)
		return render(out), render(group.Defers["L"]) + fmt.Sprint(group.Path)
	}
	theirGroup := graphql.NewDeferredGroup(ctx)
	theirObject, theirPayload := run(graphql.NewFieldSet(fields), &theirGroup)
	ourGroup := NewDeferredGroup(ctx)
	ourObject, ourPayload := run(NewFieldSet(fields), &ourGroup)
	if ourObject != theirObject || ourPayload != theirPayload || ourObject != `{"now":0,"later":null}` {
		t.Errorf("FieldSet: %s, deferred %s; graphql.FieldSet: %s, deferred %s", ourObject, ourPayload, theirObject, theirPayload)
	}
}
