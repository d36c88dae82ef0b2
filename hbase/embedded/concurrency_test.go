package embedded

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/weibohbase/gateway/hbase"
)

// Tests of concurrent calls: mixed writes of the same rows, and Close
// waiting for the calls under way.

func TestConcurrentMixed(t *testing.T) {
	// Increments, Puts of other columns of the same rows, CheckAndPuts and
	// overlapping PutMany batches at once: no deadlock, exact counters.
	ctx := context.Background()
	s := etOpen(t, "")
	defer func() { _ = s.Close() }()
	const workers, rounds, rows = 6, 200, 5
	rowKey := func(i int) []byte { return fmt.Appendf(nil, "c/%d", i%rows) }
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 9))
			for i := range rounds {
				row := rowKey(r.IntN(rows))
				var err error
				switch i % 4 {
				case 0, 1:
					_, err = s.Increment(ctx, &hbase.Increment{Table: "t:a", Row: row, Family: "f", Qualifier: "n", Amount: 1})
				case 2:
					err = s.PutMany(ctx, []*hbase.Put{
						{Table: "t:a", Row: rowKey(r.IntN(rows)), Values: hbase.Values{"v": {"p": []byte("x")}}},
						{Table: "t:a", Row: rowKey(r.IntN(rows)), Values: hbase.Values{"f": {"p": []byte("y")}}},
						{Table: "t:b", Row: row, Values: hbase.Values{"f": {"p": []byte("z")}}},
					})
				case 3:
					_, err = s.CheckAndPut(ctx, &hbase.Put{Table: "t:a", Row: row, Values: hbase.Values{"v": {"c": []byte("1")}}}, "f", "p", []byte("y"))
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	var total int64
	for i := range rows {
		r, err := s.Get(ctx, &hbase.Get{Table: "t:a", Row: rowKey(i)})
		if err != nil {
			t.Fatal(err)
		}
		if v := r.Value("f", "n"); v != nil {
			total += int64(binary.BigEndian.Uint64(v))
		}
	}
	if want := int64(workers * rounds / 2); total != want {
		t.Errorf("counters sum to %d, want %d", total, want)
	}
}

func TestCloseWaitsForCalls(t *testing.T) {
	ctx := context.Background()
	s := etOpen(t, "")
	if err := s.Put(ctx, &hbase.Put{Table: "t:a", Row: []byte("r"), Values: hbase.Values{"f": {"q": nil}}}); err != nil {
		t.Fatal(err)
	}
	inScan := make(chan struct{})
	release := make(chan struct{})
	scanDone := make(chan error, 1)
	go func() {
		scanDone <- s.Scan(ctx, &hbase.Scan{Table: "t:a"}, func(*hbase.Result) error {
			close(inScan)
			<-release
			return nil
		})
	}()
	<-inScan
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case <-closed:
		t.Fatal("Close returned while a hbase.Scan was running")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if err := <-scanDone; err != nil {
		t.Errorf("Scan: %v", err)
	}
	if err := <-closed; err != nil {
		t.Errorf("Close: %v", err)
	}
}
