package hbase

import (
	"context"
	"fmt"
	"time"
)

// Admin is table administration, apart from the data operations of Store
// (as gohbase keeps its AdminClient apart from its Client). `gateway migrate`
// needs only EnsureTables; the other methods are destructive and meant for
// tests and tools that create namespaces or tables of their own.
//
// Table names are full names, "namespace:qualifier" ("weibo:users"); a name
// without ':' is in HBase's "default" namespace. Every method waits until the
// change is in effect. Without a deadline in ctx a backend may bound the
// call itself (remote.WithAdminTimeout).
type Admin interface {
	// EnsureTables creates namespace and the tables in it when they do not
	// exist yet, then waits until they serve requests. It is idempotent and
	// safe to call concurrently: an existing table gains the families of
	// its spec that it lacks (empty, with the spec's settings), and its
	// families get the spec's read settings (Bloom, InMemory, Encoding,
	// BlockSize: HBase applies them to the files it writes from then on)
	// and the version semantics Store promises (HBase:
	// NEW_VERSION_BEHAVIOR), keeping their MaxVersions and TTL. Every alter
	// is waited for. It never removes a family. It fails for an invalid
	// namespace, table or family name, a table without families, or an
	// unknown Bloom type or encoding, or a negative block size.
	EnsureTables(ctx context.Context, namespace string, tables []TableSpec) error
	// DisableTable takes table offline: data operations on it fail (the
	// embedded backend's at once, HBase's when their deadline or call
	// timeout ends) until it is deleted. A table already disabled is fine; a
	// missing one gives ErrTableNotFound.
	DisableTable(ctx context.Context, table string) error
	// DeleteTable disables table (if needed) and deletes it with all its
	// data. A missing table gives ErrTableNotFound. EnsureTables may create
	// it again, empty.
	DeleteTable(ctx context.Context, table string) error
	// DropNamespace deletes every table of namespace and then the namespace
	// itself; a missing namespace is fine. It refuses "", "default" and
	// "hbase" (HBase's system namespace).
	DropNamespace(ctx context.Context, namespace string) error
}

// Bloom filter types of a column family, as HBase names them.
const (
	// BloomNone gives the family no bloom filter.
	BloomNone = "NONE"
	// BloomRow filters by rowkey (HBase's default).
	BloomRow = "ROW"
	// BloomRowCol filters by rowkey and column.
	BloomRowCol = "ROWCOL"
)

// FamilySpec describes one column family of a table.
type FamilySpec struct {
	// Name is the family name; keep it short (it is stored with every cell).
	Name string
	// MaxVersions is how many versions of a cell HBase keeps (HBase's VERSIONS); 0 means 1.
	MaxVersions int
	// TTL is how long a cell lives after its timestamp; 0 means forever.
	TTL time.Duration
	// Bloom is the family's bloom filter type (BloomNone, BloomRow, BloomRowCol); "" means BloomRow.
	Bloom string
	// InMemory asks HBase to favour this family in the block cache.
	InMemory bool
	// Encoding is the family's data block encoding (EncodingNone,
	// EncodingFastDiff, EncodingRowIndex, ...); "" means EncodingNone.
	Encoding string
	// BlockSize is the size of the family's HFile blocks in bytes (HBase's
	// BLOCKSIZE): smaller blocks suit point reads, larger ones scans; 0
	// means HBase's default, DefaultBlockSize.
	BlockSize int
	// MOB stores the family's values above MOBThreshold as medium objects
	// (HBase's IS_MOB): kept in files of their own, outside the regions'
	// HFiles, so that compactions do not rewrite them. For values of
	// about 100 KB to 10 MB (pictures). The embedded store keeps them as
	// any other value.
	MOB bool
	// MOBThreshold is the size in bytes above which a value of a MOB
	// family is a medium object (HBase's MOB_THRESHOLD); 0 means
	// DefaultMOBThreshold. Ignored without MOB.
	MOBThreshold int
}

// DefaultMOBThreshold is HBase's default MOB threshold, 100 KiB.
const DefaultMOBThreshold = 100 << 10

// Data block encodings of a column family, as HBase names them. An
// encoding stores a block's keys against the keys before them.
const (
	// EncodingNone stores every key whole (HBase's default).
	EncodingNone = "NONE"
	// EncodingFastDiff stores each key as its difference from the one
	// before: much smaller blocks for tall tables of long shared prefixes.
	EncodingFastDiff = "FAST_DIFF"
	// EncodingRowIndex keeps the keys whole and adds an index of the
	// block's rows, for point reads that binary-search a block.
	EncodingRowIndex = "ROW_INDEX_V1"
)

// DefaultBlockSize is HBase's default HFile block size, 64 KiB.
const DefaultBlockSize = 64 << 10

// TableSpec describes one table for Admin.EnsureTables.
type TableSpec struct {
	// Name is the table's qualifier, without the namespace ("users").
	Name string
	// Families are the table's column families.
	Families []FamilySpec
	// SplitKeys pre-split the table into len(SplitKeys)+1 regions (HBase only;
	// the embedded backend has no regions and ignores them).
	SplitKeys [][]byte
}

// CheckFamily reports what makes f unusable, naming table: an unknown
// Bloom type or encoding (HBase's NONE, PREFIX, DIFF, FAST_DIFF,
// ROW_INDEX_V1), or a negative MaxVersions, TTL, BlockSize or MOBThreshold.
func CheckFamily(table string, f FamilySpec) error {
	switch f.Bloom {
	case "", BloomNone, BloomRow, BloomRowCol:
	default:
		return fmt.Errorf("hbase: table %s: family %q: unknown bloom filter %q", table, f.Name, f.Bloom)
	}
	switch f.Encoding {
	case "", EncodingNone, "PREFIX", "DIFF", EncodingFastDiff, EncodingRowIndex:
	default:
		return fmt.Errorf("hbase: table %s: family %q: unknown data block encoding %q", table, f.Name, f.Encoding)
	}
	if f.MaxVersions < 0 || f.TTL < 0 || f.BlockSize < 0 || f.MOBThreshold < 0 {
		return fmt.Errorf("hbase: table %s: family %q: negative MaxVersions, TTL, BlockSize or MOBThreshold", table, f.Name)
	}
	return nil
}
