package main

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/formatter"
)

// TestSchemaCommand checks `gateway schema`: its SDL loads as a schema by
// itself, has no `extend`, and is schema.graphqls itself (both formatted
// alike); the Node interface and its implementations are in it.
func TestSchemaCommand(t *testing.T) {
	var out bytes.Buffer
	if err := schemaCmd(&out, nil); err != nil {
		t.Fatal(err)
	}
	sdl := out.String()
	if strings.Contains(sdl, "extend ") {
		t.Errorf("printed schema has an extend:\n%s", sdl)
	}
	printed, gerr := gqlparser.LoadSchema(&ast.Source{Name: "printed.graphql", Input: sdl})
	if gerr != nil {
		t.Fatalf("printed schema does not load: %v", gerr)
	}
	src, err := os.ReadFile("../../schema.graphqls")
	if err != nil {
		t.Fatal(err)
	}
	file, gerr := gqlparser.LoadSchema(&ast.Source{Name: "schema.graphqls", Input: string(src)})
	if gerr != nil {
		t.Fatalf("schema.graphqls does not load: %v", gerr)
	}
	format := func(s *ast.Schema) string {
		var b bytes.Buffer
		formatter.NewFormatter(&b).FormatSchema(s)
		return b.String()
	}
	if got, want := format(printed), format(file); got != want {
		t.Errorf("printed schema differs from schema.graphqls:\n%s\nwant\n%s", got, want)
	}
	var impl []string
	for _, d := range printed.PossibleTypes["Node"] {
		impl = append(impl, d.Name)
	}
	slices.Sort(impl)
	if strings.Join(impl, ",") != "Comment,Department,Notification,Post,Role,Topic,User" {
		t.Errorf("Node implementations: %v", impl)
	}
	if err := schemaCmd(&out, []string{"extra"}); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("schema with an argument: %v, want flag.ErrHelp", err)
	}
}
