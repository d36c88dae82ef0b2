package main

import (
	"fmt"
	"go/ast"
	"go/types"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/codegen"
	gqlast "github.com/vektah/gqlparser/v2/ast"
)

// plainObject is an object type whose plain fields can be written straight
// to bytes (package gqlfield's plain objects): the _<Object>_isPlain,
// _<Object>_write and _<Object>_plain functions generated for it.
type plainObject struct {
	name   string // GraphQL name
	fields []plainField
}

// plainKind is how a plain field's value is written.
type plainKind int

const (
	// plainQuoted: a string, bound to gqlstring.MarshalString: quoted by
	// gqlstring.WriteQuoted.
	plainQuoted plainKind = iota
	// plainMarshaler: a Go type implementing graphql.Marshaler: its
	// MarshalGQL.
	plainMarshaler
	// plainFunc: a scalar's marshal function (such as gqltime.MarshalTime),
	// whose graphql.Null the field set would null or report.
	plainFunc
	// plainObjectField: an object of a plainObject type: its _<Object>_write.
	plainObjectField
)

// plainField is one plain field of a plainObject.
type plainField struct {
	name    string // GraphQL name
	goName  string // the struct field or method
	method  bool
	kind    plainKind
	nonNull bool
	pointer bool        // the Go value is a pointer, nil when null
	marshal *types.Func // plainFunc
	cast    types.Type  // plainFunc: the type the value is converted to first, or nil
	object  string      // plainObjectField: the GraphQL name of its type
}

// findPlain returns the object types of objs (sorted by name) whose plain
// bindings can be written straight to bytes, each with those fields: the
// leaves whose marshalling is one of plainKind's, and the objects of such
// types. An object type with no such field is left out, and so are the
// fields of its type.
func findPlain(objs []*codegen.Object) []plainObject {
	var out []plainObject
	for _, o := range objs {
		if o.Root || o.Kind != gqlast.Object {
			continue
		}
		po := plainObject{name: o.Name}
		for _, f := range o.Fields {
			if pf, ok := plainFieldOf(f); ok {
				po.fields = append(po.fields, pf)
			}
		}
		out = append(out, po)
	}
	// Drop the types without fields, then the fields of dropped types,
	// until nothing changes.
	for {
		names := map[string]bool{}
		kept := out[:0]
		for _, po := range out {
			if len(po.fields) > 0 {
				names[po.name] = true
				kept = append(kept, po)
			}
		}
		out = kept
		changed := false
		for i := range out {
			n := len(out[i].fields)
			out[i].fields = slices.DeleteFunc(out[i].fields, func(f plainField) bool {
				return f.kind == plainObjectField && !names[f.object]
			})
			changed = changed || len(out[i].fields) != n
		}
		if !changed {
			return out
		}
	}
}

// plainFieldOf returns f as a plainField, or false when it is not a plain
// binding (plainBinding) or its type is marshalled otherwise: lists,
// interfaces and unions, enums with a value table, context marshallers,
// pointers to pointers.
func plainFieldOf(f *codegen.Field) (plainField, bool) {
	b, ok := plainBinding(f)
	if !ok {
		return plainField{}, false
	}
	ref := f.TypeReference
	pf := plainField{name: f.Name, goName: f.GoFieldName, method: b.method, nonNull: ref.GQL.NonNull}
	switch ref.GO.(type) {
	case *types.Pointer:
		pf.pointer = true
	case *types.Map, *types.Slice, *types.Interface, *types.Chan, *types.Signature:
		return plainField{}, false
	}
	if ref.GQL.Elem != nil || ref.IsPtrToPtr() || ref.IsContext || ref.IsOmittable {
		return plainField{}, false
	}
	switch {
	case b.leaf:
		switch {
		case ref.HasEnumValues():
			return plainField{}, false
		case ref.IsMarshaler:
			pf.kind = plainMarshaler
		case ref.Marshaler == nil || ref.IsTargetNilable():
			return plainField{}, false
		case ref.Marshaler.Pkg().Path() == gqlstringPath && ref.Marshaler.Name() == "MarshalString" && ref.CastType == nil:
			pf.kind = plainQuoted
		default:
			pf.kind, pf.marshal, pf.cast = plainFunc, ref.Marshaler, ref.CastType
		}
	case ref.Definition.Kind == gqlast.Object && !ref.IsRoot:
		pf.kind, pf.object = plainObjectField, ref.Definition.Name
	default:
		return plainField{}, false
	}
	return pf, true
}

// plainSource is the Go source of the generated functions of objs, whose
// object marshallers are ms (by GraphQL name; findPlain leaves no object
// field whose type is not among objs); qual names a package as the
// generated file imports it.
func plainSource(objs []plainObject, ms map[string]marshaller, qual types.Qualifier) string {
	var b strings.Builder
	for _, po := range objs {
		objType, impl := ms[po.name].objType, ms[po.name].impl
		fmt.Fprintf(&b, "\n// _%[1]s_isPlain is the gqlfield.PlainField of %[1]s's fields.\n", po.name)
		fmt.Fprintf(&b, "func _%s_isPlain(oc *graphql.OperationContext, f graphql.CollectedField) bool {\n\tswitch f.Name {\n", po.name)
		leaves := []string{strconv.Quote("__typename")}
		for _, f := range po.fields {
			if f.kind != plainObjectField {
				leaves = append(leaves, strconv.Quote(f.name))
			}
		}
		fmt.Fprintf(&b, "\tcase %s:\n\t\treturn true\n", strings.Join(leaves, ", "))
		for _, f := range po.fields {
			if f.kind == plainObjectField {
				fmt.Fprintf(&b, "\tcase %q:\n\t\treturn gqlfield.IsPlain(oc, f.Selections, %s, _%s_isPlain)\n",
					f.name, ms[f.object].impl, f.object)
			}
		}
		b.WriteString("\t}\n\treturn false\n}\n")

		fmt.Fprintf(&b, "\n// _%[1]s_plain is obj written by the plain path (package gqlfield), or\n// nil when it is not plain.\n", po.name)
		fmt.Fprintf(&b, "func (ec *executionContext) _%[1]s_plain(sel ast.SelectionSet, fields []graphql.CollectedField, obj %[2]s) (m graphql.Marshaler) {\n", po.name, objType)
		fmt.Fprintf(&b, "\tif !gqlfield.IsPlain(ec.OperationContext, sel, %s, _%s_isPlain) {\n\t\treturn nil\n\t}\n", impl, po.name)
		fmt.Fprintf(&b, "\to := gqlfield.NewPlainObject()\n\tdefer gqlfield.RecoverPlain(&m, o)\n\tif !ec._%[1]s_write(o.Buffer(), fields, obj) {\n\t\to.Drop()\n\t\treturn nil\n\t}\n\treturn o.Done()\n}\n", po.name)

		fmt.Fprintf(&b, "\n// _%[1]s_write appends obj's plain fields to b as a JSON object, or\n// reports false.\n", po.name)
		fmt.Fprintf(&b, "func (ec *executionContext) _%s_write(b *bytes.Buffer, fields []graphql.CollectedField, obj %s) bool {\n", po.name, objType)
		b.WriteString("\tb.WriteByte('{')\n\tfor i, f := range fields {\n\t\tif !gqlfield.PlainKey(b, fields, i) {\n\t\t\tcontinue\n\t\t}\n\t\tswitch f.Name {\n")
		fmt.Fprintf(&b, "\t\tcase \"__typename\":\n\t\t\tb.WriteString(`%q`)\n", po.name)
		for _, f := range po.fields {
			fmt.Fprintf(&b, "\t\tcase %q:\n%s", f.name, f.write(qual, ms[f.object].impl))
		}
		b.WriteString("\t\tdefault:\n\t\t\treturn false\n\t\t}\n\t}\n\tb.WriteByte('}')\n\treturn true\n}\n")
	}
	return b.String()
}

// write is the Go source of f's case in its object's _<Object>_write: it
// writes the value, or returns false where the field set would null or
// report it (a non-null field's nil, or its marshaller's graphql.Null).
func (f plainField) write(qual types.Qualifier, impl string) string {
	value := "obj." + f.goName
	if f.method {
		value += "()"
	}
	null := "\t\t\t\treturn false\n"
	if !f.nonNull {
		null = "\t\t\t\tb.WriteString(\"null\")\n\t\t\t\tbreak\n"
	}
	v := "v"
	var s strings.Builder
	fmt.Fprintf(&s, "\t\t\tv := %s\n", value)
	if f.pointer {
		fmt.Fprintf(&s, "\t\t\tif v == nil {\n%s\t\t\t}\n", null)
		if f.kind == plainQuoted || f.kind == plainFunc {
			v = "*v"
		}
	} else if f.kind == plainObjectField {
		v = "&v"
	}
	switch f.kind {
	case plainQuoted:
		fmt.Fprintf(&s, "\t\t\tgqlstring.WriteQuoted(b, %s)\n", v)
	case plainMarshaler:
		fmt.Fprintf(&s, "\t\t\t%s.MarshalGQL(b)\n", v)
	case plainFunc:
		if f.cast != nil {
			v = types.TypeString(f.cast, qual) + "(" + v + ")"
		}
		fmt.Fprintf(&s, "\t\t\tm := %s.%s(%s)\n", qual(f.marshal.Pkg()), f.marshal.Name(), v)
		fmt.Fprintf(&s, "\t\t\tif m == graphql.Null {\n%s\t\t\t}\n\t\t\tm.MarshalGQL(b)\n", null)
	case plainObjectField:
		fmt.Fprintf(&s, "\t\t\tif !ec._%s_write(b, gqlfield.CollectFields(ec.OperationContext, f.Selections, %s), %s) {\n\t\t\t\treturn false\n\t\t\t}\n",
			f.object, impl, v)
	}
	return s.String()
}

// marshaller is what the plain path needs of an object marshaller of
// formatted generated.go: its object type (its obj parameter's), the
// implementors it collects its fields with, and where the line that
// collects them ends.
type marshaller struct {
	objType, impl string
	end           int // the offset after the fields line's newline
}

// fieldsLine starts the first statement of every object marshaller.
const fieldsLine = "\n\tfields := gqlfield.CollectFields(ec.OperationContext, sel, "

// marshallerOf returns object's marshaller in src.
func marshallerOf(src, object string) (marshaller, error) {
	head := marshallerHead(object)
	at := strings.Index(src, head)
	if at < 0 {
		return marshaller{}, fmt.Errorf("no object marshaller %q", head)
	}
	var m marshaller
	m.objType, _, _ = strings.Cut(src[at+len(head):], ")")
	c := strings.Index(src[at:], fieldsLine)
	if c < 0 || strings.Contains(src[at:at+c], "\n}\n") {
		return marshaller{}, fmt.Errorf("_%s does not start with %q", object, fieldsLine)
	}
	c += at + len(fieldsLine)
	impl, _, ok := strings.Cut(src[c:], ")\n")
	if !ok {
		return marshaller{}, fmt.Errorf("_%s: no end to %q", object, fieldsLine)
	}
	m.impl, m.end = impl, c+len(impl)+len(")\n")
	return m, nil
}

// marshallerHead is how object's marshaller starts in formatted
// generated.go, up to its obj parameter's type.
func marshallerHead(object string) string {
	return "func (ec *executionContext) _" + object + "(ctx context.Context, sel ast.SelectionSet, obj "
}

// insertPlain makes the object marshaller of every type of objs in src
// (formatted generated.go) return the object written by the plain path when
// it is plain:
//
//	fields := gqlfield.CollectFields(ec.OperationContext, sel, postEdgeImplementors)
//	if m := ec._PostEdge_plain(sel, fields, obj); m != nil {
//		return m
//	}
//
// and adds the plain functions (plainSource) at the end.
func insertPlain(src string, objs []plainObject, qual types.Qualifier) (string, error) {
	ms := make(map[string]marshaller, len(objs))
	for _, po := range objs {
		m, err := marshallerOf(src, po.name)
		if err != nil {
			return "", err
		}
		ms[po.name] = m
	}
	decls := plainSource(objs, ms, qual)
	// From the last marshaller to the first, so that each insertion leaves
	// the offsets before it as they were.
	byEnd := slices.SortedFunc(maps.Keys(ms), func(a, b string) int { return ms[b].end - ms[a].end })
	for _, name := range byEnd {
		end := ms[name].end
		src = src[:end] + fmt.Sprintf("\tif m := ec._%s_plain(sel, fields, obj); m != nil {\n\t\treturn m\n\t}\n", name) + src[end:]
	}
	return src + decls, nil
}

// importQualifier names a package as file f imports it (its import name,
// or the package's own name), and records in missing the packages f does
// not import.
func importQualifier(f *ast.File, missing map[string]bool) types.Qualifier {
	names := map[string]string{}
	for _, is := range f.Imports {
		path, _ := strconv.Unquote(is.Path.Value)
		names[path] = ""
		if is.Name != nil {
			names[path] = is.Name.Name
		}
	}
	return func(p *types.Package) string {
		name, ok := names[p.Path()]
		if !ok {
			missing[p.Path()] = true
		}
		if name == "" {
			name = p.Name()
		}
		return name
	}
}
