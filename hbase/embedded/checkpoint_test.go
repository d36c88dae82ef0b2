package embedded

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/weibohbase/gateway/hbase"
)

// TestCheckpoint takes a checkpoint while a writer keeps writing: the
// copy, restored with CopyCheckpoint into a new directory and opened, holds
// every row written before the call and no row written after it returned,
// each row whole (its two families written in one Put). An existing
// checkpoint directory, an in-memory store, a non-empty restore target and
// a source without a store are refused.
func TestCheckpoint(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := etOpen(t, filepath.Join(dir, "store"))
	defer s.Close()
	put := func(i int) error {
		return s.Put(ctx, &hbase.Put{Table: "t:a", Row: fmt.Appendf(nil, "r%06d", i),
			Values: hbase.Values{"f": {"q": fmt.Appendf(nil, "%d", i)}, "v": {"q": fmt.Appendf(nil, "%d", i)}}})
	}
	const before = 200
	for i := range before {
		if err := put(i); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { // writes during the checkpoint
		for i := before; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := put(i); err != nil {
				t.Error(err)
				return
			}
		}
	})
	cp := filepath.Join(dir, "backups", "cp")
	if err := s.Checkpoint(ctx, cp); err != nil {
		t.Fatal(err)
	}
	const after = "z-after"
	if err := s.Put(ctx, &hbase.Put{Table: "t:a", Row: []byte(after), Values: hbase.Values{"f": {"q": []byte("x")}}}); err != nil {
		t.Fatal(err)
	}
	close(stop)
	wg.Wait()
	if err := s.Checkpoint(ctx, cp); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("checkpoint into an existing directory: %v", err)
	}
	mem := etOpen(t, "")
	defer mem.Close()
	if err := mem.Checkpoint(ctx, filepath.Join(dir, "mem")); err == nil {
		t.Errorf("checkpoint of an in-memory store: no error")
	}

	restored := filepath.Join(dir, "restored")
	if err := CopyCheckpoint(cp, restored); err != nil {
		t.Fatal(err)
	}
	if err := CopyCheckpoint(cp, restored); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("restore into a non-empty directory: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := CopyCheckpoint(filepath.Join(dir, "empty"), filepath.Join(dir, "other")); err == nil {
		t.Errorf("restore of a directory without a store: no error")
	}
	r, err := Open(restored)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rows := 0
	err = r.Scan(ctx, &hbase.Scan{Table: "t:a"}, func(res *hbase.Result) error {
		if string(res.Row) == after {
			return fmt.Errorf("row %s, written after the checkpoint, is in it", after)
		}
		var i int
		if _, err := fmt.Sscanf(string(res.Row), "r%06d", &i); err != nil || i != rows {
			return fmt.Errorf("row %q where r%06d was expected", res.Row, rows)
		}
		if f, v := string(res.Value("f", "q")), string(res.Value("v", "q")); f != fmt.Sprint(i) || v != f {
			return fmt.Errorf("row %q: f %q, v %q", res.Row, f, v)
		}
		rows++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if rows < before {
		t.Fatalf("the checkpoint holds %d rows, want at least the %d written before it", rows, before)
	}
	t.Logf("%d rows in the checkpoint (%d written before it)", rows, before)
}
