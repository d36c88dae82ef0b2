package main

import (
	"bytes"
	"errors"
	"flag"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/codegen/config"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/formatter"
)

// TestSchemaCommand checks `gateway schema`: its SDL loads as a schema by
// itself, has no `extend`, and is the schema files of gqlgen.yml merged
// (both formatted alike) with @defer and @stream declared; the Node
// interface and its implementations are in it.
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
	t.Chdir("../..")
	cfg, err := config.LoadConfig("gqlgen.yml")
	if err != nil {
		t.Fatal(err)
	}
	file, gerr := gqlparser.LoadSchema(cfg.Sources...)
	if gerr != nil {
		t.Fatalf("the schema files of gqlgen.yml do not load: %v", gerr)
	}
	format := func(s *ast.Schema) string {
		var b bytes.Buffer
		formatter.NewFormatter(&b).FormatSchema(s)
		return b.String()
	}
	// Beyond the files: @defer (gqlparser's, which its formatter leaves
	// out) and @stream, which the gateway serves.
	for name, args := range map[string]string{"defer": "if,label", "stream": "if,label,initialCount"} {
		d := printed.Directives[name]
		var got []string
		if d != nil {
			for _, a := range d.Arguments {
				got = append(got, a.Name)
			}
		}
		if strings.Join(got, ",") != args {
			t.Errorf("@%s arguments: %v, want %s", name, got, args)
		}
		delete(printed.Directives, name)
		delete(file.Directives, name)
	}
	if got, want := format(printed), format(file); got != want {
		t.Errorf("printed schema differs from the schema files:\n%s\nwant\n%s", got, want)
	}
	var impl []string
	for _, d := range printed.PossibleTypes["Node"] {
		impl = append(impl, d.Name)
	}
	slices.Sort(impl)
	if strings.Join(impl, ",") != "Comment,Department,Media,Notification,Post,Report,Role,Topic,User" {
		t.Errorf("Node implementations: %v", impl)
	}
	if err := schemaCmd(&out, []string{"extra"}); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("schema with an argument: %v, want flag.ErrHelp", err)
	}
}

// TestSchemaFilesListed checks that gqlgen.yml lists schema.graphqls and
// every file of schema/, once: a schema file it does not list would be
// neither generated nor served.
func TestSchemaFilesListed(t *testing.T) {
	t.Chdir("../..")
	cfg, err := config.LoadConfig("gqlgen.yml")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("schema/*.graphqls")
	if err != nil {
		t.Fatal(err)
	}
	want := append([]string{"schema.graphqls"}, files...)
	got := slices.Clone(cfg.SchemaFilename)
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("gqlgen.yml lists %v, want schema.graphqls and schema/*.graphqls: %v", cfg.SchemaFilename, want)
	}
	if len(files) == 0 {
		t.Errorf("no schema/*.graphqls")
	}
}
