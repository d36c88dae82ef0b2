package remote

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"sync"

	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/weibohbase/gateway/hbase"
)

// This file holds region-level operations of a real HBase cluster, for tests
// and operator tools: where a table's regions are (a scan of hbase:meta with
// the data client), which region servers are live (the master's cluster
// status), and moving and splitting a region (master RPCs through the
// store's admin client). gohbase wraps MoveRegion (hrpc.NewMoveRegion) but
// not SplitRegion, whose messages are not even in its generated protobuf
// package; the split request is built here from a small descriptor with
// dynamicpb.

// metaTable is the table of region locations.
const metaTable = "hbase:meta"

// pbufMagic prefixes the serialized RegionInfo in hbase:meta ("PBUF").
var pbufMagic = []byte("PBUF")

// RegionLocation is one region of a table as hbase:meta records it.
type RegionLocation struct {
	// Table is the region's table, "ns:name" ("name" in the default namespace).
	Table string
	// Name is the region's full name, its row key in hbase:meta
	// ("table,startKey,regionID.encodedName.").
	Name []byte
	// EncodedName is the region's encoded name (32 hex digits), the name
	// MoveRegion takes and the region's directory on the filesystem.
	EncodedName string
	// StartKey is the region's first row (inclusive); empty for the first region.
	StartKey []byte
	// EndKey is the first row after the region (exclusive); empty for the last region.
	EndKey []byte
	// ID is the region id: the region's creation time in milliseconds since the epoch.
	ID uint64
	// Server is the ServerName of the region server holding the region,
	// "host,port,startcode" (the form MoveRegion takes), or "" while hbase:meta
	// names none (the region is being assigned).
	Server string
	// info is the region's descriptor as hbase:meta holds it (SplitRegion sends it).
	info *pb.RegionInfo
}

// Contains reports whether row falls in the region's key range.
func (r RegionLocation) Contains(row []byte) bool {
	return bytes.Compare(row, r.StartKey) >= 0 && (len(r.EndKey) == 0 || bytes.Compare(row, r.EndKey) < 0)
}

// TableRegions returns the regions of table ("ns:name"; "name" means the
// default namespace) in key order, with the region server of each, read from
// hbase:meta. Split parents (offline since their daughters replaced them)
// and read replicas are left out. A table with no rows in hbase:meta gives
// hbase.ErrTableNotFound. Without a deadline in ctx the scan waits as long
// as hbase:meta is unreachable.
func (s *Store) TableRegions(ctx context.Context, table string) ([]RegionLocation, error) {
	ns, name := splitTableName(table)
	full := fullTableName(ns, name)
	// Rows of hbase:meta are "table,startKey,id.encoded.", ordered by HBase's
	// meta comparator (table, then start key, then id): "table,," sorts before
	// the table's first region, and "table-" after its last one (but before
	// the rows of some other tables, such as "table+x", skipped below).
	prefix := []byte(full + ",")
	start := []byte(full + ",,")
	stop := []byte(full + "-")
	scan, err := hrpc.NewScanRange(ctx, []byte(metaTable), start, stop,
		hrpc.Families(map[string][]string{"info": {"regioninfo", "server", "serverstartcode"}}))
	if err != nil {
		return nil, err
	}
	scanner := s.conn().client.Scan(scan)
	defer func() { _ = scanner.Close() }()
	var out []RegionLocation
	for {
		res, err := scanner.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("hbase: regions of %q: scan %s: %w", full, metaTable, err)
		}
		if len(res.Cells) == 0 || !bytes.HasPrefix(res.Cells[0].Row, prefix) {
			continue
		}
		loc, ok, err := parseMetaRow(full, res.Cells)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, loc)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("hbase: regions of %q: none in %s: %w", full, metaTable, hbase.ErrTableNotFound)
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i].StartKey, out[j].StartKey) < 0 })
	return out, nil
}

// parseMetaRow decodes one row of hbase:meta; ok is false for rows to leave
// out (split parents, replicas).
func parseMetaRow(table string, cells []*hrpc.Cell) (loc RegionLocation, ok bool, err error) {
	var host, port string
	var startCode []byte
	for _, c := range cells {
		switch string(c.Qualifier) {
		case "regioninfo":
			if !bytes.HasPrefix(c.Value, pbufMagic) {
				return loc, false, fmt.Errorf("hbase: %s row %q: regioninfo without PBUF magic", metaTable, c.Row)
			}
			info := &pb.RegionInfo{}
			if err := proto.Unmarshal(c.Value[len(pbufMagic):], info); err != nil {
				return loc, false, fmt.Errorf("hbase: %s row %q: regioninfo: %w", metaTable, c.Row, err)
			}
			loc.info = info
			loc.Name = bytes.Clone(c.Row)
		case "server":
			// "host:port"; empty while the region is in transition.
			if i := bytes.LastIndexByte(c.Value, ':'); i > 0 {
				host, port = string(c.Value[:i]), string(c.Value[i+1:])
			}
		case "serverstartcode":
			startCode = c.Value
		}
	}
	if loc.info == nil {
		return loc, false, fmt.Errorf("hbase: %s has a row of %q without regioninfo", metaTable, table)
	}
	if loc.info.GetOffline() || loc.info.GetSplit() || loc.info.GetReplicaId() != 0 {
		return loc, false, nil
	}
	loc.Table = table
	loc.StartKey = loc.info.GetStartKey()
	loc.EndKey = loc.info.GetEndKey()
	loc.ID = loc.info.GetRegionId()
	loc.EncodedName = encodedRegionName(loc.Name)
	if host != "" && len(startCode) == 8 {
		loc.Server = host + "," + port + "," + strconv.FormatUint(binary.BigEndian.Uint64(startCode), 10)
	}
	return loc, true, nil
}

// encodedRegionName returns the encoded name at the end of a region name
// "table,startKey,id.encoded." (32 hex digits between the last two dots), or
// "" for names of the old format, which carry none.
func encodedRegionName(name []byte) string {
	const n = 32
	if len(name) < n+2 || name[len(name)-1] != '.' || name[len(name)-n-2] != '.' {
		return ""
	}
	return string(name[len(name)-n-1 : len(name)-1])
}

// RegionServers returns the ServerNames ("host,port,startcode") of the region
// servers the master counts as live, sorted. A region server that has died
// stays live until its ZooKeeper session expires.
func (s *Store) RegionServers(ctx context.Context) ([]string, error) {
	msg, err := s.master(ctx, "GetClusterStatus", "",
		&pb.GetClusterStatusRequest{}, func() proto.Message { return &pb.GetClusterStatusResponse{} })
	if err != nil {
		return nil, fmt.Errorf("hbase: cluster status: %w", err)
	}
	r, ok := msg.(*pb.GetClusterStatusResponse)
	if !ok {
		return nil, fmt.Errorf("hbase: cluster status: unexpected response %T", msg)
	}
	var out []string
	for _, ls := range r.GetClusterStatus().GetLiveServers() {
		sn := ls.GetServer()
		out = append(out, fmt.Sprintf("%s,%d,%d", sn.GetHostName(), sn.GetPort(), sn.GetStartCode()))
	}
	sort.Strings(out)
	return out, nil
}

// MoveRegion asks the master to move the region whose encoded name is encodedName to the region server dest
// ("host,port,startcode", as RegionServers and RegionLocation.Server give
// it; "" lets the master choose). HBase 2 answers when the move is done: the
// region is closed on its old server and open on the new one. Moving a region
// to the server that holds it does nothing.
func (s *Store) MoveRegion(ctx context.Context, encodedName, dest string) error {
	var opts []func(hrpc.Call) error
	if dest != "" {
		opts = append(opts, hrpc.WithDestinationRegionServer(dest))
	}
	mr, err := hrpc.NewMoveRegion(ctx, []byte(encodedName), opts...)
	if err != nil {
		return fmt.Errorf("hbase: move region %s: %w", encodedName, err)
	}
	if _, err := s.adminRPC.SendRPC(mr); err != nil {
		return fmt.Errorf("hbase: move region %s to %q: %w", encodedName, dest, err)
	}
	return nil
}

// SplitRegion asks the master to split region at splitRow, and waits until the split procedure has finished:
// the region is then replaced by two daughters, [StartKey, splitRow) and
// [splitRow, EndKey), open on the region's server. splitRow must fall strictly
// inside the region (nil lets HBase pick the midpoint of the region's flushed
// data, and fails when there is none). A region that cannot split yet (it
// still holds references to the files of its own parent) gives an error
// naming DoNotRetryIOException.
func (s *Store) SplitRegion(ctx context.Context, region RegionLocation, splitRow []byte) error {
	if region.info == nil {
		return errors.New("hbase: split region: the RegionLocation does not come from TableRegions")
	}
	what := fmt.Sprintf("split region %s of %q at %q", region.EncodedName, region.Table, splitRow)
	types, err := splitRegionTypes()
	if err != nil {
		return fmt.Errorf("hbase: %s: %w", what, err)
	}
	req := newSplitRequest(types, region.info, splitRow)
	msg, err := s.master(ctx, "SplitRegion", region.Table, req,
		func() proto.Message { return dynamicpb.NewMessage(types.resp) })
	if err != nil {
		return fmt.Errorf("hbase: %s: %w", what, err)
	}
	resp, ok := msg.(*dynamicpb.Message)
	if !ok || resp.Descriptor() != types.resp {
		return fmt.Errorf("hbase: %s: unexpected response %T", what, msg)
	}
	procID := resp.Get(types.resp.Fields().ByName("proc_id")).Uint()
	if err := s.waitProcedure(ctx, region.Table, procID); err != nil {
		return fmt.Errorf("hbase: %s: %w", what, err)
	}
	return nil
}

// newSplitRequest returns a SplitTableRegionRequest for info at splitRow
// (nil: none).
func newSplitRequest(types splitTypes, info *pb.RegionInfo, splitRow []byte) *dynamicpb.Message {
	req := dynamicpb.NewMessage(types.req)
	fields := types.req.Fields()
	req.Set(fields.ByName("region_info"), protoreflect.ValueOfMessage(info.ProtoReflect()))
	if splitRow != nil {
		req.Set(fields.ByName("split_row"), protoreflect.ValueOfBytes(splitRow))
	}
	return req
}

// splitTypes are the descriptors of HBase's SplitTableRegionRequest and
// SplitTableRegionResponse (MasterService.SplitRegion, Master.proto):
//
//	message SplitTableRegionRequest {
//	  required RegionInfo region_info = 1;
//	  optional bytes split_row = 2;
//	  optional uint64 nonce_group = 3 [default = 0];
//	  optional uint64 nonce = 4 [default = 0];
//	}
//	message SplitTableRegionResponse { optional uint64 proc_id = 1; }
type splitTypes struct {
	req, resp protoreflect.MessageDescriptor
}

// splitRegionTypes builds splitTypes once, on gohbase's RegionInfo (file
// "HBase.proto", package "pb", registered by gohbase's pb package). The file
// is not registered: it cannot clash with a later gohbase that has these
// messages.
var splitRegionTypes = sync.OnceValues(func() (splitTypes, error) {
	field := func(name string, num int32, label descriptorpb.FieldDescriptorProto_Label,
		typ descriptorpb.FieldDescriptorProto_Type, typeName string) *descriptorpb.FieldDescriptorProto {
		f := &descriptorpb.FieldDescriptorProto{
			Name: proto.String(name), Number: proto.Int32(num), Label: label.Enum(), Type: typ.Enum(),
		}
		if typeName != "" {
			f.TypeName = proto.String(typeName)
		}
		return f
	}
	const (
		optional = descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL
		required = descriptorpb.FieldDescriptorProto_LABEL_REQUIRED
		tBytes   = descriptorpb.FieldDescriptorProto_TYPE_BYTES
		tUint64  = descriptorpb.FieldDescriptorProto_TYPE_UINT64
		tMessage = descriptorpb.FieldDescriptorProto_TYPE_MESSAGE
	)
	fd := &descriptorpb.FileDescriptorProto{
		Name:       proto.String("github.com/weibohbase/gateway/hbase/remote/split_region.proto"),
		Package:    proto.String("pb"),
		Dependency: []string{"HBase.proto"},
		Syntax:     proto.String("proto2"),
		MessageType: []*descriptorpb.DescriptorProto{
			{Name: proto.String("SplitTableRegionRequest"), Field: []*descriptorpb.FieldDescriptorProto{
				field("region_info", 1, required, tMessage, ".pb.RegionInfo"),
				field("split_row", 2, optional, tBytes, ""),
				field("nonce_group", 3, optional, tUint64, ""),
				field("nonce", 4, optional, tUint64, ""),
			}},
			{Name: proto.String("SplitTableRegionResponse"), Field: []*descriptorpb.FieldDescriptorProto{
				field("proc_id", 1, optional, tUint64, ""),
			}},
		},
	}
	file, err := protodesc.NewFile(fd, protoregistry.GlobalFiles)
	if err != nil {
		return splitTypes{}, fmt.Errorf("split request descriptor: %w", err)
	}
	msgs := file.Messages()
	return splitTypes{req: msgs.ByName("SplitTableRegionRequest"), resp: msgs.ByName("SplitTableRegionResponse")}, nil
})
