// Package embedded is the embedded backend of package hbase: HBase's data
// model (sorted rowkeys, column families, qualifiers, timestamped cell
// versions, row-level atomicity, TTLs) in one in-process cockroachdb/pebble
// key-value store, on disk or in memory. Open returns a *Store, which
// implements hbase.Store and hbase.Admin; the conformance suite
// (hbase/hbasetest) holds it to the same contract as the real HBase.
//
// Every pebble key starts with a one-byte key space:
//
//	0x00  metadata
//	      0x00 "format"          -> layout version ("1")
//	      0x00 "next-table-id"   -> next table id, 4 bytes big-endian
//	      0x00 "ns/" <namespace> -> {} (the namespace exists)
//	      0x00 "table/" <ns:qualifier> -> JSON embTableMeta (id, families, disabled)
//	0x01  cells
//	      0x01 <table id: 4 bytes BE>
//	           <rowkey, escaped> 0x00 0x01
//	           <family, escaped> 0x00 0x01
//	           <qualifier, escaped> 0x00 0x01
//	           <MaxUint64 - timestamp: 8 bytes BE>
//	      -> the cell's value, as is
//
// "Escaped" means every 0x00 byte is written as 0x00 0xff, and 0x00 0x01
// ends the component. The encoding preserves raw byte order and keeps
// components that are prefixes of each other apart: the terminator 0x00 0x01
// sorts below both 0x00 0xff and any byte >= 0x01, so rowkey "a" (61 00 01)
// sorts before "a\x00" (61 00 ff 00 01) and "ab" (61 62 00 01), exactly as
// HBase orders rowkeys. Within a row, cells therefore iterate by family, then
// qualifier, then timestamp newest first: HBase's cell order.
//
// A table's rows occupy [0x01 <id>, 0x01 <id+1>). A scan of rowkeys
// [start, stop) is the pebble range [0x01 <id> esc(start), 0x01 <id> esc(stop))
// (escaped without terminator), which holds exactly the rows in the range.
//
// The pebble Comparer is bytewise, with a Split that ends a cell key's
// "prefix" after the rowkey's terminator: pebble's bloom filters are then
// per-row (like HBase's ROW blooms), and point reads of a row use
// SeekPrefixGE so that sstables without the row are skipped.
//
// Semantics follow HBase 2.x with NEW_VERSION_BEHAVIOR on every family,
// as hbase/remote creates them (the conformance suite checks both backends):
// a Put at timestamp 0 writes at the current time (ms); a column keeps its
// family's MaxVersions newest versions (older ones are deleted when the column
// is written, and a version that would not be kept is not written); cells
// older than the family's TTL (ts < now - TTL) are invisible and dropped when
// their column is next written; a Delete removes the versions not newer than
// now, or the one version it names (hbase.Delete.Timestamp). Deletes remove
// cells physically, which is exactly what HBase shows with
// NEW_VERSION_BEHAVIOR: a Put after a Delete is visible whatever its
// timestamp, and a deleted or pushed-out version never reappears. Known
// differences from HBase: TTLs keep millisecond precision (HBase's are whole
// seconds); and data calls on a disabled table fail at once (HBase's retry
// until their deadline).
//
// DeleteTable and DropNamespace remove a table's metadata and, with one
// range deletion, its cells; table ids are never reused, so a table created
// again under the same name starts empty.
package embedded

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/weibohbase/gateway/hbase"
)

// Option configures Open.
type Option func(*config)

type config struct {
	noSync       bool
	cacheSize    int64
	rowCacheSize int64
	memTableSize uint64
	now          func() time.Time
}

// WithNoSync makes the embedded store acknowledge writes before they are
// synced to disk, for bulk imports: a crash may lose the writes made since
// the last Sync or Close; the store stays consistent (each
// batch is applied entirely or not at all). Without it every Put, PutMany,
// Delete, DeleteMany, CheckAndPut, CheckAndDelete and Increment is synced
// to disk before it returns.
func WithNoSync() Option {
	return func(c *config) { c.noSync = true }
}

// WithCacheSize sets the size of the embedded store's block cache, in bytes
// (default 128 MiB). Values <= 0 keep the default.
func WithCacheSize(bytes int64) Option {
	return func(c *config) {
		if bytes > 0 {
			c.cacheSize = bytes
		}
	}
}

// WithRowCacheSize sets the size of the embedded store's row cache, in
// bytes (default 16 MiB; 0 keeps the default, negative turns it off): the
// cells of rows read by GetMany, served again without touching pebble
// until a write of the row. It lives in the Go heap, beside the block
// cache (WithCacheSize) that pebble keeps outside it. See rowCache.
func WithRowCacheSize(bytes int64) Option {
	return func(c *config) {
		if bytes != 0 {
			c.rowCacheSize = bytes
		}
	}
}

// withClock replaces the store's clock (tests of TTLs and default timestamps).
func withClock(now func() time.Time) Option {
	return func(c *config) { c.now = now }
}

var (
	// errEmbeddedClosed is returned by every call on a closed embedded store.
	errEmbeddedClosed = errors.New("hbase: embedded store is closed")
	// errTableDisabled is returned by data calls on a disabled table.
	errTableDisabled = errors.New("hbase: table is disabled")
)

// Metadata keys.
const (
	keyspaceMeta byte = 0x00
	keyspaceData byte = 0x01

	embeddedFormat = "1"
)

var (
	metaFormatKey      = []byte("\x00format")
	metaNextTableIDKey = []byte("\x00next-table-id")
	metaNamespacePfx   = []byte("\x00ns/")
	metaTablePfx       = []byte("\x00table/")
)

// embTableMeta is the persistent description of one table.
type embTableMeta struct {
	ID       uint32          `json:"id"`
	Families []embFamilyMeta `json:"families"`
	Disabled bool            `json:"disabled,omitempty"` // by DisableTable
}

type embFamilyMeta struct {
	Name        string `json:"name"`
	MaxVersions int    `json:"max_versions"`
	TTLMillis   int64  `json:"ttl_ms,omitempty"`
	Bloom       string `json:"bloom,omitempty"`
	InMemory    bool   `json:"in_memory,omitempty"`
	Encoding    string `json:"encoding,omitempty"`
	BlockSize   int    `json:"block_size,omitempty"`
	// MOB and MOBThreshold are recorded only: the embedded store keeps a
	// MOB family's values as any other.
	MOB          bool `json:"mob,omitempty"`
	MOBThreshold int  `json:"mob_threshold,omitempty"`
}

// embTable is a table as the store uses it; immutable once published.
type embTable struct {
	name     string
	id       uint32
	prefix   []byte // keyspaceData + id, big-endian: 5 bytes
	families map[string]*embFamily
	meta     *embTableMeta // as stored
}

type embFamily struct {
	name        string
	maxVersions int
	ttlMillis   int64 // 0: cells never expire
	// only is the list of this one family (shared, read-only): what
	// resolveFamilies returns for a read of it alone.
	only []*embFamily
}

// expired reports whether a cell of the family written at ts (ms) is past its
// TTL at now (ms). HBase: a cell is expired when ts < now - ttl.
func (f *embFamily) expired(ts, now int64) bool {
	return f.ttlMillis > 0 && ts < now-f.ttlMillis
}

func (t *embTable) family(name string) (*embFamily, error) {
	if f := t.families[name]; f != nil {
		return f, nil
	}
	return nil, fmt.Errorf("%w: %q in table %s", hbase.ErrFamilyNotFound, name, t.name)
}

// memTableStopWrites is pebble's MemTableStopWritesThreshold for the store.
const memTableStopWrites = 4

// rowLockStripes is the number of row lock stripes (a power of two).
const rowLockStripes = 4096

// Store is an open embedded store; it implements hbase.Store and
// hbase.Admin, and is safe for concurrent use.
type Store struct {
	db        *pebble.DB
	writeOpts *pebble.WriteOptions
	noSync    bool
	inMemory  bool // opened with dir "": no checkpoints
	now       func() time.Time

	tables   atomic.Pointer[map[string]*embTable]
	ensureMu sync.Mutex // serializes the admin calls (admin.go)

	seed  maphash.Seed
	locks [rowLockStripes]sync.Mutex
	rows  *rowCache // nil: no row cache

	gateMu   sync.Mutex
	closed   bool
	inflight int
	drained  chan struct{}
}

var _ hbase.StoreAdmin = (*Store)(nil)

// Open opens (creating it when needed) an embedded store in directory dir,
// or an in-memory one, for tests, when dir is "". The store keeps HBase's
// semantics (see hbase.Store and the package comment); tables must be created
// with EnsureTables before use. It fails when dir cannot be opened, is locked
// by another process, or holds a store of another layout. Close releases the
// store (and the directory's lock); it must not be called from a Scan
// callback.
func Open(dir string, opts ...Option) (*Store, error) {
	cfg := config{
		cacheSize:    128 << 20,
		rowCacheSize: defaultRowCacheSize,
		memTableSize: 64 << 20,
		now:          time.Now,
	}
	for _, o := range opts {
		o(&cfg)
	}
	// Pebble reserves its memtables' memory in the block cache: size the
	// cache so that cfg.cacheSize remains for blocks.
	cache := pebble.NewCache(cfg.cacheSize + int64(cfg.memTableSize)*(memTableStopWrites+1))
	defer cache.Unref()
	po := &pebble.Options{
		Comparer:                    embeddedComparer,
		FormatMajorVersion:          pebble.FormatNewest,
		Cache:                       cache,
		MemTableSize:                cfg.memTableSize,
		MemTableStopWritesThreshold: memTableStopWrites,
		L0CompactionThreshold:       4,
		L0StopWritesThreshold:       24,
		Logger:                      quietLogger{},
	}
	procs := runtime.GOMAXPROCS(0)
	po.CompactionConcurrencyRange = func() (int, int) { return 1, max(1, procs) }
	for i := range po.Levels {
		po.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
		po.Levels[i].FilterType = pebble.TableFilter
	}
	if dir == "" {
		po.FS = vfs.NewMem()
	}
	db, err := pebble.Open(dir, po)
	if err != nil {
		return nil, fmt.Errorf("hbase: open embedded store %q: %w", dir, err)
	}
	s := &Store{
		db:        db,
		writeOpts: pebble.Sync,
		noSync:    cfg.noSync,
		inMemory:  dir == "",
		now:       cfg.now,
		rows:      newRowCache(cfg.rowCacheSize),
		seed:      maphash.MakeSeed(),
		drained:   make(chan struct{}),
	}
	if cfg.noSync {
		s.writeOpts = pebble.NoSync
	}
	if err := s.loadMeta(); err != nil {
		_ = db.Close()
		return nil, err
	}
	return s, nil
}

// quietLogger drops pebble's informational messages and keeps its errors.
type quietLogger struct{}

func (quietLogger) Infof(string, ...any) {}
func (quietLogger) Errorf(format string, args ...any) {
	pebble.DefaultLogger.Errorf(format, args...)
}
func (quietLogger) Fatalf(format string, args ...any) {
	pebble.DefaultLogger.Fatalf(format, args...)
}

// loadMeta checks the layout version (writing it into a new store) and loads
// the table catalog.
func (s *Store) loadMeta() error {
	v, closer, err := s.db.Get(metaFormatKey)
	switch {
	case errors.Is(err, pebble.ErrNotFound):
		it, err := s.db.NewIter(nil)
		if err != nil {
			return err
		}
		nonEmpty := it.First()
		if err := it.Close(); err != nil {
			return err
		}
		if nonEmpty {
			return errors.New("hbase: embedded store: directory holds a pebble store of another layout")
		}
		if err := s.db.Set(metaFormatKey, []byte(embeddedFormat), pebble.Sync); err != nil {
			return err
		}
	case err != nil:
		return fmt.Errorf("hbase: embedded store: read layout version: %w", err)
	default:
		got := string(v)
		_ = closer.Close()
		if got != embeddedFormat {
			return fmt.Errorf("hbase: embedded store: unknown layout version %q", got)
		}
	}

	tables := map[string]*embTable{}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: metaTablePfx, UpperBound: hbase.PrefixEnd(metaTablePfx)})
	if err != nil {
		return err
	}
	for valid := it.First(); valid; valid = it.Next() {
		name := string(it.Key()[len(metaTablePfx):])
		val, err := it.ValueAndErr()
		if err != nil {
			_ = it.Close()
			return err
		}
		var m embTableMeta
		if err := json.Unmarshal(val, &m); err != nil {
			_ = it.Close()
			return fmt.Errorf("hbase: embedded store: table %s: bad metadata: %w", name, err)
		}
		tables[name] = newEmbTable(name, &m)
	}
	if err := it.Close(); err != nil {
		return err
	}
	s.tables.Store(&tables)
	return nil
}

func newEmbTable(name string, m *embTableMeta) *embTable {
	t := &embTable{name: name, id: m.ID, families: make(map[string]*embFamily, len(m.Families)), meta: m}
	t.prefix = binary.BigEndian.AppendUint32([]byte{keyspaceData}, m.ID)
	for _, f := range m.Families {
		fam := &embFamily{name: f.Name, maxVersions: max(1, f.MaxVersions), ttlMillis: f.TTLMillis}
		fam.only = []*embFamily{fam}
		t.families[f.Name] = fam
	}
	return t
}

// enter registers a call in flight; it fails once the store is closed.
func (s *Store) enter() error {
	s.gateMu.Lock()
	defer s.gateMu.Unlock()
	if s.closed {
		return errEmbeddedClosed
	}
	s.inflight++
	return nil
}

func (s *Store) leave() {
	s.gateMu.Lock()
	s.inflight--
	if s.closed && s.inflight == 0 {
		close(s.drained)
	}
	s.gateMu.Unlock()
}

// begin is enter plus a check of ctx, for the start of every call.
func (s *Store) begin(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.enter()
}

func (s *Store) nowMillis() int64 { return s.now().UnixMilli() }

// table returns the named table ("ns:qualifier") for a data call:
// hbase.ErrTableNotFound when there is none, errTableDisabled when it is
// disabled.
func (s *Store) table(name string) (*embTable, error) {
	t := (*s.tables.Load())[name]
	switch {
	case t == nil:
		return nil, fmt.Errorf("%w: %s", hbase.ErrTableNotFound, name)
	case t.meta.Disabled:
		return nil, fmt.Errorf("%w: %s", errTableDisabled, name)
	}
	return t, nil
}

// Backend returns hbase.BackendEmbedded.
func (s *Store) Backend() string { return hbase.BackendEmbedded }

// Ping reports whether the store is open and readable.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	defer s.leave()
	_, closer, err := s.db.Get(metaFormatKey)
	if err != nil {
		return fmt.Errorf("hbase: embedded store: ping: %w", err)
	}
	return closer.Close()
}

// Sync makes every acknowledged write durable (see WithNoSync).
func (s *Store) Sync() error {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	if !s.noSync {
		return nil
	}
	return s.db.LogData(nil, pebble.Sync)
}

// Close waits for the calls in flight, syncs and closes the store. Calls
// made after Close fail; a second Close returns nil.
func (s *Store) Close() error {
	s.gateMu.Lock()
	if s.closed {
		s.gateMu.Unlock()
		return nil
	}
	s.closed = true
	if s.inflight == 0 {
		close(s.drained)
	}
	s.gateMu.Unlock()
	<-s.drained
	var err error
	if s.noSync {
		err = s.db.LogData(nil, pebble.Sync)
	}
	return errors.Join(err, s.db.Close())
}

// stripe returns the lock stripe of a row, given its encoded row prefix
// (which includes the table id).
func (s *Store) stripe(rowPrefix []byte) int {
	return int(maphash.Bytes(s.seed, rowPrefix) & (rowLockStripes - 1))
}

// lockSet is a set of lock stripes, locked and unlocked in ascending order
// (so that concurrent multi-row writers cannot deadlock).
type lockSet [rowLockStripes / 64]uint64

func (l *lockSet) add(stripe int) { l[stripe/64] |= 1 << (stripe % 64) }

func (s *Store) lockAll(l *lockSet) {
	for w, word := range l {
		for word != 0 {
			i := bits.TrailingZeros64(word)
			word &^= 1 << i
			s.locks[w*64+i].Lock()
		}
	}
}

func (s *Store) unlockAll(l *lockSet) {
	for w, word := range l {
		for word != 0 {
			i := bits.TrailingZeros64(word)
			word &^= 1 << i
			s.locks[w*64+i].Unlock()
		}
	}
}
