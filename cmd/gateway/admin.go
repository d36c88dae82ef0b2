package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/org"
)

// admin runs `gateway admin grant|revoke <username> [store flags]`: it gives
// the user the role named admin (created when missing, and made to carry
// ADMINISTRATOR) with the highest priority (org.MaxPriority, the top
// rank), or takes it away. It is how the first administrator is made,
// since the GraphQL mutations that manage roles themselves need one.
func admin(ctx context.Context, log *slog.Logger, args []string) error {
	if len(args) == 0 || (args[0] != "grant" && args[0] != "revoke") {
		adminUsage(os.Stderr)
		return flag.ErrHelp
	}
	verb := args[0]
	fs := flag.NewFlagSet("admin "+verb, flag.ContinueOnError)
	var sf storeFlags
	sf.register(fs)
	role := fs.String("role", org.AdminRole, "the role to grant or revoke")
	fs.Usage = func() { adminUsage(fs.Output()); fs.PrintDefaults() }
	// The username may come before or after the flags.
	rest := args[1:]
	var username string
	if len(rest) > 0 && len(rest[0]) > 0 && rest[0][0] != '-' {
		username, rest = rest[0], rest[1:]
	}
	if err := fs.Parse(rest); err != nil {
		return err
	}
	if username == "" && fs.NArg() == 1 {
		username = fs.Arg(0)
	} else if fs.NArg() > 0 || username == "" {
		fs.Usage()
		return flag.ErrHelp
	}
	st, err := sf.openMigrated(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	svc := domain.New(st, domain.WithLogger(log))
	if verb == "revoke" {
		if err := svc.RevokeRoleByName(ctx, username, *role); err != nil {
			return describe(err)
		}
		log.Info("role revoked", "user", username, "role", *role, "store", st.Backend())
		return nil
	}
	u, r, err := svc.GrantRoleByName(ctx, username, *role, org.MaxPriority)
	if err != nil {
		return describe(err)
	}
	log.Info("role granted", "user", u.Username, "user_id", u.ID.String(), "role", r.Name, "role_id", r.ID.String(), "store", st.Backend())
	return nil
}

// describe turns a domain error into a plain one for the command line.
func describe(err error) error {
	var e *weibo.Error
	if errors.As(err, &e) {
		return fmt.Errorf("%s (%s)", e.Message, e.Code)
	}
	return err
}

func adminUsage(w io.Writer) {
	fmt.Fprint(w, `usage: gateway admin grant  <username> [--role admin] [store flags]
       gateway admin revoke <username> [--role admin] [store flags]

grant gives the user the role (created when missing) with the highest
priority (1000, the top rank); the admin role carries the permission
ADMINISTRATOR, which every GraphQL admin field accepts.
`)
}
