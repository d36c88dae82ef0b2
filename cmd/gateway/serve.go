package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"time"

	"github.com/weibohbase/gateway/auth"
	"github.com/weibohbase/gateway/bus/natsbus"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/server"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/feed"
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
	tokenTTL := fs.Duration("token-ttl", 24*time.Hour, "lifetime of issued tokens (at most 8760h, 365 days)")
	pprofAddr := fs.String("pprof-addr", env("GATEWAY_PPROF_ADDR", ""), "if set, serve Go's net/http/pprof profiles at http://ADDR/debug/pprof/ on this separate address, e.g. 127.0.0.1:6060 (env GATEWAY_PPROF_ADDR; off by default: profiles reveal internals, keep it on loopback)")
	drain := fs.Duration("shutdown-timeout", 30*time.Second, "how long shutdown waits for requests and fan-out to finish")
	corsOrigins := fs.String("cors-origins", os.Getenv("GATEWAY_CORS_ORIGINS"),
		"comma-separated origins of browser pages on other origins that may call the gateway over HTTP (CORS, credentials allowed) and WebSocket, "+
			"e.g. 'http://localhost:*,https://app.example.com' (one * per origin: any characters); default: none, only same-origin pages (env GATEWAY_CORS_ORIGINS)")
	otlp := fs.String("otlp-endpoint", "", "export OpenTelemetry traces over OTLP/HTTP to this collector, e.g. http://localhost:4318 (default: the standard OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT; off when none is set)")
	natsListen := fs.String("nats-listen", env("GATEWAY_NATS_LISTEN", ""), "HOST:PORT on which the embedded NATS server of the live-event bus accepts other gateway instances (env GATEWAY_NATS_LISTEN; default: no port, this instance alone)")
	natsURL := fs.String("nats-url", env("GATEWAY_NATS_URL", ""), "use this NATS for the live-event bus instead of an embedded one: nats://HOST:PORT, comma-separated for a cluster (env GATEWAY_NATS_URL)")
	lf := registerLimitFlags(fs)
	rg := repairGraceFlag(fs)
	ft := fanoutThresholdFlag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := lf.err(); err != nil {
		return err
	}
	if err := cf.err(); err != nil {
		return err
	}
	if *tokenTTL <= 0 || *tokenTTL > tables.MaxTokenTTL {
		// The records of logged-out tokens expire with them (docs/schema.md,
		// "Tokens that end"), designed for tokens of at most a year.
		return fmt.Errorf("--token-ttl %v: must be positive and at most %v", *tokenTTL, tables.MaxTokenTTL)
	}
	origins, err := server.ParseCORSOrigins(*corsOrigins)
	if err != nil {
		return fmt.Errorf("--cors-origins: %w", err)
	}

	st, err := sf.open(ctx, false)
	if err != nil {
		return err
	}
	opened := st // before the decorators below, for the admin socket
	tuneGC(log, st.Backend() != hbase.BackendHBase)
	st = cf.guard(st, log)
	tp, err := startTracing(ctx, *otlp)
	if err != nil {
		st.Close()
		return err
	}
	if tp != nil {
		defer func() { // flush the spans not sent yet
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			_ = tp.Shutdown(sctx)
		}()
		st = hbase.Trace(st, tp)
		log.Info("exporting OpenTelemetry traces over OTLP/HTTP")
	}
	defer st.Close()
	if st.Backend() == hbase.BackendEmbedded && sf.data != "" {
		// `gateway backup` asks for checkpoints here: pebble locks the directory.
		if stopSock, err := serveAdminSocket(ctx, log, sf.data, opened); err != nil {
			log.Warn("no admin socket: `gateway backup` cannot reach this server", "err", err)
		} else {
			defer stopSock()
		}
	}
	if *migrateFirst || st.Backend() == hbase.BackendEmbedded {
		if err := tables.Migrate(ctx, st); err != nil {
			return err
		}
	}
	if *demo {
		if err := seedDemo(ctx, log, st, *ft); err != nil {
			return err
		}
		if err := seedRepostDemo(ctx, log, st); err != nil {
			return err
		}
		if err := seedCommentDemo(ctx, log, st); err != nil {
			return err
		}
	}

	secret, err := jwtSecret(log, os.Getenv("GATEWAY_JWT_SECRET"), sf)
	if err != nil {
		return err
	}
	eventBus, err := natsbus.Open(natsbus.Config{URL: *natsURL, Listen: *natsListen, Logger: log})
	if err != nil {
		return err
	}
	defer eventBus.Close()
	busAt := eventBus.ServerURL()
	if *natsURL == "" {
		busAt = "embedded"
		if u := eventBus.ClientURL(); u != "" {
			busAt = "embedded, listening at " + u
		}
	}
	log.Info("live-event bus", "nats", busAt)
	log.Info("post cache", "posts", cf.postCacheSize(st.Backend()), "ttl", cf.postTTL)
	svc := domain.New(st, append(cf.serviceOptions(st.Backend()), domain.WithLogger(log), domain.WithRepairGrace(*rg), domain.WithFanoutThreshold(*ft), domain.WithBus(eventBus))...)
	if err := svc.Start(ctx); err != nil {
		return migrateHint(err)
	}
	srv := &http.Server{
		Addr:              *addr,
		Handler:           server.New(lf.config(server.Config{Svc: svc, Tokens: auth.NewIssuer(secret, *tokenTTL), Logger: log, CORSOrigins: origins, TracerProvider: tracerProvider(tp)})),
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    64 << 10,
		IdleTimeout:       2 * time.Minute,
	}
	if *pprofAddr != "" {
		go servePprof(log, *pprofAddr)
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

// servePprof serves net/http/pprof's handlers at addr until the process
// ends; a failure to listen is logged, not fatal.
func servePprof(log *slog.Logger, addr string) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	log.Info("pprof serving", "addr", addr, "path", "/debug/pprof/")
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if err := srv.ListenAndServe(); err != nil {
		log.Error("pprof server stopped", "err", err)
	}
}

// repairGraceFlag registers --repair-grace (env GATEWAY_REPAIR_GRACE),
// which serve and fsck share.
func repairGraceFlag(fs *flag.FlagSet) *time.Duration {
	return fs.Duration("repair-grace", envDuration("GATEWAY_REPAIR_GRACE", counted.DefaultRepairGrace),
		"how old an unfinished write's marker must be before the repairer takes the write for dead; keep it well above the store's worst latency, the same on every gateway (env GATEWAY_REPAIR_GRACE)")
}

// fanoutThresholdFlag registers --fanout-threshold (env
// GATEWAY_FANOUT_THRESHOLD), which serve and seed share.
func fanoutThresholdFlag(fs *flag.FlagSet) *int {
	return fs.Int("fanout-threshold", envInt("GATEWAY_FANOUT_THRESHOLD", feed.DefaultFanoutThreshold),
		"hybrid fan-out: an author with at least this many fans is large — their posts are not pushed into the fans' inboxes but merged into home timelines at read time; 0 or less makes no author large (env GATEWAY_FANOUT_THRESHOLD)")
}

// jwtSecretFile is the file in the embedded store's data directory that
// keeps the generated JWT secret.
const jwtSecretFile = "jwt-secret"

// jwtSecret returns the HMAC secret of the bearer tokens: configured (env
// GATEWAY_JWT_SECRET) if set; else, on the embedded store with a data
// directory, the one kept in <data>/jwt-secret (64 hex digits, mode 0600),
// generated on the first start, so that tokens outlive a restart; else (the
// in-memory embedded store, or HBase, where gateways must share one
// configured secret) a random per-process secret, with a warning.
func jwtSecret(log *slog.Logger, configured string, sf storeFlags) ([]byte, error) {
	if configured != "" {
		return []byte(configured), nil
	}
	if sf.kind != hbase.BackendEmbedded || sf.data == "" {
		log.Warn("GATEWAY_JWT_SECRET is unset and the store has no data directory to keep one: using a random per-process secret; tokens stop working when the process restarts",
			"store", sf.kind)
		return auth.RandomSecret(), nil
	}
	path := filepath.Join(sf.data, jwtSecretFile)
	if b, err := os.ReadFile(path); err == nil {
		secret := bytes.TrimSpace(b)
		if len(secret) < 32 {
			return nil, fmt.Errorf("JWT secret %s: %d bytes, want at least 32 (delete the file to have a new one generated; every token is then invalid)", path, len(secret))
		}
		if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
			log.Warn("the JWT secret file is readable by other users: chmod 600 it", "path", path, "mode", fi.Mode().Perm().String())
		}
		return secret, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read the JWT secret: %w", err)
	}
	secret := []byte(hex.EncodeToString(auth.RandomSecret()))
	if err := writeFileAtomic(path, append(secret, '\n'), 0o600); err != nil {
		return nil, fmt.Errorf("keep the JWT secret: %w", err)
	}
	log.Info("generated a JWT secret for this data directory (GATEWAY_JWT_SECRET is unset)", "path", path)
	return secret, nil
}

// writeFileAtomic writes data to path with mode perm through a temporary
// file renamed into place, so that a crash leaves either no file or all of it.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after a successful rename: nothing to remove
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
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
