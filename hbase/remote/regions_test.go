package remote

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// These tests need no HBase: they check the decoding of hbase:meta rows and
// the encoding of the split request (TestClusterRegionFaults runs them against
// a real cluster).

func TestEncodedRegionName(t *testing.T) {
	const enc = "0bcf3698ae4672d8556d4bb9563540f3"
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"first region", "weibo:inbox,,1795425308951." + enc + ".", enc},
		{"binary start key", "t,\x04.\x2c,1795425308951." + enc + ".", enc},
		{"old format (no encoded name)", "t,,1795425308951", ""},
		{"no trailing dot", "t,,1795425308951." + enc, ""},
		{"too short", "." + enc[:31] + ".", ""},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := encodedRegionName([]byte(tt.in)); got != tt.want {
				t.Errorf("encodedRegionName(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestRegionLocationContains(t *testing.T) {
	tests := []struct {
		start, end, row string
		want            bool
	}{
		{"", "", "anything", true},
		{"", "m", "a", true},
		{"", "m", "m", false},
		{"m", "", "m", true},
		{"m", "", "l", false},
		{"b", "d", "c", true},
		{"b", "d", "d", false},
		{"b", "d", "a", false},
	}
	for _, tt := range tests {
		r := RegionLocation{StartKey: []byte(tt.start), EndKey: []byte(tt.end)}
		if got := r.Contains([]byte(tt.row)); got != tt.want {
			t.Errorf("[%q,%q).Contains(%q) = %v, want %v", tt.start, tt.end, tt.row, got, tt.want)
		}
	}
}

// metaCells builds the cells of one hbase:meta row as HBase writes them.
func metaCells(row string, info *pb.RegionInfo, server string, startCode uint64) []*hrpc.Cell {
	cell := func(q string, v []byte) *hrpc.Cell {
		return &hrpc.Cell{Row: []byte(row), Family: []byte("info"), Qualifier: []byte(q), Value: v}
	}
	ri, err := proto.Marshal(info)
	if err != nil {
		panic(err)
	}
	cells := []*hrpc.Cell{cell("regioninfo", append([]byte("PBUF"), ri...))}
	if server != "" {
		cells = append(cells, cell("server", []byte(server)),
			cell("serverstartcode", binary.BigEndian.AppendUint64(nil, startCode)))
	}
	return cells
}

func TestParseMetaRow(t *testing.T) {
	const enc = "e5b60d907bb5a80c34e9ba503d5920f1"
	row := "ns:t,\x20,1795425308951." + enc + "."
	info := func(mod func(*pb.RegionInfo)) *pb.RegionInfo {
		ri := &pb.RegionInfo{
			RegionId:  proto.Uint64(1795425308951),
			TableName: &pb.TableName{Namespace: []byte("ns"), Qualifier: []byte("t")},
			StartKey:  []byte{0x20},
			EndKey:    []byte{0x40},
		}
		if mod != nil {
			mod(ri)
		}
		return ri
	}
	tests := []struct {
		name    string
		cells   []*hrpc.Cell
		wantOK  bool
		wantErr bool
		server  string
	}{
		{"assigned", metaCells(row, info(nil), "127.0.0.1:37823", 1795425565790), true, false, "127.0.0.1,37823,1795425565790"},
		{"in transition", metaCells(row, info(nil), "", 0), true, false, ""},
		{"split parent", metaCells(row, info(func(ri *pb.RegionInfo) {
			ri.Offline, ri.Split = proto.Bool(true), proto.Bool(true)
		}), "127.0.0.1:1", 1), false, false, ""},
		{"replica", metaCells(row, info(func(ri *pb.RegionInfo) { ri.ReplicaId = proto.Int32(1) }), "127.0.0.1:1", 1), false, false, ""},
		{"no regioninfo", []*hrpc.Cell{{Row: []byte(row), Family: []byte("info"), Qualifier: []byte("server"), Value: []byte("h:1")}}, false, true, ""},
		{"no PBUF magic", []*hrpc.Cell{{Row: []byte(row), Family: []byte("info"), Qualifier: []byte("regioninfo"), Value: []byte("junk")}}, false, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loc, ok, err := parseMetaRow("ns:t", tt.cells)
			if (err != nil) != tt.wantErr || ok != tt.wantOK {
				t.Fatalf("parseMetaRow: ok=%v err=%v, want ok=%v err=%v", ok, err, tt.wantOK, tt.wantErr)
			}
			if !ok {
				return
			}
			if loc.Table != "ns:t" || loc.EncodedName != enc || string(loc.Name) != row ||
				!bytes.Equal(loc.StartKey, []byte{0x20}) || !bytes.Equal(loc.EndKey, []byte{0x40}) ||
				loc.ID != 1795425308951 || loc.Server != tt.server {
				t.Errorf("parseMetaRow = %+v, want table ns:t, encoded %s, [20,40), id 1795425308951, server %q", loc, enc, tt.server)
			}
		})
	}
}

// TestSplitRequestEncoding checks the wire form of the split request against
// HBase's SplitTableRegionRequest: region_info = 1 (message), split_row = 2.
func TestSplitRequestEncoding(t *testing.T) {
	types, err := splitRegionTypes()
	if err != nil {
		t.Fatal(err)
	}
	info := &pb.RegionInfo{
		RegionId:  proto.Uint64(7),
		TableName: &pb.TableName{Namespace: []byte("ns"), Qualifier: []byte("t")},
		StartKey:  []byte("a"),
		EndKey:    []byte("z"),
	}
	wantInfo, err := proto.Marshal(info)
	if err != nil {
		t.Fatal(err)
	}
	for _, splitRow := range [][]byte{[]byte("m"), nil} {
		b, err := proto.Marshal(newSplitRequest(types, info, splitRow))
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		fields := map[protowire.Number][]byte{}
		for len(b) > 0 {
			num, typ, n := protowire.ConsumeTag(b)
			if n < 0 || typ != protowire.BytesType {
				t.Fatalf("unexpected tag in %x", b)
			}
			b = b[n:]
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				t.Fatalf("bad field %d", num)
			}
			fields[num], b = v, b[n:]
		}
		if !bytes.Equal(fields[1], wantInfo) {
			t.Errorf("split row %q: field 1 = %x, want the RegionInfo %x", splitRow, fields[1], wantInfo)
		}
		if got, ok := fields[2]; ok != (splitRow != nil) || !bytes.Equal(got, splitRow) {
			t.Errorf("split row %q: field 2 = %q (present %v)", splitRow, got, ok)
		}
		want := 1
		if splitRow != nil {
			want = 2
		}
		if len(fields) != want {
			t.Errorf("split row %q: fields %v, want 1 and (with a split row) 2", splitRow, fields)
		}
	}
}
