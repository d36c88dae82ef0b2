package main

import (
	"go/types"
	"strings"
	"testing"
)

// TestPlainFieldWrite: each kind of plain field writes its value, or
// returns false (non-null) or writes null (nullable) where the field set
// would null or report it.
func TestPlainFieldWrite(t *testing.T) {
	gqltime := types.NewPackage("github.com/weibohbase/gateway/internal/gqltime", "gqltime")
	marshalTime := types.NewFunc(0, gqltime, "MarshalTime", nil)
	graphqlPkg := types.NewPackage("github.com/99designs/gqlgen/graphql", "graphql")
	marshalInt := types.NewFunc(0, graphqlPkg, "MarshalInt64", nil)
	qual := func(p *types.Package) string { return p.Name() }
	for _, tc := range []struct {
		name string
		f    plainField
		want []string
	}{
		{"quoted string", plainField{goName: "Content", kind: plainQuoted, nonNull: true},
			[]string{"v := obj.Content\n", "gqlstring.WriteQuoted(b, v)\n"}},
		{"nullable marshaler pointer", plainField{goName: "RepostOfID", kind: plainMarshaler, pointer: true},
			[]string{"v := obj.RepostOfID\n", "if v == nil {\n", "b.WriteString(\"null\")\n", "break\n", "v.MarshalGQL(b)\n"}},
		{"non-null marshal function of a method", plainField{goName: "CreatedAt", method: true, kind: plainFunc, nonNull: true, marshal: marshalTime},
			[]string{"v := obj.CreatedAt()\n", "m := gqltime.MarshalTime(v)\n", "if m == graphql.Null {\n", "return false\n", "m.MarshalGQL(b)\n"}},
		{"nullable pointer with a cast", plainField{goName: "Count", kind: plainFunc, pointer: true, marshal: marshalInt, cast: types.Typ[types.Int64]},
			[]string{"if v == nil {\n", "b.WriteString(\"null\")\n", "m := graphql.MarshalInt64(int64(*v))\n"}},
		{"object value", plainField{goName: "PageInfo", kind: plainObjectField, nonNull: true, object: "PageInfo"},
			[]string{"v := obj.PageInfo\n", "ec._PageInfo_write(b, gqlfield.CollectFields(ec.OperationContext, f.Selections, pageInfoImplementors), &v)"}},
		{"non-null object pointer", plainField{goName: "Author", method: true, kind: plainObjectField, nonNull: true, pointer: true, object: "User"},
			[]string{"v := obj.Author()\n", "if v == nil {\n\t\t\t\treturn false\n\t\t\t}\n", "userImplementors), v)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			impl := ""
			if tc.f.object != "" {
				impl = strings.ToLower(tc.f.object[:1]) + tc.f.object[1:] + "Implementors"
			}
			got := tc.f.write(qual, impl)
			at := 0
			for _, w := range tc.want {
				i := strings.Index(got[at:], w)
				if i < 0 {
					t.Fatalf("write =\n%s\nwant, in order, %q", got, tc.want)
				}
				at += i + len(w)
			}
			if tc.f.nonNull && strings.Contains(got, "null") {
				t.Errorf("a non-null field writes null:\n%s", got)
			}
		})
	}
}
