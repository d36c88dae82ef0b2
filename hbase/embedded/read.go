package embedded

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/weibohbase/gateway/hbase"
)

// Reads of the embedded backend: Get, GetMany, Scan.

// cellRec is one cell collected by a rowBuilder; its qualifier and value
// live in the builder's arenas.
type cellRec struct {
	fam          *embFamily
	qStart, qEnd int
	vStart, vEnd int
	ext          []byte // the value, when a big one is held apart from the builder's values
	ts           int64
}

// bigValue is the size from which a cell's value is held apart (cellRec.ext):
// one allocation of its own rather than a growth, and copy, of the values of
// every cell a batch read so far.
const bigValue = 4 << 10

// value returns r's value, sliced from vals (the builder's values) or held
// apart.
func (r *cellRec) value(vals []byte) []byte {
	if r.ext != nil {
		return r.ext
	}
	return vals[r.vStart:r.vEnd]
}

// fill sets c to the cell r records, with qualifier qual (r's bytes, as a
// string the caller may share) and a value sliced from vals, the builder's
// values (capped, so appending to it never overwrites the next; an empty
// value is a non-nil empty slice).
func (r cellRec) fill(c *hbase.Cell, qual string, vals []byte) {
	c.Family = r.fam.name
	c.Qualifier = qual
	if r.ext != nil {
		c.Value = r.ext[:len(r.ext):len(r.ext)]
	} else if r.vEnd > r.vStart {
		c.Value = vals[r.vStart:r.vEnd:r.vEnd]
	} else {
		c.Value = []byte{}
	}
	c.Timestamp = r.ts
}

// rowBuilder collects the cells of one row with few allocations.
type rowBuilder struct {
	recs  []cellRec
	quals []byte
	vals  []byte
}

func (b *rowBuilder) reset() {
	b.recs = b.recs[:0]
	b.quals = b.quals[:0]
	b.vals = b.vals[:0]
}

func (b *rowBuilder) add(fam *embFamily, qual, val []byte, ts int64) { addCell(b, fam, qual, val, ts) }

// addCell adds a cell to b; its qualifier and value are bytes (from pebble)
// or strings (from the row cache).
func addCell[T string | []byte](b *rowBuilder, fam *embFamily, qual, val T, ts int64) {
	r := cellRec{fam: fam, ts: ts, qStart: len(b.quals), vStart: len(b.vals)}
	b.quals = append(b.quals, qual...)
	if len(val) >= bigValue {
		r.ext = append(make([]byte, 0, len(val)), val...)
	} else {
		b.vals = append(b.vals, val...)
	}
	r.qEnd, r.vEnd = len(b.quals), len(b.vals)
	b.recs = append(b.recs, r)
}

// scanArena hands out the Results of a Scan in chunks: the Result slots
// of up to scanArenaRows rows, Cell and *Cell slots of up to 4 cells a
// row, and a buffer of up to scanArenaBytes for their rowkeys and values,
// instead of six allocations per row. Each kind of chunk starts at an
// eighth of its size and doubles, so that a short scan allocates little. Everything it hands
// out is written once and never reused, so fn may keep a Result (a kept
// Result keeps its chunks, those of up to scanArenaRows rows, alive).
// Qualifier strings are shared with the previous row's when equal (the
// rows of a table mostly hold the same columns).
type scanArena struct {
	res   []hbase.Result
	cells []hbase.Cell
	ptrs  []*hbase.Cell
	buf   []byte
	quals []string // the qualifiers of the last row built, by cell index

	rowChunk, cellChunk, byteChunk int // the sizes of the last chunks allocated
}

const (
	scanArenaRows  = 64
	scanArenaBytes = 8 << 10
)

// grow returns the size of a chunk after one of size last (0: none yet):
// double, from an eighth of limit up to limit.
func grow(last, limit int) int { return min(max(2*last, limit/8), limit) }

// bytes returns a new capped slice of n bytes: from the current chunk,
// from a new chunk, or (n above a quarter of a chunk) allocated alone.
func (a *scanArena) bytes(n int) []byte {
	if cap(a.buf)-len(a.buf) < n {
		if n > scanArenaBytes/4 {
			return make([]byte, n)
		}
		a.byteChunk = grow(a.byteChunk, scanArenaBytes)
		a.buf = make([]byte, 0, max(n, a.byteChunk))
	}
	start := len(a.buf)
	a.buf = a.buf[:start+n]
	return a.buf[start : start+n : start+n]
}

// result builds the Result of the row whose escaped rowkey is rowSeg from
// the cells collected in b, copying everything out of b into a.
func (a *scanArena) result(rowSeg []byte, b *rowBuilder) *hbase.Result {
	if len(a.res) == 0 {
		a.rowChunk = grow(a.rowChunk, scanArenaRows)
		a.res = make([]hbase.Result, a.rowChunk)
	}
	res := &a.res[0]
	a.res = a.res[1:]
	n := len(b.recs)
	if len(a.cells) < n {
		a.cellChunk = grow(a.cellChunk, 4*scanArenaRows)
		a.cells = make([]hbase.Cell, max(n, a.cellChunk))
		a.ptrs = make([]*hbase.Cell, len(a.cells))
	}
	cells, ptrs := a.cells[:n:n], a.ptrs[:n:n]
	a.cells, a.ptrs = a.cells[n:], a.ptrs[n:]

	mem := a.bytes(len(rowSeg) + len(b.vals))
	row := appendUnescaped(mem[:0], rowSeg)
	res.Row = row[:len(row):len(row)]
	vals := mem[len(row):]
	copy(vals, b.vals)
	for len(a.quals) < n {
		a.quals = append(a.quals, "")
	}
	for i, r := range b.recs {
		q := b.quals[r.qStart:r.qEnd]
		if a.quals[i] != string(q) {
			a.quals[i] = string(q)
		}
		c := &cells[i]
		r.fill(c, a.quals[i], vals)
		ptrs[i] = c
	}
	res.Cells = ptrs
	return res
}

// cellWalker reads the visible cells of one row from an iterator.
type cellWalker struct {
	t           *embTable
	want        []*embFamily // nil: every family
	maxVersions int          // versions per column asked for (>= 1)
	now         int64        // ms, for TTLs
	lastQual    []byte       // escaped qualifier of the column being read
	lastFam     *embFamily
	versions    int // versions of that column seen so far
	skip        []byte
}

func (w *cellWalker) wants(f *embFamily) bool {
	return w.want == nil || slices.Contains(w.want, f)
}

// walk adds to b the visible cells of the keys from the iterator's current
// position (valid says whether it is positioned) while they start with
// bound, which is a row prefix (rowLen bytes) or a longer prefix of that row.
// It returns the iterator's validity when the walk ends.
func (w *cellWalker) walk(it *pebble.Iterator, valid bool, rowLen int, bound []byte, b *rowBuilder) (bool, error) {
	w.lastFam, w.versions = nil, 0
	for valid {
		key := it.Key()
		if !bytes.HasPrefix(key, bound) {
			break
		}
		famSeg, rest, ok := nextSeg(key[rowLen:])
		if !ok {
			return false, fmt.Errorf("hbase: embedded store: corrupt cell key %q", key)
		}
		fam := w.t.families[string(famSeg)]
		if fam == nil || !w.wants(fam) {
			// Skip the family: seek past its last key.
			w.skip = segEnd(w.skip[:0], key[:rowLen+len(famSeg)+2])
			valid = it.SeekGE(w.skip)
			continue
		}
		qualSeg, tsb, ok := nextSeg(rest)
		if !ok || len(tsb) != tsLen {
			return false, fmt.Errorf("hbase: embedded store: corrupt cell key %q", key)
		}
		if fam == w.lastFam && bytes.Equal(qualSeg, w.lastQual) {
			w.versions++
		} else {
			w.lastFam, w.versions = fam, 1
			w.lastQual = append(w.lastQual[:0], qualSeg...)
		}
		ts := keyTS(key)
		if w.versions <= min(w.maxVersions, fam.maxVersions) && !fam.expired(ts, w.now) {
			val, err := it.ValueAndErr()
			if err != nil {
				return false, err
			}
			b.add(fam, unescape(qualSeg), val, ts)
		}
		valid = it.Next()
	}
	return valid, it.Error()
}

// resolveFamilies maps family names to the table's families, sorted and
// without duplicates; nil for an empty list. The slice is shared: the
// caller must not modify it. An unknown name is
// hbase.ErrFamilyNotFound (HBase fails such reads too).
func resolveFamilies(t *embTable, names []string) ([]*embFamily, error) {
	switch len(names) {
	case 0:
		return nil, nil
	case 1: // the usual read of one family: no allocation
		f, err := t.family(names[0])
		if err != nil {
			return nil, err
		}
		return f.only, nil
	}
	out := make([]*embFamily, 0, len(names))
	for _, n := range names {
		f, err := t.family(n)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	slices.SortFunc(out, func(a, b *embFamily) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// preparedGet is a validated Get.
type preparedGet struct {
	t    *embTable
	fams []*embFamily
	g    *hbase.Get
}

func validRow(row []byte) error {
	if len(row) == 0 {
		return fmt.Errorf("hbase: empty rowkey")
	}
	if len(row) > maxRowLen {
		return fmt.Errorf("hbase: rowkey of %d bytes is longer than %d", len(row), maxRowLen)
	}
	return nil
}

// maxRowLen is HBase's limit on rowkey length (Short.MAX_VALUE).
const maxRowLen = 32767

func (s *Store) prepareGet(g *hbase.Get) (preparedGet, error) {
	if g == nil {
		return preparedGet{}, errors.New("hbase: nil Get")
	}
	t, err := s.table(g.Table)
	if err != nil {
		return preparedGet{}, err
	}
	if err := validRow(g.Row); err != nil {
		return preparedGet{}, err
	}
	fams, err := resolveFamilies(t, g.Families)
	if err != nil {
		return preparedGet{}, err
	}
	return preparedGet{t: t, fams: fams, g: g}, nil
}

// walkRow reads one row through it (an unbounded iterator), using prefix
// seeks, appending its cells to b. w is the batch's walker (its clock set,
// its buffers reused from row to row).
func walkRow(it *pebble.Iterator, w *cellWalker, pg preparedGet, b *rowBuilder, key []byte) ([]byte, error) {
	w.t, w.want, w.maxVersions = pg.t, pg.fams, max(1, pg.g.MaxVersions)
	key = appendRowPrefix(key[:0], pg.t, pg.g.Row)
	rowLen := len(key)
	if pg.fams == nil {
		if _, err := w.walk(it, it.SeekPrefixGE(key), rowLen, key, b); err != nil {
			return key, err
		}
	} else {
		for _, f := range pg.fams {
			key = appendSegString(key[:rowLen], f.name)
			if _, err := w.walk(it, it.SeekPrefixGE(key), rowLen, key, b); err != nil {
				return key, err
			}
		}
	}
	return key, nil
}

// results builds the Results of a batch of gets from the cells collected
// for all of them, row i at b.recs[starts[i]:ends[i]]; the Results keep b's
// value buffer, so b must not be reused. The batch shares a handful of
// allocations (results, cells, rowkeys, qualifiers, values) instead of five
// per row: a home-timeline page reads about a hundred rows. The values are
// capped slices, so appending to one never overwrites another; a Result
// kept alone keeps its batch's buffers alive.
func (b *rowBuilder) results(gets []*hbase.Get, starts, ends []int) []*hbase.Result {
	out := make([]*hbase.Result, len(gets))
	rs := make([]hbase.Result, len(gets))
	n := 0
	for _, g := range gets {
		n += len(g.Row)
	}
	rows := make([]byte, 0, n)
	var (
		quals string
		vals  []byte
		cells []hbase.Cell
		ptrs  []*hbase.Cell
	)
	if len(b.recs) > 0 {
		quals = string(b.quals)
		vals = b.vals // b is the batch's own: its values are not copied again
		cells = make([]hbase.Cell, len(b.recs))
		ptrs = make([]*hbase.Cell, len(b.recs))
	}
	for i, g := range gets {
		rows = append(rows, g.Row...)
		res := &rs[i]
		res.Row = rows[len(rows)-len(g.Row) : len(rows) : len(rows)]
		if start := starts[i]; ends[i] > start {
			for j := start; j < ends[i]; j++ {
				r := b.recs[j]
				c := &cells[j]
				r.fill(c, quals[r.qStart:r.qEnd], vals)
				ptrs[j] = c
			}
			res.Cells = ptrs[start:ends[i]:ends[i]]
		}
		out[i] = res
	}
	return out
}

// Get reads one row: the newest version of each column (up to
// min(MaxVersions, the family's MaxVersions) versions, newest first, when
// MaxVersions > 1), skipping cells past their family's TTL. A missing row is
// a Result with Row set and no cells. Unknown table: hbase.ErrTableNotFound;
// unknown family in Families: hbase.ErrFamilyNotFound.
func (s *Store) Get(ctx context.Context, g *hbase.Get) (*hbase.Result, error) {
	rs, err := s.GetMany(ctx, []*hbase.Get{g})
	if err != nil {
		return nil, err
	}
	return rs[0], nil
}

// cachedCells is row's read as the row cache holds it (appendCachedCells).
type cachedCells struct {
	row   int
	cells string
}

// GetMany reads rows of any tables from one consistent snapshot; results
// are in the order of gets (one per get, never nil).
func (s *Store) GetMany(ctx context.Context, gets []*hbase.Get) ([]*hbase.Result, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	defer s.leave()
	pgs := make([]preparedGet, len(gets))
	for i, g := range gets {
		var err error
		if pgs[i], err = s.prepareGet(g); err != nil {
			return nil, err
		}
	}
	if len(gets) == 0 {
		return []*hbase.Result{}, nil
	}
	w := cellWalker{now: s.nowMillis()}
	offs := make([]int, len(pgs)+1) // row i's key is keyBuf[offs[i]:offs[i+1]]
	var keyBuf []byte
	for i, pg := range pgs {
		keyBuf = appendRowPrefix(keyBuf, pg.t, pg.g.Row)
		offs[i+1] = len(keyBuf)
	}
	rp := func(i int) []byte { return keyBuf[offs[i]:offs[i+1]] }
	starts, ends := make([]int, len(pgs)), make([]int, len(pgs))
	// The rows the row cache does not hold, with their lock stripes and
	// the cache generations taken before the iterator opens (see rowCache);
	// the cached cells of the others.
	var misses, stripes []int
	var gens []uint64
	var shape []byte
	var cached []cachedCells
	cachedBytes := 0
	if s.rows == nil {
		misses = make([]int, len(pgs))
		for i := range misses {
			misses[i] = i
		}
	} else {
		stripes, gens, cached = make([]int, len(pgs)), make([]uint64, len(pgs)), make([]cachedCells, 0, len(pgs))
		for i, pg := range pgs {
			stripes[i] = s.stripe(rp(i))
			shape = appendReadShape(shape[:0], pg.fams, pg.g.MaxVersions)
			cells, hit, gen := s.rows.lookup(stripes[i], rp(i), shape)
			if !hit {
				misses, gens[i] = append(misses, i), gen
				continue
			}
			cached = append(cached, cachedCells{row: i, cells: cells})
			cachedBytes += len(cells)
		}
	}
	// Sized for the cached rows' cells (their encoding is a little longer
	// than their qualifiers and values) and a few small cells a row read
	// from pebble; content rows have two cells.
	b := rowBuilder{recs: make([]cellRec, 0, 2*len(pgs)), quals: make([]byte, 0, 16*len(pgs)),
		vals: make([]byte, 0, cachedBytes+128*len(misses))}
	if s.rows != nil {
		for _, c := range cached {
			i := c.row
			starts[i] = len(b.recs)
			if !addCachedCells(&b, pgs[i].t, c.cells, w.now) {
				return nil, fmt.Errorf("hbase: embedded store: corrupt row cache entry for %q", pgs[i].g.Row)
			}
			ends[i] = len(b.recs)
		}
		rowCacheHits.Add(float64(len(pgs) - len(misses)))
		rowCacheMisses.Add(float64(len(misses)))
		if len(misses) == 0 {
			return b.results(gets, starts, ends), nil
		}
	}
	it, err := s.db.NewIterWithContext(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer func() { _ = it.Close() }()
	// The rows are read in key order: consecutive seeks then tend to land
	// in the file and block the last one loaded (a page's posts and follow
	// rows come in timeline order, scattered over the key space).
	slices.SortFunc(misses, func(a, b int) int { return bytes.Compare(rp(a), rp(b)) })
	var key, enc []byte
	for n, i := range misses {
		if n%64 == 63 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		starts[i] = len(b.recs)
		if key, err = walkRow(it, &w, pgs[i], &b, key); err != nil {
			return nil, err
		}
		ends[i] = len(b.recs)
		if s.rows != nil && s.rows.mayFit(rp(i), &b, starts[i], ends[i]) {
			enc = appendCachedCells(enc[:0], &b, starts[i], ends[i])
			shape = appendReadShape(shape[:0], pgs[i].fams, pgs[i].g.MaxVersions)
			s.rows.fill(stripes[i], rp(i), shape, enc, gens[i])
		}
	}
	return b.results(gets, starts, ends), nil
}

// scanRefreshRows and scanRefreshAge bound how long a Scan keeps one pebble
// iterator (which pins memtables and files) while its callback runs.
const (
	scanRefreshRows = 1024
	scanRefreshAge  = time.Second
)

// Scan calls fn for each row of the range with at least one visible cell
// of the wanted families, newest version of each column only, in rowkey
// order (descending when sc.Reversed: see scanRows). It streams: rows are read as fn consumes them (fn may write to the
// store). Rows written during the scan may or may not be seen. TTLs are
// judged at the time the scan's pebble iterator was opened (see scanRows).
// fn may keep the Results (see scanArena). An error of fn ends the scan and
// is returned, except hbase.ErrStopScan which ends it with nil.
func (s *Store) Scan(ctx context.Context, sc *hbase.Scan, fn func(*hbase.Result) error) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	defer s.leave()
	if sc == nil {
		return errors.New("hbase: nil Scan")
	}
	t, err := s.table(sc.Table)
	if err != nil {
		return err
	}
	fams, err := resolveFamilies(t, sc.Families)
	if err != nil {
		return err
	}
	start, stop := hbase.ScanRange(sc)
	if sc.Reversed && stop == nil {
		return hbase.ErrUnboundedReverse
	}
	lower := appendEscaped(bytes.Clone(t.prefix), start)
	var upper []byte
	if stop == nil {
		upper = hbase.PrefixEnd(t.prefix)
	} else {
		upper = appendEscaped(bytes.Clone(t.prefix), stop)
	}
	if bytes.Compare(lower, upper) >= 0 {
		return nil
	}
	return s.scanRows(ctx, t, fams, lower, upper, sc.Limit, sc.Reversed, fn)
}

// scanRows is Scan over the pebble range [lower, upper): each row's cells
// are read forward by one cellWalker, so a row reads the same both ways.
// Forward, the walk leaves the iterator on the next row's first cell.
// Reversed (rows in descending rowkey order), the iterator steps back one
// row at a time: SeekLT to the previous row's last cell, SeekGE to its
// first. Every scanRefreshRows rows or scanRefreshAge it reopens the
// iterator past the row just read (above it forward, below it reversed), so
// that the old iterator's view of the store is released. The TTL clock is
// read when an iterator is opened and holds for the rows it reads.
func (s *Store) scanRows(ctx context.Context, t *embTable, fams []*embFamily, lower, upper []byte, limit int, reversed bool,
	fn func(*hbase.Result) error) error {
	done := ctx.Done()
	w := cellWalker{t: t, want: fams, maxVersions: 1}
	var (
		b      rowBuilder
		arena  scanArena
		rp     []byte
		rows   int
		opened time.Time
		fresh  int
		it     *pebble.Iterator
		valid  bool
	)
	open := func() error {
		var err error
		it, err = s.db.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: lower, UpperBound: upper})
		if err != nil {
			return err
		}
		// The TTL clock of the rows this iterator reads: a scan reads at
		// one point in time, as HBase's scanners do.
		opened, fresh = time.Now(), 0
		w.now = s.nowMillis()
		if reversed {
			valid = it.Last()
		} else {
			valid = it.First()
		}
		return nil
	}
	if err := open(); err != nil {
		return err
	}
	defer func() {
		if it != nil {
			_ = it.Close()
		}
	}()
	for valid {
		select {
		case <-done:
			return ctx.Err()
		default:
		}
		key := it.Key()
		n := embeddedSplit(key)
		if n == len(key) {
			return fmt.Errorf("hbase: embedded store: corrupt cell key %q", key)
		}
		rp = append(rp[:0], key[:n]...)
		b.reset()
		var err error
		if reversed {
			_, err = w.walk(it, it.SeekGE(rp), n, rp, &b)
		} else {
			valid, err = w.walk(it, valid, n, rp, &b)
		}
		if err != nil {
			return err
		}
		fresh++
		if len(b.recs) > 0 {
			if err := fn(arena.result(rp[tableHeaderLen:n-2], &b)); err != nil {
				if errors.Is(err, hbase.ErrStopScan) {
					return nil
				}
				return err
			}
			rows++
			if limit > 0 && rows >= limit {
				return nil
			}
		}
		if !reversed && !valid {
			break
		}
		if fresh >= scanRefreshRows || time.Since(opened) > scanRefreshAge {
			if err := it.Close(); err != nil {
				return err
			}
			it = nil
			if reversed {
				upper = bytes.Clone(rp)
			} else {
				lower = segEnd(lower[:0], rp)
			}
			if bytes.Compare(lower, upper) >= 0 {
				return nil
			}
			if err := open(); err != nil {
				return err
			}
			continue
		}
		if reversed {
			valid = it.SeekLT(rp)
		}
	}
	return it.Error()
}
