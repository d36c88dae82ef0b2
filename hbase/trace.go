package hbase

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// TracerName is the instrumentation scope of the store-call spans.
const TracerName = "github.com/weibohbase/gateway/hbase"

// Trace wraps b so that every call, data operation or administration, is an
// OpenTelemetry span (kind client) of tp (nil: the global provider,
// otel.GetTracerProvider), child of the span in the call's context (the
// GraphQL operation's, server.Config.TracerProvider). Spans are named
// "hbase.<op>" with the ops of gateway_store_calls_total (get, get_many,
// scan, ...); attributes: db.system.name (the backend), db.operation.name
// (op), db.collection.name (the table, for single-table calls) and
// gateway.store.rows (the batch size of get_many, put_many, delete_many;
// the rows a scan returned). A failed call sets the span's status to Error
// with its ErrorKind (a Scan's callback errors are not store errors).
// Never rowkeys or values. Backend and Close are not traced; empty batches
// (no round trip) are not either.
func Trace(b StoreAdmin, tp trace.TracerProvider) StoreAdmin {
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	return &traced{StoreAdmin: b, backend: b.Backend(), tracer: tp.Tracer(TracerName)}
}

type traced struct {
	StoreAdmin
	backend string
	tracer  trace.Tracer
}

// Unwrap returns the store being traced.
func (s *traced) Unwrap() StoreAdmin { return s.StoreAdmin }

// start begins the span of op on table ("" for several or none).
func (s *traced) start(ctx context.Context, op, table string, extra ...attribute.KeyValue) (context.Context, trace.Span) {
	attrs := append([]attribute.KeyValue{attribute.String("db.system.name", s.backend), attribute.String("db.operation.name", op)}, extra...)
	if table != "" {
		attrs = append(attrs, attribute.String("db.collection.name", table))
	}
	return s.tracer.Start(ctx, "hbase."+op, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
}

// end ends span, failed when err is not nil, and returns err.
func end(span trace.Span, err error) error {
	if err != nil {
		span.SetStatus(codes.Error, ErrorKind(err))
	}
	span.End()
	return err
}

func rows(n int) attribute.KeyValue { return attribute.Int("gateway.store.rows", n) }

func (s *traced) EnsureTables(ctx context.Context, ns string, t []TableSpec) error {
	ctx, span := s.start(ctx, "ensure_tables", "", attribute.String("db.namespace", ns))
	return end(span, s.StoreAdmin.EnsureTables(ctx, ns, t))
}

func (s *traced) DisableTable(ctx context.Context, table string) error {
	ctx, span := s.start(ctx, "disable_table", table)
	return end(span, s.StoreAdmin.DisableTable(ctx, table))
}

func (s *traced) DeleteTable(ctx context.Context, table string) error {
	ctx, span := s.start(ctx, "delete_table", table)
	return end(span, s.StoreAdmin.DeleteTable(ctx, table))
}

func (s *traced) DropNamespace(ctx context.Context, ns string) error {
	ctx, span := s.start(ctx, "drop_namespace", "", attribute.String("db.namespace", ns))
	return end(span, s.StoreAdmin.DropNamespace(ctx, ns))
}

func (s *traced) Get(ctx context.Context, g *Get) (*Result, error) {
	ctx, span := s.start(ctx, "get", g.Table)
	r, err := s.StoreAdmin.Get(ctx, g)
	return r, end(span, err)
}

func (s *traced) GetMany(ctx context.Context, gets []*Get) ([]*Result, error) {
	if len(gets) == 0 {
		return s.StoreAdmin.GetMany(ctx, gets)
	}
	ctx, span := s.start(ctx, "get_many", "", rows(len(gets)))
	rs, err := s.StoreAdmin.GetMany(ctx, gets)
	return rs, end(span, err)
}

func (s *traced) Put(ctx context.Context, p *Put) error {
	ctx, span := s.start(ctx, "put", p.Table)
	return end(span, s.StoreAdmin.Put(ctx, p))
}

func (s *traced) PutMany(ctx context.Context, puts []*Put) error {
	if len(puts) == 0 {
		return s.StoreAdmin.PutMany(ctx, puts)
	}
	ctx, span := s.start(ctx, "put_many", "", rows(len(puts)))
	return end(span, s.StoreAdmin.PutMany(ctx, puts))
}

func (s *traced) Delete(ctx context.Context, d *Delete) error {
	ctx, span := s.start(ctx, "delete", d.Table)
	return end(span, s.StoreAdmin.Delete(ctx, d))
}

func (s *traced) DeleteMany(ctx context.Context, dels []*Delete) error {
	if len(dels) == 0 {
		return s.StoreAdmin.DeleteMany(ctx, dels)
	}
	ctx, span := s.start(ctx, "delete_many", "", rows(len(dels)))
	return end(span, s.StoreAdmin.DeleteMany(ctx, dels))
}

func (s *traced) Scan(ctx context.Context, sc *Scan, fn func(*Result) error) error {
	ctx, span := s.start(ctx, "scan", sc.Table)
	var (
		fnErr error
		n     int
	)
	err := s.StoreAdmin.Scan(ctx, sc, func(r *Result) error {
		n++
		fnErr = fn(r)
		return fnErr
	})
	span.SetAttributes(rows(n))
	if err != nil && err == fnErr {
		span.End()
		return err // the callback's own error, not the store's
	}
	return end(span, err)
}

func (s *traced) CheckAndPut(ctx context.Context, p *Put, f, q string, exp []byte) (bool, error) {
	ctx, span := s.start(ctx, "check_and_put", p.Table)
	ok, err := s.StoreAdmin.CheckAndPut(ctx, p, f, q, exp)
	span.SetAttributes(attribute.Bool("gateway.store.applied", ok))
	return ok, end(span, err)
}

func (s *traced) MutateRow(ctx context.Context, m *RowMutation) error {
	ctx, span := s.start(ctx, "mutate_row", m.Table)
	return end(span, s.StoreAdmin.MutateRow(ctx, m))
}

func (s *traced) CheckAndDelete(ctx context.Context, d *Delete, f, q string, exp []byte) (bool, error) {
	ctx, span := s.start(ctx, "check_and_delete", d.Table)
	ok, err := s.StoreAdmin.CheckAndDelete(ctx, d, f, q, exp)
	span.SetAttributes(attribute.Bool("gateway.store.applied", ok))
	return ok, end(span, err)
}

func (s *traced) Increment(ctx context.Context, inc *Increment) (int64, error) {
	ctx, span := s.start(ctx, "increment", inc.Table)
	v, err := s.StoreAdmin.Increment(ctx, inc)
	return v, end(span, err)
}

func (s *traced) Ping(ctx context.Context) error {
	ctx, span := s.start(ctx, "ping", "")
	return end(span, s.StoreAdmin.Ping(ctx))
}
