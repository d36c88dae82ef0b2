package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"text/tabwriter"
	"time"

	"github.com/weibohbase/gateway/weibo/provision/clients"
)

// scimCmd runs `gateway scim token create|list|revoke`: the provisioning
// clients of /scim/v2 and their bearer tokens. create prints the new
// token once, on standard output (the store keeps its SHA-256 only);
// list prints every client with its rank; revoke removes a client, whose
// token /scim/v2 refuses from then on.
func scimCmd(ctx context.Context, log *slog.Logger, out io.Writer, args []string) error {
	if len(args) < 2 || args[0] != "token" || (args[1] != "create" && args[1] != "list" && args[1] != "revoke") {
		scimUsage(os.Stderr)
		return flag.ErrHelp
	}
	verb := args[1]
	fs := flag.NewFlagSet("scim token "+verb, flag.ContinueOnError)
	var sf storeFlags
	sf.register(fs)
	name := fs.String("name", "", "the client's name (create, revoke): 1 to 64 letters, digits, '.', '_', '-'")
	rank := fs.Int("rank", clients.DefaultRank, "the client's rank under the rank rule (create): 1 to 1000")
	fs.Usage = func() { scimUsage(fs.Output()); fs.PrintDefaults() }
	if err := fs.Parse(args[2:]); err != nil {
		return err
	}
	if fs.NArg() > 0 || (verb != "list" && *name == "") {
		fs.Usage()
		return flag.ErrHelp
	}
	st, err := sf.openMigrated(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	cs := clients.New(st, nil)
	switch verb {
	case "create":
		token, c, err := cs.Create(ctx, *name, *rank)
		if err != nil {
			return describe(err)
		}
		log.Info("scim client created; its token is printed once", "client", c.Name, "rank", c.Rank, "store", st.Backend())
		_, err = fmt.Fprintln(out, token)
		return err
	case "revoke":
		ok, err := cs.Revoke(ctx, *name)
		if err != nil {
			return describe(err)
		}
		if !ok {
			return fmt.Errorf("no scim client named %q", *name)
		}
		log.Info("scim client revoked", "client", *name, "store", st.Backend())
		return nil
	}
	list, err := cs.List(ctx)
	if err != nil {
		return describe(err)
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tRANK\tCREATED")
	for _, c := range list {
		fmt.Fprintf(tw, "%s\t%d\t%s\n", c.Name, c.Rank, c.Created.UTC().Format(time.RFC3339))
	}
	return tw.Flush()
}

func scimUsage(w io.Writer) {
	fmt.Fprint(w, `usage: gateway scim token create --name NAME [--rank 500] [store flags]
       gateway scim token list   [store flags]
       gateway scim token revoke --name NAME [store flags]

create makes a provisioning client for /scim/v2 and prints its bearer token
once (the store keeps only its SHA-256). The token is good for /scim/v2 only.
A client acts with its rank under the rank rule: it changes users whose rank
is below its own and grants priorities below it, never ADMINISTRATOR. On the
embedded store, stop the gateway first (the store is locked while it serves).
`)
}
