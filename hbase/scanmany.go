package hbase

import (
	"context"

	"golang.org/x/sync/errgroup"
)

// MultiScanner is implemented by a Store that reads several bounded scans
// as one batched call (the Instrument decorator does, so that a batch
// counts as one call, as GetMany does).
type MultiScanner interface {
	// ScanMany runs every scan of scans (each should carry a Limit) and
	// returns the rows of each, in the order of scans.
	ScanMany(ctx context.Context, scans []*Scan) ([][]*Result, error)
}

// ScanMany reads several bounded scans at once and returns the rows of each,
// in the order of scans: through st's own ScanMany when st is a
// MultiScanner, otherwise with one ScanAll per scan, all in flight
// together (one round trip of latency, as a GetMany that spans regions).
// No scan costs nothing. Errors are the first scan's error.
func ScanMany(ctx context.Context, st Store, scans []*Scan) ([][]*Result, error) {
	if len(scans) == 0 {
		return nil, nil
	}
	if m, ok := st.(MultiScanner); ok {
		return m.ScanMany(ctx, scans)
	}
	return scanEach(ctx, st, scans)
}

func scanEach(ctx context.Context, st Store, scans []*Scan) ([][]*Result, error) {
	out := make([][]*Result, len(scans))
	if len(scans) == 1 {
		rs, err := ScanAll(ctx, st, scans[0])
		out[0] = rs
		return out, err
	}
	g, gctx := errgroup.WithContext(ctx)
	for i, sc := range scans {
		g.Go(func() error {
			rs, err := ScanAll(gctx, st, sc)
			out[i] = rs
			return err
		})
	}
	return out, g.Wait()
}

// ScanMany counts one call (op "scan_many") and runs the scans on the
// wrapped store, all in flight together.
func (s *instrumented) ScanMany(ctx context.Context, scans []*Scan) ([][]*Result, error) {
	if len(scans) == 0 {
		return nil, nil
	}
	s.count(ctx, "scan_many")
	out, err := scanEach(ctx, s.StoreAdmin, scans)
	return out, s.failed("scan_many", err)
}

// ScanMany runs the scans through the breaker as one call (op
// "scan_many"): refused at once while the breaker is open, like GetMany.
func (br *Breaker) ScanMany(ctx context.Context, scans []*Scan) (out [][]*Result, err error) {
	if len(scans) == 0 {
		return nil, nil
	}
	err = br.guard(ctx, "scan_many", func(ctx context.Context) (err error) {
		out, err = ScanMany(ctx, br.StoreAdmin, scans)
		return err
	})
	return out, err
}

// ScanMany traces the scans as one span ("scan_many", with the number of
// scans as its rows) around the wrapped store's ScanMany.
func (s *traced) ScanMany(ctx context.Context, scans []*Scan) ([][]*Result, error) {
	if len(scans) == 0 {
		return nil, nil
	}
	ctx, span := s.start(ctx, "scan_many", "", rows(len(scans)))
	out, err := ScanMany(ctx, s.StoreAdmin, scans)
	return out, end(span, err)
}
