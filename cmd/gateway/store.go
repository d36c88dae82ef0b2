package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/hbase/embedded"
	"github.com/weibohbase/gateway/hbase/remote"
	"github.com/weibohbase/gateway/weibo/org/role"
	"github.com/weibohbase/gateway/weibo/tables"
)

// storeFlags are the flags every subcommand shares to open the store.
type storeFlags struct {
	kind        string
	data        string
	zk          string
	ns          string
	callTimeout time.Duration
}

func (f *storeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.kind, "store", env("GATEWAY_STORE", hbase.BackendEmbedded), "store backend: embedded or hbase (env GATEWAY_STORE)")
	fs.StringVar(&f.data, "data", env("GATEWAY_DATA", ".data/embedded"), "data directory of the embedded store (env GATEWAY_DATA)")
	fs.StringVar(&f.ns, "namespace", env("GATEWAY_NAMESPACE", tables.Namespace), "HBase namespace of the tables, for several independent copies on one cluster (env GATEWAY_NAMESPACE)")
	fs.StringVar(&f.zk, "hbase-zk", env("GATEWAY_HBASE_ZK", "127.0.0.1:2181"), "ZooKeeper quorum of the HBase cluster, HOST:PORT[,HOST:PORT...] (env GATEWAY_HBASE_ZK)")
	fs.DurationVar(&f.callTimeout, "hbase-call-timeout", envDuration("GATEWAY_HBASE_CALL_TIMEOUT", remote.DefaultCallTimeout),
		"timeout of every HBase call, moved or splitting regions retried within it; 0 for none (env GATEWAY_HBASE_CALL_TIMEOUT)")
}

// openMigrated opens the store, creates the weibo tables that are
// missing (tables.Migrate) and migrates the data of older versions
// (role.MigratePermissions); the caller closes the store.
func (f *storeFlags) openMigrated(ctx context.Context) (hbase.StoreAdmin, error) {
	st, err := f.open(ctx, false)
	if err != nil {
		return nil, err
	}
	if err := tables.Migrate(ctx, st); err != nil {
		st.Close()
		return nil, err
	}
	// Data of older versions: the admin role gains ADMINISTRATOR.
	if _, err := role.MigratePermissions(ctx, st); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// open opens the store, its tables mapped to --namespace and its calls
// counted in gateway_store_calls_total. bulk asks the embedded store to skip
// per-write fsync (imports; it syncs on Close).
func (f *storeFlags) open(ctx context.Context, bulk bool) (hbase.StoreAdmin, error) {
	var (
		st  hbase.StoreAdmin
		err error
	)
	switch f.kind {
	case hbase.BackendEmbedded:
		var opts []embedded.Option
		if bulk {
			opts = append(opts, embedded.WithNoSync())
		}
		st, err = embedded.Open(f.data, opts...)
	case hbase.BackendHBase:
		cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		st, err = remote.Open(cctx, f.zk, remote.WithCallTimeout(f.callTimeout))
	default:
		return nil, fmt.Errorf("unknown --store %q: want embedded or hbase", f.kind)
	}
	if err != nil {
		return nil, fmt.Errorf("open %s store: %w", f.kind, err)
	}
	return hbase.Instrument(hbase.WithNamespace(st, tables.Namespace, f.ns)), nil
}
