package server

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/weibohbase/gateway/hbase"
)

// CodeUnavailable is the extensions.code of an error whose cause is the
// store being away (hbase.ErrUnavailable: a store call ran out of its call
// timeout, or the circuit breaker is open). The response is HTTP 503 with a
// Retry-After header, and the error's extensions.retryAfter says the same
// in seconds; retrying later is safe for queries, and for mutations as
// safe as after any failed write (it may or may not have been applied).
const CodeUnavailable = "UNAVAILABLE"

// presentUnavailable turns gerr into an UNAVAILABLE error when err wraps
// hbase.ErrUnavailable, records the wait for the HTTP status (unavailable
// middleware) and reports whether it did.
func presentUnavailable(ctx context.Context, gerr *gqlerror.Error, err error) bool {
	if !errors.Is(err, hbase.ErrUnavailable) {
		return false
	}
	secs := int64(math.Ceil(hbase.RetryAfter(err).Seconds()))
	gerr.Message = "the data store is unavailable; retry in " + strconv.FormatInt(secs, 10) + " s"
	gerr.Extensions = map[string]any{"code": CodeUnavailable, "retryAfter": secs}
	if w, ok := ctx.Value(unavailableKey{}).(*atomic.Int64); ok {
		for {
			old := w.Load()
			if old >= secs || w.CompareAndSwap(old, secs) {
				break
			}
		}
	}
	return true
}

type unavailableKey struct{}

// unavailable gives a GraphQL request's store calls one shared call
// timeout (hbase.ShareCallTimeout: a request waits for a slow or absent
// store about one call timeout in all), and answers a request that met an
// UNAVAILABLE error with HTTP 503 and Retry-After instead of 200 (other
// statuses are left alone). WebSocket upgrades pass through untouched.
func unavailable(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
			next.ServeHTTP(w, r)
			return
		}
		wait := new(atomic.Int64)
		uw := &unavailableWriter{ResponseWriter: w, wait: wait}
		ctx := hbase.ShareCallTimeout(context.WithValue(r.Context(), unavailableKey{}, wait))
		next.ServeHTTP(uw, r.WithContext(ctx))
	})
}

// unavailableWriter turns a 200 into a 503 with Retry-After when the request
// recorded a wait.
type unavailableWriter struct {
	http.ResponseWriter
	wait        *atomic.Int64
	wroteHeader bool
}

// WriteHeader writes the status, 503 instead of 200 after an UNAVAILABLE error.
func (w *unavailableWriter) WriteHeader(code int) {
	if !w.wroteHeader {
		w.wroteHeader = true
		if secs := w.wait.Load(); secs > 0 && code == http.StatusOK {
			w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
			code = http.StatusServiceUnavailable
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write writes the body, the status first if not written yet.
func (w *unavailableWriter) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap gives http.ResponseController the underlying writer.
func (w *unavailableWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush flushes the underlying writer when it can.
func (w *unavailableWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		if !w.wroteHeader {
			w.WriteHeader(http.StatusOK)
		}
		f.Flush()
	}
}

// ready answers /readyz: from the circuit breaker's state when the store
// has one (no round trip), else by pinging the store within ctx.
func ready(ctx context.Context, st hbase.Store) error { return hbase.CheckReady(ctx, st) }
