package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/go-chi/chi/v5/middleware"
)

// RequestIDHeader is the header that carries a request's id, both ways: a
// client (or a proxy in front) may send one, and every response has one.
const RequestIDHeader = "X-Request-Id"

// MaxRequestIDLength bounds an incoming request id, in bytes.
const MaxRequestIDLength = 64

// requestID gives each request an id: the incoming X-Request-Id when it
// is sane (1 to 64 bytes of [A-Za-z0-9._-]), else 24 random hex digits. The
// id goes into the request's context (middleware.GetReqID reads it, as
// with chi's middleware.RequestID), into the X-Request-Id response header
// and into every log line of the request (LogHandler).
func requestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(RequestIDHeader)
		if !saneRequestID(id) {
			id = newRequestID()
		}
		w.Header().Set(RequestIDHeader, id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), middleware.RequestIDKey, id)))
	})
}

// saneRequestID reports whether id may be used as it came.
func saneRequestID(id string) bool {
	if id == "" || len(id) > MaxRequestIDLength {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if c != '.' && c != '_' && c != '-' && !('a' <= c && c <= 'z') && !('A' <= c && c <= 'Z') && !('0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// newRequestID returns 12 random bytes in hex.
func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// maxLoggedOperations bounds the operation names one access log line
// lists (a batch, or a WebSocket connection's subscriptions).
const maxLoggedOperations = 10

// accessRecord is what the parts of one request tell its access log line:
// the names of its GraphQL operations.
type accessRecord struct {
	mu    sync.Mutex
	ops   []string
	extra int
}

type accessKey struct{}

// recordOperation adds the GraphQL operation name to the access log record
// of ctx's request, if any ("" for an unnamed operation).
func recordOperation(ctx context.Context, name string) {
	rec, _ := ctx.Value(accessKey{}).(*accessRecord)
	if rec == nil {
		return
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.ops) >= maxLoggedOperations {
		rec.extra++
		return
	}
	rec.ops = append(rec.ops, logName(name))
}

// operations returns the names recorded, comma-separated, with "+N" for
// those over maxLoggedOperations; ok is false when there are none (the
// request was not a GraphQL operation).
func (rec *accessRecord) operations() (names string, ok bool) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.ops) == 0 {
		return "", false
	}
	s := strings.Join(rec.ops, ",")
	if rec.extra > 0 {
		s += ",+" + strconv.Itoa(rec.extra)
	}
	return s, true
}

// logName shortens an operation name for a log line to MaxLabelLength
// bytes (GraphQL names are ASCII).
func logName(name string) string {
	if len(name) > MaxLabelLength {
		return name[:MaxLabelLength] + "…"
	}
	return name
}

// accessLog logs one structured line per request: method, path, status,
// bytes, duration, and (LogHandler) the request id and the GraphQL
// operation names. Never headers, bodies or variables.
func accessLog(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
			start := time.Now()
			rec := &accessRecord{}
			ctx := context.WithValue(r.Context(), accessKey{}, rec)
			next.ServeHTTP(ww, r.WithContext(ctx))
			log.LogAttrs(ctx, slog.LevelInfo, "http",
				slog.String("method", r.Method), slog.String("path", r.URL.Path),
				slog.Int("status", ww.Status()), slog.Int("bytes", ww.BytesWritten()),
				slog.Duration("duration", time.Since(start)))
		})
	}
}

// LogHandler wraps h so that every record logged with a request's context
// (slog's *Context methods, LogAttrs) carries request_id, the request's
// id, and, in a GraphQL request, operation: the operation's name ("" for
// an unnamed one; for an access log line, the names of the request's
// operations, comma-separated), unless the record has them already. Records logged
// without such a context pass unchanged. Wrapping twice is wrapping once.
func LogHandler(h slog.Handler) slog.Handler {
	if _, ok := h.(*logHandler); ok {
		return h
	}
	return &logHandler{h: h}
}

type logHandler struct{ h slog.Handler }

// Enabled implements slog.Handler.
func (l *logHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return l.h.Enabled(ctx, level)
}

// Handle implements slog.Handler.
func (l *logHandler) Handle(ctx context.Context, r slog.Record) error {
	if ctx == nil {
		return l.h.Handle(ctx, r)
	}
	id := middleware.GetReqID(ctx)
	op, hasOp := "", false
	if graphql.HasOperationContext(ctx) {
		if o := graphql.GetOperationContext(ctx).Operation; o != nil {
			op, hasOp = logName(o.Name), true
		}
	}
	if !hasOp {
		if rec, ok := ctx.Value(accessKey{}).(*accessRecord); ok {
			op, hasOp = rec.operations()
		}
	}
	if id == "" && !hasOp {
		return l.h.Handle(ctx, r)
	}
	hasID := false
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "request_id":
			hasID = true
		case "operation":
			hasOp = false
		}
		return true
	})
	r = r.Clone()
	if id != "" && !hasID {
		r.AddAttrs(slog.String("request_id", id))
	}
	if hasOp {
		r.AddAttrs(slog.String("operation", op))
	}
	return l.h.Handle(ctx, r)
}

// WithAttrs implements slog.Handler.
func (l *logHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &logHandler{h: l.h.WithAttrs(as)}
}

// WithGroup implements slog.Handler.
func (l *logHandler) WithGroup(name string) slog.Handler {
	return &logHandler{h: l.h.WithGroup(name)}
}
