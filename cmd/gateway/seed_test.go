package main

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/weibohbase/gateway/dataset"
	"github.com/weibohbase/gateway/demo"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/hbase/embedded"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestSeedScale imports the demo subset twice as large (--scale 2) and
// checks that copy 1 of its most followed user is there, username and
// counters included; a scale out of range is refused before any import.
func TestSeedScale(t *testing.T) {
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, bad := range []string{"0", "1001"} {
		if err := runSeed(ctx, log, []string{"--data", filepath.Join(t.TempDir(), "bad"), "--quiet", "--scale", bad}); err == nil {
			t.Errorf("--scale %s: no error", bad)
		}
	}
	if testing.Short() {
		t.Skip("-short")
	}
	data := filepath.Join(t.TempDir(), "store")
	if err := runSeed(ctx, log, []string{"--data", data, "--quiet", "--scale", "2"}); err != nil {
		t.Fatal(err)
	}
	ds, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	top := ds.RankUsers()[0]
	st, err := embedded.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for k := range uint64(3) {
		id := top + k*ds.Stride()
		r, err := st.Get(ctx, &hbase.Get{Table: tables.Usernames, Row: tables.UsernameKey(dataset.Username(id))})
		if err != nil {
			t.Fatal(err)
		}
		if k == 2 {
			if r.Exists() {
				t.Errorf("copy 2 of u%d imported at scale 2", top)
			}
			continue
		}
		if !r.Exists() {
			t.Fatalf("copy %d of u%d (%s) not imported", k, top, dataset.Username(id))
		}
		u, err := st.Get(ctx, &hbase.Get{Table: tables.Users, Row: tables.UserKey(tables.UserID(id))})
		if err != nil {
			t.Fatal(err)
		}
		if got := tables.CounterValue(u, tables.ColFans); got != int64(ds.FanCount(top)) || got == 0 {
			t.Errorf("copy %d of u%d: fans %d, want %d", k, top, got, ds.FanCount(top))
		}
	}
}
