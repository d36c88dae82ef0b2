package remote

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/hbasezk"
)

// Tests of the call timeout, alone and shared between calls, and of Probe
// replacing the gohbase client.

// TestCallTimeout checks that every data call gets the call timeout,
// whatever the caller's deadline, that running out of it is
// hbase.ErrUnavailable while the caller's own deadline is not, and that a
// scan's timeout bounds each wait for a row, not the time spent in its callback.
func TestCallTimeout(t *testing.T) {
	gtStore(t) // the tables exist
	zk := hbasezk.Addr(t)
	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	tests := []struct {
		name        string
		callTimeout time.Duration
		ctx         context.Context
		unavailable bool   // the error wraps hbase.ErrUnavailable
		kinds       string // hbase.ErrorKind of the error, one of these ("" = no error)
	}{
		{"call timeout, no deadline", time.Nanosecond, context.Background(), true, "timeout unavailable region_moved"},
		{"call timeout before the caller's deadline", time.Nanosecond, tctx(t), true, "timeout unavailable region_moved"},
		{"caller's deadline before the call timeout", time.Minute, expired, false, "canceled"},
		{"no call timeout", 0, tctx(t), false, ""},
		{"default call timeout", DefaultCallTimeout, context.Background(), false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := Open(tctx(t), zk, WithCallTimeout(tt.callTimeout), WithNoPing())
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			_, err = st.Get(tt.ctx, &hbase.Get{Table: gtTableA, Row: []byte("x")})
			if got := errors.Is(err, hbase.ErrUnavailable); got != tt.unavailable {
				t.Errorf("Get: %v; wraps ErrUnavailable = %v, want %v", err, got, tt.unavailable)
			}
			kind := hbase.ErrorKind(err)
			if (tt.kinds == "") != (kind == "") || (kind != "" && !strings.Contains(tt.kinds, kind)) {
				t.Errorf("ErrorKind(%v) = %q, want one of %q", err, kind, tt.kinds)
			}
			if err != nil && !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Get: %v does not wrap context.DeadlineExceeded", err)
			}
		})
	}

	t.Run("scan callback time does not count", func(t *testing.T) {
		st, err := Open(tctx(t), zk, WithCallTimeout(300*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		prefix := rowPrefix(t)
		for i := range 3 {
			mustPut(t, st, &hbase.Put{Table: gtTableA, Row: []byte(fmt.Sprintf("%s%d", prefix, i)), Values: hbase.Values{"f": {"q": []byte("v")}}})
		}
		n := 0
		err = st.Scan(tctx(t), &hbase.Scan{Table: gtTableA, Prefix: []byte(prefix)}, func(*hbase.Result) error {
			n++
			time.Sleep(500 * time.Millisecond) // longer than the call timeout
			return nil
		})
		if err != nil || n != 3 {
			t.Errorf("Scan with a slow callback: %d rows, %v; want 3 rows, nil", n, err)
		}
	})
}

// TestSharedCallTimeout checks that calls whose context shares one call
// timeout (hbase.ShareCallTimeout, as a GraphQL request's do) are bounded
// by what they have not spent of it — time waiting for the store, not time
// between calls — while calls without it each get the whole call timeout.
func TestSharedCallTimeout(t *testing.T) {
	gtStore(t)
	st, err := Open(tctx(t), hbasezk.Addr(t), WithCallTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	get := func(ctx context.Context) error {
		_, err := st.Get(ctx, &hbase.Get{Table: gtTableA, Row: []byte("x")})
		return err
	}
	shared := hbase.ShareCallTimeout(context.Background())
	if err := get(shared); err != nil {
		t.Fatalf("first call: %v", err)
	}
	time.Sleep(1100 * time.Millisecond) // between calls: not counted
	if err := get(shared); err != nil {
		t.Fatalf("a call after a pause longer than the call timeout: %v", err)
	}
	// A scan whose callback holds it open spends the shared second.
	prefix := rowPrefix(t)
	for i := range 2 {
		mustPut(t, st, &hbase.Put{Table: gtTableA, Row: []byte(fmt.Sprintf("%s%d", prefix, i)), Values: hbase.Values{"f": {"q": []byte("v")}}})
	}
	err = st.Scan(shared, &hbase.Scan{Table: gtTableA, Prefix: []byte(prefix)}, func(*hbase.Result) error {
		time.Sleep(700 * time.Millisecond)
		return nil
	})
	if !errors.Is(err, hbase.ErrUnavailable) {
		t.Errorf("a scan open longer than the shared call timeout = %v, want ErrUnavailable", err)
	}
	if err := get(shared); !errors.Is(err, hbase.ErrUnavailable) {
		t.Errorf("a call after the shared call timeout was spent = %v, want ErrUnavailable", err)
	}
	if err := get(context.Background()); err != nil {
		t.Errorf("a call of its own: %v", err)
	}
}

// TestProbe checks that Probe replaces the data client with a fresh one that
// works, and fails once the store is closed.
func TestProbe(t *testing.T) {
	st := gtStore(t)
	row := []byte(rowPrefix(t) + "probe")
	mustPut(t, st, &hbase.Put{Table: gtTableA, Row: row, Values: hbase.Values{"f": {"q": []byte("before")}}})
	before := st.conn()
	if err := st.Probe(tctx(t)); err != nil {
		t.Fatalf("Probe: %v", err)
	}
	if st.conn() == before {
		t.Error("Probe kept the old client")
	}
	if got := mustGet(t, st, &hbase.Get{Table: gtTableA, Row: row}).Value("f", "q"); string(got) != "before" {
		t.Errorf("after Probe: read %q, want %q", got, "before")
	}
	mustPut(t, st, &hbase.Put{Table: gtTableA, Row: row, Values: hbase.Values{"f": {"q": []byte("after")}}})
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.Probe(tctx(t)); !errors.Is(err, hbase.ErrUnavailable) {
		t.Errorf("Probe after Close = %v, want hbase.ErrUnavailable", err)
	}
}
