// Package remote is the HBase backend of package hbase: an hbase.Store and
// hbase.Admin on a real HBase 2.x cluster, through github.com/tsuna/gohbase.
// Open connects with the cluster's ZooKeeper quorum; functional options
// (WithCallTimeout, WithAdminTimeout, ...) tune timeouts, batching and
// logging.
//
// Data calls (this file) go through a gohbase client; the calls gohbase has
// no method for (CheckAndDelete) are sent as custom hrpc calls. Every data
// call has its own timeout (WithCallTimeout), inside which gohbase retries
// a region that moves, splits or closes, and its backoff; a call that runs
// out of it fails with hbase.ErrUnavailable. After an outage Probe replaces
// the gohbase client with a fresh one (see Probe). Table
// administration (admin.go) goes through gohbase's admin client to the
// active master, with master RPCs built here, since gohbase's own admin calls
// know only the "default" namespace. Server errors are mapped to the hbase
// sentinels and trimmed of Java stack traces (errors.go).
package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/filter"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/proto"

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

// --- reads ---------------------------------------------------------------------

func (s *Store) newGet(ctx context.Context, g *hbase.Get, single bool) (*hrpc.Get, error) {
	if g == nil {
		return nil, errors.New("hbase: nil Get")
	}
	var opts []func(hrpc.Call) error
	if single {
		opts = append(opts, hrpc.SkipBatch())
	}
	if len(g.Families) > 0 {
		fams := make(map[string][]string, len(g.Families))
		for _, f := range g.Families {
			fams[f] = nil
		}
		opts = append(opts, hrpc.Families(fams))
	}
	if g.MaxVersions > 1 {
		opts = append(opts, hrpc.MaxVersions(uint32(g.MaxVersions)))
	}
	return hrpc.NewGet(ctx, []byte(g.Table), g.Row, opts...)
}

// Get reads one row; see hbase.Store.
func (s *Store) Get(ctx context.Context, g *hbase.Get) (*hbase.Result, error) {
	ctx, cancel := s.callCtx(ctx)
	defer cancel()
	get, err := s.newGet(ctx, g, true)
	if err != nil {
		return nil, err
	}
	res, err := s.conn().client.Get(get)
	if err != nil {
		return nil, callError(ctx, "get", g.Table, err, get)
	}
	var b resultBuilder
	return b.fromLocal(g.Row, res.Cells), nil
}

// GetMany reads rows with one gohbase SendBatch per table (gohbase batches
// only calls of one table); the batches of different tables run
// concurrently, so the call costs one round trip per region server. Results
// are in the order of gets; missing rows give Results without cells.
func (s *Store) GetMany(ctx context.Context, gets []*hbase.Get) ([]*hbase.Result, error) {
	if len(gets) == 0 {
		return nil, nil
	}
	ctx, cancel := s.callCtx(ctx)
	defer cancel()
	calls := make([]hrpc.Call, len(gets))
	for i, g := range gets {
		get, err := s.newGet(ctx, g, false)
		if err != nil {
			return nil, fmt.Errorf("get %d of %d: %w", i+1, len(gets), err)
		}
		calls[i] = get
	}
	res := s.sendBatch(ctx, calls)
	out := make([]*hbase.Result, len(gets))
	var b resultBuilder
	for i, r := range res {
		if r.Error != nil {
			return nil, batchError(ctx, "get", i, len(gets), gets[i].Table, r.Error, calls)
		}
		gr, ok := r.Msg.(*pb.GetResponse)
		if !ok {
			return nil, fmt.Errorf("hbase: get %d of %d: unexpected response %T", i+1, len(gets), r.Msg)
		}
		cells := gr.GetResult().GetCell()
		out[i] = b.result(gets[i].Row, len(cells), func(j int) *pb.Cell { return cells[j] })
	}
	return out, nil
}

// Scan streams the rows of s's range to fn; see hbase.Store. The scanner is closed
// (on the server too) when the scan stops early. A reversed scan is HBase's
// (hrpc.Reversed), with the range's ends adjusted to HBase's (start row
// inclusive at the top, stop row exclusive at the bottom). The call timeout
// bounds each wait for the next row (time spent in fn does not count), so a
// long scan runs as long as rows keep coming.
func (s *Store) Scan(ctx context.Context, sc *hbase.Scan, fn func(*hbase.Result) error) error {
	if sc == nil {
		return errors.New("hbase: nil Scan")
	}
	start, stop := hbase.ScanRange(sc)
	if sc.Reversed && stop == nil {
		return hbase.ErrUnboundedReverse
	}
	if len(start) > 0 && len(stop) > 0 && bytes.Compare(start, stop) >= 0 {
		return nil // empty range
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var idle *time.Timer
	if d := s.cfg.callTimeout; d > 0 {
		idle = time.AfterFunc(d, func() { cancel(errCallTimeout) })
		defer idle.Stop()
		if shared, end, ok := hbase.StartCall(ctx, d); ok {
			defer end()
			var stop context.CancelFunc
			ctx, stop = context.WithDeadlineCause(ctx, shared, errCallTimeout)
			defer stop()
		}
	}
	var opts []func(hrpc.Call) error
	if len(sc.Families) > 0 {
		fams := make(map[string][]string, len(sc.Families))
		for _, f := range sc.Families {
			fams[f] = nil
		}
		opts = append(opts, hrpc.Families(fams))
	}
	if sc.Limit > 0 && sc.Limit < 10000 {
		// Rows fetched per round trip: no more than the caller wants.
		opts = append(opts, hrpc.NumberOfRows(uint32(sc.Limit)))
		// Forward, a PageFilter ends each region's scan on the server
		// after Limit rows, so that the region scanner is closed with its
		// response: otherwise a scan stopped at Limit leaves it open and
		// gohbase closes it with one more RPC (a home timeline page's
		// inbox scan always stops there). No row is lost: every row the
		// server returns is in the range and counts toward Limit, and the
		// next region is read only when this one held fewer. Not reversed:
		// there the server also returns rows that Scan drops (the stop
		// row, see below), which the filter would count.
		if !sc.Reversed {
			opts = append(opts, hrpc.Filters(filter.NewPageFilter(int64(sc.Limit))))
		}
	}
	from, to := start, stop
	if sc.Reversed {
		// HBase's reversed scan runs from its start row (inclusive) down to
		// its stop row (exclusive). From stop: a row equal to it is skipped
		// below. Down to a row just below start: start without its last
		// byte, which is below start; the rows between are cut off below.
		from, to = stop, nil
		if len(start) > 0 {
			to = start[:len(start)-1]
		}
		opts = append(opts, hrpc.Reversed())
	}
	scan, err := hrpc.NewScanRange(ctx, []byte(sc.Table), from, to, opts...)
	if err != nil {
		return err
	}
	scanner := s.conn().client.Scan(scan)
	defer func() { _ = scanner.Close() }()
	n := 0
	var b resultBuilder
	for {
		r, err := scanner.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return callError(ctx, "scan", sc.Table, err)
		}
		if r == nil || len(r.Cells) == 0 {
			continue
		}
		if sc.Reversed {
			row := r.Cells[0].Row
			if bytes.Equal(row, stop) {
				continue
			}
			if bytes.Compare(row, start) < 0 {
				return nil // below the range: done
			}
		}
		if idle != nil && !idle.Stop() {
			return callError(ctx, "scan", sc.Table, context.Cause(ctx))
		}
		err = fn(b.fromLocal(r.Cells[0].Row, r.Cells))
		if idle != nil {
			idle.Reset(s.cfg.callTimeout)
		}
		if err != nil {
			if errors.Is(err, hbase.ErrStopScan) {
				return nil
			}
			return err
		}
		n++
		if sc.Limit > 0 && n >= sc.Limit {
			return nil
		}
	}
}

// maxNames bounds the family and qualifier strings a resultBuilder shares.
const maxNames = 64

// resultBuilder converts gohbase cells to Results for one call: each row's
// cells are allocated together, and the family and qualifier strings are
// shared between cells and rows (a page's rows hold the same few columns:
// one string each instead of two per cell). Values are gohbase's, not
// copied.
type resultBuilder struct {
	names map[string]string // up to maxNames
}

func (b *resultBuilder) name(n []byte) string {
	if s, ok := b.names[string(n)]; ok {
		return s
	}
	s := string(n)
	if b.names == nil {
		b.names = make(map[string]string, 8)
	}
	if len(b.names) < maxNames {
		b.names[s] = s
	}
	return s
}

// result returns the Result of row whose n cells cell returns, in HBase order.
func (b *resultBuilder) result(row []byte, n int, cell func(i int) *pb.Cell) *hbase.Result {
	cs := make([]hbase.Cell, n)
	ptrs := make([]*hbase.Cell, n)
	for i := range cs {
		c := cell(i)
		cs[i] = hbase.Cell{Family: b.name(c.Family), Qualifier: b.name(c.Qualifier), Value: c.Value, Timestamp: int64(c.GetTimestamp())}
		ptrs[i] = &cs[i]
	}
	r := &hbase.Result{Row: row, Cells: ptrs}
	hbase.SortCells(r.Cells)
	return r
}

// fromLocal is result of gohbase's hrpc cells (Get, Scan).
func (b *resultBuilder) fromLocal(row []byte, cells []*hrpc.Cell) *hbase.Result {
	return b.result(row, len(cells), func(i int) *pb.Cell { return (*pb.Cell)(cells[i]) })
}

// --- writes --------------------------------------------------------------------

func (s *Store) newPut(ctx context.Context, p *hbase.Put, single bool) (*hrpc.Mutate, error) {
	if p == nil {
		return nil, errors.New("hbase: nil Put")
	}
	var opts []func(hrpc.Call) error
	if single {
		opts = append(opts, hrpc.SkipBatch())
	}
	if p.Timestamp != 0 {
		opts = append(opts, hrpc.TimestampUint64(uint64(p.Timestamp)))
	}
	return hrpc.NewPut(ctx, []byte(p.Table), p.Row, p.Values, opts...)
}

// deleteValues converts Delete.Values to gohbase's shape. gohbase deletes a
// whole family only for a nil qualifier map (an empty non-nil one would
// delete nothing), so empty maps become nil.
func deleteValues(v hbase.Values) map[string]map[string][]byte {
	if v == nil {
		return nil
	}
	out := make(map[string]map[string][]byte, len(v))
	for fam, quals := range v {
		if len(quals) == 0 {
			out[fam] = nil
			continue
		}
		qs := make(map[string][]byte, len(quals))
		for q := range quals {
			qs[q] = nil
		}
		out[fam] = qs
	}
	return out
}

func (s *Store) newDelete(ctx context.Context, d *hbase.Delete, single bool) (*hrpc.Mutate, error) {
	if d == nil {
		return nil, errors.New("hbase: nil Delete")
	}
	var opts []func(hrpc.Call) error
	if single {
		opts = append(opts, hrpc.SkipBatch())
	}
	if d.Timestamp != 0 {
		if err := hbase.CheckDeleteVersion(d); err != nil {
			return nil, err
		}
		// One version: DELETE_ONE_VERSION of each named column,
		// DELETE_FAMILY_VERSION of each family mapped to an empty map.
		opts = append(opts, hrpc.TimestampUint64(uint64(d.Timestamp)), hrpc.DeleteOneVersion())
	}
	return hrpc.NewDel(ctx, []byte(d.Table), d.Row, deleteValues(d.Values), opts...)
}

// Put writes one row atomically; see hbase.Store.
func (s *Store) Put(ctx context.Context, p *hbase.Put) error {
	ctx, cancel := s.callCtx(ctx)
	defer cancel()
	m, err := s.newPut(ctx, p, true)
	if err != nil {
		return err
	}
	_, err = s.conn().client.Put(m)
	return callError(ctx, "put", p.Table, err, m)
}

// PutMany writes rows with one SendBatch per table, run concurrently; on
// error it returns the first failed put's error (others may have been written).
func (s *Store) PutMany(ctx context.Context, puts []*hbase.Put) error {
	if len(puts) == 0 {
		return nil
	}
	ctx, cancel := s.callCtx(ctx)
	defer cancel()
	calls := make([]hrpc.Call, len(puts))
	for i, p := range puts {
		m, err := s.newPut(ctx, p, false)
		if err != nil {
			return fmt.Errorf("put %d of %d: %w", i+1, len(puts), err)
		}
		calls[i] = m
	}
	for i, r := range s.sendBatch(ctx, calls) {
		if r.Error != nil {
			return batchError(ctx, "put", i, len(puts), puts[i].Table, r.Error, calls)
		}
	}
	return nil
}

// Delete deletes from one row atomically; see hbase.Store and hbase.Delete.
func (s *Store) Delete(ctx context.Context, d *hbase.Delete) error {
	ctx, cancel := s.callCtx(ctx)
	defer cancel()
	m, err := s.newDelete(ctx, d, true)
	if err != nil {
		return err
	}
	_, err = s.conn().client.Delete(m)
	return callError(ctx, "delete", d.Table, err, m)
}

// DeleteMany deletes with one SendBatch per table, run concurrently; on error
// it returns the first failed delete's error.
func (s *Store) DeleteMany(ctx context.Context, dels []*hbase.Delete) error {
	if len(dels) == 0 {
		return nil
	}
	ctx, cancel := s.callCtx(ctx)
	defer cancel()
	calls := make([]hrpc.Call, len(dels))
	for i, d := range dels {
		m, err := s.newDelete(ctx, d, false)
		if err != nil {
			return fmt.Errorf("delete %d of %d: %w", i+1, len(dels), err)
		}
		calls[i] = m
	}
	for i, r := range s.sendBatch(ctx, calls) {
		if r.Error != nil {
			return batchError(ctx, "delete", i, len(dels), dels[i].Table, r.Error, calls)
		}
	}
	return nil
}

// sendBatch sends calls with one gohbase SendBatch per table (gohbase rejects
// mixed tables), concurrently, and returns the results in the order of calls.
func (s *Store) sendBatch(ctx context.Context, calls []hrpc.Call) []hrpc.RPCResult {
	type group struct {
		idx   []int
		calls []hrpc.Call
	}
	var order []string
	groups := map[string]*group{}
	for i, c := range calls {
		t := string(c.Table())
		g := groups[t]
		if g == nil {
			g = &group{}
			groups[t] = g
			order = append(order, t)
		}
		g.idx = append(g.idx, i)
		g.calls = append(g.calls, c)
	}
	client := s.conn().client
	if len(order) == 1 {
		res, _ := client.SendBatch(ctx, calls)
		return res
	}
	out := make([]hrpc.RPCResult, len(calls))
	var wg sync.WaitGroup
	for _, t := range order {
		g := groups[t]
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, _ := client.SendBatch(ctx, g.calls)
			for j, r := range res {
				out[g.idx[j]] = r
			}
		}()
	}
	wg.Wait()
	return out
}

// --- conditional writes and counters -------------------------------------------

// valueComparator is HBase's BinaryComparator on expected; for a nil (or
// empty) expected value HBase checks that the cell is absent (or empty).
func valueComparator(expected []byte) (*pb.Comparator, error) {
	return filter.NewBinaryComparator(filter.NewByteArrayComparable(expected)).ConstructPBComparator()
}

// CheckAndPut applies p if the newest family:qualifier of p's row equals
// expected; see hbase.Store. HBase treats expected nil as "absent or empty value".
func (s *Store) CheckAndPut(ctx context.Context, p *hbase.Put, family, qualifier string, expected []byte) (bool, error) {
	ctx, cancel := s.callCtx(ctx)
	defer cancel()
	m, err := s.newPut(ctx, p, true)
	if err != nil {
		return false, err
	}
	ok, err := s.conn().client.CheckAndPut(m, family, qualifier, expected)
	if err != nil {
		return false, callError(ctx, "check-and-put", p.Table, err, m)
	}
	return ok, nil
}

// checkAndDelete is the CheckAndDelete RPC gohbase lacks: a Delete mutation
// sent with a pb.Condition, as hrpc.CheckAndPut does for puts. It is not
// batchable (a MultiResponse has no "processed" flag) and sends no cellblocks.
type checkAndDelete struct {
	*hrpc.Mutate
	family, qualifier []byte
	comparator        *pb.Comparator
}

// ToProto returns the Delete's MutateRequest with the condition set.
func (c *checkAndDelete) ToProto() proto.Message {
	req := c.Mutate.ToProto().(*pb.MutateRequest)
	req.Condition = &pb.Condition{
		Row:         c.Key(),
		Family:      c.family,
		Qualifier:   c.qualifier,
		CompareType: pb.CompareType_EQUAL.Enum(),
		Comparator:  c.comparator,
	}
	return req
}

// CellBlocksEnabled is false: a conditional mutation travels as protobuf.
func (c *checkAndDelete) CellBlocksEnabled() bool { return false }

// CheckAndDelete applies d if the newest family:qualifier of d's row equals
// expected; see hbase.Store. HBase treats expected nil as "absent or empty value".
func (s *Store) CheckAndDelete(ctx context.Context, d *hbase.Delete, family, qualifier string, expected []byte) (bool, error) {
	ctx, cancel := s.callCtx(ctx)
	defer cancel()
	m, err := s.newDelete(ctx, d, true) // SkipBatch: sent alone, never in a multi
	if err != nil {
		return false, err
	}
	cmp, err := valueComparator(expected)
	if err != nil {
		return false, err
	}
	call := &checkAndDelete{Mutate: m, family: []byte(family), qualifier: []byte(qualifier), comparator: cmp}
	msg, err := s.conn().rpc.SendRPC(call)
	if err != nil {
		return false, callError(ctx, "check-and-delete", d.Table, err, m)
	}
	r, ok := msg.(*pb.MutateResponse)
	if !ok {
		return false, fmt.Errorf("hbase: check-and-delete %q: unexpected response %T", d.Table, msg)
	}
	if r.Processed == nil {
		return false, fmt.Errorf("hbase: check-and-delete %q: response without the processed flag", d.Table)
	}
	return r.GetProcessed(), nil
}

// Increment adds inc.Amount to an 8-byte big-endian counter and returns the
// new value; see hbase.Store. A cell that is not 8 bytes wide makes HBase fail the call.
func (s *Store) Increment(ctx context.Context, inc *hbase.Increment) (int64, error) {
	if inc == nil {
		return 0, errors.New("hbase: nil Increment")
	}
	ctx, cancel := s.callCtx(ctx)
	defer cancel()
	m, err := hrpc.NewIncSingle(ctx, []byte(inc.Table), inc.Row, inc.Family, inc.Qualifier, inc.Amount, hrpc.SkipBatch())
	if err != nil {
		return 0, err
	}
	v, err := s.conn().client.Increment(m)
	if err != nil {
		return 0, callError(ctx, "increment", inc.Table, err, m)
	}
	return v, nil
}
