// Command gateway is the Weibo GraphQL gateway over HBase: one binary with
// the subcommands serve, migrate, seed, admin, fsck, backup, restore,
// schema, scim and documents. Every flag has an environment variable; a
// flag given on the command line wins.
//
//	gateway serve   [--addr ADDR] [store flags] [--demo] [--outbox-sweep 30s] [--repair-grace 60s]
//	gateway migrate [store flags]
//	gateway seed    --edges FILE --posts FILE --password PW [store flags]
//	gateway admin   grant|revoke <username> [--role admin] [store flags]
//	gateway fsck    [--repair] [--grace 30s] [--repair-grace 60s] [store flags]
//	gateway backup  --to DIR [store flags]
//	gateway restore --from DIR [--repair=true] [store flags]
//	gateway schema  (prints the GraphQL schema as SDL)
//	gateway scim token create --name NAME [--rank 500] | list | revoke --name NAME [store flags]
//	gateway documents add FILE | list [store flags]
//
// Store flags: --store embedded|hbase (GATEWAY_STORE), --data DIR
// (GATEWAY_DATA, embedded), --hbase-zk HOST:PORT (GATEWAY_HBASE_ZK, hbase),
// --hbase-call-timeout 5s (GATEWAY_HBASE_CALL_TIMEOUT, hbase). The log level
// is GATEWAY_LOG_LEVEL (debug, info, warn, error; default info); every
// command takes --log-format text|json (GATEWAY_LOG_FORMAT; default text).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	level := slog.LevelInfo
	if v, ok := os.LookupEnv("GATEWAY_LOG_LEVEL"); ok {
		if err := level.UnmarshalText([]byte(v)); err != nil {
			fmt.Fprintf(os.Stderr, "gateway: GATEWAY_LOG_LEVEL=%q: want debug, info, warn or error\n", v)
			os.Exit(2)
		}
	}
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	format, args, err := takeLogFormat(env("GATEWAY_LOG_FORMAT", logText), os.Args[2:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "gateway: %v (env GATEWAY_LOG_FORMAT)\n", err)
		os.Exit(2)
	}
	log := newLogger(os.Stderr, format, level)
	slog.SetDefault(log)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch cmd := os.Args[1]; cmd {
	case "serve":
		err = serve(ctx, log, args)
	case "migrate":
		err = migrate(ctx, log, args)
	case "seed":
		err = runSeed(ctx, log, args)
	case "admin":
		err = admin(ctx, log, args)
	case "fsck":
		err = runFsck(ctx, log, args)
	case "backup":
		err = backupCmd(ctx, log, args)
	case "restore":
		err = restoreCmd(ctx, log, args)
	case "schema":
		err = schemaCmd(os.Stdout, args)
	case "scim":
		err = scimCmd(ctx, log, os.Stdout, args)
	case "documents":
		err = documentsCmd(ctx, log, os.Stdout, args)
	case "-h", "--help", "help":
		usage()
		return
	default:
		fmt.Fprintf(os.Stderr, "gateway: unknown command %q\n", cmd)
		usage()
		os.Exit(2)
	}
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(2)
		}
		log.Error("gateway "+os.Args[1]+" failed", "err", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprint(os.Stderr, `usage: gateway <command> [flags]

commands:
  serve     serve GraphQL at /graphql and GraphiQL at /
  migrate   create the weibo namespace and tables (idempotent)
  seed      import the real data set (edge list + posts CSV)
  admin     grant|revoke <username>: give or take the admin role (makes the first admin)
  fsck      check (and with --repair fix) everything stored on two sides: roles,
            departments, follows and fans, counters, inboxes, unfinished writes
  backup    --to DIR: a consistent copy of the store (pebble checkpoint, through
            the serving gateway if one runs; HBase snapshots, exported)
  restore   --from DIR: the backup into an empty store or namespace, then
            fsck --repair of what writes during the backup left half-done
  schema    print the GraphQL schema (SDL, no "extend") for client code generators
  scim      token create --name NAME [--rank N] | list | revoke --name NAME:
            the provisioning clients of /scim/v2 and their bearer tokens
  documents add FILE | list: the trusted documents (an Apollo persisted query
            manifest or a Relay persistConfig output, validated first)

Every command takes --log-format text|json (env GATEWAY_LOG_FORMAT; default
text); the log level is GATEWAY_LOG_LEVEL (debug, info, warn, error).
Run "gateway <command> -h" for the flags of a command.
`)
}

// env returns the environment variable key, or def when it is unset.
func env(key, def string) string {
	if v, ok := os.LookupEnv(key); ok {
		return v
	}
	return def
}
