package embedded

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/weibohbase/gateway/hbase"
)

// cacheHits returns how many rows GetMany has answered from a row cache.
func cacheHits() float64 { return testutil.ToFloat64(rowCacheHits) }

// TestRowCacheDifferential applies one random sequence of writes of every
// kind (Put, PutMany, Delete of a row, a family, a column and a version,
// DeleteMany, CheckAndPut, CheckAndDelete, Increment) and reads of every
// shape (families, versions) to a store with a row cache and one without,
// on one clock that moves past the TTL family's TTL now and then: every
// read must answer the same, and most reads of the cached store must be hits.
func TestRowCacheDifferential(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{}
	clock.set(1_700_000_000_000)
	cached := etOpen(t, "", withClock(clock.now))
	plain := etOpen(t, "", withClock(clock.now), WithRowCacheSize(-1))
	defer func() { _ = cached.Close(); _ = plain.Close() }()
	if cached.rows == nil || plain.rows != nil {
		t.Fatal("WithRowCacheSize: the cached store has no row cache or the plain one has one")
	}
	r := rand.New(rand.NewPCG(1, 2))
	row := func() []byte { return fmt.Appendf(nil, "r%d", r.IntN(6)) }
	fams := []string{"f", "v", "x"}
	val := func() []byte { return fmt.Appendf(nil, "%d", r.IntN(1000)) }
	put := func() *hbase.Put {
		p := &hbase.Put{Table: "t:a", Row: row(), Values: hbase.Values{}}
		for range 1 + r.IntN(3) {
			f := fams[r.IntN(len(fams))]
			if p.Values[f] == nil {
				p.Values[f] = map[string][]byte{}
			}
			p.Values[f][fmt.Sprintf("q%d", r.IntN(3))] = val()
		}
		if r.IntN(4) == 0 { // an explicit timestamp, maybe older than the newest version
			p.Timestamp = clock.now().UnixMilli() - int64(r.IntN(3000))
		}
		return p
	}
	del := func() *hbase.Delete {
		d := &hbase.Delete{Table: "t:a", Row: row()}
		switch r.IntN(4) {
		case 0: // the row
		case 1:
			d.Values = hbase.Values{fams[r.IntN(3)]: nil}
		case 2:
			d.Values = hbase.Values{fams[r.IntN(3)]: {fmt.Sprintf("q%d", r.IntN(3)): nil}}
		case 3: // one version: the current time (cells written without a timestamp have it)
			d.Values = hbase.Values{"v": {fmt.Sprintf("q%d", r.IntN(3)): nil}}
			d.Timestamp = clock.now().UnixMilli()
		}
		return d
	}
	hits0 := cacheHits()
	reads := 0
	for step := range 3000 {
		var ops []func(s *Store) (string, error)
		switch k := r.IntN(16); {
		case k < 4 || k >= 12: // reads
			gets := make([]*hbase.Get, 1+r.IntN(4))
			for i := range gets {
				g := &hbase.Get{Table: "t:a", Row: row(), MaxVersions: r.IntN(4)}
				switch r.IntN(3) {
				case 1:
					g.Families = []string{fams[r.IntN(3)]}
				case 2:
					g.Families = []string{"x", "v"}
				}
				gets[i] = g
			}
			reads += len(gets)
			ops = append(ops, func(s *Store) (string, error) {
				rs, err := s.GetMany(ctx, gets)
				var out []string
				for _, res := range rs {
					out = append(out, fmt.Sprint(cellStrings(res, true)))
				}
				return fmt.Sprint(out), err
			})
		case k == 4:
			p := put()
			ops = append(ops, func(s *Store) (string, error) { return "", s.Put(ctx, p) })
		case k == 5:
			ps := []*hbase.Put{put(), put(), put()}
			ops = append(ops, func(s *Store) (string, error) { return "", s.PutMany(ctx, ps) })
		case k == 6:
			d := del()
			ops = append(ops, func(s *Store) (string, error) { return "", s.Delete(ctx, d) })
		case k == 7:
			ds := []*hbase.Delete{del(), del()}
			ops = append(ops, func(s *Store) (string, error) { return "", s.DeleteMany(ctx, ds) })
		case k == 8:
			p, want := put(), val()
			if r.IntN(2) == 0 {
				want = nil
			}
			ops = append(ops, func(s *Store) (string, error) {
				ok, err := s.CheckAndPut(ctx, p, "f", "q0", want)
				return fmt.Sprint(ok), err
			})
		case k == 9:
			d := del()
			ops = append(ops, func(s *Store) (string, error) {
				ok, err := s.CheckAndDelete(ctx, d, "f", "q1", nil)
				return fmt.Sprint(ok), err
			})
		case k == 10:
			inc := &hbase.Increment{Table: "t:a", Row: row(), Family: "v", Qualifier: "n", Amount: int64(r.IntN(5))}
			ops = append(ops, func(s *Store) (string, error) {
				n, err := s.Increment(ctx, inc)
				return fmt.Sprint(n), err
			})
		case k == 11:
			clock.advance(int64(r.IntN(4000))) // the TTL family's cells expire (10 s)
		}
		for _, op := range ops {
			got, err1 := op(cached)
			want, err2 := op(plain)
			if fmt.Sprint(err1) != fmt.Sprint(err2) || got != want {
				t.Fatalf("step %d: with the row cache %s (%v), without %s (%v)", step, got, err1, want, err2)
			}
		}
		if r.IntN(3) == 0 {
			clock.advance(1) // writes without a timestamp land on new versions
		}
	}
	if hits := cacheHits() - hits0; hits < float64(reads)/5 {
		t.Errorf("%v of %d reads were row cache hits: the cache is not exercised", hits, reads)
	}
}

// TestRowCacheTTL: a cached cell past its family's TTL is not returned.
func TestRowCacheTTL(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{}
	clock.set(1_700_000_000_000)
	s := etOpen(t, "", withClock(clock.now))
	defer func() { _ = s.Close() }()
	if err := s.Put(ctx, &hbase.Put{Table: "t:a", Row: []byte("r"), Values: hbase.Values{"x": {"q": []byte("1")}, "f": {"q": []byte("2")}}}); err != nil {
		t.Fatal(err)
	}
	get := func() *hbase.Result {
		res, err := s.Get(ctx, &hbase.Get{Table: "t:a", Row: []byte("r")})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	wantCells(t, "fresh", get(), false, `f:"q"="2"`, `x:"q"="1"`)
	hits := cacheHits()
	clock.advance(10_001)
	wantCells(t, "past the TTL", get(), false, `f:"q"="2"`)
	if cacheHits() != hits+1 {
		t.Errorf("the read past the TTL was not a row cache hit")
	}
}

// TestRowCacheConcurrentWrites: while writers overwrite rows with rising
// values, a read that starts after a write returned sees that value or a
// later one — a read racing a write never leaves the older row in the
// cache (rowCache's generations).
func TestRowCacheConcurrentWrites(t *testing.T) {
	ctx := context.Background()
	s := etOpen(t, "")
	defer func() { _ = s.Close() }()
	const rows, writes = 4, 500
	var done [rows]atomic.Int64 // the last value whose Put returned, per row
	key := func(i int) []byte { return fmt.Appendf(nil, "w%d", i) }
	var wg sync.WaitGroup
	var stop atomic.Bool
	for i := range rows {
		wg.Go(func() {
			for v := int64(1); v <= writes; v++ {
				if err := s.Put(ctx, &hbase.Put{Table: "t:b", Row: key(i), Values: hbase.Values{"f": {"n": be64(v)}}}); err != nil {
					t.Error(err)
					return
				}
				done[i].Store(v)
			}
		})
	}
	var stale atomic.Int64
	var readers sync.WaitGroup
	for range 3 {
		readers.Go(func() {
			gets := make([]*hbase.Get, rows)
			for i := range gets {
				gets[i] = &hbase.Get{Table: "t:b", Row: key(i)}
			}
			for !stop.Load() {
				var before [rows]int64
				for i := range before {
					before[i] = done[i].Load()
				}
				rs, err := s.GetMany(ctx, gets)
				if err != nil {
					t.Error(err)
					return
				}
				for i, res := range rs {
					var got int64
					if v := res.Value("f", "n"); v != nil {
						got = int64(binary.BigEndian.Uint64(v))
					}
					if got < before[i] {
						stale.Add(1)
					}
				}
			}
		})
	}
	wg.Wait()
	stop.Store(true)
	readers.Wait()
	if n := stale.Load(); n > 0 {
		t.Errorf("%d reads returned a value older than one whose write had returned", n)
	}
}

// TestRowCacheBounded: the cache keeps to its size, oldest rows out first,
// and a dropped table's rows leave it.
func TestRowCacheBounded(t *testing.T) {
	ctx := context.Background()
	s := etOpen(t, "", WithRowCacheSize(512<<10))
	defer func() { _ = s.Close() }()
	var gets []*hbase.Get
	for i := range 2000 {
		row := fmt.Appendf(nil, "row-%04d", i)
		if err := s.Put(ctx, &hbase.Put{Table: "t:b", Row: row, Values: hbase.Values{"f": {"q": slices.Repeat([]byte{'v'}, 100)}}}); err != nil {
			t.Fatal(err)
		}
		gets = append(gets, &hbase.Get{Table: "t:b", Row: row})
	}
	if _, err := s.GetMany(ctx, gets); err != nil {
		t.Fatal(err)
	}
	total, entries := int64(0), 0
	for i := range s.rows.shards {
		sh := &s.rows.shards[i]
		if sh.bytes > s.rows.budget {
			t.Errorf("shard %d holds %d bytes, over its %d", i, sh.bytes, s.rows.budget)
		}
		total += sh.bytes
		entries += sh.lru.Len()
	}
	if entries == 0 || entries >= 2000 || total > 512<<10 {
		t.Errorf("%d entries of %d bytes after reading 2000 rows into a 512 KiB cache", entries, total)
	}
	// Rows read with a second shape, then rewritten: the byte count stays
	// the sum of the entries' sizes.
	for _, g := range gets[:200] {
		g.MaxVersions = 2
	}
	if _, err := s.GetMany(ctx, gets); err != nil {
		t.Fatal(err)
	}
	for _, g := range gets[:300] {
		if err := s.Put(ctx, &hbase.Put{Table: "t:b", Row: g.Row, Values: hbase.Values{"f": {"q": []byte("w")}}}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range s.rows.shards {
		sh := &s.rows.shards[i]
		var sum int64
		for _, k := range sh.lru.Keys() {
			row, _ := sh.lru.Peek(k)
			sum += row.size
		}
		if sh.bytes != sum || sh.bytes > s.rows.budget {
			t.Fatalf("shard %d counts %d bytes, its entries %d (budget %d)", i, sh.bytes, sum, s.rows.budget)
		}
	}
	if err := s.DeleteTable(ctx, "t:b"); err != nil {
		t.Fatal(err)
	}
	for i := range s.rows.shards {
		if sh := &s.rows.shards[i]; sh.lru.Len() != 0 || sh.bytes != 0 {
			t.Fatalf("shard %d keeps %d rows (%d bytes) of a dropped table", i, sh.lru.Len(), sh.bytes)
		}
	}
}
