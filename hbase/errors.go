package hbase

import (
	"context"
	"errors"
	"time"
)

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
	// ErrUnavailable is wrapped by every error that means "the store cannot
	// answer now, try again later": a call that ran out of its own call
	// timeout (not the caller's deadline), a connection the backend lost, a
	// call the circuit breaker refused (Breaker). A write that fails so may
	// or may not have been applied. The GraphQL layer answers such errors
	// with extensions.code UNAVAILABLE and HTTP 503.
	ErrUnavailable = errors.New("hbase: store unavailable")
)

// Kinds of store call errors, the "kind" label of gateway_store_errors_total
// (ErrorKind).
const (
	// KindTimeout: the call ran out of its call timeout while its region was
	// served (the region server is slow or does not answer).
	KindTimeout = "timeout"
	// KindRegionMoved: the call ran out of its call timeout while the
	// backend was locating its region again — the region was moving,
	// splitting or closing, or its region server had died and the master had
	// not reassigned it yet.
	KindRegionMoved = "region_moved"
	// KindUnavailable: the backend could not reach HBase (connection lost or
	// closed) before the call timeout.
	KindUnavailable = "unavailable"
	// KindBreakerOpen: the circuit breaker refused the call without sending it.
	KindBreakerOpen = "breaker_open"
	// KindNotFound: the table or column family does not exist.
	KindNotFound = "not_found"
	// KindCanceled: the caller's context ended first (the client went away
	// or the request's own deadline passed).
	KindCanceled = "canceled"
	// KindOther: any other error (a server-side exception, a bad request).
	KindOther = "other"
)

// ErrorKind classifies a store call's error for metrics and logs: the kind
// an error carries (a backend's errors implement `ErrorKind() string`), else
// KindNotFound for ErrTableNotFound and ErrFamilyNotFound, KindCanceled for
// context errors, KindUnavailable for ErrUnavailable and KindOther for the
// rest. ErrorKind(nil) is "".
func ErrorKind(err error) string {
	if err == nil {
		return ""
	}
	if k, ok := errors.AsType[interface {
		error
		ErrorKind() string
	}](err); ok {
		if kind := k.ErrorKind(); kind != "" {
			return kind
		}
	}
	switch {
	case errors.Is(err, ErrTableNotFound), errors.Is(err, ErrFamilyNotFound):
		return KindNotFound
	case errors.Is(err, ErrUnavailable):
		return KindUnavailable
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return KindCanceled
	}
	return KindOther
}

// RetryAfter returns how long a caller should wait before retrying after
// err, when err wraps ErrUnavailable: the wait the error names (a breaker's
// next probe), at least one second; 0 for other errors.
func RetryAfter(err error) time.Duration {
	if !errors.Is(err, ErrUnavailable) {
		return 0
	}
	if r, ok := errors.AsType[interface {
		error
		RetryAfter() time.Duration
	}](err); ok {
		return max(r.RetryAfter(), time.Second)
	}
	return time.Second
}
