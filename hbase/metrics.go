package hbase

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
)

// StoreCalls is the Prometheus counter gateway_store_calls_total{backend, op}:
// one increment per store round trip (a GetMany, PutMany or DeleteMany is
// one batched round trip; a Scan counts once however many rows it streams).
// Admin calls count too, under their own ops (ensure_tables, ...). It is
// registered on the default registry when the package loads; Instrument
// feeds it.
var StoreCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "gateway_store_calls_total",
	Help: "Store round trips, by backend (hbase, embedded) and operation.",
}, []string{"backend", "op"})

// StoreErrors is the Prometheus counter
// gateway_store_errors_total{backend, op, kind}: one increment per store
// call that failed, by ErrorKind (timeout, region_moved, unavailable,
// breaker_open, not_found, canceled, other). Instrument counts the calls it
// sends; a Breaker counts the calls it refuses (kind breaker_open). A
// Scan's callback errors are not store errors and are not counted.
var StoreErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "gateway_store_errors_total",
	Help: "Store calls that failed, by backend, operation and kind (timeout, region_moved, unavailable, breaker_open, not_found, canceled, other).",
}, []string{"backend", "op", "kind"})

// BreakerState is the Prometheus gauge gateway_store_breaker_state: the
// state of the store's circuit breaker (Breaker), 0 closed, 1 half-open
// (probing), 2 open. It stays 0 without a breaker (the embedded store).
var BreakerState = prometheus.NewGauge(prometheus.GaugeOpts{
	Name: "gateway_store_breaker_state",
	Help: "State of the store's circuit breaker: 0 closed, 1 half-open (probing), 2 open.",
})

func init() { prometheus.MustRegister(StoreCalls, StoreErrors, BreakerState) }

// CallCounter receives one call per store operation; Instrument feeds
// StoreCalls and any extra counters (tests count per request with one).
type CallCounter func(ctx context.Context, backend, op string)

type callCounterKey struct{}

// WithCallCounter returns ctx whose store calls are also reported to c.
func WithCallCounter(ctx context.Context, c CallCounter) context.Context {
	return context.WithValue(ctx, callCounterKey{}, c)
}

// Instrument wraps b so that every call, data operation or administration,
// increments gateway_store_calls_total{backend=b.Backend(), op} and the
// CallCounter of the call's context, if any, and every failed data call
// gateway_store_errors_total{backend, op, kind}. Backend and Close are not
// counted; empty GetMany, PutMany and DeleteMany calls (no round trip) are not
// either.
func Instrument(b StoreAdmin) StoreAdmin { return &instrumented{StoreAdmin: b, backend: b.Backend()} }

type instrumented struct {
	StoreAdmin
	backend string
}

// Unwrap returns the store being instrumented.
func (s *instrumented) Unwrap() StoreAdmin { return s.StoreAdmin }

func (s *instrumented) count(ctx context.Context, op string) {
	StoreCalls.WithLabelValues(s.backend, op).Inc()
	if c, ok := ctx.Value(callCounterKey{}).(CallCounter); ok {
		c(ctx, s.backend, op)
	}
}

// failed counts err, if any, in gateway_store_errors_total and returns it.
func (s *instrumented) failed(op string, err error) error {
	if err != nil {
		StoreErrors.WithLabelValues(s.backend, op, ErrorKind(err)).Inc()
	}
	return err
}

func (s *instrumented) EnsureTables(ctx context.Context, ns string, t []TableSpec) error {
	s.count(ctx, "ensure_tables")
	return s.StoreAdmin.EnsureTables(ctx, ns, t)
}

func (s *instrumented) DisableTable(ctx context.Context, table string) error {
	s.count(ctx, "disable_table")
	return s.StoreAdmin.DisableTable(ctx, table)
}

func (s *instrumented) DeleteTable(ctx context.Context, table string) error {
	s.count(ctx, "delete_table")
	return s.StoreAdmin.DeleteTable(ctx, table)
}

func (s *instrumented) DropNamespace(ctx context.Context, ns string) error {
	s.count(ctx, "drop_namespace")
	return s.StoreAdmin.DropNamespace(ctx, ns)
}

func (s *instrumented) Get(ctx context.Context, g *Get) (*Result, error) {
	s.count(ctx, "get")
	r, err := s.StoreAdmin.Get(ctx, g)
	return r, s.failed("get", err)
}

func (s *instrumented) GetMany(ctx context.Context, gets []*Get) ([]*Result, error) {
	if len(gets) == 0 {
		return nil, nil
	}
	s.count(ctx, "get_many")
	rs, err := s.StoreAdmin.GetMany(ctx, gets)
	return rs, s.failed("get_many", err)
}

func (s *instrumented) Put(ctx context.Context, p *Put) error {
	s.count(ctx, "put")
	return s.failed("put", s.StoreAdmin.Put(ctx, p))
}

func (s *instrumented) PutMany(ctx context.Context, puts []*Put) error {
	if len(puts) == 0 {
		return nil
	}
	s.count(ctx, "put_many")
	return s.failed("put_many", s.StoreAdmin.PutMany(ctx, puts))
}

func (s *instrumented) Delete(ctx context.Context, d *Delete) error {
	s.count(ctx, "delete")
	return s.failed("delete", s.StoreAdmin.Delete(ctx, d))
}

func (s *instrumented) DeleteMany(ctx context.Context, dels []*Delete) error {
	if len(dels) == 0 {
		return nil
	}
	s.count(ctx, "delete_many")
	return s.failed("delete_many", s.StoreAdmin.DeleteMany(ctx, dels))
}

func (s *instrumented) Scan(ctx context.Context, sc *Scan, fn func(*Result) error) error {
	s.count(ctx, "scan")
	var fnErr error
	err := s.StoreAdmin.Scan(ctx, sc, func(r *Result) error {
		fnErr = fn(r)
		return fnErr
	})
	if err != nil && err == fnErr {
		return err // the callback's own error, not the store's
	}
	return s.failed("scan", err)
}

func (s *instrumented) CheckAndPut(ctx context.Context, p *Put, f, q string, exp []byte) (bool, error) {
	s.count(ctx, "check_and_put")
	ok, err := s.StoreAdmin.CheckAndPut(ctx, p, f, q, exp)
	return ok, s.failed("check_and_put", err)
}

func (s *instrumented) MutateRow(ctx context.Context, m *RowMutation) error {
	s.count(ctx, "mutate_row")
	return s.failed("mutate_row", s.StoreAdmin.MutateRow(ctx, m))
}

func (s *instrumented) CheckAndDelete(ctx context.Context, d *Delete, f, q string, exp []byte) (bool, error) {
	s.count(ctx, "check_and_delete")
	ok, err := s.StoreAdmin.CheckAndDelete(ctx, d, f, q, exp)
	return ok, s.failed("check_and_delete", err)
}

func (s *instrumented) Increment(ctx context.Context, inc *Increment) (int64, error) {
	s.count(ctx, "increment")
	v, err := s.StoreAdmin.Increment(ctx, inc)
	return v, s.failed("increment", err)
}

func (s *instrumented) Ping(ctx context.Context) error {
	s.count(ctx, "ping")
	return s.failed("ping", s.StoreAdmin.Ping(ctx))
}
