package remote

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tsuna/gohbase/filter"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/proto"

	"github.com/weibohbase/gateway/hbase"
)

// Writes of the HBase backend: Put, Delete and their batches, the atomic
// row mutation (MutateRow, a custom hrpc call), the conditional writes
// (CheckAndPut, CheckAndDelete, the latter as a custom hrpc call) and
// Increment.

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

// mutateRow is the atomic RowMutations RPC gohbase lacks: a Multi request
// of one RegionAction with atomic set, holding the row's Delete and Put
// (HBase's Table.mutateRow). The embedded *hrpc.Mutate (the first
// mutation) routes the call to the row's region and supplies its context;
// it travels as protobuf, never batched with other calls.
type mutateRow struct {
	*hrpc.Mutate
	muts []*hrpc.Mutate // the mutations, in order (muts[0] is Mutate)
}

// Name returns the ClientService method: Multi.
func (c *mutateRow) Name() string { return "Multi" }

// Description returns the name gohbase's metrics and traces show.
func (c *mutateRow) Description() string { return "MutateRow" }

// ToProto returns the MultiRequest of one atomic RegionAction on the
// call's region.
func (c *mutateRow) ToProto() proto.Message {
	ra := &pb.RegionAction{
		Region: &pb.RegionSpecifier{Type: pb.RegionSpecifier_REGION_NAME.Enum(), Value: c.Region().Name()},
		Atomic: proto.Bool(true),
	}
	for i, m := range c.muts {
		// A mutation's protobuf names its region: the one gohbase routed
		// the call to.
		m.SetRegion(c.Region())
		req := m.ToProto().(*pb.MutateRequest)
		ra.Action = append(ra.Action, &pb.Action{Index: proto.Uint32(uint32(i)), Mutation: req.GetMutation()})
	}
	return &pb.MultiRequest{RegionAction: []*pb.RegionAction{ra}}
}

// NewResponse returns an empty MultiResponse.
func (c *mutateRow) NewResponse() proto.Message { return &pb.MultiResponse{} }

// CellBlocksEnabled is false: the mutations travel as protobuf.
func (c *mutateRow) CellBlocksEnabled() bool { return false }

// DeserializeCellBlocks refuses cells: mutations return none.
func (c *mutateRow) DeserializeCellBlocks(proto.Message, []byte) (uint32, error) {
	return 0, errors.New("hbase: mutate row: unexpected cells in the response")
}

// regionMoved reports whether err (a Java exception of a region action)
// says that the region is not (or not yet) served where the call went, or
// is busy: the call may be sent again once the region is located anew.
func regionMoved(err error) bool {
	for _, name := range []string{"NotServingRegionException", "RegionMovedException", "RegionOpeningException", "RegionTooBusyException"} {
		if isJava(err, name) {
			return true
		}
	}
	return false
}

// MutateRow deletes m.Delete's columns and writes m.Put's cells of one row
// atomically; see hbase.Store. A region-level failure inside the Multi
// response (the region moved or is opening) reaches no retry of gohbase's,
// so MutateRow reads the row through gohbase (which locates the region
// again) and sends the mutation again, until the call timeout.
func (s *Store) MutateRow(ctx context.Context, m *hbase.RowMutation) error {
	if err := hbase.CheckRowMutation(m); err != nil {
		return err
	}
	ctx, cancel := s.callCtx(ctx)
	defer cancel()
	d := 20 * time.Millisecond
	for {
		call, err := s.newMutateRow(ctx, m)
		if err != nil {
			return err
		}
		err = s.sendMutateRow(call)
		if err == nil || !regionMoved(err) || ctx.Err() != nil {
			return callError(ctx, "mutate row", m.Table, err, call)
		}
		// Locate the region again: a Get meets the same exception in its
		// response header, which gohbase handles.
		get, gerr := hrpc.NewGetStr(ctx, m.Table, string(m.Row), hrpc.Families(map[string][]string{firstFamily(m): nil}))
		if gerr == nil {
			_, _ = s.conn().client.Get(get)
		}
		if d, err = backoff(ctx, d); err != nil {
			return callError(ctx, "mutate row", m.Table, err, call)
		}
	}
}

// firstFamily returns a family m names, for a Get that only locates m's row.
func firstFamily(m *hbase.RowMutation) string {
	for f := range m.Put {
		return f
	}
	for f := range m.Delete {
		return f
	}
	return ""
}

// newMutateRow builds the call of m: its Delete first, then its Put.
func (s *Store) newMutateRow(ctx context.Context, m *hbase.RowMutation) (*mutateRow, error) {
	call := &mutateRow{}
	add := func(mut *hrpc.Mutate) {
		if call.Mutate == nil {
			call.Mutate = mut
		}
		call.muts = append(call.muts, mut)
	}
	if len(m.Delete) > 0 {
		del, err := s.newDelete(ctx, &hbase.Delete{Table: m.Table, Row: m.Row, Values: m.Delete}, true)
		if err != nil {
			return nil, err
		}
		add(del)
	}
	if len(m.Put) > 0 {
		put, err := s.newPut(ctx, &hbase.Put{Table: m.Table, Row: m.Row, Values: nonNilValues(m.Put)}, true)
		if err != nil {
			return nil, err
		}
		add(put)
	}
	return call, nil
}

// nonNilValues returns v with every nil value made empty: in protobuf (not
// cellblocks) a nil value is a missing field, which HBase refuses.
func nonNilValues(v hbase.Values) hbase.Values {
	out := make(hbase.Values, len(v))
	for fam, quals := range v {
		qs := make(map[string][]byte, len(quals))
		for q, val := range quals {
			if val == nil {
				val = []byte{}
			}
			qs[q] = val
		}
		out[fam] = qs
	}
	return out
}

// sendMutateRow sends call and returns the failure its response reports
// (of the region action or of one of its mutations), as a Java exception.
func (s *Store) sendMutateRow(call *mutateRow) error {
	msg, err := s.conn().rpc.SendRPC(call)
	if err != nil {
		return err
	}
	r, ok := msg.(*pb.MultiResponse)
	if !ok {
		return fmt.Errorf("hbase: mutate row: unexpected response %T", msg)
	}
	if len(r.GetRegionActionResult()) != 1 {
		return fmt.Errorf("hbase: mutate row: %d region action results, want 1", len(r.GetRegionActionResult()))
	}
	res := r.GetRegionActionResult()[0]
	if e := res.GetException(); e != nil {
		return javaError(e.GetName(), string(e.GetValue()))
	}
	for _, roe := range res.GetResultOrException() {
		if e := roe.GetException(); e != nil {
			return javaError(e.GetName(), string(e.GetValue()))
		}
	}
	return nil
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
