// Command generate is `go generate ./...` and `make generate`: gqlgen (the
// version in go.mod, with gqlgen.yml and its schema files) writes graph/
// and the resolver files, resolvers/<schema file>.resolvers.go, whose
// imports it completes (importsPlugin), then more steps make the list
// marshalling of package gqllist and the field execution of package
// gqlfield part of the generated code:
//
//   - graph/lists_gen.go: the table gqllist.Objects of every object type of
//     the schema, from gqlgen's own codegen data (which fields it runs
//     concurrently, which interfaces the type implements);
//   - graph/generated.go: every call of graphql.MarshalSliceConcurrently
//     becomes a call of gqllist.Marshal with that table and the same
//     arguments; and the field function of every field that codegen data
//     shows is a plain binding (a struct field, or a method without context
//     or error; no resolver, arguments or directives; not of an interface
//     type) calls its marshaller directly, gqlfield.Value or
//     gqlfield.Method instead of graphql.ResolveField; every object
//     marshaller collects its fields with gqlfield.CollectFields and
//     builds them with gqlfield.NewFieldSet and gqlfield.NewDeferredGroup,
//     after asking the plain path of package gqlfield whether it can write
//     the object straight to bytes (plain.go adds the functions
//     _<Object>_isPlain, _<Object>_write and _<Object>_plain for every
//     object type with plain fields); and the Query and Mutation cases of Exec marshal the data into a
//     buffer of package respbuf (rewritten on the syntax tree, then
//     gofmt'ed).
//
// It fails when gqlgen's output has no such call, or when the function of a
// plain binding does not have the shape it rewrites, so a gqlgen upgrade
// that changes its list marshalling or field execution is noticed
// (docs/gqlgen.md lists the shapes and how to upgrade gqlgen). It is
// what `go generate ./...` runs (the //go:generate line is in
// resolvers/resolver.go) and `make generate`; run by hand from the module
// root:
//
//	go run ./internal/generate
package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"go/types"
	"log"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/api"
	"github.com/99designs/gqlgen/codegen"
	"github.com/99designs/gqlgen/codegen/config"
	"golang.org/x/tools/go/ast/astutil"
)

const (
	gqllistPath   = "github.com/weibohbase/gateway/internal/gqllist"
	gqlfieldPath  = "github.com/weibohbase/gateway/internal/gqlfield"
	respbufPath   = "github.com/weibohbase/gateway/internal/respbuf"
	gqlstringPath = "github.com/weibohbase/gateway/internal/gqlstring"
	tableName     = "listObjects"
	tableFile     = "lists_gen.go"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("generate: ")
	cfg, err := config.LoadConfigFromDefaultLocations()
	if err != nil {
		log.Fatal(err)
	}
	tp := &tablePlugin{}
	if err := api.Generate(cfg, api.AddPlugin(tp), api.AddPlugin(importsPlugin{})); err != nil {
		log.Fatal(err)
	}
	if tp.src == nil {
		log.Fatal("gqlgen ran no code generator plugin: no object table")
	}
	dir := filepath.Dir(cfg.Exec.Filename)
	if err := os.WriteFile(filepath.Join(dir, tableFile), tp.src, 0o644); err != nil {
		log.Fatal(err)
	}
	if err := rewrite(cfg.Exec.Filename, tp.plain, tp.ready, tp.plainObjs); err != nil {
		log.Fatal(err)
	}
}

// tablePlugin is a gqlgen plugin that renders graph's gqllist.Objects table
// from the codegen data and finds the plain bindings (it runs before gqlgen
// writes the executable schema).
type tablePlugin struct {
	src       []byte
	plain     map[string]binding // by generated function name, _<Object>_<field>
	ready     []readyField
	plainObjs []plainObject // the object types written by the plain path
}

// binding is a field that reads memory only: a struct field (method false)
// or a method without context or error; leaf when its type is a scalar or
// an enum (not a list).
type binding struct{ method, leaf bool }

// plainBinding reports whether gqlgen's field f is executed by package
// gqlfield, and how.
func plainBinding(f *codegen.Field) (binding, bool) {
	if f.IsResolver || f.IsConcurrent() || f.IsBatch() || f.Stream || len(f.Args) > 0 || len(f.Directives) > 0 ||
		f.MethodHasContext || f.VOkFunc || f.TypeReference == nil || types.IsInterface(f.TypeReference.GO) {
		return binding{}, false
	}
	b := binding{leaf: f.TypeReference.GQL.Elem == nil && f.TypeReference.Definition.IsLeafType()}
	switch f.GoFieldType {
	case codegen.GoFieldVariable:
	case codegen.GoFieldMethod:
		if !f.NoErr || f.GoReceiverName != "obj" {
			return binding{}, false
		}
		b.method = true
	default:
		return binding{}, false
	}
	return b, true
}

// Name implements plugin.Plugin.
func (*tablePlugin) Name() string { return "gqllist-table" }

// GenerateCode implements plugin.CodeGenerator.
func (p *tablePlugin) GenerateCode(data *codegen.Data) error {
	objs := slices.Clone(data.Objects)
	slices.SortFunc(objs, func(a, b *codegen.Object) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	ready, err := findReady(objs)
	if err != nil {
		return err
	}
	p.ready = ready
	isReady := func(o *codegen.Object, f *codegen.Field) bool {
		return slices.ContainsFunc(ready, func(r readyField) bool { return r.object == o.Name && r.field == f.Name })
	}
	p.plainObjs = findPlain(objs)
	p.plain = map[string]binding{}
	for _, o := range objs {
		if o.Root {
			continue
		}
		for _, f := range o.Fields {
			if b, ok := plainBinding(f); ok {
				p.plain["_"+o.Name+"_"+f.Name] = b
			}
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by internal/generate from gqlgen's codegen data, DO NOT EDIT.\n\n")
	fmt.Fprintf(&b, "package %s\n\nimport %q\n\n", data.Config.Exec.Package, gqllistPath)
	fmt.Fprintf(&b, "// %s is, for every object type, the type conditions it satisfies and the\n", tableName)
	fmt.Fprintf(&b, "// fields gqlgen resolves concurrently (those whose resolver may know them at\n")
	fmt.Fprintf(&b, "// once also Ready, see internal/generate's readyFields): the list marshallers\n// below pass it to gqllist.Marshal.\n")
	fmt.Fprintf(&b, "var %s = gqllist.Objects{\n", tableName)
	for _, o := range objs {
		impl := []string{strconv.Quote(o.Name)}
		for _, i := range o.Implements {
			impl = append(impl, strconv.Quote(i.Name))
		}
		var conc, rdy []string
		for _, f := range o.Fields {
			if f.IsConcurrent() || f.IsBatch() {
				conc = append(conc, strconv.Quote(f.Name)+": true")
			}
			if isReady(o, f) {
				rdy = append(rdy, strconv.Quote(f.Name)+": true")
			}
		}
		fmt.Fprintf(&b, "%q: {Implements: []string{%s}", o.Name, strings.Join(impl, ", "))
		if len(conc) > 0 {
			fmt.Fprintf(&b, ", Concurrent: map[string]bool{%s}", strings.Join(conc, ", "))
		}
		if len(rdy) > 0 {
			fmt.Fprintf(&b, ", Ready: map[string]bool{%s}", strings.Join(rdy, ", "))
		}
		b.WriteString("},\n")
	}
	b.WriteString("}\n")
	src, err := format.Source(b.Bytes())
	if err != nil {
		return fmt.Errorf("format %s: %w", tableFile, err)
	}
	p.src = src
	return nil
}

// rewrite replaces every graphql.MarshalSliceConcurrently(ctx, ...) call of
// the file with gqllist.Marshal(ctx, listObjects, ...), the
// graphql.ResolveField call of every function of plain with a direct
// marshaller call, gqlfield.Value or gqlfield.Method, and makes the ready
// fields answer at once when their resolvers can (rewriteReady), and the
// object marshallers of objs write plain objects straight to bytes
// (insertPlain).
func rewrite(filename string, plain map[string]binding, ready []readyField, objs []plainObject) error {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filename, nil, parser.ParseComments)
	if err != nil {
		return err
	}
	n := 0
	ast.Inspect(f, func(node ast.Node) bool {
		call, ok := node.(*ast.CallExpr)
		if !ok || !isSelector(call.Fun, "graphql", "MarshalSliceConcurrently") || len(call.Args) != 5 {
			return true
		}
		call.Fun = sel("gqllist", "Marshal")
		call.Args = append([]ast.Expr{call.Args[0], ast.NewIdent(tableName)}, call.Args[1:]...)
		n++
		return true
	})
	if n == 0 {
		return fmt.Errorf("%s: no graphql.MarshalSliceConcurrently call to rewrite (did gqlgen change its list marshalling?)", filename)
	}
	astutil.AddImport(fset, f, gqllistPath)
	done := map[string]bool{}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv == nil {
			continue
		}
		b, ok := plain[fd.Name.Name]
		if !ok {
			continue
		}
		if err := rewriteField(fd, b); err != nil {
			return fmt.Errorf("%s: %s: %w (did gqlgen change its field execution?)", filename, fd.Name.Name, err)
		}
		done[fd.Name.Name] = true
	}
	for name := range plain {
		if !done[name] {
			return fmt.Errorf("%s: no function %s for a plain binding (did gqlgen change its field execution?)", filename, name)
		}
	}
	decls, err := readyDecls(f, ready)
	if err != nil {
		return fmt.Errorf("%s: %w (did gqlgen change its field execution?)", filename, err)
	}
	if err := rewriteFieldSets(f); err != nil {
		return fmt.Errorf("%s: %w (did gqlgen change its object marshalling?)", filename, err)
	}
	if err := rewriteCollectFields(f); err != nil {
		return fmt.Errorf("%s: %w (did gqlgen change its object marshalling?)", filename, err)
	}
	astutil.AddImport(fset, f, gqlfieldPath)
	if err := rewriteExecBuffers(f); err != nil {
		return fmt.Errorf("%s: %w (did gqlgen change its Exec?)", filename, err)
	}
	if err := rewriteDeferredWait(f); err != nil {
		return fmt.Errorf("%s: %w (did gqlgen change its Exec?)", filename, err)
	}
	astutil.AddImport(fset, f, respbufPath)
	astutil.AddImport(fset, f, "bytes")
	missing := map[string]bool{}
	qual := importQualifier(f, missing)
	var b bytes.Buffer
	if err := format.Node(&b, fset, f); err != nil {
		return err
	}
	src, err := insertReady(b.Bytes(), ready, decls)
	if err != nil {
		return fmt.Errorf("%s: %w (did gqlgen change its object marshalling?)", filename, err)
	}
	withPlain, err := insertPlain(string(src), objs, qual)
	if err != nil {
		return fmt.Errorf("%s: %w (did gqlgen change its object marshalling?)", filename, err)
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s: the plain objects need packages the file does not import: %v", filename, slices.Sorted(maps.Keys(missing)))
	}
	if src, err = format.Source([]byte(withPlain)); err != nil {
		return fmt.Errorf("%s: the plain objects: %w", filename, err)
	}
	return os.WriteFile(filename, src, 0o644)
}

// rewriteField rewrites the body of a generated field function
//
//	func (ec *executionContext) _Post_content(ctx context.Context, field graphql.CollectedField, obj *weibo.Post) (ret graphql.Marshaler) {
//		return graphql.ResolveField(ctx, ec.OperationContext, field,
//			func(ctx context.Context, field graphql.CollectedField) (*graphql.FieldContext, error) {
//				return ec.fieldContext_Post_content(ctx, field)
//			},
//			func(ctx context.Context) (any, error) { return obj.Content, nil },
//			nil,
//			func(ctx context.Context, selections ast.SelectionSet, v string) graphql.Marshaler {
//				return ec.marshalNString2string(ctx, selections, v)
//			},
//			true, true)
//	}
//
// (the field context and the marshaller passed as closures that only
// forward to the generated functions, or as those functions themselves)
// into, for b's kind of binding,
//
//	return ec.marshalNString2string(ctx, field.Selections, obj.Content)                  // leaf, struct field
//	return gqlfield.Value(ctx, field, ec.fieldContext_PostEdge_node, obj.Post, ec.marshal…) // struct field
//	return gqlfield.Method(ctx, ec.OperationContext, field, ec.fieldContext_Post_author,
//		obj, (*weibo.Post).Author, ec.marshal…, false)                                     // method (leaf: true)
//
// with the forwarding closures replaced by the functions they call. It
// fails when the function has another shape: no middleware (nil: no
// directives), panics recovered, the field context and the marshaller
// functions or forwarding closures, the resolver closure returning a
// selector of obj (struct field) or obj's method called without arguments
// (method).
func rewriteField(fd *ast.FuncDecl, b binding) error {
	params := fd.Type.Params.List
	if len(params) != 3 || len(params[2].Names) != 1 || params[2].Names[0].Name != "obj" {
		return fmt.Errorf("parameters are not (ctx, field, obj)")
	}
	objType := params[2].Type
	call, err := resolveFieldCall(fd)
	if err != nil {
		return err
	}
	ret := fd.Body.List[0].(*ast.ReturnStmt)
	a := call.Args
	if !isIdent(a[5], "nil") {
		return fmt.Errorf("the field has a middleware chain (directives)")
	}
	if !isIdent(a[7], "true") {
		return fmt.Errorf("panics are not recovered (omit_panic_handler): gqlfield always recovers them")
	}
	fn, ok := a[4].(*ast.FuncLit)
	if !ok || len(fn.Body.List) != 1 {
		return fmt.Errorf("the resolver is not a one-statement function literal")
	}
	rr, ok := fn.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(rr.Results) != 2 || !isIdent(rr.Results[1], "nil") {
		return fmt.Errorf("the resolver does not return (value, nil)")
	}
	value := rr.Results[0]
	fieldContext, ok := forwardedTo(a[3])
	if !ok {
		return fmt.Errorf("the field context is neither a function nor a closure calling one")
	}
	marshal, ok := forwardedTo(a[6])
	if !ok {
		return fmt.Errorf("the marshaller is neither a function nor a closure calling one")
	}
	var out ast.Expr
	if b.method {
		vc, ok := value.(*ast.CallExpr)
		if !ok || len(vc.Args) != 0 {
			return fmt.Errorf("the resolver does not return obj.Method()")
		}
		ms, ok := vc.Fun.(*ast.SelectorExpr)
		if !ok || !isIdent(ms.X, "obj") {
			return fmt.Errorf("the resolver does not return obj.Method()")
		}
		out = &ast.CallExpr{Fun: sel("gqlfield", "Method"), Args: []ast.Expr{
			ast.NewIdent("ctx"), sel("ec", "OperationContext"), ast.NewIdent("field"), fieldContext,
			ast.NewIdent("obj"), &ast.SelectorExpr{X: &ast.ParenExpr{X: objType}, Sel: ast.NewIdent(ms.Sel.Name)},
			marshal, ast.NewIdent(strconv.FormatBool(b.leaf)),
		}}
	} else {
		if !selectsFromObj(value) {
			return fmt.Errorf("the resolver does not return a field of obj")
		}
		if b.leaf {
			out = &ast.CallExpr{Fun: marshal, Args: []ast.Expr{ast.NewIdent("ctx"), sel("field", "Selections"), value}}
		} else {
			out = &ast.CallExpr{Fun: sel("gqlfield", "Value"), Args: []ast.Expr{
				ast.NewIdent("ctx"), ast.NewIdent("field"), fieldContext, value, marshal,
			}}
		}
	}
	ret.Results[0] = out
	return nil
}

// rewriteFieldSets makes every object marshaller of the file build its
// fields with gqlfield.NewFieldSet, and start its group of deferred fields
// with gqlfield.NewDeferredGroup:
//
//	out := graphql.NewFieldSet(fields)           ->  out := gqlfield.NewFieldSet(fields)
//	deferred := graphql.NewDeferredGroup(ctx)    ->  deferred := gqlfield.NewDeferredGroup(ctx)
//
// (gqlfield.FieldSet has the methods of graphql.FieldSet the generated code
// calls on out, so a call of another one does not compile; the group is
// rewritten only in a function whose out is rewritten, as only
// gqlfield.FieldSet completes it). It fails when the file has no field set
// to rewrite, or no group beside one.
func rewriteFieldSets(f *ast.File) error {
	sets, groups := 0, 0
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		var set, group []*ast.CallExpr
		ast.Inspect(fd.Body, func(node ast.Node) bool {
			as, ok := node.(*ast.AssignStmt)
			if !ok || len(as.Lhs) != 1 || len(as.Rhs) != 1 || as.Tok != token.DEFINE {
				return true
			}
			call, ok := as.Rhs[0].(*ast.CallExpr)
			if !ok || len(call.Args) != 1 {
				return true
			}
			switch {
			case isIdent(as.Lhs[0], "out") && isSelector(call.Fun, "graphql", "NewFieldSet") && isIdent(call.Args[0], "fields"):
				set = append(set, call)
			case isIdent(as.Lhs[0], "deferred") && isSelector(call.Fun, "graphql", "NewDeferredGroup") && isIdent(call.Args[0], "ctx"):
				group = append(group, call)
			}
			return true
		})
		if len(set) == 0 {
			continue
		}
		for _, c := range set {
			c.Fun = sel("gqlfield", "NewFieldSet")
		}
		for _, c := range group {
			c.Fun = sel("gqlfield", "NewDeferredGroup")
		}
		sets += len(set)
		groups += len(group)
	}
	if sets == 0 {
		return fmt.Errorf("no out := graphql.NewFieldSet(fields) to rewrite")
	}
	if groups == 0 {
		return fmt.Errorf("no deferred := graphql.NewDeferredGroup(ctx) beside out := graphql.NewFieldSet(fields) to rewrite")
	}
	return nil
}

// rewriteCollectFields makes every graphql.CollectFields call of the file
// a gqlfield.CollectFields call with the same arguments. It fails when the
// file has none.
func rewriteCollectFields(f *ast.File) error {
	n := 0
	ast.Inspect(f, func(node ast.Node) bool {
		call, ok := node.(*ast.CallExpr)
		if ok && isSelector(call.Fun, "graphql", "CollectFields") && len(call.Args) == 3 {
			call.Fun = sel("gqlfield", "CollectFields")
			n++
		}
		return true
	})
	if n == 0 {
		return fmt.Errorf("no graphql.CollectFields call to rewrite")
	}
	return nil
}

// execBlocks calls fn with every block statement in the bodies of the
// generated Exec methods, outermost first.
func execBlocks(f *ast.File, fn func(*ast.BlockStmt)) {
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil || fd.Recv == nil || fd.Name.Name != "Exec" {
			continue
		}
		ast.Inspect(fd.Body, func(node ast.Node) bool {
			if block, ok := node.(*ast.BlockStmt); ok {
				fn(block)
			}
			return true
		})
	}
}

// rewriteExecBuffers makes the Query and Mutation cases of Exec marshal
// their data into a buffer of package respbuf:
//
//	var buf bytes.Buffer     ->  buf := respbuf.Buffer()
//	data.MarshalGQL(&buf)    ->  data.MarshalGQL(buf)
//
// (the Subscription case, which reuses one buffer for every event, has no
// such pair of statements and stays as it is). It fails unless it rewrites
// exactly two pairs.
func rewriteExecBuffers(f *ast.File) error {
	n := 0
	execBlocks(f, func(block *ast.BlockStmt) {
		for i := 0; i+1 < len(block.List); i++ {
			if !isBufferDecl(block.List[i]) || !isMarshalIntoBuf(block.List[i+1]) {
				continue
			}
			block.List[i] = &ast.AssignStmt{Lhs: []ast.Expr{ast.NewIdent("buf")}, Tok: token.DEFINE,
				Rhs: []ast.Expr{&ast.CallExpr{Fun: sel("respbuf", "Buffer")}}}
			block.List[i+1].(*ast.ExprStmt).X.(*ast.CallExpr).Args[0] = ast.NewIdent("buf")
			n++
		}
	})
	if n != 2 {
		return fmt.Errorf("%d pairs var buf bytes.Buffer; data.MarshalGQL(&buf) in Exec rewritten, want 2 (Query and Mutation)", n)
	}
	return nil
}

// rewriteDeferredWait makes the Query case of Exec stop waiting for the
// next deferred result when the request's context ends:
//
//	result := <-ec.DeferredResults
//
// becomes
//
//	var result graphql.DeferredResult
//	select {
//	case result = <-ec.DeferredResults:
//	case <-ctx.Done():
//		return nil
//	}
//
// gqlgen's deferred fragments give up sending their result once the
// context ends; a handler still waiting then would wait for good, a
// goroutine and its operation's state lost with every request whose
// client went away while a fragment was pending. It fails unless it
// rewrites exactly one wait.
func rewriteDeferredWait(f *ast.File) error {
	n := 0
	execBlocks(f, func(block *ast.BlockStmt) {
		for i, st := range block.List {
			if !isDeferredWait(st) {
				continue
			}
			recv := &ast.UnaryExpr{Op: token.ARROW, X: sel("ec", "DeferredResults")}
			wait := []ast.Stmt{
				&ast.DeclStmt{Decl: &ast.GenDecl{Tok: token.VAR, Specs: []ast.Spec{&ast.ValueSpec{
					Names: []*ast.Ident{ast.NewIdent("result")}, Type: sel("graphql", "DeferredResult")}}}},
				&ast.SelectStmt{Body: &ast.BlockStmt{List: []ast.Stmt{
					&ast.CommClause{Comm: &ast.AssignStmt{Lhs: []ast.Expr{ast.NewIdent("result")}, Tok: token.ASSIGN, Rhs: []ast.Expr{recv}}},
					&ast.CommClause{Comm: &ast.ExprStmt{X: &ast.UnaryExpr{Op: token.ARROW, X: &ast.CallExpr{Fun: sel("ctx", "Done")}}},
						Body: []ast.Stmt{&ast.ReturnStmt{Results: []ast.Expr{ast.NewIdent("nil")}}}},
				}}},
			}
			block.List = slices.Concat(block.List[:i], wait, block.List[i+1:])
			n++
			return
		}
	})
	if n != 1 {
		return fmt.Errorf("%d waits result := <-ec.DeferredResults in Exec rewritten, want 1 (Query)", n)
	}
	return nil
}

// isDeferredWait reports whether s is `result := <-ec.DeferredResults`.
func isDeferredWait(s ast.Stmt) bool {
	a, ok := s.(*ast.AssignStmt)
	if !ok || a.Tok != token.DEFINE || len(a.Lhs) != 1 || len(a.Rhs) != 1 {
		return false
	}
	if id, ok := a.Lhs[0].(*ast.Ident); !ok || id.Name != "result" {
		return false
	}
	u, ok := a.Rhs[0].(*ast.UnaryExpr)
	if !ok || u.Op != token.ARROW {
		return false
	}
	x, ok := u.X.(*ast.SelectorExpr)
	if !ok || x.Sel.Name != "DeferredResults" {
		return false
	}
	id, ok := x.X.(*ast.Ident)
	return ok && id.Name == "ec"
}

// isBufferDecl reports whether s is `var buf bytes.Buffer`.
func isBufferDecl(s ast.Stmt) bool {
	ds, ok := s.(*ast.DeclStmt)
	if !ok {
		return false
	}
	gd, ok := ds.Decl.(*ast.GenDecl)
	if !ok || gd.Tok != token.VAR || len(gd.Specs) != 1 {
		return false
	}
	vs, ok := gd.Specs[0].(*ast.ValueSpec)
	return ok && len(vs.Names) == 1 && vs.Names[0].Name == "buf" && len(vs.Values) == 0 && isSelector(vs.Type, "bytes", "Buffer")
}

// isMarshalIntoBuf reports whether s is `data.MarshalGQL(&buf)`.
func isMarshalIntoBuf(s ast.Stmt) bool {
	es, ok := s.(*ast.ExprStmt)
	if !ok {
		return false
	}
	call, ok := es.X.(*ast.CallExpr)
	if !ok || !isSelector(call.Fun, "data", "MarshalGQL") || len(call.Args) != 1 {
		return false
	}
	u, ok := call.Args[0].(*ast.UnaryExpr)
	return ok && u.Op == token.AND && isIdent(u.X, "buf")
}

// forwardedTo returns the function e stands for: e itself when it is a
// name or a selector (ec.marshalX), or F when e is a function literal whose
// body is only `return F(p1, ..., pn)`, its own parameters in order, F a
// name or selector that does not mention them.
func forwardedTo(e ast.Expr) (ast.Expr, bool) {
	switch e := e.(type) {
	case *ast.Ident, *ast.SelectorExpr:
		return e, true
	case *ast.FuncLit:
		if len(e.Body.List) != 1 {
			return nil, false
		}
		ret, ok := e.Body.List[0].(*ast.ReturnStmt)
		if !ok || len(ret.Results) != 1 {
			return nil, false
		}
		call, ok := ret.Results[0].(*ast.CallExpr)
		if !ok || call.Ellipsis.IsValid() {
			return nil, false
		}
		var params []string
		for _, p := range e.Type.Params.List {
			if _, variadic := p.Type.(*ast.Ellipsis); variadic {
				return nil, false
			}
			for _, n := range p.Names {
				params = append(params, n.Name)
			}
		}
		if len(call.Args) != len(params) {
			return nil, false
		}
		for i, a := range call.Args {
			if params[i] == "_" || !isIdent(a, params[i]) {
				return nil, false
			}
		}
		switch call.Fun.(type) {
		case *ast.Ident, *ast.SelectorExpr:
		default:
			return nil, false
		}
		mentions := false
		ast.Inspect(call.Fun, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && slices.Contains(params, id.Name) {
				mentions = true
			}
			return !mentions
		})
		if mentions {
			return nil, false
		}
		return call.Fun, true
	}
	return nil, false
}

// selectsFromObj reports whether e is obj.A, obj.A.B, ...: a struct field
// read that cannot call anything.
func selectsFromObj(e ast.Expr) bool {
	for {
		s, ok := e.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		if isIdent(s.X, "obj") {
			return true
		}
		e = s.X
	}
}

func sel(x, name string) *ast.SelectorExpr {
	return &ast.SelectorExpr{X: ast.NewIdent(x), Sel: ast.NewIdent(name)}
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

func isSelector(e ast.Expr, x, name string) bool {
	s, ok := e.(*ast.SelectorExpr)
	return ok && s.Sel.Name == name && isIdent(s.X, x)
}
