package hbase_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/hbase/embedded"
	"github.com/weibohbase/gateway/hbase/hbasetest"
)

// The breaker is tested over the embedded store behind hbasetest.Faults,
// whose backend goes away on demand; the real outages are in the cluster
// tests (cmd/gateway, TestCluster…).

const breakerTable = "bt:t"

// newBreaker returns a breaker over a fault-injecting embedded store with
// table breakerTable, and the injector.
func newBreaker(t *testing.T, opts ...hbase.BreakerOption) (*hbase.Breaker, *hbasetest.Faults) {
	t.Helper()
	st, err := embedded.Open("")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.EnsureTables(t.Context(), "bt", []hbase.TableSpec{{Name: "t", Families: []hbase.FamilySpec{{Name: "f"}}}}); err != nil {
		t.Fatal(err)
	}
	f := hbasetest.WithFaults(st)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	opts = append([]hbase.BreakerOption{hbase.BreakerOpenFor(100 * time.Millisecond), hbase.BreakerLogger(quiet),
		hbase.BreakerHealthInterval(0)}, opts...)
	br := hbase.WithBreaker(f, opts...)
	t.Cleanup(func() { _ = br.Close() })
	return br, f
}

func get(ctx context.Context, st hbase.Store) error {
	_, err := st.Get(ctx, &hbase.Get{Table: breakerTable, Row: []byte("r")})
	return err
}

// waitState polls the breaker's readiness until it is want (nil: ready),
// failing t after limit.
func waitReady(t *testing.T, br *hbase.Breaker, ready bool, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for (br.Ready() == nil) != ready {
		if time.Since(start) > limit {
			t.Fatalf("breaker ready=%v after %v, want %v (gauge %v)", br.Ready() == nil, limit, ready, testutil.ToFloat64(hbase.BreakerState))
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Since(start)
}

func TestBreakerOpensFailsFastAndRecovers(t *testing.T) {
	br, faults := newBreaker(t, hbase.BreakerThreshold(3))
	ctx := t.Context()
	if err := get(ctx, br); err != nil {
		t.Fatalf("Get while up: %v", err)
	}
	if err := br.Ready(); err != nil {
		t.Fatalf("Ready while up: %v", err)
	}

	faults.SetDown(true)
	for i := range 3 {
		if err := get(ctx, br); !errors.Is(err, hbase.ErrUnavailable) || hbase.ErrorKind(err) != hbase.KindTimeout {
			t.Fatalf("call %d while down: %v (kind %q), want ErrUnavailable of kind timeout", i+1, err, hbase.ErrorKind(err))
		}
	}
	if err := br.Ready(); !errors.Is(err, hbase.ErrUnavailable) {
		t.Fatalf("Ready after 3 failures = %v, want ErrUnavailable", err)
	}
	if got := testutil.ToFloat64(hbase.BreakerState); got == 0 {
		t.Errorf("gateway_store_breaker_state = %v while open, want 1 or 2", got)
	}
	refusedBefore := testutil.ToFloat64(hbase.StoreErrors.WithLabelValues(hbase.BackendEmbedded, "get", hbase.KindBreakerOpen))
	start := time.Now()
	err := get(ctx, br)
	if d := time.Since(start); d >= faults.Hang {
		t.Errorf("a call while open took %v, longer than a failing call (%v): not failing fast", d, faults.Hang)
	}
	if !errors.Is(err, hbase.ErrUnavailable) || hbase.ErrorKind(err) != hbase.KindBreakerOpen {
		t.Errorf("call while open: %v (kind %q), want ErrUnavailable of kind breaker_open", err, hbase.ErrorKind(err))
	}
	if ra := hbase.RetryAfter(err); ra < time.Second {
		t.Errorf("RetryAfter = %v, want at least 1s", ra)
	}
	if got := testutil.ToFloat64(hbase.StoreErrors.WithLabelValues(hbase.BackendEmbedded, "get", hbase.KindBreakerOpen)); got != refusedBefore+1 {
		t.Errorf("breaker_open errors counted %v, want %v", got, refusedBefore+1)
	}
	// Probes run while down and fail; the breaker stays unready.
	time.Sleep(500 * time.Millisecond)
	if faults.Probes.Load() == 0 {
		t.Error("no probe in 500 ms of a breaker open for 100 ms")
	}
	if br.Ready() == nil {
		t.Error("ready while still down")
	}

	// Back: the probe closes it, within the required 5 s.
	changed, _ := br.Available()
	faults.SetDown(false)
	took := waitReady(t, br, true, 5*time.Second)
	t.Logf("closed %v after the store came back", took)
	select {
	case <-changed:
	default:
		t.Error("Available's channel was not closed by the state change")
	}
	if err := hbase.WaitAvailable(ctx, br); err != nil {
		t.Errorf("WaitAvailable when closed: %v", err)
	}
	if err := get(ctx, br); err != nil {
		t.Errorf("Get after recovery: %v", err)
	}
	if got := testutil.ToFloat64(hbase.BreakerState); got != 0 {
		t.Errorf("gateway_store_breaker_state = %v when closed, want 0", got)
	}
}

func TestBreakerIgnoresOtherErrors(t *testing.T) {
	br, _ := newBreaker(t, hbase.BreakerThreshold(1))
	for range 5 {
		_, err := br.Get(t.Context(), &hbase.Get{Table: "bt:missing", Row: []byte("r")})
		if !errors.Is(err, hbase.ErrTableNotFound) {
			t.Fatalf("Get of a missing table = %v, want ErrTableNotFound", err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_ = get(ctx, br) // the caller's cancellation says nothing about the store
	}
	if err := br.Ready(); err != nil {
		t.Errorf("Ready after not-found and canceled calls = %v, want nil", err)
	}
}

// TestBreakerCallerDeadlineNotCounted checks that a call the caller gave up
// on neither opens the breaker nor breaks the run of failures that does.
func TestBreakerCallerDeadlineNotCounted(t *testing.T) {
	br, faults := newBreaker(t, hbase.BreakerThreshold(3))
	faults.SetDown(true)
	for i := range 2 {
		if err := get(t.Context(), br); !errors.Is(err, hbase.ErrUnavailable) {
			t.Fatalf("call %d while down: %v, want ErrUnavailable", i+1, err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), faults.Hang/5)
	err := get(ctx, br)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("call with a deadline shorter than the hang: %v, want the caller's deadline", err)
	}
	if err := br.Ready(); err != nil {
		t.Fatalf("Ready after 2 failures = %v, want nil", err)
	}
	if err := get(t.Context(), br); !errors.Is(err, hbase.ErrUnavailable) {
		t.Fatalf("third failing call: %v, want ErrUnavailable", err)
	}
	if err := br.Ready(); !errors.Is(err, hbase.ErrUnavailable) {
		t.Errorf("Ready after failure, failure, abandoned call, failure = %v, want ErrUnavailable: the abandoned call reset the run", err)
	}
}

// TestBreakerHealthPingTimesOut checks that an idle breaker opens when its
// health pings end on their own probe timeout, as pings to an HBase that
// is away do (the probe timeout is shorter than a call's).
func TestBreakerHealthPingTimesOut(t *testing.T) {
	br, faults := newBreaker(t, hbase.BreakerThreshold(2), hbase.BreakerHealthInterval(20*time.Millisecond),
		hbase.BreakerProbeTimeout(50*time.Millisecond))
	faults.Hang = time.Minute
	faults.SetDown(true)
	took := waitReady(t, br, false, 5*time.Second)
	t.Logf("opened %v after the store went away", took)
	faults.SetDown(false)
	waitReady(t, br, true, 5*time.Second)
}

// TestBreakerHealthPing checks that an idle breaker notices an outage (and
// the end of it) by itself, and that WaitAvailable waits for the end.
func TestBreakerHealthPing(t *testing.T) {
	br, faults := newBreaker(t, hbase.BreakerThreshold(2), hbase.BreakerHealthInterval(20*time.Millisecond))
	faults.SetDown(true)
	waitReady(t, br, false, 5*time.Second)
	waited := make(chan error, 1)
	go func() { waited <- hbase.WaitAvailable(t.Context(), br) }()
	select {
	case err := <-waited:
		t.Fatalf("WaitAvailable returned %v while down", err)
	case <-time.After(300 * time.Millisecond):
	}
	faults.SetDown(false)
	select {
	case err := <-waited:
		if err != nil {
			t.Fatalf("WaitAvailable: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("WaitAvailable still waiting 5 s after the store came back")
	}
}

func TestCheckReadyAndAvailableThroughDecorators(t *testing.T) {
	br, faults := newBreaker(t, hbase.BreakerThreshold(1))
	st := hbase.Instrument(hbase.WithNamespace(br, "x", "y"))
	if err := hbase.CheckReady(t.Context(), st); err != nil {
		t.Fatalf("CheckReady while up: %v", err)
	}
	faults.SetDown(true)
	_ = get(t.Context(), st)
	start := time.Now()
	if err := hbase.CheckReady(t.Context(), st); !errors.Is(err, hbase.ErrUnavailable) {
		t.Errorf("CheckReady while open = %v, want ErrUnavailable", err)
	}
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Errorf("CheckReady took %v, want < 100 ms (no round trip)", d)
	}
	if _, err := hbase.Available(st); err == nil {
		t.Error("Available while open = nil")
	}
	// Without a breaker: CheckReady pings, Available is always nil.
	plain, err := embedded.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if err := hbase.CheckReady(t.Context(), hbase.Instrument(plain)); err != nil {
		t.Errorf("CheckReady of the embedded store: %v", err)
	}
	if ch, err := hbase.Available(plain); ch != nil || err != nil {
		t.Errorf("Available of the embedded store = %v, %v; want nil, nil", ch, err)
	}
}

func TestErrorKind(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{nil, ""},
		{hbase.ErrTableNotFound, hbase.KindNotFound},
		{hbase.ErrFamilyNotFound, hbase.KindNotFound},
		{context.Canceled, hbase.KindCanceled},
		{context.DeadlineExceeded, hbase.KindCanceled},
		{hbase.ErrUnavailable, hbase.KindUnavailable},
		{errors.New("boom"), hbase.KindOther},
	}
	for _, tt := range tests {
		if got := hbase.ErrorKind(tt.err); got != tt.want {
			t.Errorf("ErrorKind(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
	if got := hbase.RetryAfter(errors.New("boom")); got != 0 {
		t.Errorf("RetryAfter(other) = %v, want 0", got)
	}
	if got := hbase.RetryAfter(hbase.ErrUnavailable); got != time.Second {
		t.Errorf("RetryAfter(ErrUnavailable) = %v, want 1s", got)
	}
}

// TestStartCall checks the shared call timeout's accounting: time with a
// call in flight counts once however many calls overlap; time between
// calls does not count.
func TestStartCall(t *testing.T) {
	if _, _, ok := hbase.StartCall(context.Background(), time.Second); ok {
		t.Fatal("StartCall without ShareCallTimeout reported a budget")
	}
	ctx := hbase.ShareCallTimeout(context.Background())
	d1, end1, _ := hbase.StartCall(ctx, time.Second)
	if left := time.Until(d1); left < 900*time.Millisecond {
		t.Errorf("first call: %v left, want about 1s", left)
	}
	time.Sleep(100 * time.Millisecond)
	d2, end2, _ := hbase.StartCall(ctx, time.Second) // overlaps the first
	if left := time.Until(d2); left > 950*time.Millisecond || left < 800*time.Millisecond {
		t.Errorf("overlapping call: %v left, want about 0.9s", left)
	}
	time.Sleep(100 * time.Millisecond)
	end1()
	end2()
	end2()                             // idempotent
	time.Sleep(300 * time.Millisecond) // between calls
	d3, end3, _ := hbase.StartCall(ctx, time.Second)
	defer end3()
	if left := time.Until(d3); left > 850*time.Millisecond || left < 700*time.Millisecond {
		t.Errorf("after 200 ms in flight and 300 ms between calls: %v left, want about 0.8s", left)
	}
}

// TestScanManyThroughDecorators checks that a ScanMany through the breaker
// and over the metrics decorator is one call (op "scan_many"), returns each
// scan's rows in order, and is refused at once while the breaker is open.
func TestScanManyThroughDecorators(t *testing.T) {
	st, err := embedded.Open("")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.EnsureTables(t.Context(), "bt", []hbase.TableSpec{{Name: "t", Families: []hbase.FamilySpec{{Name: "f"}}}}); err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{"a1", "a2", "b1", "c1", "c2", "c3"} {
		if err := st.Put(t.Context(), &hbase.Put{Table: breakerTable, Row: []byte(r), Values: hbase.Values{"f": {"q": []byte(r)}}}); err != nil {
			t.Fatal(err)
		}
	}
	f := hbasetest.WithFaults(st)
	br := hbase.WithBreaker(hbase.Instrument(f), hbase.BreakerOpenFor(time.Minute), hbase.BreakerHealthInterval(0),
		hbase.BreakerLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(func() { _ = br.Close() })
	calls := func(op string) float64 {
		return testutil.ToFloat64(hbase.StoreCalls.WithLabelValues(hbase.BackendEmbedded, op))
	}
	many, scans := calls("scan_many"), calls("scan")
	out, err := hbase.ScanMany(t.Context(), br, []*hbase.Scan{
		{Table: breakerTable, Prefix: []byte("c"), Limit: 2}, {Table: breakerTable, Prefix: []byte("a")}, {Table: breakerTable, Prefix: []byte("x")},
	})
	if err != nil {
		t.Fatal(err)
	}
	var got [][]string
	for _, rs := range out {
		var rows []string
		for _, r := range rs {
			rows = append(rows, string(r.Row))
		}
		got = append(got, rows)
	}
	if want := [][]string{{"c1", "c2"}, {"a1", "a2"}, nil}; !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("ScanMany rows %q, want %q", got, want)
	}
	if d := calls("scan_many") - many; d != 1 {
		t.Errorf("scan_many calls counted %v, want 1", d)
	}
	if d := calls("scan") - scans; d != 0 {
		t.Errorf("scan calls counted %v, want 0 (the batch is one call)", d)
	}
	f.SetDown(true)
	for range 5 {
		_, _ = hbase.ScanMany(t.Context(), br, []*hbase.Scan{{Table: breakerTable, Prefix: []byte("a")}})
	}
	start := time.Now()
	if _, err := hbase.ScanMany(t.Context(), br, []*hbase.Scan{{Table: breakerTable, Prefix: []byte("a")}}); !errors.Is(err, hbase.ErrUnavailable) {
		t.Errorf("ScanMany with the store away: %v, want ErrUnavailable", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("ScanMany took %v with the breaker open, want at once", took)
	}
}
