package hbase_test

import (
	"errors"
	"testing"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/hbase/embedded"
	"github.com/weibohbase/gateway/hbase/hbasetest"
)

// TestTrace checks the spans of hbase.Trace over the embedded store behind
// hbasetest.Faults: one per call, children of the caller's span, named and
// attributed by op and table, failed with the error's kind only when the
// store failed; and that the decorator keeps the breaker findable.
func TestTrace(t *testing.T) {
	st, err := embedded.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.EnsureTables(t.Context(), "tr", []hbase.TableSpec{{Name: "t", Families: []hbase.FamilySpec{{Name: "f"}}}}); err != nil {
		t.Fatal(err)
	}
	faults := hbasetest.WithFaults(st)
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(t.Context()) }()
	traced := hbase.Trace(faults, tp)

	ctx, parent := tp.Tracer("test").Start(t.Context(), "parent")
	const table = "tr:t"
	put := func(row string) *hbase.Put {
		return &hbase.Put{Table: table, Row: []byte(row), Values: hbase.Values{"f": {"q": []byte("v")}}}
	}
	if err := traced.Put(ctx, put("a")); err != nil {
		t.Fatal(err)
	}
	if err := traced.PutMany(ctx, []*hbase.Put{put("b"), put("c")}); err != nil {
		t.Fatal(err)
	}
	if _, err := traced.GetMany(ctx, nil); err != nil { // no round trip, no span
		t.Fatal(err)
	}
	if _, err := traced.Get(ctx, &hbase.Get{Table: table, Row: []byte("a")}); err != nil {
		t.Fatal(err)
	}
	stop := errors.New("enough")
	n := 0
	err = traced.Scan(ctx, &hbase.Scan{Table: table}, func(*hbase.Result) error {
		if n++; n == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Fatalf("scan: %v", err)
	}
	faults.SetDown(true)
	_, getErr := traced.Get(ctx, &hbase.Get{Table: table, Row: []byte("a")})
	if getErr == nil {
		t.Fatal("get while down succeeded")
	}
	faults.SetDown(false)
	parent.End()

	type want struct {
		name, table string
		rows        int64 // -1: no attribute
		failed      string
	}
	wants := []want{
		{"hbase.put", table, -1, ""},
		{"hbase.put_many", "", 2, ""},
		{"hbase.get", table, -1, ""},
		{"hbase.scan", table, 2, ""},
		{"hbase.get", table, -1, hbase.ErrorKind(getErr)},
	}
	var got []tracetest.SpanStub
	for _, s := range exp.GetSpans() {
		if s.Name != "parent" {
			got = append(got, s)
		}
	}
	if len(got) != len(wants) {
		t.Fatalf("%d spans, want %d: %v", len(got), len(wants), got)
	}
	for i, w := range wants {
		s := got[i]
		attrs := map[string]any{}
		for _, a := range s.Attributes {
			attrs[string(a.Key)] = a.Value.AsInterface()
		}
		if s.Name != w.name || s.Parent.SpanID() != parent.SpanContext().SpanID() {
			t.Errorf("span %d: %q under %v, want %q under the parent", i, s.Name, s.Parent.SpanID(), w.name)
		}
		if attrs["db.system.name"] != hbase.BackendEmbedded || attrs["db.operation.name"] != w.name[len("hbase."):] {
			t.Errorf("span %q: attributes %v", s.Name, attrs)
		}
		if tb, _ := attrs["db.collection.name"].(string); tb != w.table {
			t.Errorf("span %q: table %q, want %q", s.Name, tb, w.table)
		}
		if rows, ok := attrs["gateway.store.rows"].(int64); (w.rows < 0 && ok) || (w.rows >= 0 && rows != w.rows) {
			t.Errorf("span %q: rows %v, want %d", s.Name, attrs["gateway.store.rows"], w.rows)
		}
		switch {
		case w.failed == "" && s.Status.Code == codes.Error:
			t.Errorf("span %q failed: %v", s.Name, s.Status)
		case w.failed != "" && (s.Status.Code != codes.Error || s.Status.Description != w.failed):
			t.Errorf("span %q: status %v, want Error %q", s.Name, s.Status, w.failed)
		}
	}

	// The breaker stays findable through the decorator.
	br := hbase.WithBreaker(faults, hbase.BreakerThreshold(1), hbase.BreakerHealthInterval(0))
	defer br.Close()
	outer := hbase.Trace(br, tp)
	faults.SetDown(true)
	_, _ = outer.Get(t.Context(), &hbase.Get{Table: table, Row: []byte("a")})
	if err := hbase.CheckReady(t.Context(), outer); !errors.Is(err, hbase.ErrUnavailable) {
		t.Errorf("CheckReady through Trace while the breaker is open = %v, want ErrUnavailable", err)
	}
}
