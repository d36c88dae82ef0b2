// Command floor is the home page's physical floor for `make bench
// BENCH=floor`: a bare Go HTTP handler that serves what the gateway serves
// for bench/k6/home.js — the same store calls through the store API and
// the same JSON bytes — without GraphQL (no parse, validation or
// execution), dataloaders, a post cache or middleware. What the gateway
// spends above it per page is what those layers cost.
//
//	floor -data .data/bench-full -addr 127.0.0.1:18480
//	floor -store hbase -hbase-zk 127.0.0.1:2181 -namespace bench_full -addr 127.0.0.1:18480
//
// It serves POST /graphql (any query text: the answer is always the home
// page, of variables.first edges, default 50), GET /readyz and GET
// /metrics (Go's process metrics and gateway_store_calls_total, as the
// gateway names them, so scripts/bench.sh measures both alike), and Go's
// pprof handlers on -pprof-addr. Tokens are the gateway's (auth.Issuer,
// GATEWAY_JWT_SECRET), checked for signature and expiry only: the gateway
// reads the viewer's row once per token and recheck window, nearly never
// within a run. The collector runs with the gateway's settings (GOGC=1600,
// a 128 MiB soft limit) unless GOGC or GOMEMLIMIT is set.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/weibohbase/gateway/auth"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/hbase/embedded"
	"github.com/weibohbase/gateway/hbase/remote"
	"github.com/weibohbase/gateway/weibo/tables"
)

func main() {
	store := flag.String("store", hbase.BackendEmbedded, "embedded or hbase")
	data := flag.String("data", ".data/bench-full", "the embedded store's directory")
	zk := flag.String("hbase-zk", "127.0.0.1:2181", "HBase's ZooKeeper quorum")
	ns := flag.String("namespace", tables.Namespace, "the HBase namespace of the tables")
	addr := flag.String("addr", "127.0.0.1:18480", "listen address")
	pprofAddr := flag.String("pprof-addr", "", "if set, serve net/http/pprof on this address")
	flag.Parse()
	secret := os.Getenv("GATEWAY_JWT_SECRET")
	if secret == "" {
		log.Fatal("floor: GATEWAY_JWT_SECRET is unset: the floor checks the gateway's tokens")
	}
	if _, ok := os.LookupEnv("GOGC"); !ok {
		debug.SetGCPercent(1600)
	}
	if _, ok := os.LookupEnv("GOMEMLIMIT"); !ok {
		debug.SetMemoryLimit(128 << 20)
	}

	st, err := open(*store, *data, *zk, *ns)
	if err != nil {
		log.Fatalf("floor: %v", err)
	}
	defer st.Close()

	mux := http.NewServeMux()
	mux.Handle("POST /graphql", newPageHandler(st, auth.NewIssuer([]byte(secret), 24*time.Hour)))
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.Handle("GET /metrics", promhttp.Handler())
	srv := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if *pprofAddr != "" {
		pm := http.NewServeMux()
		pm.HandleFunc("/debug/pprof/", pprof.Index)
		pm.HandleFunc("/debug/pprof/profile", pprof.Profile)
		go func() { log.Print(http.ListenAndServe(*pprofAddr, pm)) }()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	log.Printf("floor: serving the home page of the %s store on http://%s/graphql", *store, *addr)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatalf("floor: %v", err)
	}
}

// open opens the store as gateway serve does: its tables mapped to
// namespace and its calls counted in gateway_store_calls_total.
func open(kind, data, zk, ns string) (hbase.StoreAdmin, error) {
	var (
		st  hbase.StoreAdmin
		err error
	)
	switch kind {
	case hbase.BackendEmbedded:
		st, err = embedded.Open(data)
	case hbase.BackendHBase:
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		st, err = remote.Open(ctx, zk)
	default:
		return nil, fmt.Errorf("unknown -store %q: want embedded or hbase", kind)
	}
	if err != nil {
		return nil, fmt.Errorf("open %s store: %w", kind, err)
	}
	return hbase.Instrument(hbase.WithNamespace(st, tables.Namespace, ns)), nil
}
