package remote

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"

	"github.com/weibohbase/gateway/hbase"
)

// storeError is a backend error: a short message (a Java exception's first
// line, not its stack trace), the Store sentinel it stands for (if any),
// its kind for metrics (hbase.ErrorKind; "" lets ErrorKind decide) and
// gohbase's error, the sentinel and the cause reachable with errors.Is /
// errors.As.
type storeError struct {
	msg     string
	kind    error
	errKind string
	cause   error
}

func (e *storeError) Error() string { return e.msg }

// ErrorKind returns the error's hbase.Kind* value, or "" to let
// hbase.ErrorKind classify it by its sentinel.
func (e *storeError) ErrorKind() string { return e.errKind }

func (e *storeError) Unwrap() []error {
	if e.kind == nil {
		return []error{e.cause}
	}
	return []error{e.kind, e.cause}
}

// javaException splits a gohbase error carrying a Java exception ("HBase Java
// exception CLASS:\nSTACK") into the class and the stack's first line.
func javaException(err error) (class, first string, ok bool) {
	const prefix = "HBase Java exception "
	msg := err.Error()
	i := strings.Index(msg, prefix)
	if i < 0 {
		return "", "", false
	}
	class, stack, _ := strings.Cut(msg[i+len(prefix):], ":\n")
	first, _, _ = strings.Cut(stack, "\n")
	return class, strings.TrimSpace(cmp.Or(first, class)), true
}

// isJava reports whether err carries the Java exception named simpleName
// (the class name without package).
func isJava(err error, simpleName string) bool {
	class, _, ok := javaException(err)
	return ok && (class == simpleName || strings.HasSuffix(class, "."+simpleName))
}

// maxDetail bounds, in runes, the Java exception message kept in an error.
const maxDetail = 240

// mapError turns a gohbase error of operation op on table into a storeError:
// ErrTableNotFound for TableNotFoundException (or gohbase's TableNotFound),
// ErrFamilyNotFound for NoSuchColumnFamilyException. Context errors keep
// their identity (errors.Is(err, context.DeadlineExceeded) holds).
func mapError(op, table string, err error) error {
	if err == nil {
		return nil
	}
	var kind error
	errKind := ""
	switch {
	case errors.Is(err, gohbase.TableNotFound), isJava(err, "TableNotFoundException"):
		kind = hbase.ErrTableNotFound
	case isJava(err, "NoSuchColumnFamilyException"):
		kind = hbase.ErrFamilyNotFound
	case errors.Is(err, gohbase.ErrClientClosed):
		// The store was closed, or its connection replaced after an
		// outage (Store.Probe) while the call waited.
		kind, errKind = hbase.ErrUnavailable, hbase.KindUnavailable
	}
	detail := err.Error()
	if _, first, ok := javaException(err); ok {
		detail = first
		// Some messages append the whole table descriptor; keep the gist.
		if r := []rune(detail); len(r) > maxDetail {
			detail = string(r[:maxDetail]) + "…"
		}
	}
	msg := fmt.Sprintf("hbase: %s %q: %s", op, table, detail)
	if kind != nil {
		msg = fmt.Sprintf("%v: %s %q: %s", kind, op, table, detail)
	}
	return &storeError{msg: msg, kind: kind, errKind: errKind, cause: err}
}

// errCallTimeout is the cause of a call's context that ran out of the
// store's call timeout (WithCallTimeout), as opposed to the caller's own
// deadline or cancellation.
var errCallTimeout = errors.New("hbase: call timeout")

// callError maps the error of a data call sent with ctx (from
// Store.callCtx). When the call ran out of the call timeout it is
// hbase.ErrUnavailable, of kind region_moved when one of calls was waiting
// for its region to be located again, unavailable when one had no region
// yet (hbase:meta or ZooKeeper did not answer), timeout otherwise (and for
// calls that name no hrpc.Call, such as a scan). Other errors go through
// mapError.
func callError(ctx context.Context, op, table string, err error, calls ...hrpc.Call) error {
	if err == nil {
		return nil
	}
	if ctx.Err() == nil || !errors.Is(context.Cause(ctx), errCallTimeout) {
		return mapError(op, table, err)
	}
	kind, why := hbase.KindTimeout, "the region server did not answer"
	for _, c := range calls {
		switch r := c.Region(); {
		case r == nil:
			kind, why = hbase.KindUnavailable, "its region could not be located (hbase:meta or ZooKeeper did not answer)"
		case r.AvailabilityChan() != nil && kind != hbase.KindUnavailable:
			kind, why = hbase.KindRegionMoved, "its region was being located again (moving, splitting, closing or reassigned)"
		}
	}
	return &storeError{
		msg:     fmt.Sprintf("%v: %s %q: no answer within the call timeout: %s", hbase.ErrUnavailable, op, table, why),
		kind:    hbase.ErrUnavailable,
		errKind: kind,
		cause:   err,
	}
}

// batchError maps the error of call i (0-based) of a batch of n calls
// sent with ctx.
func batchError(ctx context.Context, op string, i, n int, table string, err error, calls []hrpc.Call) error {
	return callError(ctx, fmt.Sprintf("%s %d of %d in", op, i+1, n), table, err, calls...)
}
