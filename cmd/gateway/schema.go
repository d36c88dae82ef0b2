package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/weibohbase/gateway/server"
)

// schemaCmd runs `gateway schema`: it writes the whole GraphQL schema (SDL)
// the gateway serves to out (server.WriteSchema), for relay-compiler and
// other client code generators. It needs no store.
func schemaCmd(out io.Writer, args []string) error {
	fs := flag.NewFlagSet("schema", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `usage: gateway schema > schema.graphql

schema prints the GraphQL schema the gateway serves, as SDL with no "extend".
`)
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return flag.ErrHelp
	}
	return server.WriteSchema(out)
}
