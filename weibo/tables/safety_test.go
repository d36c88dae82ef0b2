package tables_test

import (
	"fmt"
	"testing"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestPackedCells checks the packed cells of weibo:safety: entries stay
// sorted by uid through With, Without and Put; Find finds each; ended
// mutes are pruned on write; the filter cell round-trips, and a
// truncated one is refused.
func TestPackedCells(t *testing.T) {
	var b tables.Blocks
	for _, uid := range []tables.UserID{30, 10, 20, 10} {
		b = b.With(tables.BlockEntry{UID: uid, At: int64(uid)})
	}
	if b.Len() != 3 || !b.Valid() {
		t.Fatalf("blocks: %d entries, valid %v", b.Len(), b.Valid())
	}
	for i, want := range []tables.UserID{10, 20, 30} {
		if e := b.At(i); e.UID != want || e.At != int64(want) {
			t.Errorf("entry %d: %+v", i, e)
		}
		if _, ok := b.Find(want); !ok {
			t.Errorf("Find(%d) missed", want)
		}
	}
	b = b.Without(20)
	if _, ok := b.Find(20); ok || b.Len() != 2 || !b.Valid() {
		t.Errorf("Without(20): %d entries", b.Len())
	}
	if _, ok := b.Find(15); ok {
		t.Error("Find(15) found")
	}

	var m tables.Mutes
	m = m.Put(tables.MuteEntry{UID: 5, At: 1, Expires: 100}, 0)
	m = m.Put(tables.MuteEntry{UID: 3, At: 1, Notifications: true}, 0)
	if m.LiveLen(50) != 2 || m.LiveLen(100) != 1 || !m.Valid() {
		t.Fatalf("mutes: live %d at 50, %d at 100", m.LiveLen(50), m.LiveLen(100))
	}
	if e, ok := m.Find(3); !ok || !e.Notifications || e.Expires != 0 {
		t.Errorf("Find(3): %+v %v", e, ok)
	}
	m = m.Put(tables.MuteEntry{UID: 7, At: 200}, 150) // 5 ended at 100: dropped
	if _, ok := m.Find(5); ok || m.Len() != 2 {
		t.Errorf("after a write at 150: %d entries", m.Len())
	}
	if m = m.Without(3, 150); m.Len() != 1 {
		t.Errorf("Without(3): %d entries", m.Len())
	}

	fs := []tables.FilterEntry{
		{ID: 1, At: 2, Expires: 3, Action: tables.FilterHide, Contexts: tables.FilterHome | tables.FilterTopic, Phrase: "剧透"},
		{ID: 4, At: 5, Action: tables.FilterWarn, Contexts: tables.FilterComments, WholeWord: true, Phrase: "cat"},
	}
	cell := tables.EncodeFilters(fs)
	got, ok := tables.DecodeFilters(cell)
	if !ok || len(got) != 2 || got[0] != fs[0] || got[1] != fs[1] {
		t.Fatalf("filters round trip: %+v %v", got, ok)
	}
	if got, ok := tables.DecodeFilters(cell[:len(cell)-1]); ok || len(got) != 1 {
		t.Errorf("a truncated cell decoded: %+v %v", got, ok)
	}
}

func TestSuspensionCodec(t *testing.T) {
	uid := tables.UserID(42)
	k := tables.SuspensionKey(uid)
	if got, ok := tables.DecodeSuspensionKey(k); !ok || got != uid {
		t.Fatalf("DecodeSuspensionKey = %v, %v", got, ok)
	}
	for _, c := range []tables.SuspensionCells{
		{Since: 1000},
		{Since: 1000, Until: 2000, Reason: "spam", By: 7},
	} {
		r := resultOf(k, c)
		got, ok := tables.DecodeSuspension(r)
		if !ok || got != c {
			t.Errorf("DecodeSuspension(Encode(%+v)) = %+v, %v", c, got, ok)
		}
	}
	if _, ok := tables.DecodeSuspension(resultOf(k, tables.SuspensionCells{Since: 2000, Until: 1000})); ok {
		t.Error("an until before since decoded")
	}
	if _, ok := tables.DecodeSuspension(&hbase.Result{Row: k}); ok {
		t.Error("a row without since decoded")
	}
}

func resultOf(row []byte, c tables.SuspensionCells) *hbase.Result {
	r := &hbase.Result{Row: row}
	for q, v := range tables.EncodeSuspension(c)[tables.FamSuspension] {
		r.Cells = append(r.Cells, &hbase.Cell{Family: tables.FamSuspension, Qualifier: q, Value: v})
	}
	return r
}

// TestSuspensionExample checks docs/schema.md's example of a
// weibo:suspensions row byte for byte.
func TestSuspensionExample(t *testing.T) {
	if got := fmt.Sprintf("%x", tables.SuspensionKey(22732)); got != "0900000000000058cc" {
		t.Errorf("rowkey %s", got)
	}
	cells := tables.EncodeSuspension(tables.SuspensionCells{Since: 1583037356789, Until: 1583037356789 + 7*24*3600*1000, Reason: "spam", By: 5802})[tables.FamSuspension]
	for q, want := range map[string]string{"t": "0000017094611af5", "u": "00000170b86d9ef5", "r": "7370616d", "b": "00000000000016aa"} {
		if got := fmt.Sprintf("%x", cells[q]); got != want {
			t.Errorf("s:%s = %s, want %s", q, got, want)
		}
	}
}
