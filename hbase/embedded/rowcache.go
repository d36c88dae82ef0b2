package embedded

import (
	"encoding/binary"
	"sync"

	"github.com/hashicorp/golang-lru/v2/simplelru"
	"github.com/prometheus/client_golang/prometheus"
)

// RowCacheReads is the Prometheus counter
// gateway_row_cache_reads_total{result}: the rows GetMany answered from the
// row cache (result "hit") and from pebble (result "miss"), for every
// embedded store of the process that has a row cache. It is registered on
// the default registry when the package loads.
var RowCacheReads = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "gateway_row_cache_reads_total",
	Help: "Rows read by the embedded store's GetMany, by result: hit (from the row cache) or miss (from pebble).",
}, []string{"result"})

var (
	rowCacheHits   = RowCacheReads.WithLabelValues("hit")
	rowCacheMisses = RowCacheReads.WithLabelValues("miss")
)

func init() { prometheus.MustRegister(RowCacheReads) }

// rowCache is the store's row cache (RocksDB's row_cache): what GetMany
// returned for a row, by read shape, so that rows read again (a home
// timeline page's 50 posts and their authors) skip pebble's seeks. It holds
// results, never decides them: a hit answers exactly what a read of the
// store would (see GetMany).
//
// Exactness rests on two rules:
//   - Every write of a row invalidates it after its batch commits
//     (writer.commit): the row's entry goes and its shard's generation
//     moves on, under the shard's lock.
//   - A read fills the cache only if the shard's generation has not moved
//     since before its pebble iterator was opened (fill). A write that the
//     iterator did not see commits after the iterator opened, so its
//     invalidation comes after the read's generation was taken: either it
//     moved the generation before the fill (no fill) or it removes the
//     filled entry after it.
//
// Cells past their family's TTL are filtered again on every hit, with the
// clock of that read: a family's unexpired versions are always its newest
// ones, so the cached newest versions filtered at a later time are what a
// read at that time finds. Table ids are never reused and a table's
// families only ever grow (EnsureTables adds missing ones, empty, and
// clears the cache when it does), so a cached row never outlives the
// meaning of its rowkey prefix.
//
// Entries are plain byte strings (no pointers for the collector to trace);
// each of the rowCacheShards shards is an LRU list bounded in bytes.
type rowCache struct {
	shards [rowCacheShards]cacheShard
	budget int64 // bytes per shard
}

// rowCacheShards is the number of row cache shards (a power of two).
const rowCacheShards = 64

// defaultRowCacheSize is the row cache's size when Open is not given
// WithRowCacheSize.
const defaultRowCacheSize = 16 << 20

// rowCacheEntryOverhead approximates the bytes an entry costs beyond its
// key and cells: the LRU list element and map slot, the row and read
// headers.
const rowCacheEntryOverhead = 160

type cacheShard struct {
	mu    sync.Mutex
	gen   uint64 // moved by every invalidation (under mu, as everything here)
	lru   *simplelru.LRU[string, *cachedRow]
	bytes int64
	_     [40]byte // keeps shards on their own cache lines
}

// cachedRow is one row's cached reads, one per read shape.
type cachedRow struct {
	reads []cachedRead
	size  int64
}

// cachedRead is the result of one read shape of a row: shape is
// readShape's encoding, cells the visible cells in the order the read
// returned them, each as uvarint length + family name, uvarint length +
// qualifier (unescaped), uvarint length + value, then the timestamp as 8
// bytes big-endian.
type cachedRead struct {
	shape string
	cells string
}

// newRowCache returns a row cache of about size bytes; nil (no cache) when
// size is not positive.
func newRowCache(size int64) *rowCache {
	if size <= 0 {
		return nil
	}
	c := &rowCache{budget: max(size/rowCacheShards, 1)}
	for i := range c.shards {
		sh := &c.shards[i]
		// Bounded by bytes, not entries: the entry limit only stops a
		// shard of tiny rows from growing a huge map. Every way out of
		// the list (Remove, RemoveOldest, Purge, the entry limit) comes
		// through the callback, which keeps bytes exact.
		sh.lru, _ = simplelru.NewLRU(1<<20, func(_ string, row *cachedRow) { sh.bytes -= row.size })
	}
	return c
}

// shard returns the shard of a row, given its lock stripe.
func (c *rowCache) shard(stripe int) *cacheShard {
	return &c.shards[stripe&(rowCacheShards-1)]
}

// appendReadShape appends the encoding of a read shape: how many versions
// per column (at least 1), then the names of the families read, each
// followed by 0x00 (none: every family). fams is sorted (resolveFamilies).
func appendReadShape(dst []byte, fams []*embFamily, maxVersions int) []byte {
	dst = binary.AppendUvarint(dst, uint64(max(1, maxVersions)))
	for _, f := range fams {
		dst = append(append(dst, f.name...), 0)
	}
	return dst
}

// lookup returns the cached cells of row rp (its encoded row prefix) read
// with shape, and the shard's generation (for fill) when there are none.
func (c *rowCache) lookup(stripe int, rp, shape []byte) (cells string, hit bool, gen uint64) {
	sh := c.shard(stripe)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if row, ok := sh.lru.Get(string(rp)); ok {
		for _, r := range row.reads {
			if r.shape == string(shape) {
				return r.cells, true, 0
			}
		}
	}
	return "", false, sh.gen
}

// fill caches cells as row rp's read of shape, unless the shard's
// generation has moved from gen (a write of one of its rows may have
// committed since the read's iterator opened) or the entry would take more
// than an eighth of the shard.
func (c *rowCache) fill(stripe int, rp, shape []byte, cells []byte, gen uint64) {
	size := int64(len(rp)+len(shape)+len(cells)) + rowCacheEntryOverhead
	if size > c.budget/8 {
		return
	}
	sh := c.shard(stripe)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.gen != gen {
		return
	}
	read := cachedRead{shape: string(shape), cells: string(cells)}
	if row, ok := sh.lru.Get(string(rp)); ok {
		for _, r := range row.reads {
			if r.shape == read.shape {
				return // filled by a concurrent read since lookup
			}
		}
		size -= int64(len(rp)) // the row's key is counted once
		row.reads = append(row.reads, read)
		row.size += size
	} else {
		sh.lru.Add(string(rp), &cachedRow{reads: []cachedRead{read}, size: size})
	}
	sh.bytes += size
	for sh.bytes > c.budget {
		if _, _, ok := sh.lru.RemoveOldest(); !ok {
			break
		}
	}
}

// mayFit reports whether the cells b.recs[start:end] of row rp, once
// encoded (appendCachedCells), may be small enough for fill to cache: a
// row too big for it (a user's packed lists) is not encoded at all.
func (c *rowCache) mayFit(rp []byte, b *rowBuilder, start, end int) bool {
	size := int64(len(rp)) + rowCacheEntryOverhead
	for _, r := range b.recs[start:end] {
		size += int64(r.qEnd - r.qStart + len(r.value(b.vals)))
	}
	return size <= c.budget/8
}

// invalidate removes row rp (of lock stripe stripe) and moves its shard's
// generation on. A writer calls it after its batch commits.
func (c *rowCache) invalidate(stripe int, rp []byte) {
	sh := c.shard(stripe)
	sh.mu.Lock()
	sh.gen++
	sh.lru.Remove(string(rp))
	sh.mu.Unlock()
}

// clear empties the cache (a table was dropped: its rows only take room).
func (c *rowCache) clear() {
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.Lock()
		sh.gen++
		sh.lru.Purge()
		sh.mu.Unlock()
	}
}

// appendCachedCells appends the encoding of cells (b.recs[start:end]) to dst.
func appendCachedCells(dst []byte, b *rowBuilder, start, end int) []byte {
	for _, r := range b.recs[start:end] {
		dst = binary.AppendUvarint(dst, uint64(len(r.fam.name)))
		dst = append(dst, r.fam.name...)
		dst = binary.AppendUvarint(dst, uint64(r.qEnd-r.qStart))
		dst = append(dst, b.quals[r.qStart:r.qEnd]...)
		v := r.value(b.vals)
		dst = binary.AppendUvarint(dst, uint64(len(v)))
		dst = append(dst, v...)
		dst = binary.BigEndian.AppendUint64(dst, uint64(r.ts))
	}
	return dst
}

// addCachedCells adds the cells encoded in cells (appendCachedCells) to b,
// except those past their family's TTL at now (ms). It reports false when
// the encoding does not parse or names a family t does not have, which
// cannot happen unless the cache is broken.
func addCachedCells(b *rowBuilder, t *embTable, cells string, now int64) bool {
	next := func() (string, bool) {
		// At most 10 bytes converted: on the stack.
		n, w := binary.Uvarint([]byte(cells[:min(len(cells), binary.MaxVarintLen64)]))
		if w <= 0 || uint64(len(cells)-w) < n {
			return "", false
		}
		s := cells[w : w+int(n)]
		cells = cells[w+int(n):]
		return s, true
	}
	for len(cells) > 0 {
		name, ok1 := next()
		qual, ok2 := next()
		val, ok3 := next()
		if !ok1 || !ok2 || !ok3 || len(cells) < 8 {
			return false
		}
		ts := int64(binary.BigEndian.Uint64([]byte(cells[:8])))
		cells = cells[8:]
		fam := t.families[name]
		if fam == nil {
			return false
		}
		if !fam.expired(ts, now) {
			addCell(b, fam, qual, val, ts)
		}
	}
	return true
}
