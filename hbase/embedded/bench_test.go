package embedded

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/weibohbase/gateway/hbase"
)

// Benchmarks of the embedded backend: bulk loading, point reads, scans,
// GetMany and the rowkey encoding.

// BenchmarkEmbeddedPutMany measures bulk loading as the data import
// (seed.Import) does it: PutMany batches of 4,000 small rows shaped like
// weibo:relations rows (an 18-byte binary rowkey, one family, one qualifier,
// an 8-byte value), into a store on disk. One iteration is one batch; the
// rows/s metric is the figure to read. "ordered" writes rowkeys in
// ascending order, as Seed does (table by table, in rowkey order); "random"
// writes them in random order (the worst case: every batch touches the
// whole key space, and compactions rewrite it). "sync" syncs every batch,
// the others use WithNoSync. "random-shared" is "random" with one Values
// map shared by the puts of a batch, as the fan-out writes its inbox rows.
//
//	go test ./hbase/embedded/ -run '^$' -bench EmbeddedPutMany -benchtime 250x             # 1M rows each
//	go test ./hbase/embedded/ -run '^$' -bench EmbeddedPutMany/ordered -benchtime 2750x    # 11M rows
func BenchmarkEmbeddedPutMany(b *testing.B) {
	for _, mode := range []struct {
		name    string
		ordered bool
		shared  bool // every put of a batch has the same Values, as a fan-out's
		opts    []Option
	}{
		{"ordered", true, false, []Option{WithNoSync()}},
		{"random", false, false, []Option{WithNoSync()}},
		{"random-shared", false, true, []Option{WithNoSync()}},
		{"ordered-sync", true, false, nil},
	} {
		b.Run(mode.name, func(b *testing.B) {
			const batch = 4000
			ctx := context.Background()
			s := etOpen(b, b.TempDir(), mode.opts...)
			r := rand.New(rand.NewPCG(1, 1))
			puts := make([]*hbase.Put, batch)
			val := be64(1_700_000_000_000)
			var seq uint64
			rows := 0
			b.ResetTimer()
			for b.Loop() {
				b.StopTimer()
				for i := range puts {
					row := make([]byte, 18)
					if mode.ordered {
						binary.BigEndian.PutUint64(row[1:], seq/64)
						binary.BigEndian.PutUint64(row[10:], seq%64)
						seq++
					} else {
						row[0] = byte(r.IntN(16))
						binary.BigEndian.PutUint64(row[1:], r.Uint64N(2_000_000))
						binary.BigEndian.PutUint64(row[10:], r.Uint64N(2_000_000))
					}
					row[9] = 'f'
					puts[i] = &hbase.Put{Table: "t:b", Row: row, Values: hbase.Values{"f": {"t": val}}}
					if mode.shared && i > 0 {
						puts[i].Values = puts[0].Values
					}
				}
				b.StartTimer()
				if err := s.PutMany(ctx, puts); err != nil {
					b.Fatal(err)
				}
				rows += batch
			}
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// putRows writes put(0) .. put(n-1) into s in PutMany batches of 5,000:
// the rows a read benchmark reads.
func putRows(b *testing.B, s *Store, n int, put func(i int) *hbase.Put) {
	b.Helper()
	puts := make([]*hbase.Put, 0, 5000)
	for i := range n {
		if puts = append(puts, put(i)); len(puts) == cap(puts) || i == n-1 {
			if err := s.PutMany(context.Background(), puts); err != nil {
				b.Fatal(err)
			}
			puts = puts[:0]
		}
	}
}

// BenchmarkEmbeddedGet measures point reads of existing and missing rows.
func BenchmarkEmbeddedGet(b *testing.B) {
	ctx := context.Background()
	s := etOpen(b, b.TempDir(), WithNoSync())
	defer func() { _ = s.Close() }()
	const n = 100_000
	putRows(b, s, n, func(i int) *hbase.Put {
		return &hbase.Put{Table: "t:b", Row: binary.BigEndian.AppendUint64(nil, uint64(i)*2), Values: hbase.Values{"f": {"q": []byte("value")}}}
	})
	r := rand.New(rand.NewPCG(2, 2))
	b.ResetTimer()
	for b.Loop() {
		k := uint64(r.IntN(2 * n))
		res, err := s.Get(ctx, &hbase.Get{Table: "t:b", Row: binary.BigEndian.AppendUint64(nil, k)})
		if err != nil || res.Exists() != (k%2 == 0) {
			b.Fatalf("Get %d: %v, %v", k, res.Exists(), err)
		}
	}
}

// BenchmarkEmbeddedScan measures a scan of 100,000 rows shaped like
// weibo:relations fans rows (an 18-byte rowkey, one small cell each), the
// fan-out's read; it reports the time per row (ns/row); allocs/op are
// those of one scan of every row.
//
//	go test ./hbase/embedded/ -run '^$' -bench EmbeddedScan -benchtime 20x
func BenchmarkEmbeddedScan(b *testing.B) {
	ctx := context.Background()
	s := etOpen(b, b.TempDir(), WithNoSync())
	defer func() { _ = s.Close() }()
	const n = 100_000
	putRows(b, s, n, func(i int) *hbase.Put {
		row := binary.BigEndian.AppendUint64([]byte{7}, 42)
		row = binary.BigEndian.AppendUint64(append(row, 'f'), uint64(i))
		return &hbase.Put{Table: "t:b", Row: row, Values: hbase.Values{"f": {"t": be64(int64(i))}}}
	})
	b.ReportAllocs()
	rows := 0
	for b.Loop() {
		err := s.Scan(ctx, &hbase.Scan{Table: "t:b", Prefix: []byte{7}}, func(r *hbase.Result) error {
			rows++
			if len(r.Cells) != 1 {
				b.Fatalf("row %x: %d cells", r.Row, len(r.Cells))
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	if rows != n*b.N {
		b.Fatalf("scanned %d rows, want %d", rows, n*b.N)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows), "ns/row")
}

// BenchmarkEmbeddedGetMany measures the read of a home-timeline page's
// posts: one GetMany of 50 random existing rows (of 100,000, flushed to an
// sstable) of one family. One iteration is one GetMany.
//
//	go test ./hbase/embedded/ -run '^$' -bench EmbeddedGetMany -benchtime 20000x
func BenchmarkEmbeddedGetMany(b *testing.B) {
	ctx := context.Background()
	s := etOpen(b, b.TempDir(), WithNoSync())
	defer func() { _ = s.Close() }()
	const n = 100_000
	putRows(b, s, n, func(i int) *hbase.Put {
		return &hbase.Put{Table: "t:b", Row: binary.BigEndian.AppendUint64(nil, uint64(i)),
			Values: hbase.Values{"f": {"c": []byte("a post of some length, as a post is"), "t": be64(int64(i))}}}
	})
	if err := s.db.Flush(); err != nil { // read from an sstable, as most reads are
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(4, 4))
	batches := make([][]*hbase.Get, 1024)
	for i := range batches {
		batches[i] = make([]*hbase.Get, 50)
		for j := range batches[i] {
			batches[i][j] = &hbase.Get{Table: "t:b", Row: binary.BigEndian.AppendUint64(nil, uint64(r.IntN(n))), Families: []string{"f"}}
		}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		gets := batches[i%len(batches)]
		i++
		rs, err := s.GetMany(ctx, gets)
		if err != nil || len(rs) != len(gets) || len(rs[0].Cells) != 2 {
			b.Fatalf("GetMany: %v", err)
		}
	}
}

// BenchmarkAppendRowPrefix measures the encoding of a weibo:inbox rowkey
// (salt, owner id, reversed ms, author id: 25 bytes, 12 of them 0x00).
func BenchmarkAppendRowPrefix(b *testing.B) {
	t := newEmbTable("t:x", &embTableMeta{ID: 7})
	row := binary.BigEndian.AppendUint64([]byte{3}, 123_456)
	row = binary.BigEndian.AppendUint64(row, uint64(1<<63-1_700_000_000_000))
	row = binary.BigEndian.AppendUint64(row, 98_765)
	var dst []byte
	for b.Loop() {
		dst = appendRowPrefix(dst[:0], t, row)
	}
}
