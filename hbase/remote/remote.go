// Package remote is the HBase backend of package hbase: an hbase.Store and
// hbase.Admin on a real HBase 2.x cluster, through github.com/tsuna/gohbase.
// Open connects with the cluster's ZooKeeper quorum; functional options
// (WithCallTimeout, WithAdminTimeout, ...) tune timeouts, batching and
// logging.
//
// Data calls (read.go, write.go) go through a gohbase client; the calls
// gohbase has no method for (CheckAndDelete) are sent as custom hrpc calls.
// Every data call has its own timeout (WithCallTimeout), inside which gohbase
// retries a region that moves, splits or closes, and its backoff; a call that
// runs out of it fails with hbase.ErrUnavailable. After an outage Probe
// replaces the gohbase client with a fresh one (see Probe). Table
// administration (admin.go) goes through gohbase's admin client to the active
// master, with master RPCs built here, since gohbase's own admin calls know
// only the "default" namespace. Server errors are mapped to the hbase
// sentinels and trimmed of Java stack traces (errors.go).
package remote

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"

	"github.com/weibohbase/gateway/hbase"
)

// Defaults of the backend; see the Option constructors.
const (
	// DefaultCallTimeout bounds every data call (Get, Put, a batch, one
	// round trip of a Scan…), whatever the caller's deadline: gohbase
	// retries a moved, splitting or closing region until it ends. A few
	// seconds: a region move or split takes one to five on a busy cluster.
	DefaultCallTimeout = 5 * time.Second
	// DefaultRegionReadTimeout is how long gohbase waits for a region
	// server's reply before it drops the connection and retries elsewhere
	// (gohbase's own default is 30 s): a region server that stops answering
	// without closing its connections is given up after this long.
	DefaultRegionReadTimeout = 10 * time.Second
	// DefaultAdminTimeout bounds an admin call (EnsureTables,
	// DisableTable, DeleteTable, DropNamespace) whose context has no deadline.
	DefaultAdminTimeout = 2 * time.Minute
)

// Option configures Open.
type Option func(*config)

type config struct {
	callTimeout   time.Duration
	adminTimeout  time.Duration
	flushInterval time.Duration
	zkTimeout     time.Duration
	lookupTimeout time.Duration
	readTimeout   time.Duration
	effectiveUser string
	logger        *slog.Logger
	skipPing      bool
}

// WithCallTimeout sets the timeout of every data call (default
// DefaultCallTimeout), applied whether or not the caller's context has a
// deadline (the earlier of the two wins). For a Scan it bounds each wait
// for the next row, not the whole scan. Calls whose context shares one call
// timeout (hbase.ShareCallTimeout: the calls of one GraphQL request) are
// also bounded by what they have not spent of it yet. A call that runs out of it fails
// with an error wrapping hbase.ErrUnavailable. d <= 0 applies none: calls
// then wait as long as their context allows.
func WithCallTimeout(d time.Duration) Option {
	return func(c *config) { c.callTimeout = d }
}

// WithAdminTimeout sets the timeout applied to admin calls (EnsureTables,
// DisableTable, DeleteTable, DropNamespace) whose context has no deadline
// (default DefaultAdminTimeout); d <= 0 applies none.
func WithAdminTimeout(d time.Duration) Option {
	return func(c *config) { c.adminTimeout = d }
}

// WithFlushInterval sets how long gohbase waits to gather concurrent
// calls to one region server into a multi request before sending it. The
// default, 0, sends at once (a GetMany/PutMany/DeleteMany is batched anyway);
// gohbase's own default is 20 ms, which trades latency for fewer round trips.
func WithFlushInterval(d time.Duration) Option {
	return func(c *config) { c.flushInterval = d }
}

// WithZooKeeperTimeout sets the ZooKeeper session timeout gohbase uses to
// locate hbase:meta and the master (gohbase's default: 30 s).
func WithZooKeeperTimeout(d time.Duration) Option {
	return func(c *config) { c.zkTimeout = d }
}

// WithRegionLookupTimeout bounds one region lookup in hbase:meta or
// ZooKeeper, and one connection attempt to a region server, before gohbase
// backs off and retries (default: the call timeout, at least 1 s; gohbase's
// own default is 30 s).
func WithRegionLookupTimeout(d time.Duration) Option {
	return func(c *config) { c.lookupTimeout = d }
}

// WithRegionReadTimeout sets how long gohbase waits for a region server's
// reply before it drops the connection and retries (default
// DefaultRegionReadTimeout).
func WithRegionReadTimeout(d time.Duration) Option {
	return func(c *config) { c.readTimeout = d }
}

// WithEffectiveUser sets the user name sent to HBase (gohbase's default:
// "root"); HBase uses it only when authorization is enabled.
func WithEffectiveUser(user string) Option {
	return func(c *config) { c.effectiveUser = user }
}

// WithLogger sets the logger gohbase writes to, and the backend's own
// notices (a column family altered by EnsureTables, at level WARN). The
// default is slog.Default() limited to warnings and errors: gohbase logs
// every region it locates at level INFO.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}

// minLevelHandler drops records below min.
type minLevelHandler struct {
	slog.Handler
	min slog.Level
}

// Enabled reports whether l is at least min and the wrapped handler takes it.
func (h minLevelHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

// WithAttrs keeps the level limit on the derived handler.
func (h minLevelHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return minLevelHandler{h.Handler.WithAttrs(attrs), h.min}
}

// WithGroup keeps the level limit on the derived handler.
func (h minLevelHandler) WithGroup(name string) slog.Handler {
	return minLevelHandler{h.Handler.WithGroup(name), h.min}
}

// WithNoPing makes Open return without checking that HBase answers;
// the first call then finds out.
func WithNoPing() Option {
	return func(c *config) { c.skipPing = true }
}

// Store is an open connection to one HBase cluster; it implements
// hbase.Store and hbase.Admin, and is safe for concurrent use.
type Store struct {
	cfg      config
	zk       string
	cur      atomic.Pointer[conn] // the data client; Probe replaces it
	adminRPC gohbase.RPCClient    // the shared master client of zk (see sharedAdmin)

	mu     sync.Mutex // guards closed and the replacement of cur
	closed bool
}

// conn is one gohbase data client.
type conn struct {
	client gohbase.Client
	rpc    gohbase.RPCClient // client, for calls gohbase has no method for
}

// newConn makes a gohbase data client of zk; it connects on first use.
func newConn(zk string, cfg config) (*conn, error) {
	client := gohbase.NewClient(zk, cfg.gohbaseOptions()...)
	rpc, ok := client.(gohbase.RPCClient)
	if !ok {
		client.Close()
		return nil, fmt.Errorf("hbase: gohbase client %T has no SendRPC", client)
	}
	return &conn{client: client, rpc: rpc}, nil
}

// conn returns the current data client.
func (s *Store) conn() *conn { return s.cur.Load() }

var _ hbase.StoreAdmin = (*Store)(nil)

// Open returns the Store of the HBase cluster whose ZooKeeper quorum is
// zkQuorum ("host:port[,host:port…]", e.g. "127.0.0.1:2181"). Unless
// WithNoPing is given it checks, within ctx, that HBase answers (see
// Ping) and returns that error if not. ctx is used only for that check: the
// store lives until Close. Close it to release its connections.
func Open(ctx context.Context, zkQuorum string, opts ...Option) (*Store, error) {
	if strings.TrimSpace(zkQuorum) == "" {
		return nil, errors.New("hbase: empty ZooKeeper quorum")
	}
	cfg := config{
		callTimeout:  DefaultCallTimeout,
		adminTimeout: DefaultAdminTimeout,
		readTimeout:  DefaultRegionReadTimeout,
	}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.lookupTimeout <= 0 && cfg.callTimeout > 0 {
		cfg.lookupTimeout = max(cfg.callTimeout, time.Second)
	}
	c, err := newConn(zkQuorum, cfg)
	if err != nil {
		return nil, err
	}
	admin, err := sharedAdmin(zkQuorum, cfg)
	if err != nil {
		c.client.Close()
		return nil, err
	}
	s := &Store{cfg: cfg, zk: zkQuorum, adminRPC: admin}
	s.cur.Store(c)
	if !cfg.skipPing {
		if err := s.Ping(ctx); err != nil {
			c.client.Close()
			return nil, fmt.Errorf("hbase: no answer from the HBase of ZooKeeper %s: %w", zkQuorum, err)
		}
	}
	return s, nil
}

func (c config) gohbaseOptions() []gohbase.Option {
	opts := []gohbase.Option{gohbase.FlushInterval(c.flushInterval)}
	if c.zkTimeout > 0 {
		opts = append(opts, gohbase.ZookeeperTimeout(c.zkTimeout))
	}
	if c.lookupTimeout > 0 {
		opts = append(opts, gohbase.RegionLookupTimeout(c.lookupTimeout))
	}
	if c.readTimeout > 0 {
		opts = append(opts, gohbase.RegionReadTimeout(c.readTimeout))
	}
	if c.effectiveUser != "" {
		opts = append(opts, gohbase.EffectiveUser(c.effectiveUser))
	}
	return append(opts, gohbase.Logger(c.log()))
}

// log returns the logger of gohbase and of the backend's own notices
// (WithLogger, or slog.Default() limited to warnings and errors).
func (c config) log() *slog.Logger {
	if c.logger != nil {
		return c.logger
	}
	return slog.New(minLevelHandler{slog.Default().Handler(), slog.LevelWarn})
}

// Backend returns hbase.BackendHBase.
func (s *Store) Backend() string { return hbase.BackendHBase }

// Close closes the connections to the region servers. The master connection
// is shared by every store of the same quorum and stays open (gohbase's admin
// client cannot be closed). Close is idempotent; calls after it fail.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		s.conn().client.Close()
	}
	return nil
}

// callCtx bounds a data call by the call timeout, and by what ctx's calls
// have not spent yet of the call timeout they share (hbase.ShareCallTimeout);
// errCallTimeout is the context's cause when that is what ended it.
func (s *Store) callCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.cfg.callTimeout <= 0 {
		return context.WithCancel(ctx)
	}
	deadline := time.Now().Add(s.cfg.callTimeout)
	shared, end, ok := hbase.StartCall(ctx, s.cfg.callTimeout)
	if !ok {
		return context.WithDeadlineCause(ctx, deadline, errCallTimeout)
	}
	if shared.Before(deadline) {
		deadline = shared
	}
	ctx, cancel := context.WithDeadlineCause(ctx, deadline, errCallTimeout)
	return ctx, func() { cancel(); end() }
}

func withDefaultTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok || d <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}

// Ping reads a (missing) row of hbase:meta: it succeeds when ZooKeeper, and
// the region server holding hbase:meta, answer, within the call timeout.
func (s *Store) Ping(ctx context.Context) error { return s.ping(ctx, s.conn()) }

func (s *Store) ping(ctx context.Context, c *conn) error {
	ctx, cancel := s.callCtx(ctx)
	defer cancel()
	get, err := hrpc.NewGet(ctx, []byte("hbase:meta"), []byte("gateway,ping,"), hrpc.SkipBatch())
	if err != nil {
		return err
	}
	get.ExistsOnly()
	_, err = c.client.Get(get)
	return callError(ctx, "ping", "hbase:meta", err, get)
}

// Probe checks, after an outage, whether HBase answers again, with a new
// gohbase client: when it pings within the call timeout the new client
// replaces the store's and the old one is closed (its calls still waiting
// fail with hbase.ErrUnavailable); otherwise the new client is dropped and
// Probe returns Ping's error. A fresh client matters because gohbase backs
// off re-locating each region it lost — by up to half a minute after a long
// outage — and has no way to cut that short: a new client locates every
// region at its first use. hbase.Breaker calls Probe when half-open.
func (s *Store) Probe(ctx context.Context) error {
	c, err := newConn(s.zk, s.cfg)
	if err != nil {
		return err
	}
	if err := s.ping(ctx, c); err != nil {
		c.client.Close()
		return err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		c.client.Close()
		return mapError("probe", "hbase:meta", gohbase.ErrClientClosed)
	}
	old := s.cur.Swap(c)
	s.mu.Unlock()
	old.client.Close()
	return nil
}
