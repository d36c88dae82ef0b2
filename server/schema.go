package server

import (
	"bufio"
	"io"

	"github.com/vektah/gqlparser/v2/formatter"

	"github.com/weibohbase/gateway/graph"
)

// WriteSchema writes the whole GraphQL schema the gateway serves as SDL to
// w: every type, interface, input, scalar and directive of the schema files
// (schema.graphqls and schema/*.graphqls, as gqlgen.yml lists them) with
// its description (gqlparser's formatter; GraphQL's built-in types and
// directives left out, `#` comments dropped), merged with no `extend`, as
// relay-compiler and other code generators want it. It is what
// `gateway schema` prints.
func WriteSchema(w io.Writer) error {
	bw := bufio.NewWriter(w)
	es := graph.NewExecutableSchema(graph.Config{})
	formatter.NewFormatter(bw, formatter.WithIndent("  ")).FormatSchema(es.Schema())
	return bw.Flush()
}
