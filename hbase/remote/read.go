package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/tsuna/gohbase/filter"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"

	"github.com/weibohbase/gateway/hbase"
)

// Reads of the HBase backend: Get, GetMany, Scan, and the conversion of
// gohbase's cells to hbase.Results.

func (s *Store) newGet(ctx context.Context, g *hbase.Get, single bool) (*hrpc.Get, error) {
	if g == nil {
		return nil, errors.New("hbase: nil Get")
	}
	var opts []func(hrpc.Call) error
	if single {
		opts = append(opts, hrpc.SkipBatch())
	}
	if len(g.Families) > 0 {
		fams := make(map[string][]string, len(g.Families))
		for _, f := range g.Families {
			fams[f] = nil
		}
		opts = append(opts, hrpc.Families(fams))
	}
	if g.MaxVersions > 1 {
		opts = append(opts, hrpc.MaxVersions(uint32(g.MaxVersions)))
	}
	return hrpc.NewGet(ctx, []byte(g.Table), g.Row, opts...)
}

// Get reads one row; see hbase.Store.
func (s *Store) Get(ctx context.Context, g *hbase.Get) (*hbase.Result, error) {
	ctx, cancel := s.callCtx(ctx)
	defer cancel()
	get, err := s.newGet(ctx, g, true)
	if err != nil {
		return nil, err
	}
	res, err := s.conn().client.Get(get)
	if err != nil {
		return nil, callError(ctx, "get", g.Table, err, get)
	}
	var b resultBuilder
	return b.fromLocal(g.Row, res.Cells), nil
}

// GetMany reads rows with one gohbase SendBatch per table (gohbase batches
// only calls of one table); the batches of different tables run
// concurrently, so the call costs one round trip per region server. Results
// are in the order of gets; missing rows give Results without cells.
func (s *Store) GetMany(ctx context.Context, gets []*hbase.Get) ([]*hbase.Result, error) {
	if len(gets) == 0 {
		return nil, nil
	}
	ctx, cancel := s.callCtx(ctx)
	defer cancel()
	calls := make([]hrpc.Call, len(gets))
	for i, g := range gets {
		get, err := s.newGet(ctx, g, false)
		if err != nil {
			return nil, fmt.Errorf("get %d of %d: %w", i+1, len(gets), err)
		}
		calls[i] = get
	}
	res := s.sendBatch(ctx, calls)
	out := make([]*hbase.Result, len(gets))
	var b resultBuilder
	for i, r := range res {
		if r.Error != nil {
			return nil, batchError(ctx, "get", i, len(gets), gets[i].Table, r.Error, calls)
		}
		gr, ok := r.Msg.(*pb.GetResponse)
		if !ok {
			return nil, fmt.Errorf("hbase: get %d of %d: unexpected response %T", i+1, len(gets), r.Msg)
		}
		cells := gr.GetResult().GetCell()
		out[i] = b.result(gets[i].Row, len(cells), func(j int) *pb.Cell { return cells[j] })
	}
	return out, nil
}

// Scan streams the rows of s's range to fn; see hbase.Store. The scanner is closed
// (on the server too) when the scan stops early. A reversed scan is HBase's
// (hrpc.Reversed), with the range's ends adjusted to HBase's (start row
// inclusive at the top, stop row exclusive at the bottom). The call timeout
// bounds each wait for the next row (time spent in fn does not count), so a
// long scan runs as long as rows keep coming.
func (s *Store) Scan(ctx context.Context, sc *hbase.Scan, fn func(*hbase.Result) error) error {
	if sc == nil {
		return errors.New("hbase: nil Scan")
	}
	start, stop := hbase.ScanRange(sc)
	if sc.Reversed && stop == nil {
		return hbase.ErrUnboundedReverse
	}
	if len(start) > 0 && len(stop) > 0 && bytes.Compare(start, stop) >= 0 {
		return nil // empty range
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var idle *time.Timer
	if d := s.cfg.callTimeout; d > 0 {
		idle = time.AfterFunc(d, func() { cancel(errCallTimeout) })
		defer idle.Stop()
		if shared, end, ok := hbase.StartCall(ctx, d); ok {
			defer end()
			var stop context.CancelFunc
			ctx, stop = context.WithDeadlineCause(ctx, shared, errCallTimeout)
			defer stop()
		}
	}
	var opts []func(hrpc.Call) error
	if len(sc.Families) > 0 {
		fams := make(map[string][]string, len(sc.Families))
		for _, f := range sc.Families {
			fams[f] = nil
		}
		opts = append(opts, hrpc.Families(fams))
	}
	if sc.Limit > 0 && sc.Limit < 10000 {
		// Rows fetched per round trip: no more than the caller wants.
		opts = append(opts, hrpc.NumberOfRows(uint32(sc.Limit)))
		// Forward, a PageFilter ends each region's scan on the server
		// after Limit rows, so that the region scanner is closed with its
		// response: otherwise a scan stopped at Limit leaves it open and
		// gohbase closes it with one more RPC (a home timeline page's
		// inbox scan always stops there). No row is lost: every row the
		// server returns is in the range and counts toward Limit, and the
		// next region is read only when this one held fewer. Not reversed:
		// there the server also returns rows that Scan drops (the stop
		// row, see below), which the filter would count.
		if !sc.Reversed {
			opts = append(opts, hrpc.Filters(filter.NewPageFilter(int64(sc.Limit))))
		}
	}
	from, to := start, stop
	if sc.Reversed {
		// HBase's reversed scan runs from its start row (inclusive) down to
		// its stop row (exclusive). From stop: a row equal to it is skipped
		// below. Down to a row just below start: start without its last
		// byte, which is below start; the rows between are cut off below.
		from, to = stop, nil
		if len(start) > 0 {
			to = start[:len(start)-1]
		}
		opts = append(opts, hrpc.Reversed())
	}
	scan, err := hrpc.NewScanRange(ctx, []byte(sc.Table), from, to, opts...)
	if err != nil {
		return err
	}
	scanner := s.conn().client.Scan(scan)
	defer func() { _ = scanner.Close() }()
	n := 0
	var b resultBuilder
	for {
		r, err := scanner.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return callError(ctx, "scan", sc.Table, err)
		}
		if r == nil || len(r.Cells) == 0 {
			continue
		}
		if sc.Reversed {
			row := r.Cells[0].Row
			if bytes.Equal(row, stop) {
				continue
			}
			if bytes.Compare(row, start) < 0 {
				return nil // below the range: done
			}
		}
		if idle != nil && !idle.Stop() {
			return callError(ctx, "scan", sc.Table, context.Cause(ctx))
		}
		err = fn(b.fromLocal(r.Cells[0].Row, r.Cells))
		if idle != nil {
			idle.Reset(s.cfg.callTimeout)
		}
		if err != nil {
			if errors.Is(err, hbase.ErrStopScan) {
				return nil
			}
			return err
		}
		n++
		if sc.Limit > 0 && n >= sc.Limit {
			return nil
		}
	}
}

// maxNames bounds the family and qualifier strings a resultBuilder shares.
const maxNames = 64

// resultBuilder converts gohbase cells to Results for one call: each row's
// cells are allocated together, and the family and qualifier strings are
// shared between cells and rows (a page's rows hold the same few columns:
// one string each instead of two per cell). Values are gohbase's, not
// copied.
type resultBuilder struct {
	names map[string]string // up to maxNames
}

func (b *resultBuilder) name(n []byte) string {
	if s, ok := b.names[string(n)]; ok {
		return s
	}
	s := string(n)
	if b.names == nil {
		b.names = make(map[string]string, 8)
	}
	if len(b.names) < maxNames {
		b.names[s] = s
	}
	return s
}

// result returns the Result of row whose n cells cell returns, in HBase order.
func (b *resultBuilder) result(row []byte, n int, cell func(i int) *pb.Cell) *hbase.Result {
	cs := make([]hbase.Cell, n)
	ptrs := make([]*hbase.Cell, n)
	for i := range cs {
		c := cell(i)
		cs[i] = hbase.Cell{Family: b.name(c.Family), Qualifier: b.name(c.Qualifier), Value: c.Value, Timestamp: int64(c.GetTimestamp())}
		ptrs[i] = &cs[i]
	}
	r := &hbase.Result{Row: row, Cells: ptrs}
	hbase.SortCells(r.Cells)
	return r
}

// fromLocal is result of gohbase's hrpc cells (Get, Scan).
func (b *resultBuilder) fromLocal(row []byte, cells []*hrpc.Cell) *hbase.Result {
	return b.result(row, len(cells), func(i int) *pb.Cell { return (*pb.Cell)(cells[i]) })
}
