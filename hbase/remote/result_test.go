package remote

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/proto"
)

// TestResultBuilder: rows convert to Results in HBase order with gohbase's
// values, sharing one string per family and qualifier across the rows of
// a call (past maxNames, strings of their own).
func TestResultBuilder(t *testing.T) {
	cell := func(fam, qual, val string, ts uint64) *pb.Cell {
		return &pb.Cell{Family: []byte(fam), Qualifier: []byte(qual), Value: []byte(val), Timestamp: proto.Uint64(ts)}
	}
	var b resultBuilder
	rows := [][]*pb.Cell{
		{cell("p", "t", "hello", 2), cell("c", "n", "x", 1), cell("p", "a", "bob", 2)},
		{cell("p", "t", "again", 5), cell("c", "n", "", 4)},
		{},
		{{Family: []byte("p"), Qualifier: []byte("t"), Value: []byte("no ts")}},
	}
	var got [][]string
	for i, cells := range rows {
		var res = b.result(fmt.Appendf(nil, "r%d", i), len(cells), func(j int) *pb.Cell { return cells[j] })
		if res.Cells == nil {
			t.Errorf("row %d: nil Cells (want an empty slice)", i)
		}
		var row []string
		for _, c := range res.Cells {
			row = append(row, fmt.Sprintf("%s:%s=%s@%d", c.Family, c.Qualifier, c.Value, c.Timestamp))
		}
		got = append(got, row)
	}
	want := [][]string{{"c:n=x@1", "p:a=bob@2", "p:t=hello@2"}, {"c:n=@4", "p:t=again@5"}, nil, {"p:t=no ts@0"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("results\n got  %q\n want %q", got, want)
	}
	r1 := b.fromLocal([]byte("a"), []*hrpc.Cell{(*hrpc.Cell)(cell("p", "t", "1", 1))})
	r2 := b.fromLocal([]byte("b"), []*hrpc.Cell{(*hrpc.Cell)(cell("p", "t", "2", 1))})
	if unsafe.StringData(r1.Cells[0].Qualifier) != unsafe.StringData(r2.Cells[0].Qualifier) ||
		unsafe.StringData(r1.Cells[0].Family) != unsafe.StringData(r2.Cells[0].Family) {
		t.Errorf("family and qualifier strings are not shared between rows")
	}
	for i := range 2 * maxNames {
		b.name(fmt.Appendf(nil, "q%d", i))
	}
	if len(b.names) != maxNames {
		t.Errorf("%d names kept, want at most %d", len(b.names), maxNames)
	}
}
