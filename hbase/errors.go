package hbase

import "errors"

// Errors returned by every backend; match them with errors.Is (backends wrap
// them with the operation and the table).
var (
	// ErrTableNotFound is returned when a request names a table that was never
	// created with Admin.EnsureTables (or was deleted since).
	ErrTableNotFound = errors.New("hbase: table not found")
	// ErrFamilyNotFound is returned when a mutation names a column family the
	// table does not have.
	ErrFamilyNotFound = errors.New("hbase: column family not found")
	// ErrStopScan may be returned by a Scan callback to end the scan early;
	// Scan then returns nil.
	ErrStopScan = errors.New("hbase: stop scan")
	// ErrUnboundedReverse is returned by Scan for a reversed scan whose
	// range has no end (neither Stop nor a Prefix with an end).
	ErrUnboundedReverse = errors.New("hbase: a reversed scan needs Stop or a Prefix")
)
