package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/99designs/gqlgen/codegen"
	"golang.org/x/tools/imports"
)

// modulePath is the gateway's module: goimports puts its packages in a
// group of their own, after the others.
const modulePath = "github.com/weibohbase/gateway"

// importsPlugin is a gqlgen plugin that completes the imports of the
// resolver files (resolvers/*.resolvers.go) once gqlgen has written them
// (it runs after gqlgen's resolver generator, before gqlgen builds the
// packages). gqlgen's follow-schema layout moves a field's resolver to the
// file of the schema file that now declares the field, but gives a file
// only the imports it had and those its template names: a resolver moved
// into a new file (a new schema file, or a field moved to another) would
// not compile. A file whose imports are complete is left as it is.
type importsPlugin struct{}

// Name implements plugin.Plugin.
func (importsPlugin) Name() string { return "resolver-imports" }

// GenerateCode implements plugin.CodeGenerator.
func (importsPlugin) GenerateCode(data *codegen.Data) error {
	files, err := filepath.Glob(filepath.Join(data.Config.Resolver.Dir(), "*.resolvers.go"))
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := completeImports(f); err != nil {
			return err
		}
	}
	return nil
}

// completeImports adds the imports the Go file filename lacks and drops
// those it does not use (goimports, the module's packages grouped last),
// and rewrites the file only when that changes it.
func completeImports(filename string) error {
	src, err := os.ReadFile(filename)
	if err != nil {
		return err
	}
	// LocalPrefix is package imports' setting for every caller: gqlgen
	// formats its own output with the same package, without it.
	defer func(prefix string) { imports.LocalPrefix = prefix }(imports.LocalPrefix)
	imports.LocalPrefix = modulePath
	out, err := imports.Process(filename, src, &imports.Options{Comments: true, TabIndent: true, TabWidth: 8})
	if err != nil {
		return fmt.Errorf("imports of %s: %w", filename, err)
	}
	if bytes.Equal(out, src) {
		return nil
	}
	return os.WriteFile(filename, out, 0o644)
}
