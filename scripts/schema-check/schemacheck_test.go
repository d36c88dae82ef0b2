// Package schemacheck_test runs the schema evolution guard,
// scripts/schema-check.sh (graphql-inspector diff, pinned in this
// directory's package-lock.json, with the rule deprecated-with-reason.js),
// on the committed release schema and on changes made to it: a breaking
// change fails unless the release deprecated the element with a reason.
//
// The script runs `npm ci` here when node_modules is missing or stale.
// Without node or npm the tests skip, except in CI (CI=true), where they
// fail.
package schemacheck_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/formatter"
	"github.com/vektah/gqlparser/v2/parser"
)

// release is the committed schema of the first release.
const release = "../../schema/releases/v1.0.0.graphqls"

// needNode skips t without node and npm, or fails it in CI.
func needNode(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is missing", tool)
			}
			t.Skipf("%s is missing", tool)
		}
	}
}

// check runs scripts/schema-check.sh with args and returns its exit status
// and output.
func check(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "bash", append([]string{"../schema-check.sh"}, args...)...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, string(out)
	case errors.As(err, &exit):
		return exit.ExitCode(), string(out)
	default:
		t.Fatalf("schema-check.sh: %v\n%s", err, out)
		return 0, ""
	}
}

// schema returns the release schema changed by edit, written to a file of
// t's temporary directory named name.
func schema(t *testing.T, name string, edit func(doc *ast.SchemaDocument)) string {
	t.Helper()
	raw, err := os.ReadFile(release)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := parser.ParseSchema(&ast.Source{Name: release, Input: string(raw)})
	if err != nil {
		t.Fatal(err)
	}
	edit(doc)
	var buf bytes.Buffer
	formatter.NewFormatter(&buf).FormatSchemaDocument(doc)
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// definition returns the definition named name of doc, failing t without.
func definition(t *testing.T, doc *ast.SchemaDocument, name string) *ast.Definition {
	t.Helper()
	if d := doc.Definitions.ForName(name); d != nil {
		return d
	}
	t.Fatalf("the release schema has no %s", name)
	return nil
}

// deprecate marks dirs (a field's or enum value's) @deprecated, with
// reason when it is not "".
func deprecate(dirs *ast.DirectiveList, reason string) {
	d := &ast.Directive{Name: "deprecated"}
	if reason != "" {
		d.Arguments = ast.ArgumentList{{Name: "reason", Value: &ast.Value{Kind: ast.StringValue, Raw: reason}}}
	}
	*dirs = append(*dirs, d)
}

// removeField removes field of type typ from doc.
func removeField(t *testing.T, doc *ast.SchemaDocument, typ, field string) {
	t.Helper()
	d := definition(t, doc, typ)
	for i, f := range d.Fields {
		if f.Name == field {
			d.Fields = append(d.Fields[:i], d.Fields[i+1:]...)
			return
		}
	}
	t.Fatalf("the release schema has no %s.%s", typ, field)
}

// removeValue removes value of enum typ from doc.
func removeValue(t *testing.T, doc *ast.SchemaDocument, typ, value string) {
	t.Helper()
	d := definition(t, doc, typ)
	for i, v := range d.EnumValues {
		if v.Name == value {
			d.EnumValues = append(d.EnumValues[:i], d.EnumValues[i+1:]...)
			return
		}
	}
	t.Fatalf("the release schema has no %s.%s", typ, value)
}

// TestCurrentSchemaKeepsTheRelease: the current schema (`gateway schema`)
// breaks nothing of the last release's (what make test checks).
func TestCurrentSchemaKeepsTheRelease(t *testing.T) {
	needNode(t)
	if code, out := check(t); code != 0 {
		t.Fatalf("schema-check.sh: exit %d\n%s", code, out)
	}
}

// TestSchemaCheck: removing a field or an enum value the release did not
// deprecate fails the check, naming it; one the release deprecated with a
// reason passes; a bare @deprecated (no reason) is not enough. Adding a
// field is no breaking change.
func TestSchemaCheck(t *testing.T) {
	needNode(t)
	withoutField := schema(t, "without-field.graphqls", func(doc *ast.SchemaDocument) { removeField(t, doc, "User", "bio") })
	withoutValue := schema(t, "without-value.graphqls", func(doc *ast.SchemaDocument) { removeValue(t, doc, "Permission", "MANAGE_USERS") })
	for _, c := range []struct {
		name     string
		old, new string
		ok       bool
		says     string // in the output
	}{
		{"a field removed", release, withoutField, false, "Field bio was removed from object type User"},
		{"an enum value removed", release, withoutValue, false, "Enum value MANAGE_USERS was removed from enum Permission"},
		{"a field deprecated with a reason, removed", schema(t, "deprecated-field.graphqls", func(doc *ast.SchemaDocument) {
			deprecate(&definition(t, doc, "User").Fields.ForName("bio").Directives, "use displayName")
		}), withoutField, true, "(deprecated in the release: use displayName)"},
		{"an enum value deprecated with a reason, removed", schema(t, "deprecated-value.graphqls", func(doc *ast.SchemaDocument) {
			deprecate(&definition(t, doc, "Permission").EnumValues.ForName("MANAGE_USERS").Directives, "use ADMINISTRATOR")
		}), withoutValue, true, "(deprecated in the release: use ADMINISTRATOR)"},
		{"a field deprecated without a reason, removed", schema(t, "bare-deprecated.graphqls", func(doc *ast.SchemaDocument) {
			deprecate(&definition(t, doc, "User").Fields.ForName("bio").Directives, "")
		}), withoutField, false, "Field bio (deprecated) was removed from object type User"},
		{"a field added", release, schema(t, "added.graphqls", func(doc *ast.SchemaDocument) {
			d := definition(t, doc, "User")
			d.Fields = append(d.Fields, &ast.FieldDefinition{Name: "nickname", Type: ast.NamedType("String", nil)})
		}), true, "Field nickname was added to object type User"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out := check(t, c.old, c.new)
			if c.ok && code != 0 || !c.ok && code != 1 || !strings.Contains(out, c.says) {
				t.Fatalf("exit %d (want %s), output without %q:\n%s", code, map[bool]string{true: "0", false: "1"}[c.ok], c.says, out)
			}
		})
	}
}
