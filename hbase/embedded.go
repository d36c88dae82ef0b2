package hbase

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"math/bits"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// The embedded backend keeps HBase's data model in one cockroachdb/pebble
// key-value store. Every pebble key starts with a one-byte key space:
//
//	0x00  metadata
//	      0x00 "format"          -> layout version ("1")
//	      0x00 "next-table-id"   -> next table id, 4 bytes big-endian
//	      0x00 "ns/" <namespace> -> {} (the namespace exists)
//	      0x00 "table/" <ns:qualifier> -> JSON embTableMeta (id, families)
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
// Semantics follow HBase 2.x (the conformance suite checks both backends):
// a Put at timestamp 0 writes at the current time (ms); a column keeps its
// family's MaxVersions newest versions (older ones are deleted when the column
// is written, and a version that would not be kept is not written); cells
// older than the family's TTL (ts < now - TTL) are invisible and dropped when
// their column is next written; a Delete removes the versions not newer than
// now. Known differences from HBase: deletes remove cells physically instead
// of writing delete markers, so a Put after a Delete is visible even at an
// older timestamp (HBase masks it until a major compaction); and TTLs keep
// millisecond precision (HBase's are whole seconds).

// EmbeddedOption configures NewEmbedded.
type EmbeddedOption func(*embeddedConfig)

type embeddedConfig struct {
	noSync       bool
	cacheSize    int64
	memTableSize uint64
	now          func() time.Time
}

// WithNoSync makes the embedded store acknowledge writes before they are
// synced to disk, for bulk imports: a crash may lose the writes made since
// the last Sync (see Syncer) or Close; the store stays consistent (each
// batch is applied entirely or not at all). Without it every Put, PutMany,
// Delete, DeleteMany, CheckAndPut, CheckAndDelete and Increment is synced
// to disk before it returns.
func WithNoSync() EmbeddedOption {
	return func(c *embeddedConfig) { c.noSync = true }
}

// WithCacheSize sets the size of the embedded store's block cache, in bytes
// (default 128 MiB). Values <= 0 keep the default.
func WithCacheSize(bytes int64) EmbeddedOption {
	return func(c *embeddedConfig) {
		if bytes > 0 {
			c.cacheSize = bytes
		}
	}
}

// withClock replaces the store's clock (tests of TTLs and default timestamps).
func withClock(now func() time.Time) EmbeddedOption {
	return func(c *embeddedConfig) { c.now = now }
}

// Syncer is implemented by stores that can buffer acknowledged writes (the
// embedded store opened WithNoSync). Sync makes every write acknowledged so
// far durable; it is a cheap no-op when nothing is buffered.
type Syncer interface {
	Sync() error
}

// errEmbeddedClosed is returned by every call on a closed embedded store.
var errEmbeddedClosed = errors.New("hbase: embedded store is closed")

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
}

type embFamilyMeta struct {
	Name        string `json:"name"`
	MaxVersions int    `json:"max_versions"`
	TTLMillis   int64  `json:"ttl_ms,omitempty"`
	Bloom       string `json:"bloom,omitempty"`
	InMemory    bool   `json:"in_memory,omitempty"`
}

// embTable is a table as the store uses it; immutable once published.
type embTable struct {
	name     string
	id       uint32
	prefix   []byte // keyspaceData + id, big-endian: 5 bytes
	families map[string]*embFamily
}

type embFamily struct {
	name        string
	maxVersions int
	ttlMillis   int64 // 0: cells never expire
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
	return nil, fmt.Errorf("%w: %q in table %s", ErrFamilyNotFound, name, t.name)
}

// memTableStopWrites is pebble's MemTableStopWritesThreshold for the store.
const memTableStopWrites = 4

// rowLockStripes is the number of row lock stripes (a power of two).
const rowLockStripes = 4096

// embeddedStore is the embedded Store.
type embeddedStore struct {
	db        *pebble.DB
	writeOpts *pebble.WriteOptions
	noSync    bool
	now       func() time.Time

	tables   atomic.Pointer[map[string]*embTable]
	ensureMu sync.Mutex // serializes EnsureTables

	seed  maphash.Seed
	locks [rowLockStripes]sync.Mutex

	gateMu   sync.Mutex
	closed   bool
	inflight int
	drained  chan struct{}
}

var _ Store = (*embeddedStore)(nil)
var _ Syncer = (*embeddedStore)(nil)

// NewEmbedded opens (creating it when needed) an embedded store in directory
// dir, or an in-memory one, for tests, when dir is "". The store keeps HBase's
// semantics (see the Store interface and this file's layout comment); tables
// must be created with EnsureTables before use. It fails when dir cannot be
// opened, is locked by another process, or holds a store of another layout.
// The returned Store also implements Syncer. Close releases it (and the
// directory's lock); it must not be called from a Scan callback.
func NewEmbedded(dir string, opts ...EmbeddedOption) (Store, error) {
	cfg := embeddedConfig{
		cacheSize:    128 << 20,
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
	s := &embeddedStore{
		db:        db,
		writeOpts: pebble.Sync,
		noSync:    cfg.noSync,
		now:       cfg.now,
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

func (quietLogger) Infof(string, ...interface{}) {}
func (quietLogger) Errorf(format string, args ...interface{}) {
	pebble.DefaultLogger.Errorf(format, args...)
}
func (quietLogger) Fatalf(format string, args ...interface{}) {
	pebble.DefaultLogger.Fatalf(format, args...)
}

// loadMeta checks the layout version (writing it into a new store) and loads
// the table catalog.
func (s *embeddedStore) loadMeta() error {
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
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: metaTablePfx, UpperBound: PrefixEnd(metaTablePfx)})
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
	t := &embTable{name: name, id: m.ID, families: make(map[string]*embFamily, len(m.Families))}
	t.prefix = binary.BigEndian.AppendUint32([]byte{keyspaceData}, m.ID)
	for _, f := range m.Families {
		t.families[f.Name] = &embFamily{name: f.Name, maxVersions: max(1, f.MaxVersions), ttlMillis: f.TTLMillis}
	}
	return t
}

// enter registers a call in flight; it fails once the store is closed.
func (s *embeddedStore) enter() error {
	s.gateMu.Lock()
	defer s.gateMu.Unlock()
	if s.closed {
		return errEmbeddedClosed
	}
	s.inflight++
	return nil
}

func (s *embeddedStore) leave() {
	s.gateMu.Lock()
	s.inflight--
	if s.closed && s.inflight == 0 {
		close(s.drained)
	}
	s.gateMu.Unlock()
}

// begin is enter plus a check of ctx, for the start of every call.
func (s *embeddedStore) begin(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.enter()
}

func (s *embeddedStore) nowMillis() int64 { return s.now().UnixMilli() }

// table returns the named table ("ns:qualifier") or ErrTableNotFound.
func (s *embeddedStore) table(name string) (*embTable, error) {
	if t := (*s.tables.Load())[name]; t != nil {
		return t, nil
	}
	return nil, fmt.Errorf("%w: %s", ErrTableNotFound, name)
}

// Backend returns BackendEmbedded.
func (s *embeddedStore) Backend() string { return BackendEmbedded }

var (
	namespaceRE = regexp.MustCompile(`^[A-Za-z0-9_]+$`)
	qualifierRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)
)

// validFamilyName follows HBase: non-empty, printable, no ':' and not
// starting with '.'. (It also keeps 0x00 out of family names, which the key
// decoding relies on.)
func validFamilyName(name string) bool {
	if name == "" || strings.HasPrefix(name, ".") || strings.ContainsRune(name, ':') {
		return false
	}
	for i := 0; i < len(name); i++ {
		if name[i] < 0x20 || name[i] == 0x7f {
			return false
		}
	}
	return true
}

// EnsureTables creates namespace and the tables that do not exist yet,
// recording their specs (families, MaxVersions, TTL) in the store. Existing
// tables are left as they are. SplitKeys, Bloom and InMemory are recorded but
// have no effect.
func (s *embeddedStore) EnsureTables(ctx context.Context, namespace string, tables []TableSpec) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	defer s.leave()
	if !namespaceRE.MatchString(namespace) {
		return fmt.Errorf("hbase: invalid namespace name %q", namespace)
	}
	for _, ts := range tables {
		if !qualifierRE.MatchString(ts.Name) {
			return fmt.Errorf("hbase: invalid table name %q", ts.Name)
		}
		if len(ts.Families) == 0 {
			return fmt.Errorf("hbase: table %s:%s has no column family", namespace, ts.Name)
		}
		seen := map[string]bool{}
		for _, f := range ts.Families {
			if !validFamilyName(f.Name) {
				return fmt.Errorf("hbase: table %s:%s: invalid family name %q", namespace, ts.Name, f.Name)
			}
			if seen[f.Name] {
				return fmt.Errorf("hbase: table %s:%s: family %q given twice", namespace, ts.Name, f.Name)
			}
			seen[f.Name] = true
			if f.MaxVersions < 0 || f.TTL < 0 {
				return fmt.Errorf("hbase: table %s:%s: family %q: negative MaxVersions or TTL", namespace, ts.Name, f.Name)
			}
		}
	}

	s.ensureMu.Lock()
	defer s.ensureMu.Unlock()
	cur := *s.tables.Load()
	next := make(map[string]*embTable, len(cur)+len(tables))
	for k, v := range cur {
		next[k] = v
	}
	b := s.db.NewBatch()
	defer func() { _ = b.Close() }()
	nsKey := append(bytes.Clone(metaNamespacePfx), namespace...)
	if _, closer, err := s.db.Get(nsKey); errors.Is(err, pebble.ErrNotFound) {
		if err := b.Set(nsKey, []byte("{}"), nil); err != nil {
			return err
		}
	} else if err != nil {
		return err
	} else {
		_ = closer.Close()
	}
	nextID, err := s.nextTableID()
	if err != nil {
		return err
	}
	for _, ts := range tables {
		name := namespace + ":" + ts.Name
		if next[name] != nil {
			continue
		}
		m := &embTableMeta{ID: nextID}
		nextID++
		for _, f := range ts.Families {
			m.Families = append(m.Families, embFamilyMeta{
				Name:        f.Name,
				MaxVersions: max(1, f.MaxVersions),
				TTLMillis:   f.TTL.Milliseconds(),
				Bloom:       f.Bloom,
				InMemory:    f.InMemory,
			})
		}
		sort.Slice(m.Families, func(i, j int) bool { return m.Families[i].Name < m.Families[j].Name })
		enc, err := json.Marshal(m)
		if err != nil {
			return err
		}
		if err := b.Set(append(bytes.Clone(metaTablePfx), name...), enc, nil); err != nil {
			return err
		}
		next[name] = newEmbTable(name, m)
	}
	if b.Empty() {
		return nil
	}
	if err := b.Set(metaNextTableIDKey, binary.BigEndian.AppendUint32(nil, nextID), nil); err != nil {
		return err
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return err
	}
	s.tables.Store(&next)
	return nil
}

// nextTableID reads the next unused table id (ids start at 1).
func (s *embeddedStore) nextTableID() (uint32, error) {
	v, closer, err := s.db.Get(metaNextTableIDKey)
	if errors.Is(err, pebble.ErrNotFound) {
		return 1, nil
	}
	if err != nil {
		return 0, err
	}
	defer func() { _ = closer.Close() }()
	if len(v) != 4 {
		return 0, errors.New("hbase: embedded store: bad next-table-id record")
	}
	return binary.BigEndian.Uint32(v), nil
}

// Ping reports whether the store is open and readable.
func (s *embeddedStore) Ping(ctx context.Context) error {
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
func (s *embeddedStore) Sync() error {
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
func (s *embeddedStore) Close() error {
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
func (s *embeddedStore) stripe(rowPrefix []byte) int {
	return int(maphash.Bytes(s.seed, rowPrefix) & (rowLockStripes - 1))
}

// lockSet is a set of lock stripes, locked and unlocked in ascending order
// (so that concurrent multi-row writers cannot deadlock).
type lockSet [rowLockStripes / 64]uint64

func (l *lockSet) add(stripe int) { l[stripe/64] |= 1 << (stripe % 64) }

func (s *embeddedStore) lockAll(l *lockSet) {
	for w, word := range l {
		for word != 0 {
			i := bits.TrailingZeros64(word)
			word &^= 1 << i
			s.locks[w*64+i].Lock()
		}
	}
}

func (s *embeddedStore) unlockAll(l *lockSet) {
	for w, word := range l {
		for word != 0 {
			i := bits.TrailingZeros64(word)
			word &^= 1 << i
			s.locks[w*64+i].Unlock()
		}
	}
}
