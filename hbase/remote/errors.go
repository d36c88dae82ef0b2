package remote

import (
	"cmp"
	"errors"
	"fmt"
	"strings"

	"github.com/tsuna/gohbase"

	"github.com/weibohbase/gateway/hbase"
)

// storeError is a backend error: a short message (a Java exception's first
// line, not its stack trace), the Store sentinel it stands for (if any) and
// gohbase's error, both reachable with errors.Is / errors.As.
type storeError struct {
	msg   string
	kind  error
	cause error
}

func (e *storeError) Error() string { return e.msg }

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
	switch {
	case errors.Is(err, gohbase.TableNotFound), isJava(err, "TableNotFoundException"):
		kind = hbase.ErrTableNotFound
	case isJava(err, "NoSuchColumnFamilyException"):
		kind = hbase.ErrFamilyNotFound
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
	return &storeError{msg: msg, kind: kind, cause: err}
}

// batchError maps the error of call i (0-based) of a batch of n.
func batchError(op string, i, n int, table string, err error) error {
	return mapError(fmt.Sprintf("%s %d of %d in", op, i+1, n), table, err)
}
