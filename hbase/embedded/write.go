package embedded

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/cockroachdb/pebble/v2"

	"github.com/weibohbase/gateway/hbase"
)

// Writes of the embedded backend. Every mutation of a row holds the row's
// lock stripe from before it reads the row's current state until its batch
// is committed, so that read-modify-writes (version trimming, CheckAndPut,
// CheckAndDelete, Increment) are atomic with respect to every other
// mutation of the row. Reads take no locks: a pebble iterator sees each
// committed batch entirely or not at all.

// preparedPut is a validated Put.
type preparedPut struct {
	t    *embTable
	p    *hbase.Put
	rp   []byte // encoded row prefix
	cols []preparedCol
}

// preparedCol is one cell of a Put.
type preparedCol struct {
	fam  *embFamily
	qual string
	val  []byte
}

// prepareArena holds the encoded row prefixes and the cells of a batch of
// puts, in few allocations: it is sized from the rows (escaped at worst) and the
// families (one cell each; a put of several qualifiers grows it). Slices
// handed out stay valid when it grows.
type prepareArena struct {
	keys []byte
	cols []preparedCol

	// The table, Values map and cells of the last put prepared.
	lastTable  *embTable
	lastValues uintptr
	lastCols   []preparedCol
}

func newPrepareArena(puts []*hbase.Put) *prepareArena {
	nk, nc := 0, 0
	for _, p := range puts {
		if p == nil {
			continue
		}
		nk += tableHeaderLen + 2*len(p.Row) + 2
		nc += len(p.Values)
	}
	return &prepareArena{keys: make([]byte, 0, nk), cols: make([]preparedCol, 0, nc)}
}

// preparePut validates p and encodes it into a. A put whose Values map
// and table are those of the previous put prepared into a shares that
// put's cells (a fan-out writes one shared Values into every row), which
// saves the walk of the maps and the sort.
func (s *Store) preparePut(p *hbase.Put, a *prepareArena) (preparedPut, error) {
	if p == nil {
		return preparedPut{}, errors.New("hbase: nil Put")
	}
	t, err := s.table(p.Table)
	if err != nil {
		return preparedPut{}, err
	}
	if err := validRow(p.Row); err != nil {
		return preparedPut{}, err
	}
	if p.Timestamp < 0 {
		return preparedPut{}, fmt.Errorf("hbase: negative timestamp %d", p.Timestamp)
	}
	pp := preparedPut{t: t, p: p}
	start := len(a.keys)
	a.keys = appendRowPrefix(a.keys, t, p.Row)
	pp.rp = a.keys[start:len(a.keys):len(a.keys)]
	vals := reflect.ValueOf(p.Values).Pointer()
	if a.lastTable == t && a.lastValues == vals && vals != 0 {
		pp.cols = a.lastCols
		return pp, nil
	}
	start = len(a.cols)
	for fname, qs := range p.Values {
		f, err := t.family(fname)
		if err != nil {
			return preparedPut{}, err
		}
		for q, v := range qs {
			a.cols = append(a.cols, preparedCol{fam: f, qual: q, val: v})
		}
	}
	pp.cols = a.cols[start:len(a.cols):len(a.cols)]
	// Cell key order: family, then qualifier (bytewise).
	if len(pp.cols) > 1 {
		slices.SortFunc(pp.cols, func(a, b preparedCol) int {
			return cmp.Or(strings.Compare(a.fam.name, b.fam.name), strings.Compare(a.qual, b.qual))
		})
	}
	a.lastTable, a.lastValues, a.lastCols = t, vals, pp.cols
	return pp, nil
}

// preparedDelete is a validated Delete.
type preparedDelete struct {
	t  *embTable
	d  *hbase.Delete
	rp []byte
}

func (s *Store) prepareDelete(d *hbase.Delete) (preparedDelete, error) {
	if d == nil {
		return preparedDelete{}, errors.New("hbase: nil Delete")
	}
	t, err := s.table(d.Table)
	if err != nil {
		return preparedDelete{}, err
	}
	if err := validRow(d.Row); err != nil {
		return preparedDelete{}, err
	}
	if err := hbase.CheckDeleteVersion(d); err != nil {
		return preparedDelete{}, err
	}
	for fname := range d.Values {
		if _, err := t.family(fname); err != nil {
			return preparedDelete{}, err
		}
	}
	return preparedDelete{t: t, d: d, rp: appendRowPrefix(nil, t, d.Row)}, nil
}

// writer applies mutations of locked rows to one batch, reading the rows'
// current state through an iterator opened after the locks were taken.
type writer struct {
	s   *Store
	it  *pebble.Iterator
	b   *pebble.Batch
	now int64 // ms: the default timestamp and the TTL clock

	// overlay holds the versions (newest first) of the columns written so far
	// in this batch, for rows that the batch writes more than once; nil
	// otherwise.
	overlay map[string][]int64

	col  []byte
	key  []byte
	vers []int64
	kept []int64

	// rows are the row prefixes the batch writes, for the row cache
	// (consecutive duplicates dropped).
	rows [][]byte
}

// touch records that the batch writes row rp (kept until commit).
func (w *writer) touch(rp []byte) {
	if w.s.rows != nil && (len(w.rows) == 0 || !bytes.Equal(w.rows[len(w.rows)-1], rp)) {
		w.rows = append(w.rows, rp)
	}
}

func (s *Store) newWriter(ctx context.Context) (*writer, error) {
	// Writes often target rows that do not exist yet (imports, new posts):
	// consult the bloom filters of the last level too, so that a miss reads
	// no data block.
	it, err := s.db.NewIterWithContext(ctx, &pebble.IterOptions{UseL6Filters: true})
	if err != nil {
		return nil, err
	}
	return &writer{s: s, it: it, b: s.db.NewBatch(), now: s.nowMillis()}, nil
}

func (w *writer) close() {
	_ = w.it.Close()
	_ = w.b.Close()
}

// commit commits the batch, synced unless the store is WithNoSync, then
// invalidates the rows it wrote in the row cache (after the commit: see
// rowCache; also when the commit fails, which may have applied it).
func (w *writer) commit() error {
	if err := w.it.Error(); err != nil {
		return err
	}
	if w.b.Empty() {
		return nil
	}
	err := w.b.Commit(w.s.writeOpts)
	for _, rp := range w.rows {
		w.s.rows.invalidate(w.s.stripe(rp), rp)
	}
	return err
}

// appendCol appends the encoded prefix of column fam:qual of the row rp.
func appendCol(dst, rp []byte, fam, qual string) []byte {
	return appendSegString(appendSegString(append(dst, rp...), fam), qual)
}

// rowEmpty reports whether the row rp holds no cell in the store.
func (w *writer) rowEmpty(rp []byte) bool {
	return !w.it.SeekPrefixGE(rp)
}

// readColumn reads column col of family fam: every stored version's
// timestamp (newest first, into w.vers) and, when the newest is not past its
// TTL, a copy of its value and its timestamp.
func (w *writer) readColumn(fam *embFamily, col []byte) (val []byte, ts int64, present bool, err error) {
	w.vers = w.vers[:0]
	for valid := w.it.SeekPrefixGE(col); valid && bytes.HasPrefix(w.it.Key(), col); valid = w.it.Next() {
		vts := keyTS(w.it.Key())
		if len(w.vers) == 0 && !fam.expired(vts, w.now) {
			v, err := w.it.ValueAndErr()
			if err != nil {
				return nil, 0, false, err
			}
			val, ts, present = bytes.Clone(v), vts, true
		}
		w.vers = append(w.vers, vts)
	}
	return val, ts, present, w.it.Error()
}

// putCell writes val at ts into column col (whose stored versions, newest
// first, are vers), then keeps the family's MaxVersions newest unexpired
// versions and deletes the others; a new cell that would not be kept is not
// written. It returns the kept versions (in w.kept).
func (w *writer) putCell(fam *embFamily, col, val []byte, ts int64, vers []int64) []int64 {
	w.kept = w.kept[:0]
	keep := func(v int64) bool {
		if len(w.kept) < fam.maxVersions && !fam.expired(v, w.now) {
			w.kept = append(w.kept, v)
			return true
		}
		return false
	}
	del := func(v int64) {
		w.key = appendTS(append(w.key[:0], col...), v)
		_ = w.b.Delete(w.key, nil)
	}
	written := false
	placed := false
	for _, v := range vers {
		if !placed && ts >= v {
			placed = true
			written = keep(ts)
			if written {
				w.key = appendTS(append(w.key[:0], col...), ts)
				_ = w.b.Set(w.key, val, nil)
			}
			if ts == v { // same version: overwritten (or dropped with it)
				if !written {
					del(v)
				}
				continue
			}
		}
		if !keep(v) {
			del(v)
		}
	}
	if !placed && keep(ts) {
		w.key = appendTS(append(w.key[:0], col...), ts)
		_ = w.b.Set(w.key, val, nil)
	}
	return w.kept
}

// put applies pp at timestamp ts; rowEmpty says the row holds nothing in the
// store (its columns need not be read).
func (w *writer) put(pp *preparedPut, ts int64, rowEmpty bool) error {
	w.touch(pp.rp)
	for _, c := range pp.cols {
		w.col = appendCol(w.col[:0], pp.rp, c.fam.name, c.qual)
		var vers []int64
		known := false
		if w.overlay != nil {
			vers, known = w.overlay[string(w.col)]
		}
		if !known && !rowEmpty {
			if _, _, _, err := w.readColumn(c.fam, w.col); err != nil {
				return err
			}
			vers = w.vers
		}
		kept := w.putCell(c.fam, w.col, c.val, ts, vers)
		if w.overlay != nil {
			w.overlay[string(w.col)] = slices.Clone(kept)
		}
	}
	return nil
}

// deletePrefix deletes the cells whose keys start with p (a row, family or
// column prefix) and whose timestamp is not after now: HBase's Delete without
// a timestamp masks the versions up to the time of the delete. With version
// set (not 0) it deletes only the cells of exactly that timestamp: HBase's
// DeleteFamilyVersion.
func (w *writer) deletePrefix(p []byte, version int64) error {
	for valid := w.it.SeekPrefixGE(p); valid && bytes.HasPrefix(w.it.Key(), p); valid = w.it.Next() {
		ts := keyTS(w.it.Key())
		if version == 0 && ts <= w.now || version != 0 && ts == version {
			_ = w.b.Delete(w.it.Key(), nil)
		}
	}
	return w.it.Error()
}

// deleteVersion deletes the version at ts of column col, if there is one
// (HBase's Delete of one version; a missing version is left alone, so no
// tombstone is written).
func (w *writer) deleteVersion(col []byte, ts int64) error {
	w.key = appendTS(append(w.key[:0], col...), ts)
	if w.it.SeekPrefixGE(w.key) && bytes.Equal(w.it.Key(), w.key) {
		_ = w.b.Delete(w.key, nil)
	}
	return w.it.Error()
}

// del applies pd. Cells go physically, which is what HBase shows with
// NEW_VERSION_BEHAVIOR: a delete hides only the cells that exist when it is
// applied, so a later Put is visible whatever its timestamp, and a deleted
// version (or one that newer versions pushed out of MaxVersions, already
// gone since putCell) never comes back.
func (w *writer) del(pd *preparedDelete) error {
	w.touch(pd.rp)
	version := pd.d.Timestamp
	if len(pd.d.Values) == 0 {
		return w.deletePrefix(pd.rp, 0) // CheckDeleteVersion: no version without families
	}
	for fname, qs := range pd.d.Values {
		if len(qs) == 0 {
			w.col = appendSegString(append(w.col[:0], pd.rp...), fname)
			if err := w.deletePrefix(w.col, version); err != nil {
				return err
			}
			continue
		}
		for q := range qs {
			w.col = appendCol(w.col[:0], pd.rp, fname, q)
			var err error
			if version != 0 {
				err = w.deleteVersion(w.col, version)
			} else {
				err = w.deletePrefix(w.col, 0)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// Put writes p's cells at p.Timestamp (0: now) into one row atomically,
// keeping at most each family's MaxVersions versions per column (a cell at
// an existing timestamp replaces it). Unknown table: hbase.ErrTableNotFound;
// unknown family: hbase.ErrFamilyNotFound.
func (s *Store) Put(ctx context.Context, p *hbase.Put) error {
	return s.PutMany(ctx, []*hbase.Put{p})
}

// rowOrder is a put's row prefix and index, sorted by PutMany.
type rowOrder struct {
	rp []byte
	i  int32
}

// putOrder returns the indexes of pps in row order (their encoded row
// prefixes ascending), the puts of one row in their given order. When
// every put is of one table it first sorts them by the rowkey's first byte
// (a counting sort, stable) and then sorts only the groups that are not
// yet in order: rows whose keys start with a salt byte, written in the
// order of the unsalted ids (a fan-out's inbox rows, in fan id order), are
// a few interleaved sorted runs, which that puts in order in linear time.
func putOrder(pps []preparedPut) []int32 {
	order := make([]int32, len(pps))
	sorted := true
	oneTable := true
	for i := range order {
		order[i] = int32(i)
		if i > 0 && sorted && bytes.Compare(pps[i-1].rp, pps[i].rp) > 0 {
			sorted = false
		}
		oneTable = oneTable && pps[i].t == pps[0].t
	}
	if sorted {
		return order
	}
	if !oneTable {
		sortPuts(pps, order)
		return order
	}
	// Counting sort on the first byte of the escaped rowkey: the same order
	// as on the first byte of the rowkey (an escaped 0x00 starts with 0x00).
	var starts [257]int32
	for i := range pps {
		starts[int(pps[i].rp[tableHeaderLen])+1]++
	}
	for b := 1; b < len(starts); b++ {
		starts[b] += starts[b-1]
	}
	next := starts
	for i := range pps {
		b := pps[i].rp[tableHeaderLen]
		order[next[b]] = int32(i)
		next[b]++
	}
	for b := range 256 {
		group := order[starts[b]:starts[b+1]]
		for k := 1; k < len(group); k++ {
			if bytes.Compare(pps[group[k-1]].rp, pps[group[k]].rp) > 0 {
				sortPuts(pps, group)
				break
			}
		}
	}
	return order
}

// sortPuts sorts order, indexes of pps, by row prefix, then index.
func sortPuts(pps []preparedPut, order []int32) {
	keys := make([]rowOrder, len(order))
	for i, k := range order {
		keys[i] = rowOrder{pps[k].rp, k}
	}
	slices.SortFunc(keys, func(a, b rowOrder) int {
		if c := bytes.Compare(a.rp, b.rp); c != 0 {
			return c
		}
		return int(a.i - b.i)
	})
	for i, k := range keys {
		order[i] = k.i
	}
}

// PutMany writes many rows (of any tables) in one batch: each row is atomic,
// and so, in this backend, is the whole batch. Every put is validated before
// anything is written.
func (s *Store) PutMany(ctx context.Context, puts []*hbase.Put) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	defer s.leave()
	if len(puts) == 0 {
		return nil
	}
	pps := make([]preparedPut, len(puts))
	arena := newPrepareArena(puts)
	var locks lockSet
	for i, p := range puts {
		var err error
		if pps[i], err = s.preparePut(p, arena); err != nil {
			return err
		}
		locks.add(s.stripe(pps[i].rp))
	}
	// Row order: monotonic seeks, and the puts of one row side by side (in
	// their given order, which decides between equal timestamps).
	order := putOrder(pps)

	s.lockAll(&locks)
	defer s.unlockAll(&locks)
	w, err := s.newWriter(ctx)
	if err != nil {
		return err
	}
	defer w.close()
	for i := 0; i < len(order); {
		first := &pps[order[i]]
		j := i + 1
		for j < len(order) && bytes.Equal(pps[order[j]].rp, first.rp) {
			j++
		}
		w.overlay = nil
		if j-i > 1 {
			w.overlay = map[string][]int64{}
		}
		empty := (j-i > 1 || len(first.cols) > 1) && w.rowEmpty(first.rp)
		for _, k := range order[i:j] {
			ts := pps[k].p.Timestamp
			if ts == 0 {
				ts = w.now
			}
			if err := w.put(&pps[k], ts, empty); err != nil {
				return err
			}
		}
		i = j
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return w.commit()
}

// Delete deletes from one row atomically: the whole row when d.Values is
// nil or empty, a whole family when it maps to a nil or empty map, else
// every version of the named qualifiers. Like HBase's Delete without a
// timestamp it removes the versions whose timestamp is not after now; with
// d.Timestamp set it removes only the version at that timestamp of the named
// columns (or of every column of a family mapped to an empty map). See
// hbase.Delete.
func (s *Store) Delete(ctx context.Context, d *hbase.Delete) error {
	return s.DeleteMany(ctx, []*hbase.Delete{d})
}

// DeleteMany applies many deletes (of any tables) in one batch; each row is
// atomic, and so, in this backend, is the whole batch.
func (s *Store) DeleteMany(ctx context.Context, dels []*hbase.Delete) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	defer s.leave()
	if len(dels) == 0 {
		return nil
	}
	pds := make([]preparedDelete, len(dels))
	var locks lockSet
	for i, d := range dels {
		var err error
		if pds[i], err = s.prepareDelete(d); err != nil {
			return err
		}
		locks.add(s.stripe(pds[i].rp))
	}
	slices.SortStableFunc(pds, func(a, b preparedDelete) int { return bytes.Compare(a.rp, b.rp) })

	s.lockAll(&locks)
	defer s.unlockAll(&locks)
	w, err := s.newWriter(ctx)
	if err != nil {
		return err
	}
	defer w.close()
	for i := range pds {
		if err := w.del(&pds[i]); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return w.commit()
}

// MutateRow deletes m.Delete's columns and writes m.Put's cells in one row,
// in one committed batch under the row's lock: a read sees all of it or
// none (see hbase.RowMutation). Both happen at now.
func (s *Store) MutateRow(ctx context.Context, m *hbase.RowMutation) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	defer s.leave()
	if err := hbase.CheckRowMutation(m); err != nil {
		return err
	}
	var pp *preparedPut
	if len(m.Put) > 0 {
		put := &hbase.Put{Table: m.Table, Row: m.Row, Values: m.Put}
		p, err := s.preparePut(put, newPrepareArena([]*hbase.Put{put}))
		if err != nil {
			return err
		}
		pp = &p
	}
	var pd *preparedDelete
	if len(m.Delete) > 0 {
		d, err := s.prepareDelete(&hbase.Delete{Table: m.Table, Row: m.Row, Values: m.Delete})
		if err != nil {
			return err
		}
		pd = &d
	}
	var rp []byte // the row's encoded prefix, for its lock
	if pp != nil {
		rp = pp.rp
	} else {
		rp = pd.rp
	}
	mu := &s.locks[s.stripe(rp)]
	mu.Lock()
	defer mu.Unlock()
	w, err := s.newWriter(ctx)
	if err != nil {
		return err
	}
	defer w.close()
	if pd != nil {
		if err := w.del(pd); err != nil {
			return err
		}
	}
	if pp != nil {
		if err := w.put(pp, w.now, false); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return w.commit()
}

// checkMatches is HBase's CheckAndMutate equality test: an empty or nil
// expected value matches an absent cell and a cell holding an empty value.
func checkMatches(expected, val []byte, present bool) bool {
	if len(expected) == 0 {
		return !present || len(val) == 0
	}
	return present && bytes.Equal(val, expected)
}

// CheckAndPut applies p when the newest (unexpired) value of
// family:qualifier in p's row equals expected; as in HBase, a nil or empty
// expected value matches an absent cell and an empty value. Check and put are
// atomic. With p.Timestamp 0 the cells are written at max(now, the checked
// cell's timestamp), as HBase does.
func (s *Store) CheckAndPut(ctx context.Context, p *hbase.Put, family, qualifier string, expected []byte) (bool, error) {
	if err := s.begin(ctx); err != nil {
		return false, err
	}
	defer s.leave()
	pp, err := s.preparePut(p, newPrepareArena([]*hbase.Put{p}))
	if err != nil {
		return false, err
	}
	return s.checkAndMutate(ctx, pp.t, pp.rp, family, qualifier, expected, func(w *writer, cellTS int64, present bool) error {
		ts := p.Timestamp
		if ts == 0 {
			ts = w.now
			if present && cellTS > ts {
				ts = cellTS
			}
		}
		return w.put(&pp, ts, false)
	})
}

// CheckAndDelete applies d when the newest (unexpired) value of
// family:qualifier in d's row equals expected (nil or empty: absent or
// empty), atomically, and reports whether it did.
func (s *Store) CheckAndDelete(ctx context.Context, d *hbase.Delete, family, qualifier string, expected []byte) (bool, error) {
	if err := s.begin(ctx); err != nil {
		return false, err
	}
	defer s.leave()
	pd, err := s.prepareDelete(d)
	if err != nil {
		return false, err
	}
	return s.checkAndMutate(ctx, pd.t, pd.rp, family, qualifier, expected, func(w *writer, _ int64, _ bool) error {
		return w.del(&pd)
	})
}

// checkAndMutate holds the lock of row rp of t, reads family:qualifier and,
// when it matches expected, runs apply (given the checked cell's timestamp
// and whether it is present) and commits; it reports whether it applied.
func (s *Store) checkAndMutate(ctx context.Context, t *embTable, rp []byte, family, qualifier string, expected []byte,
	apply func(w *writer, cellTS int64, present bool) error) (bool, error) {
	fam, err := t.family(family)
	if err != nil {
		return false, err
	}
	mu := &s.locks[s.stripe(rp)]
	mu.Lock()
	defer mu.Unlock()
	w, err := s.newWriter(ctx)
	if err != nil {
		return false, err
	}
	defer w.close()
	val, cellTS, present, err := w.readColumn(fam, appendCol(nil, rp, family, qualifier))
	if err != nil {
		return false, err
	}
	if !checkMatches(expected, val, present) {
		return false, nil
	}
	if err := apply(w, cellTS, present); err != nil {
		return false, err
	}
	if err := w.commit(); err != nil {
		return false, err
	}
	return true, nil
}

// Increment adds inc.Amount to the 8-byte big-endian int64 counter at
// family:qualifier (absent or expired: 0) atomically and returns the new
// value. The new version's timestamp is max(now, previous timestamp + 1), as
// in HBase. A cell that is not 8 bytes long is an error.
func (s *Store) Increment(ctx context.Context, inc *hbase.Increment) (int64, error) {
	if err := s.begin(ctx); err != nil {
		return 0, err
	}
	defer s.leave()
	if inc == nil {
		return 0, errors.New("hbase: nil Increment")
	}
	t, err := s.table(inc.Table)
	if err != nil {
		return 0, err
	}
	if err := validRow(inc.Row); err != nil {
		return 0, err
	}
	fam, err := t.family(inc.Family)
	if err != nil {
		return 0, err
	}
	rp := appendRowPrefix(nil, t, inc.Row)
	mu := &s.locks[s.stripe(rp)]
	mu.Lock()
	defer mu.Unlock()
	w, err := s.newWriter(ctx)
	if err != nil {
		return 0, err
	}
	defer w.close()
	col := appendCol(nil, rp, inc.Family, inc.Qualifier)
	val, cellTS, present, err := w.readColumn(fam, col)
	if err != nil {
		return 0, err
	}
	var cur int64
	ts := w.now
	if present {
		if len(val) != 8 {
			return 0, fmt.Errorf("hbase: increment %s %q %s:%s: the cell is not a 64-bit counter (%d bytes)",
				inc.Table, inc.Row, inc.Family, inc.Qualifier, len(val))
		}
		cur = int64(binary.BigEndian.Uint64(val))
		ts = max(ts, cellTS+1)
	}
	next := cur + inc.Amount
	w.touch(rp)
	w.putCell(fam, col, binary.BigEndian.AppendUint64(nil, uint64(next)), ts, w.vers)
	if err := w.commit(); err != nil {
		return 0, err
	}
	return next, nil
}
