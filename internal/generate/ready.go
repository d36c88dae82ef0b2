package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/token"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/codegen"
)

// readyFields are the resolver fields ("Object.field") that a resolver can
// often answer from what the request already holds: a page's prefetch
// primed the value (a post's likedByViewer, a repost's original), or it
// needs no read at all (the original of a post that is no repost). For
// each, the generated code first asks the resolver, through the interface
// <Object><Field>Ready of graph, whether it knows the value; a known value
// is marshalled at once in the object's goroutine, and only an unknown one
// is resolved as gqlgen resolves any resolver field (in a goroutine of its
// own, its dataloader call batched with its siblings').
//
// The table of package gqllist marks them Ready: a list whose selection
// reaches no other concurrent field marshals its items in one goroutine.
// So every resolver of a list of the field's objects must prefetch the
// field for all its items: an item it does not know waits for a batch of
// its own (correct, but a dataloader wait per item).
var readyFields = []string{"Post.likedByViewer", "Post.repostOf"}

// readyField is one of readyFields as the codegen data has it.
type readyField struct {
	object, field string // GraphQL names
	method        string // the resolver method, e.g. LikedByViewer
}

// funcName is the generated field function's name, _<Object>_<field>.
func (r readyField) funcName() string { return "_" + r.object + "_" + r.field }

// iface is the name of the interface a resolver implements to answer the
// field at once.
func (r readyField) iface() string { return r.object + r.method + "Ready" }

// findReady returns readyFields as the codegen data has them. It fails when
// one is not a resolver field without arguments or directives (a field
// middleware would be skipped, and arguments are not passed).
func findReady(objs []*codegen.Object) ([]readyField, error) {
	var out []readyField
	for _, name := range readyFields {
		object, field, _ := strings.Cut(name, ".")
		var found *codegen.Field
		for _, o := range objs {
			if o.Name != object {
				continue
			}
			for _, f := range o.Fields {
				if f.Name == field {
					found = f
				}
			}
		}
		switch {
		case found == nil:
			return nil, fmt.Errorf("ready field %s: not in the schema", name)
		case !found.IsResolver || found.IsBatch() || len(found.Args) > 0 || len(found.Directives) > 0:
			return nil, fmt.Errorf("ready field %s: not a resolver field without arguments or directives", name)
		}
		out = append(out, readyField{object: object, field: field, method: found.GoFieldName})
	}
	return out, nil
}

// readyDecls checks, for every ready field, that its field function and
// its case of the object marshaller have the shape gqlgen writes for a
// resolver field, and returns the source of the field's interface and
// ready function (readySource), which insertReady adds.
func readyDecls(f *ast.File, ready []readyField) ([]string, error) {
	var out []string
	for _, r := range ready {
		fd := findFunc(f, r.funcName())
		if fd == nil {
			return nil, fmt.Errorf("no field function %s", r.funcName())
		}
		src, err := readySource(fd, r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.funcName(), err)
		}
		marshaller := findFunc(f, "_"+r.object)
		if marshaller == nil {
			return nil, fmt.Errorf("no object marshaller _%s", r.object)
		}
		if err := checkReadyCase(marshaller, r); err != nil {
			return nil, fmt.Errorf("_%s: %w", r.object, err)
		}
		out = append(out, src)
	}
	return out, nil
}

// insertReady adds decls to the formatted source src and makes each ready
// field's case of its object marshaller call the field's ready function
// first:
//
//	case "likedByViewer":
//		if m := ec._Post_likedByViewer_ready(ctx, field, obj); m != nil {
//			out.SetReady(i, m, true)
//			break
//		}
//		out.ResolveConcurrently(...) // as gqlgen wrote it
//
// (an edit of the text, after checkReadyCase: an AST spliced in from
// another file would keep that file's positions and print badly).
func insertReady(src []byte, ready []readyField, decls []string) ([]byte, error) {
	s := string(src)
	for _, r := range ready {
		head := marshallerHead(r.object)
		at := strings.Index(s, head)
		if at < 0 {
			return nil, fmt.Errorf("no object marshaller %q", head)
		}
		c := strings.Index(s[at:], "\t\tcase "+strconv.Quote(r.field)+":\n")
		if c < 0 {
			return nil, fmt.Errorf("_%s: no case %q", r.object, r.field)
		}
		c += at + len("\t\tcase "+strconv.Quote(r.field)+":\n")
		call := "\t\t\tout.ResolveConcurrently(ec.OperationContext, &deferred, i,\n\t\t\t\ttrue, "
		if !strings.HasPrefix(s[c:], call) {
			return nil, fmt.Errorf("_%s: case %q does not start with %q", r.object, r.field, call)
		}
		nonNull, _, _ := strings.Cut(s[c+len(call):], ",")
		ins := fmt.Sprintf("\t\t\tif m := ec.%s_ready(ctx, field, obj); m != nil {\n\t\t\t\tout.SetReady(i, m, %s)\n\t\t\t\tbreak\n\t\t\t}\n",
			r.funcName(), nonNull)
		s = s[:c] + ins + s[c:]
	}
	s += strings.Join(decls, "")
	return format.Source([]byte(s))
}

// readySource is the Go source of the field's interface and ready
// function, from the field function gqlgen wrote (its object type, the
// resolver it calls, its field context and marshaller functions).
func readySource(fd *ast.FuncDecl, r readyField) (string, error) {
	params := fd.Type.Params.List
	if len(params) != 3 || len(params[2].Names) != 1 || params[2].Names[0].Name != "obj" {
		return "", fmt.Errorf("parameters are not (ctx, field, obj)")
	}
	call, err := resolveFieldCall(fd)
	if err != nil {
		return "", err
	}
	a := call.Args
	if !isIdent(a[5], "nil") {
		return "", fmt.Errorf("the field has a middleware chain (directives)")
	}
	fn, ok := a[4].(*ast.FuncLit)
	if !ok || len(fn.Body.List) != 1 {
		return "", fmt.Errorf("the resolver is not a one-statement function literal")
	}
	rr, ok := fn.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(rr.Results) != 1 {
		return "", fmt.Errorf("the resolver does not return one call")
	}
	rc, ok := rr.Results[0].(*ast.CallExpr)
	if !ok || len(rc.Args) != 2 || !isIdent(rc.Args[0], "ctx") || !isIdent(rc.Args[1], "obj") {
		return "", fmt.Errorf("the resolver does not return resolver.Method(ctx, obj)")
	}
	rs, ok := rc.Fun.(*ast.SelectorExpr)
	if !ok || rs.Sel.Name != r.method {
		return "", fmt.Errorf("the resolver does not call %s", r.method)
	}
	fieldContext, ok := forwardedTo(a[3])
	if !ok {
		return "", fmt.Errorf("the field context is neither a function nor a closure calling one")
	}
	marshal, ok := forwardedTo(a[6])
	if !ok {
		return "", fmt.Errorf("the marshaller is neither a function nor a closure calling one")
	}
	ml, ok := a[6].(*ast.FuncLit)
	if !ok || len(ml.Type.Params.List) != 3 {
		return "", fmt.Errorf("the marshaller is not a closure (ctx, selections, v T)")
	}
	objType, valType, getter := expr(params[2].Type), expr(ml.Type.Params.List[2].Type), expr(rs.X)
	return fmt.Sprintf(`
// %[1]s is implemented by a resolver of %[2]s.%[3]s that can often tell
// the field's value without waiting: ok false when it cannot (%[4]s then
// runs as for any resolver field).
type %[1]s interface {
	%[4]sReady(ctx context.Context, obj %[5]s) (v %[6]s, ok bool)
}

// %[7]s_ready marshals %[2]s.%[3]s at once when its resolver knows it
// (%[1]s), and returns nil otherwise or when the field is deferred.
func (ec *executionContext) %[7]s_ready(ctx context.Context, field graphql.CollectedField, obj %[5]s) graphql.Marshaler {
	r, ok := %[8]s.(%[1]s)
	if !ok || field.IsDeferred() {
		return nil
	}
	v, ok := r.%[4]sReady(ctx, obj)
	if !ok {
		return nil
	}
	return gqlfield.Value(ctx, field, %[9]s, v, %[10]s)
}
`, r.iface(), r.object, r.field, r.method, objType, valType, r.funcName(), getter, expr(fieldContext), expr(marshal)), nil
}

// checkReadyCase checks that the field's case of the object marshaller fd
// is one call of out.ResolveConcurrently (with 6 arguments, recovering
// panics), as insertReady expects.
func checkReadyCase(fd *ast.FuncDecl, r readyField) error {
	found := 0
	var err error
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		cc, ok := n.(*ast.CaseClause)
		if !ok || len(cc.List) != 1 {
			return true
		}
		lit, ok := cc.List[0].(*ast.BasicLit)
		if !ok || lit.Value != strconv.Quote(r.field) {
			return true
		}
		found++
		es, ok := cc.Body[0].(*ast.ExprStmt)
		if len(cc.Body) != 1 || !ok {
			err = fmt.Errorf("case %q is not one call", r.field)
			return false
		}
		call, ok := es.X.(*ast.CallExpr)
		if !ok || !isSelector(call.Fun, "out", "ResolveConcurrently") || len(call.Args) != 6 || !isIdent(call.Args[3], "true") {
			err = fmt.Errorf("case %q does not call out.ResolveConcurrently(6 arguments, panics recovered)", r.field)
		}
		return false
	})
	if err == nil && found != 1 {
		err = fmt.Errorf("%d cases %q, want 1", found, r.field)
	}
	return err
}

// resolveFieldCall returns the graphql.ResolveField call that the body of
// field function fd returns.
func resolveFieldCall(fd *ast.FuncDecl) (*ast.CallExpr, error) {
	if len(fd.Body.List) != 1 {
		return nil, fmt.Errorf("body is not one return statement")
	}
	ret, ok := fd.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return nil, fmt.Errorf("body is not one return statement")
	}
	call, ok := ret.Results[0].(*ast.CallExpr)
	if !ok || !isSelector(call.Fun, "graphql", "ResolveField") || len(call.Args) != 9 {
		return nil, fmt.Errorf("does not return graphql.ResolveField(9 arguments)")
	}
	a := call.Args
	if !isIdent(a[0], "ctx") || !isSelector(a[1], "ec", "OperationContext") || !isIdent(a[2], "field") {
		return nil, fmt.Errorf("ResolveField is not called with ctx, ec.OperationContext, field")
	}
	return call, nil
}

// findFunc returns the method of f named name, or nil.
func findFunc(f *ast.File, name string) *ast.FuncDecl {
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv != nil && fd.Name.Name == name {
			return fd
		}
	}
	return nil
}

// expr is the source of e.
func expr(e ast.Expr) string {
	var b bytes.Buffer
	if err := format.Node(&b, token.NewFileSet(), e); err != nil {
		panic(err)
	}
	return b.String()
}
