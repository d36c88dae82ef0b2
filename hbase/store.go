// Package hbase is the gateway's one table API: the operations HBase itself
// offers (Get, batched Get, Put, Delete, Scan, CheckAndPut/CheckAndDelete,
// Increment), expressed once as the Store interface, and table
// administration (create, disable, delete, namespaces) as the Admin
// interface apart from it. Two backends implement both, each in a package of
// its own, so that the packages which only use the API (the weibo domain and
// everything above it) compile neither:
//
//   - hbase/remote (remote.Open) talks to a real HBase 2.x cluster through
//     github.com/tsuna/gohbase;
//   - hbase/embedded (embedded.Open) keeps the same data model (sorted
//     rowkeys, column families, qualifiers, timestamped cell versions,
//     row-level atomicity, TTLs) in an in-process cockroachdb/pebble store.
//
// This package also holds what every backend shares: the request and Result
// types, the errors, TableSpec, and the decorators that wrap any StoreAdmin
// (Instrument counts calls in gateway_store_calls_total, Trace makes each
// call an OpenTelemetry span, WithNamespace maps one namespace onto another). One conformance suite, hbase/hbasetest, runs
// against both backends and is what keeps them equal.
package hbase

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
)

// Backend names, returned by Store.Backend and used as the "backend" label
// of gateway_store_calls_total.
const (
	// BackendHBase names the real HBase backend (hbase/remote).
	BackendHBase = "hbase"
	// BackendEmbedded names the embedded pebble backend (hbase/embedded).
	BackendEmbedded = "embedded"
)

// Cell is one HBase cell: the value of one column (family:qualifier) of one
// row at one timestamp (milliseconds since the Unix epoch, as HBase keeps it).
type Cell struct {
	// Family is the column family name.
	Family string
	// Qualifier is the column qualifier; any bytes.
	Qualifier string
	// Value is the cell's value; any bytes, possibly empty.
	Value []byte
	// Timestamp is the cell's version, in milliseconds since the Unix epoch.
	Timestamp int64
}

// Result is one row as read: its rowkey and its cells, ordered by family,
// then qualifier, then timestamp newest first (HBase's order). A Result with
// no cells means the row does not exist (or holds nothing the request asked for).
type Result struct {
	// Row is the rowkey.
	Row []byte
	// Cells are the row's cells in HBase order.
	Cells []*Cell
}

// Exists reports whether the row holds at least one cell.
func (r *Result) Exists() bool { return r != nil && len(r.Cells) > 0 }

// Value returns the newest value of family:qualifier, or nil when the cell is absent.
func (r *Result) Value(family, qualifier string) []byte {
	if c := r.Cell(family, qualifier); c != nil {
		return c.Value
	}
	return nil
}

// Cell returns the newest cell of family:qualifier, or nil when absent.
func (r *Result) Cell(family, qualifier string) *Cell {
	if r == nil {
		return nil
	}
	for _, c := range r.Cells {
		if c.Family == family && c.Qualifier == qualifier {
			return c
		}
	}
	return nil
}

// Family returns the newest cell of every qualifier of family, in qualifier order.
func (r *Result) Family(family string) []*Cell {
	if r == nil {
		return nil
	}
	var out []*Cell
	var last *Cell
	for _, c := range r.Cells {
		if c.Family != family {
			continue
		}
		if last != nil && last.Qualifier == c.Qualifier {
			continue // an older version of the same column
		}
		out = append(out, c)
		last = c
	}
	return out
}

// Values is the shape gohbase uses for mutations: family -> qualifier -> value.
type Values map[string]map[string][]byte

// Get reads one row. Table is the full table name ("weibo:users").
type Get struct {
	// Table is the namespaced table name, e.g. "weibo:users".
	Table string
	// Row is the rowkey.
	Row []byte
	// Families restricts the read to these column families; empty reads all.
	Families []string
	// MaxVersions is how many versions of each column to return; 0 or 1
	// returns only the newest.
	MaxVersions int
}

// Put writes cells into one row, atomically (HBase's row-level atomicity).
type Put struct {
	// Table is the namespaced table name.
	Table string
	// Row is the rowkey.
	Row []byte
	// Values are the cells to write: family -> qualifier -> value.
	Values Values
	// Timestamp is the version to write, in ms since the epoch; 0 means "now"
	// (the server's clock for HBase, the process clock for embedded).
	Timestamp int64
}

// Delete removes cells from one row, atomically.
//
// With Timestamp 0 it deletes every version whose timestamp is not after the
// time of the delete (the server's clock for HBase): of the whole row when
// Values is nil or empty, of every column of a family mapped to a nil or
// empty map, else of each named qualifier (the values in the map are ignored).
//
// With Timestamp set it deletes only the version at exactly that timestamp
// (HBase's Delete.addColumn(family, qualifier, ts), or addFamilyVersion for a
// family mapped to an empty map) and must name its families: a Timestamp
// with Values empty is an error.
//
// Either way a delete hides only the cells that exist when it is applied: a
// Put applied after it is visible whatever its timestamp, even one in the
// same millisecond or older than the delete (every backend keeps HBase's
// NEW_VERSION_BEHAVIOR semantics; see Store). A deleted version does not come
// back, and neither does one that newer versions had pushed out of a
// family's MaxVersions.
type Delete struct {
	// Table is the namespaced table name.
	Table string
	// Row is the rowkey.
	Row []byte
	// Values selects what to delete; see the type's comment.
	Values Values
	// Timestamp, when not 0, deletes only the version at this timestamp (ms
	// since the epoch) of the selected columns; see the type's comment.
	Timestamp int64
}

// RowMutation changes one row in one atomic step: it deletes the columns
// Delete names and writes the cells of Put, and a read sees either none of
// it or all of it (HBase's RowMutations, which Table.mutateRow applies).
// Both take effect at the time of the mutation: Delete removes every
// version not after it, as a Delete without Timestamp does. A column may
// not be both deleted and written (nor written into a family deleted whole),
// and a mutation must change something.
type RowMutation struct {
	// Table is the namespaced table name.
	Table string
	// Row is the rowkey.
	Row []byte
	// Put are the cells to write: family -> qualifier -> value.
	Put Values
	// Delete names what to delete: every column of a family mapped to a nil
	// or empty map, else each named qualifier (the values are ignored).
	Delete Values
}

// CheckRowMutation checks m's shape (see RowMutation): a table and a row,
// something to change, and no column both deleted and written. Backends
// call it before sending m.
func CheckRowMutation(m *RowMutation) error {
	switch {
	case m == nil:
		return fmt.Errorf("hbase: nil RowMutation")
	case len(m.Put) == 0 && len(m.Delete) == 0:
		return fmt.Errorf("hbase: mutate row %s %q: nothing to put or delete", m.Table, m.Row)
	}
	for fam, quals := range m.Delete {
		written := m.Put[fam]
		if len(written) == 0 {
			continue
		}
		if len(quals) == 0 {
			return fmt.Errorf("hbase: mutate row %s %q: family %q is both deleted and written", m.Table, m.Row, fam)
		}
		for q := range quals {
			if _, ok := written[q]; ok {
				return fmt.Errorf("hbase: mutate row %s %q: column %s:%q is both deleted and written", m.Table, m.Row, fam, q)
			}
		}
	}
	return nil
}

// Scan reads a range of rows in rowkey order: [Start, Stop), or every row
// starting with Prefix when Prefix is set (Start may then narrow the range
// further, e.g. to resume after a cursor). With Reversed set it reads the
// same range from its end, in descending rowkey order.
type Scan struct {
	// Table is the namespaced table name.
	Table string
	// Start is the first rowkey (inclusive); nil means the table's start.
	Start []byte
	// Stop is the rowkey at which the scan ends (exclusive); nil means the table's end.
	Stop []byte
	// Prefix, when set, limits the scan to rows starting with it. It is
	// combined with Start/Stop: the effective range is their intersection.
	Prefix []byte
	// Families restricts the read to these column families; empty reads all.
	Families []string
	// Limit is the maximum number of rows to return; 0 means no limit.
	Limit int
	// Reversed reads the range in descending rowkey order (HBase's reversed
	// scan): the rows are those of the forward scan, and Limit keeps the
	// last ones (the highest rowkeys). A reversed scan needs an end to start
	// from — Stop, or a Prefix that has one (not all 0xff) —; without one
	// Scan returns ErrUnboundedReverse.
	Reversed bool
}

// Increment atomically adds Amount to the 8-byte big-endian counter at
// family:qualifier of Row (HBase's Increment; an absent cell counts as 0).
type Increment struct {
	// Table is the namespaced table name.
	Table string
	// Row is the rowkey.
	Row []byte
	// Family is the column family of the counter.
	Family string
	// Qualifier is the counter's qualifier.
	Qualifier string
	// Amount is added to the counter; may be negative.
	Amount int64
}

// Store is the table API: the data operations. Every method takes the
// request's context; a context that ends aborts the call with the context's
// error. A table that does not exist gives ErrTableNotFound, a column family
// the table lacks ErrFamilyNotFound; other errors are transport or server
// errors of the backend. Tables are created through Admin.
//
// Versions and deletes behave as HBase's NEW_VERSION_BEHAVIOR (HBASE-15968)
// makes them, on every backend: writes to a row apply in the order the store
// receives them, a delete hides only what exists when it is applied (never a
// later Put, even in the same millisecond or at an older timestamp), and a
// version that a delete or newer versions (beyond the family's MaxVersions)
// took away stays away. The remote backend sets NEW_VERSION_BEHAVIOR on
// every family it creates or finds (Admin.EnsureTables); the embedded one
// deletes physically, which reads the same.
type Store interface {
	// Backend returns the backend's name: BackendHBase or BackendEmbedded.
	Backend() string
	// Get reads one row; a missing row gives a Result with no cells, not an error.
	Get(ctx context.Context, g *Get) (*Result, error)
	// GetMany reads many rows (possibly of several tables) in one batched
	// round trip; results are in the order of gets.
	GetMany(ctx context.Context, gets []*Get) ([]*Result, error)
	// Put writes one row atomically.
	Put(ctx context.Context, p *Put) error
	// PutMany writes many rows in one batched round trip. Each row is atomic;
	// the batch is not: on error some rows may have been written.
	PutMany(ctx context.Context, puts []*Put) error
	// Delete deletes from one row atomically.
	Delete(ctx context.Context, d *Delete) error
	// DeleteMany deletes from many rows in one batched round trip; each row is
	// atomic, the batch is not.
	DeleteMany(ctx context.Context, dels []*Delete) error
	// Scan calls fn for each row of the range in rowkey order (descending
	// when s.Reversed), until the range or Limit is exhausted, fn returns an error (returned by Scan unless it
	// is ErrStopScan) or ctx ends.
	Scan(ctx context.Context, s *Scan, fn func(*Result) error) error
	// MutateRow deletes and writes cells of one row in one atomic step
	// (see RowMutation); an invalid mutation is an error and changes
	// nothing.
	MutateRow(ctx context.Context, m *RowMutation) error
	// CheckAndPut applies p only if the newest value of family:qualifier in
	// p's row equals expected; expected nil (or empty) means "the cell is
	// absent or holds an empty value" (HBase's rule). It reports whether p
	// was applied. Check and put are one atomic step.
	CheckAndPut(ctx context.Context, p *Put, family, qualifier string, expected []byte) (bool, error)
	// CheckAndDelete applies d only if the newest value of family:qualifier in
	// d's row equals expected (nil: absent or empty), atomically, and reports
	// whether it was applied.
	CheckAndDelete(ctx context.Context, d *Delete, family, qualifier string, expected []byte) (bool, error)
	// Increment adds to a counter atomically and returns its new value.
	Increment(ctx context.Context, inc *Increment) (int64, error)
	// Ping checks that the store answers (used by /readyz).
	Ping(ctx context.Context) error
	// Close releases the store's resources.
	Close() error
}

// StoreAdmin is what a backend opens: the data operations and the table
// administration of one store (named as io.ReadWriter is). embedded.Open and
// remote.Open return one; the decorators (Instrument, WithNamespace) wrap one.
type StoreAdmin interface {
	Store
	Admin
}

// ScanAll runs s and collects the rows it returns.
func ScanAll(ctx context.Context, st Store, s *Scan) ([]*Result, error) {
	var out []*Result
	err := st.Scan(ctx, s, func(r *Result) error {
		out = append(out, r)
		return nil
	})
	return out, err
}

// PrefixEnd returns the smallest rowkey greater than every key starting with
// prefix (the exclusive stop row of a prefix scan), or nil when there is none
// (prefix is empty or all 0xff).
func PrefixEnd(prefix []byte) []byte {
	end := bytes.Clone(prefix)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// ScanRange returns the effective [start, stop) of s, combining Start, Stop
// and Prefix; a nil stop means "to the end of the table".
func ScanRange(s *Scan) (start, stop []byte) {
	start, stop = s.Start, s.Stop
	if len(s.Prefix) > 0 {
		if bytes.Compare(s.Prefix, start) > 0 {
			start = s.Prefix
		}
		if pe := PrefixEnd(s.Prefix); pe != nil && (stop == nil || bytes.Compare(pe, stop) < 0) {
			stop = pe
		}
	}
	return start, stop
}

// SortCells orders cells as HBase returns them: family, qualifier, then
// newest timestamp first.
func SortCells(cells []*Cell) {
	slices.SortStableFunc(cells, func(a, b *Cell) int {
		return cmp.Or(
			cmp.Compare(a.Family, b.Family),
			cmp.Compare(a.Qualifier, b.Qualifier),
			cmp.Compare(b.Timestamp, a.Timestamp), // newest first
		)
	})
}

// CheckDeleteVersion checks the Timestamp of a Delete of one version (see
// Delete): it must be positive and come with Values naming what to delete.
// Backends call it for every Delete with a Timestamp.
func CheckDeleteVersion(d *Delete) error {
	switch {
	case d.Timestamp < 0:
		return fmt.Errorf("hbase: delete %s %q: negative timestamp %d", d.Table, d.Row, d.Timestamp)
	case d.Timestamp > 0 && len(d.Values) == 0:
		return fmt.Errorf("hbase: delete %s %q: a delete of the version at %d must name its families", d.Table, d.Row, d.Timestamp)
	}
	return nil
}
