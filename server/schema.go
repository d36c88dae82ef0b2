package server

import (
	"bufio"
	"io"
	"maps"

	"github.com/vektah/gqlparser/v2/formatter"
)

// WriteSchema writes the whole GraphQL schema the gateway serves as SDL to
// w: every type, interface, input, scalar and directive of the schema files
// (schema.graphqls and schema/*.graphqls, as gqlgen.yml lists them) with
// its description (gqlparser's formatter; GraphQL's built-in types and
// directives left out, `#` comments dropped), and @defer and @stream
// (which the gateway serves, see incremental.go), merged with no `extend`, as
// relay-compiler and other code generators want it. It is what
// `gateway schema` prints.
func WriteSchema(w io.Writer) error {
	bw := bufio.NewWriter(w)
	// @defer is in gqlparser's prelude, which the formatter leaves out:
	// printed too, as clients' compilers (relay-compiler) want both.
	s := *servedSchema()
	s.Directives = maps.Clone(s.Directives)
	if d := s.Directives["defer"]; d != nil {
		c := *d
		c.Position = nil
		s.Directives["defer"] = &c
	}
	formatter.NewFormatter(bw, formatter.WithIndent("  ")).FormatSchema(&s)
	return bw.Flush()
}
