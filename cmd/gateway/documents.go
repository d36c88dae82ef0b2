package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/weibohbase/gateway/server"
	"github.com/weibohbase/gateway/weibo/documents"
)

// documentsCmd runs `gateway documents add FILE | list`: the trusted
// documents (package weibo/documents). add reads an Apollo persisted query
// manifest or a Relay persistConfig output, validates every document
// against the schema the gateway serves (server.ValidateDocument) and
// writes nothing unless all are valid; it prints how many were new. list
// prints every registered document: id, operation names, when added and
// from which file.
func documentsCmd(ctx context.Context, log *slog.Logger, out io.Writer, args []string) error {
	if len(args) < 1 || (args[0] != "add" && args[0] != "list") {
		documentsUsage(os.Stderr)
		return flag.ErrHelp
	}
	verb := args[0]
	fs := flag.NewFlagSet("documents "+verb, flag.ContinueOnError)
	var sf storeFlags
	sf.register(fs)
	fs.Usage = func() { documentsUsage(fs.Output()); fs.PrintDefaults() }
	// FILE may come before or after the flags.
	rest := args[1:]
	var file string
	if verb == "add" && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		file, rest = rest[0], rest[1:]
	}
	if err := fs.Parse(rest); err != nil {
		return err
	}
	if verb == "add" && file == "" && fs.NArg() == 1 {
		file = fs.Arg(0)
	} else if fs.NArg() > 0 {
		fs.Usage()
		return flag.ErrHelp
	}
	if verb == "add" && file == "" {
		fs.Usage()
		return flag.ErrHelp
	}
	var docs []documents.Document
	if verb == "add" {
		var err error
		if docs, err = readManifest(file); err != nil {
			return err
		}
	}
	st, err := sf.openMigrated(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	svc := documents.New(st, nil)
	if verb == "add" {
		n, err := svc.Add(ctx, filepath.Base(file), docs)
		if err != nil {
			return describe(err)
		}
		log.Info("documents added", "file", file, "documents", len(docs), "new", n, "store", st.Backend())
		_, err = fmt.Fprintf(out, "%d documents, %d new\n", len(docs), n)
		return err
	}
	list, err := svc.List(ctx)
	if err != nil {
		return describe(err)
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tOPERATIONS\tADDED\tSOURCE")
	for _, d := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", d.ID, strings.Join(d.Names, ","), d.Added.UTC().Format(time.RFC3339), d.Source)
	}
	return tw.Flush()
}

// readManifest reads and parses file and validates each of its documents
// against the schema, naming every invalid one in the error.
func readManifest(file string) ([]documents.Document, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	docs, err := documents.ParseManifest(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var errs []error
	for i := range docs {
		names, err := server.ValidateDocument(docs[i].Text)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: document %s does not validate against the schema: %w", file, docs[i].ID, err))
			continue
		}
		docs[i].Names = names
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("nothing was added: %w", errors.Join(errs...))
	}
	return docs, nil
}

func documentsUsage(w io.Writer) {
	fmt.Fprint(w, `usage: gateway documents add FILE [store flags]
       gateway documents list [store flags]

add registers the documents of FILE, an Apollo persisted query manifest
(@apollo/generate-persisted-query-manifest) or a Relay persistConfig output
(algorithm SHA256), after validating every one against the schema (nothing
is written unless all are valid). Clients then send {"documentId":
"sha256:<hex>"} or Apollo's extensions.persistedQuery.sha256Hash; with serve
--documents=allowlist only those run for tokens without RUN_ANY_OPERATION.
list prints every registered document.
`)
}
