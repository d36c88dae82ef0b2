package remote

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/tsuna/gohbase/filter"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/proto"

	"github.com/weibohbase/gateway/hbase"
)

// Writes of the HBase backend: Put, Delete and their batches, the
// conditional writes (CheckAndPut, CheckAndDelete, the latter as a custom
// hrpc call) and Increment.

func (s *Store) newPut(ctx context.Context, p *hbase.Put, single bool) (*hrpc.Mutate, error) {
	if p == nil {
		return nil, errors.New("hbase: nil Put")
	}
	var opts []func(hrpc.Call) error
	if single {
		opts = append(opts, hrpc.SkipBatch())
	}
	if p.Timestamp != 0 {
		opts = append(opts, hrpc.TimestampUint64(uint64(p.Timestamp)))
	}
	return hrpc.NewPut(ctx, []byte(p.Table), p.Row, p.Values, opts...)
}

// deleteValues converts Delete.Values to gohbase's shape. gohbase deletes a
// whole family only for a nil qualifier map (an empty non-nil one would
// delete nothing), so empty maps become nil.
func deleteValues(v hbase.Values) map[string]map[string][]byte {
	if v == nil {
		return nil
	}
	out := make(map[string]map[string][]byte, len(v))
	for fam, quals := range v {
		if len(quals) == 0 {
			out[fam] = nil
			continue
		}
		qs := make(map[string][]byte, len(quals))
		for q := range quals {
			qs[q] = nil
		}
		out[fam] = qs
	}
	return out
}

func (s *Store) newDelete(ctx context.Context, d *hbase.Delete, single bool) (*hrpc.Mutate, error) {
	if d == nil {
		return nil, errors.New("hbase: nil Delete")
	}
	var opts []func(hrpc.Call) error
	if single {
		opts = append(opts, hrpc.SkipBatch())
	}
	if d.Timestamp != 0 {
		if err := hbase.CheckDeleteVersion(d); err != nil {
			return nil, err
		}
		// One version: DELETE_ONE_VERSION of each named column,
		// DELETE_FAMILY_VERSION of each family mapped to an empty map.
		opts = append(opts, hrpc.TimestampUint64(uint64(d.Timestamp)), hrpc.DeleteOneVersion())
	}
	return hrpc.NewDel(ctx, []byte(d.Table), d.Row, deleteValues(d.Values), opts...)
}

// Put writes one row atomically; see hbase.Store.
func (s *Store) Put(ctx context.Context, p *hbase.Put) error {
	ctx, cancel := s.callCtx(ctx)
	defer cancel()
	m, err := s.newPut(ctx, p, true)
	if err != nil {
		return err
	}
	_, err = s.conn().client.Put(m)
	return callError(ctx, "put", p.Table, err, m)
}

// PutMany writes rows with one SendBatch per table, run concurrently; on
// error it returns the first failed put's error (others may have been written).
func (s *Store) PutMany(ctx context.Context, puts []*hbase.Put) error {
	if len(puts) == 0 {
		return nil
	}
	ctx, cancel := s.callCtx(ctx)
	defer cancel()
	calls := make([]hrpc.Call, len(puts))
	for i, p := range puts {
		m, err := s.newPut(ctx, p, false)
		if err != nil {
			return fmt.Errorf("put %d of %d: %w", i+1, len(puts), err)
		}
		calls[i] = m
	}
	for i, r := range s.sendBatch(ctx, calls) {
		if r.Error != nil {
			return batchError(ctx, "put", i, len(puts), puts[i].Table, r.Error, calls)
		}
	}
	return nil
}

// Delete deletes from one row atomically; see hbase.Store and hbase.Delete.
func (s *Store) Delete(ctx context.Context, d *hbase.Delete) error {
	ctx, cancel := s.callCtx(ctx)
	defer cancel()
	m, err := s.newDelete(ctx, d, true)
	if err != nil {
		return err
	}
	_, err = s.conn().client.Delete(m)
	return callError(ctx, "delete", d.Table, err, m)
}

// DeleteMany deletes with one SendBatch per table, run concurrently; on error
// it returns the first failed delete's error.
func (s *Store) DeleteMany(ctx context.Context, dels []*hbase.Delete) error {
	if len(dels) == 0 {
		return nil
	}
	ctx, cancel := s.callCtx(ctx)
	defer cancel()
	calls := make([]hrpc.Call, len(dels))
	for i, d := range dels {
		m, err := s.newDelete(ctx, d, false)
		if err != nil {
			return fmt.Errorf("delete %d of %d: %w", i+1, len(dels), err)
		}
		calls[i] = m
	}
	for i, r := range s.sendBatch(ctx, calls) {
		if r.Error != nil {
			return batchError(ctx, "delete", i, len(dels), dels[i].Table, r.Error, calls)
		}
	}
	return nil
}

// sendBatch sends calls with one gohbase SendBatch per table (gohbase rejects
// mixed tables), concurrently, and returns the results in the order of calls.
func (s *Store) sendBatch(ctx context.Context, calls []hrpc.Call) []hrpc.RPCResult {
	type group struct {
		idx   []int
		calls []hrpc.Call
	}
	var order []string
	groups := map[string]*group{}
	for i, c := range calls {
		t := string(c.Table())
		g := groups[t]
		if g == nil {
			g = &group{}
			groups[t] = g
			order = append(order, t)
		}
		g.idx = append(g.idx, i)
		g.calls = append(g.calls, c)
	}
	client := s.conn().client
	if len(order) == 1 {
		res, _ := client.SendBatch(ctx, calls)
		return res
	}
	out := make([]hrpc.RPCResult, len(calls))
	var wg sync.WaitGroup
	for _, t := range order {
		g := groups[t]
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, _ := client.SendBatch(ctx, g.calls)
			for j, r := range res {
				out[g.idx[j]] = r
			}
		}()
	}
	wg.Wait()
	return out
}

// --- conditional writes and counters -------------------------------------------

// valueComparator is HBase's BinaryComparator on expected; for a nil (or
// empty) expected value HBase checks that the cell is absent (or empty).
func valueComparator(expected []byte) (*pb.Comparator, error) {
	return filter.NewBinaryComparator(filter.NewByteArrayComparable(expected)).ConstructPBComparator()
}

// CheckAndPut applies p if the newest family:qualifier of p's row equals
// expected; see hbase.Store. HBase treats expected nil as "absent or empty value".
func (s *Store) CheckAndPut(ctx context.Context, p *hbase.Put, family, qualifier string, expected []byte) (bool, error) {
	ctx, cancel := s.callCtx(ctx)
	defer cancel()
	m, err := s.newPut(ctx, p, true)
	if err != nil {
		return false, err
	}
	ok, err := s.conn().client.CheckAndPut(m, family, qualifier, expected)
	if err != nil {
		return false, callError(ctx, "check-and-put", p.Table, err, m)
	}
	return ok, nil
}

// checkAndDelete is the CheckAndDelete RPC gohbase lacks: a Delete mutation
// sent with a pb.Condition, as hrpc.CheckAndPut does for puts. It is not
// batchable (a MultiResponse has no "processed" flag) and sends no cellblocks.
type checkAndDelete struct {
	*hrpc.Mutate
	family, qualifier []byte
	comparator        *pb.Comparator
}

// ToProto returns the Delete's MutateRequest with the condition set.
func (c *checkAndDelete) ToProto() proto.Message {
	req := c.Mutate.ToProto().(*pb.MutateRequest)
	req.Condition = &pb.Condition{
		Row:         c.Key(),
		Family:      c.family,
		Qualifier:   c.qualifier,
		CompareType: pb.CompareType_EQUAL.Enum(),
		Comparator:  c.comparator,
	}
	return req
}

// CellBlocksEnabled is false: a conditional mutation travels as protobuf.
func (c *checkAndDelete) CellBlocksEnabled() bool { return false }

// CheckAndDelete applies d if the newest family:qualifier of d's row equals
// expected; see hbase.Store. HBase treats expected nil as "absent or empty value".
func (s *Store) CheckAndDelete(ctx context.Context, d *hbase.Delete, family, qualifier string, expected []byte) (bool, error) {
	ctx, cancel := s.callCtx(ctx)
	defer cancel()
	m, err := s.newDelete(ctx, d, true) // SkipBatch: sent alone, never in a multi
	if err != nil {
		return false, err
	}
	cmp, err := valueComparator(expected)
	if err != nil {
		return false, err
	}
	call := &checkAndDelete{Mutate: m, family: []byte(family), qualifier: []byte(qualifier), comparator: cmp}
	msg, err := s.conn().rpc.SendRPC(call)
	if err != nil {
		return false, callError(ctx, "check-and-delete", d.Table, err, m)
	}
	r, ok := msg.(*pb.MutateResponse)
	if !ok {
		return false, fmt.Errorf("hbase: check-and-delete %q: unexpected response %T", d.Table, msg)
	}
	if r.Processed == nil {
		return false, fmt.Errorf("hbase: check-and-delete %q: response without the processed flag", d.Table)
	}
	return r.GetProcessed(), nil
}

// Increment adds inc.Amount to an 8-byte big-endian counter and returns the
// new value; see hbase.Store. A cell that is not 8 bytes wide makes HBase fail the call.
func (s *Store) Increment(ctx context.Context, inc *hbase.Increment) (int64, error) {
	if inc == nil {
		return 0, errors.New("hbase: nil Increment")
	}
	ctx, cancel := s.callCtx(ctx)
	defer cancel()
	m, err := hrpc.NewIncSingle(ctx, []byte(inc.Table), inc.Row, inc.Family, inc.Qualifier, inc.Amount, hrpc.SkipBatch())
	if err != nil {
		return 0, err
	}
	v, err := s.conn().client.Increment(m)
	if err != nil {
		return 0, callError(ctx, "increment", inc.Table, err, m)
	}
	return v, nil
}
