package main

import (
	"bytes"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fieldFunc is a generated field function as gqlgen writes it with the
// field context and the marshaller passed as functions, with the resolver
// body and the middleware argument to fill in; wrappedFieldFunc is the
// same function with both passed as closures forwarding to them, the shape
// gqlgen writes now.
const fieldFunc = `package graph

func (ec *executionContext) _Post_x(ctx context.Context, field graphql.CollectedField, obj *weibo.Post) (ret graphql.Marshaler) {
	return graphql.ResolveField(
		ctx,
		ec.OperationContext,
		field,
		ec.fieldContext_Post_x,
		func(ctx context.Context) (any, error) {
			%s
		},
		%s,
		ec.marshalX,
		true,
		true,
	)
}
`

const wrappedFieldFunc = `package graph

func (ec *executionContext) _Post_x(ctx context.Context, field graphql.CollectedField, obj *weibo.Post) (ret graphql.Marshaler) {
	return graphql.ResolveField(
		ctx,
		ec.OperationContext,
		field,
		func(ctx context.Context, field graphql.CollectedField) (*graphql.FieldContext, error) {
			return ec.fieldContext_Post_x(ctx, field)
		},
		func(ctx context.Context) (any, error) {
			%s
		},
		%s,
		func(ctx context.Context, selections ast.SelectionSet, v string) graphql.Marshaler {
			return ec.marshalX(ctx, selections, v)
		},
		true,
		true,
	)
}
`

func TestRewriteField(t *testing.T) {
	tests := []struct {
		name       string
		body, mw   string
		b          binding
		want, fail string
	}{
		{name: "leaf struct field", body: "return obj.Content, nil", mw: "nil", b: binding{leaf: true},
			want: "return ec.marshalX(ctx, field.Selections, obj.Content)"},
		{name: "object struct field", body: "return obj.Post, nil", mw: "nil",
			want: "return gqlfield.Value(ctx, field, ec.fieldContext_Post_x, obj.Post, ec.marshalX)"},
		{name: "leaf method", body: "return obj.CreatedAt(), nil", mw: "nil", b: binding{method: true, leaf: true},
			want: "return gqlfield.Method(ctx, ec.OperationContext, field, ec.fieldContext_Post_x, obj, (*weibo.Post).CreatedAt, ec.marshalX, true)"},
		{name: "object method", body: "return obj.Author(), nil", mw: "nil", b: binding{method: true},
			want: "return gqlfield.Method(ctx, ec.OperationContext, field, ec.fieldContext_Post_x, obj, (*weibo.Post).Author, ec.marshalX, false)"},
		{name: "directives", body: "return obj.Content, nil", mw: "ec.middleware", b: binding{leaf: true},
			fail: "middleware chain"},
		{name: "method with an error", body: "return obj.Load()", mw: "nil", b: binding{method: true},
			fail: "does not return (value, nil)"},
		{name: "method with arguments", body: "return obj.Author(ctx), nil", mw: "nil", b: binding{method: true},
			fail: "obj.Method()"},
		{name: "not a field of obj", body: "return ec.resolvers.Post().X(ctx, obj), nil", mw: "nil", b: binding{leaf: true},
			fail: "not return a field of obj"},
	}
	for _, shape := range []struct{ name, src string }{{"functions", fieldFunc}, {"forwarding closures", wrappedFieldFunc}} {
		for _, tt := range tests {
			t.Run(shape.name+"/"+tt.name, func(t *testing.T) {
				got, err := rewriteFieldSource(t, shape.src, tt.body, tt.mw, tt.b)
				if tt.fail != "" {
					if err == nil || !strings.Contains(err.Error(), tt.fail) {
						t.Fatalf("err = %v, want one saying %q", err, tt.fail)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if got != tt.want {
					t.Errorf("rewritten to\n%s\nwant\n%s", got, tt.want)
				}
			})
		}
	}
}

// TestRewriteFieldClosures: a field context or marshaller closure that does
// more than call one function with its own parameters is refused.
func TestRewriteFieldClosures(t *testing.T) {
	for _, c := range []struct{ name, from, to, fail string }{
		{"marshaller with another argument", "return ec.marshalX(ctx, selections, v)", "return ec.marshalX(ctx, nil, v)", "the marshaller"},
		{"marshaller with arguments swapped", "return ec.marshalX(ctx, selections, v)", "return ec.marshalX(selections, ctx, v)", "the marshaller"},
		{"marshaller of a parameter", "return ec.marshalX(ctx, selections, v)", "return v.marshal(ctx, selections, v)", "the marshaller"},
		{"field context with two statements", "return ec.fieldContext_Post_x(ctx, field)", "_ = 1\n\t\t\treturn ec.fieldContext_Post_x(ctx, field)", "the field context"},
		{"field context returning a literal", "return ec.fieldContext_Post_x(ctx, field)", "return nil, nil", "the field context"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := strings.Replace(wrappedFieldFunc, c.from, c.to, 1)
			if src == wrappedFieldFunc {
				t.Fatalf("the fixture has no %q", c.from)
			}
			if _, err := rewriteFieldSource(t, src, "return obj.Content, nil", "nil", binding{leaf: true}); err == nil || !strings.Contains(err.Error(), c.fail) {
				t.Fatalf("err = %v, want one about %s", err, c.fail)
			}
		})
	}
}

// rewriteFieldSource fills the field function src with the resolver body
// and the middleware mw, applies rewriteField and returns its return
// statement formatted on one line, or rewriteField's error.
func rewriteFieldSource(t *testing.T, src, body, mw string, b binding) (string, error) {
	t.Helper()
	fset := token.NewFileSet()
	src = strings.Replace(strings.Replace(src, "%s", body, 1), "%s", mw, 1)
	f, err := parser.ParseFile(fset, "generated.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	fd := f.Decls[0].(*ast.FuncDecl)
	if err := rewriteField(fd, b); err != nil {
		return "", err
	}
	var out bytes.Buffer
	if err := format.Node(&out, token.NewFileSet(), fd.Body.List[0]); err != nil {
		t.Fatal(err)
	}
	return strings.Join(strings.Fields(out.String()), " "), nil
}

func TestRewriteFieldSets(t *testing.T) {
	const src = `package graph

func (ec *executionContext) _Department(ctx context.Context, sel ast.SelectionSet, obj *weibo.Department) graphql.Marshaler {
	fields := graphql.CollectFields(ec.OperationContext, sel, departmentImplementors)
	out := graphql.NewFieldSet(fields)
	deferred := graphql.NewDeferredGroup(ctx)
	for i, field := range fields {
		switch field.Name {
		case "name":
			out.Values[i] = ec._Department_name(ctx, field, obj)
		case "parent":
			out.ResolveConcurrently(ec.OperationContext, &deferred, i, true, false,
				func(ctx context.Context) graphql.Marshaler { return ec._Department_parent(ctx, field, obj) })
		}
	}
	out.Dispatch(ctx)
	if n := len(deferred.Defers); n > 0 {
		ec.ProcessDeferredGroup(deferred)
	}
	return out
}
`
	// The two lines rewritten.
	want := strings.NewReplacer(
		"out := graphql.NewFieldSet(fields)", "out := gqlfield.NewFieldSet(fields)",
		"deferred := graphql.NewDeferredGroup(ctx)", "deferred := gqlfield.NewDeferredGroup(ctx)",
	).Replace(src)
	if want == src || strings.Count(want, "gqlfield.") != 2 {
		t.Fatal("the expected output is not the fixture with its two lines rewritten")
	}
	if got, err := rewriteSource(t, src, rewriteFieldSets); err != nil || got != want {
		t.Errorf("rewritten to\n%s\nwant\n%s (%v)", got, want, err)
	}
	if _, err := rewriteSource(t, "package graph\nfunc f() { out := 1; _ = out }\n", rewriteFieldSets); err == nil {
		t.Error("a file without graphql.NewFieldSet was not refused")
	}
	// A group beside a field set gqlfield does not build stays graphql's,
	// and a file with no group to rewrite is refused.
	other := "package graph\nfunc f(ctx context.Context) { deferred := graphql.NewDeferredGroup(ctx); _ = deferred }\n"
	if got, err := rewriteSource(t, src+other[len("package graph\n"):], rewriteFieldSets); err != nil || strings.Count(got, "graphql.NewDeferredGroup") != 1 {
		t.Errorf("rewritten to\n%s (%v), want the group of f left as it is", got, err)
	}
	noGroup := strings.Replace(src, "deferred := graphql.NewDeferredGroup(ctx)", "deferred := graphql.DeferredGroup{}", 1)
	if _, err := rewriteSource(t, noGroup, rewriteFieldSets); err == nil {
		t.Error("a file without graphql.NewDeferredGroup was not refused")
	}
}

func TestRewriteExecBuffers(t *testing.T) {
	// Exec as gqlgen writes it, shortened: the Query and Mutation cases
	// marshal into a new buffer, the Subscription case reuses one.
	const src = `package graph

func (e *executableSchema) Exec(ctx context.Context) graphql.ResponseHandler {
	switch opCtx.Operation.Operation {
	case ast.Query:
		return func(ctx context.Context) *graphql.Response {
			var response graphql.Response
			var data graphql.Marshaler
			data = ec._Query(ctx, opCtx.Operation.SelectionSet)
			var buf bytes.Buffer
			data.MarshalGQL(&buf)
			response.Data = buf.Bytes()
			return &response
		}
	case ast.Mutation:
		return func(ctx context.Context) *graphql.Response {
			data := ec._Mutation(ctx, opCtx.Operation.SelectionSet)
			var buf bytes.Buffer
			data.MarshalGQL(&buf)
			return &graphql.Response{Data: buf.Bytes()}
		}
	case ast.Subscription:
		next := ec._Subscription(ctx, opCtx.Operation.SelectionSet)
		var buf bytes.Buffer
		return func(ctx context.Context) *graphql.Response {
			buf.Reset()
			data := next(ctx)
			data.MarshalGQL(&buf)
			return &graphql.Response{Data: buf.Bytes()}
		}
	}
	return nil
}
`
	rewritten := func(src string) (string, error) {
		out, err := rewriteSource(t, src, rewriteExecBuffers)
		return strings.Join(strings.Fields(out), " "), err
	}
	got, err := rewritten(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"buf := respbuf.Buffer() data.MarshalGQL(buf) response.Data = buf.Bytes()",
		"buf := respbuf.Buffer() data.MarshalGQL(buf) return &graphql.Response{Data: buf.Bytes()}",
		"var buf bytes.Buffer return func(ctx context.Context) *graphql.Response { buf.Reset() data := next(ctx) data.MarshalGQL(&buf)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("rewritten Exec\n%s\nhas no\n%s", got, want)
		}
	}
	if n := strings.Count(got, "respbuf."); n != 2 {
		t.Errorf("%d respbuf calls, want 2", n)
	}
	// Only the Query case left: gqlgen changed, refused.
	if _, err := rewritten(strings.Replace(src, "var buf bytes.Buffer\n\t\t\tdata.MarshalGQL(&buf)\n\t\t\treturn", "buf := new(bytes.Buffer)\n\t\t\tdata.MarshalGQL(buf)\n\t\t\treturn", 1)); err == nil {
		t.Error("an Exec with one buffer to rewrite was not refused")
	}
}

func TestRewriteCollectFields(t *testing.T) {
	const src = `package graph

func (ec *executionContext) _Post(ctx context.Context, sel ast.SelectionSet, obj *weibo.Post) graphql.Marshaler {
	fields := graphql.CollectFields(ec.OperationContext, sel, postImplementors)
	return nil
}
`
	want := strings.Replace(src, "graphql.CollectFields(", "gqlfield.CollectFields(", 1)
	got, err := rewriteSource(t, src, rewriteCollectFields)
	if err != nil || got != want {
		t.Errorf("rewritten to\n%s\nwant\n%s (%v)", got, want, err)
	}
	if _, err := rewriteSource(t, got, rewriteCollectFields); err == nil {
		t.Error("a file without graphql.CollectFields was not refused")
	}
}

// rewriteSource parses src as a Go file, applies rewrite and returns the
// file formatted, or rewrite's error.
func rewriteSource(t *testing.T, src string, rewrite func(*ast.File) error) (string, error) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "generated.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := rewrite(f); err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := format.Node(&b, fset, f); err != nil {
		t.Fatal(err)
	}
	return b.String(), nil
}

// readyFixture is a ready field's function and object marshaller as gqlgen
// writes them (formatted), with %s for the case's nonNull argument.
const readyFixture = `package graph

func (ec *executionContext) _Post_liked(ctx context.Context, field graphql.CollectedField, obj *feed.Post) (ret graphql.Marshaler) {
	return graphql.ResolveField(
		ctx,
		ec.OperationContext,
		field,
		func(ctx context.Context, field graphql.CollectedField) (*graphql.FieldContext, error) {
			return ec.fieldContext_Post_liked(ctx, field)
		},
		func(ctx context.Context) (any, error) {
			return ec.Resolvers.Post().Liked(ctx, obj)
		},
		nil,
		func(ctx context.Context, selections ast.SelectionSet, v bool) graphql.Marshaler {
			return ec.marshalNBoolean2bool(ctx, selections, v)
		},
		true,
		true,
	)
}

func (ec *executionContext) _Post(ctx context.Context, sel ast.SelectionSet, obj *feed.Post) graphql.Marshaler {
	fields := gqlfield.CollectFields(ec.OperationContext, sel, postImplementors)
	out := gqlfield.NewFieldSet(fields)
	deferred := gqlfield.NewDeferredGroup(ctx)
	for i, field := range fields {
		switch field.Name {
		case "liked":
			out.ResolveConcurrently(ec.OperationContext, &deferred, i,
				true, %s,
				func(ctx context.Context) graphql.Marshaler {
					return ec._Post_liked(ctx, field, obj)
				})
		}
	}
	out.Dispatch(ctx)
	return out
}
`

// TestReady: a ready field's case asks its ready function first, which
// marshals what the resolver's LikedReady knows with the field's own
// field context and marshaller; a case of another shape is refused.
func TestReady(t *testing.T) {
	r := readyField{object: "Post", field: "liked", method: "Liked"}
	src := strings.Replace(readyFixture, "%s", "true", 1)
	f, err := parser.ParseFile(token.NewFileSet(), "generated.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	decls, err := readyDecls(f, []readyField{r})
	if err != nil {
		t.Fatal(err)
	}
	out, err := insertReady([]byte(src), []readyField{r}, decls)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(strings.Fields(string(out)), " ")
	for _, want := range []string{
		`case "liked": if m := ec._Post_liked_ready(ctx, field, obj); m != nil { out.SetReady(i, m, true) break } out.ResolveConcurrently(`,
		`type PostLikedReady interface { LikedReady(ctx context.Context, obj *feed.Post) (v bool, ok bool) }`,
		`r, ok := ec.Resolvers.Post().(PostLikedReady)`,
		`return gqlfield.Value(ctx, field, ec.fieldContext_Post_liked, v, ec.marshalNBoolean2bool)`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the rewritten source lacks %q:\n%s", want, out)
		}
	}

	for _, c := range []struct{ name, from, to, fail string }{
		{"directives", "\t\tnil,\n\t\tfunc(ctx context.Context, selections", "\t\tec.mw,\n\t\tfunc(ctx context.Context, selections", "middleware chain"},
		{"another resolver method", "Post().Liked(ctx, obj)", "Post().Other(ctx, obj)", "does not call Liked"},
		{"a case of two statements", "return ec._Post_liked(ctx, field, obj)\n\t\t\t\t})", "return ec._Post_liked(ctx, field, obj)\n\t\t\t\t})\n\t\t\t_ = 1", "not one call"},
		{"panics not recovered", "i,\n\t\t\t\ttrue, true,", "i,\n\t\t\t\tfalse, true,", "panics recovered"},
	} {
		t.Run(c.name, func(t *testing.T) {
			bad := strings.Replace(src, c.from, c.to, 1)
			if bad == src {
				t.Fatalf("the fixture has no %q", c.from)
			}
			f, err := parser.ParseFile(token.NewFileSet(), "generated.go", bad, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := readyDecls(f, []readyField{r}); err == nil || !strings.Contains(err.Error(), c.fail) {
				t.Fatalf("err = %v, want one saying %q", err, c.fail)
			}
		})
	}
}

// TestCompleteImports checks completeImports: a file lacking an import
// gets it, an unused one goes, the module's packages are grouped last, and
// a file whose imports are complete is not rewritten.
func TestCompleteImports(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "a.resolvers.go")
	src := "package a\n\nimport \"fmt\"\n\nfunc f() string { return strings.ToUpper(\"a\") }\n"
	if err := os.WriteFile(f, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := completeImports(f); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	want := "package a\n\nimport \"strings\"\n\nfunc f() string { return strings.ToUpper(\"a\") }\n"
	if string(got) != want {
		t.Errorf("completed:\n%s\nwant\n%s", got, want)
	}

	complete := "package a\n\nimport (\n\t\"strings\"\n\n\t\"github.com/99designs/gqlgen/graphql\"\n\n\t\"" + modulePath + "/weibo\"\n)\n\n" +
		"var _ = strings.ToUpper\nvar _ graphql.Marshaler = weibo.UserID(0)\n"
	if err := os.WriteFile(f, []byte(complete), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(f, old, old); err != nil {
		t.Fatal(err)
	}
	if err := completeImports(f); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(f); err != nil || !fi.ModTime().Equal(old) {
		t.Errorf("a complete file was rewritten (%v, %v)", fi.ModTime(), err)
	}
	if got, _ := os.ReadFile(f); string(got) != complete {
		t.Errorf("complete file changed:\n%s", got)
	}
}
