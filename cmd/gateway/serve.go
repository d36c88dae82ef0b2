package main

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/weibohbase/gateway/auth"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/server"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/tables"
)

func serve(ctx context.Context, log *slog.Logger, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	var sf storeFlags
	sf.register(fs)
	var cf serveClusterFlags
	cf.register(fs)
	addr := fs.String("addr", env("GATEWAY_ADDR", "127.0.0.1:8080"), "listen address (env GATEWAY_ADDR); use :8080 to listen on every interface")
	demo := fs.Bool("demo", false, "on an empty store, import the demo data set shipped in the binary (demo/)")
	migrateFirst := fs.Bool("migrate", false, "create missing tables before serving (always done on the embedded store)")
	tokenTTL := fs.Duration("token-ttl", 24*time.Hour, "lifetime of issued tokens")
	drain := fs.Duration("shutdown-timeout", 30*time.Second, "how long shutdown waits for requests and fan-out to finish")
	if err := fs.Parse(args); err != nil {
		return err
	}

	st, err := sf.open(ctx, false)
	if err != nil {
		return err
	}
	st = cf.guard(st, log)
	defer st.Close()
	if *migrateFirst || st.Backend() == hbase.BackendEmbedded {
		if err := tables.Migrate(ctx, st); err != nil {
			return err
		}
	}
	if *demo {
		if err := seedDemo(ctx, log, st); err != nil {
			return err
		}
	}

	secret := []byte(os.Getenv("GATEWAY_JWT_SECRET"))
	if len(secret) == 0 {
		log.Warn("GATEWAY_JWT_SECRET is unset: using a random per-process secret; tokens stop working when the process restarts")
		secret = auth.RandomSecret()
	}
	svc := weibo.New(st, append(cf.serviceOptions(), weibo.WithLogger(log))...)
	if err := svc.Start(ctx); err != nil {
		return err
	}
	srv := &http.Server{
		Addr:              *addr,
		Handler:           server.New(server.Config{Svc: svc, Tokens: auth.NewIssuer(secret, *tokenTTL), Logger: log}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	log.Info("gateway serving", "addr", *addr, "store", st.Backend(), "graphiql", "http://"+displayAddr(*addr)+"/", "graphql", "/graphql")

	select {
	case err := <-errc:
		_ = svc.Close(context.Background())
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: draining requests and fan-out")
	sctx, cancel := context.WithTimeout(context.Background(), *drain)
	defer cancel()
	herr := srv.Shutdown(sctx)
	ferr := svc.Close(sctx)
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return errors.Join(herr, ferr)
}

func displayAddr(addr string) string {
	if len(addr) > 0 && addr[0] == ':' {
		return "localhost" + addr
	}
	return addr
}

func migrate(ctx context.Context, log *slog.Logger, args []string) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	var sf storeFlags
	sf.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	st, err := sf.openMigrated(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	log.Info("migrated", "store", st.Backend(), "namespace", tables.Namespace, "tables", len(tables.Specs()))
	return nil
}
