package audit_test

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo/audit"
	"github.com/weibohbase/gateway/weibo/paging"
	"github.com/weibohbase/gateway/weibo/tables"
)

// ms is the time of the examples of docs/schema.md, ms since the epoch.
const ms = int64(1583037296789)

// be is v as 8 bytes big-endian.
func be(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

// docRev is rev(8) of docs/schema.md: Long.MAX_VALUE - ms, big-endian.
func docRev(ms int64) []byte { return be(uint64(math.MaxInt64 - ms)) }

// cat concatenates parts.
func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// auditID is an event id of the examples of docs/schema.md ("The audit log").
var auditID = audit.EventID{Millis: ms, Nonce: 0x00c0ffee00c0ffee}

// docNonce is nonce(8) of auditID.
var docNonce = be(0x00c0ffee00c0ffee)

// TestRowKeys checks every weibo:audit rowkey against docs/schema.md.
func TestRowKeys(t *testing.T) {
	for _, c := range []struct {
		name string
		got  []byte
		want []byte
	}{
		{"event", audit.EventKey(auditID), cat([]byte("t"), docRev(ms), docNonce)},
		{"by actor", audit.RowKey(audit.ActorPrefix(22732), auditID), cat([]byte("a"), be(22732), docRev(ms), docNonce)},
		{"by target user", audit.RowKey(audit.TargetPrefix(tables.NodeID{Kind: tables.NodeUser, User: 5}), auditID),
			cat([]byte("gu"), be(5), docRev(ms), docNonce)},
		{"by target role", audit.RowKey(audit.TargetPrefix(tables.NodeID{Kind: tables.NodeRole, Role: 3}), auditID),
			cat([]byte("gr"), be(3), docRev(ms), docNonce)},
		{"by target department", audit.RowKey(audit.TargetPrefix(tables.NodeID{Kind: tables.NodeDepartment, Dept: 2}), auditID),
			cat([]byte("gd"), be(2), docRev(ms), docNonce)},
		{"by action", audit.RowKey(audit.ActionPrefix("role.assign"), auditID),
			cat([]byte("crole.assign\x00"), docRev(ms), docNonce)},
	} {
		if !bytes.Equal(c.got, c.want) {
			t.Errorf("%s: %x, want %x", c.name, c.got, c.want)
		}
	}
	// The example of docs/schema.md, byte for byte.
	if got := hex.EncodeToString(audit.EventKey(auditID)); got != "747ffffe8f6b9fcf6a00c0ffee00c0ffee" {
		t.Errorf("the documented event row is %s", got)
	}
	if len(audit.EventKey(auditID)) != audit.EventKeyLen {
		t.Error("EventKeyLen")
	}
	if audit.TargetPrefix(tables.NodeID{Kind: tables.NodePost, Post: tables.PostID{Author: 1, Millis: 2}}) != nil ||
		audit.TargetPrefix(tables.NodeID{}) != nil || audit.TargetPrefix(tables.NodeID{Kind: tables.NodeRole}) != nil {
		t.Error("a post, no target or id 0 has a target prefix")
	}
}

// TestRows writes an entry's cells and keys and decodes them back;
// rows whose key or cells are malformed or disagree do not decode.
func TestRows(t *testing.T) {
	full := &audit.Entry{ID: auditID, Actor: 22732, Action: "role.assign",
		Target: tables.NodeID{Kind: tables.NodeRole, Role: 3}, Before: `{"p":1}`, After: `{"p":2}`, RequestID: "req-1"}
	bare := &audit.Entry{ID: auditID, Action: "seed.load"}
	row := func(key []byte, v hbase.Values) *hbase.Result {
		r := &hbase.Result{Row: key}
		for f, qs := range v {
			for q, val := range qs {
				r.Cells = append(r.Cells, &hbase.Cell{Family: f, Qualifier: q, Value: val})
			}
		}
		hbase.SortCells(r.Cells)
		return r
	}
	for _, e := range []*audit.Entry{full, bare} {
		keys := append([][]byte{audit.EventKey(e.ID)}, audit.IndexKeys(e)...)
		if e == bare && len(keys) != 2 {
			t.Fatalf("an event without actor and target has %d rows, want 2 (event, action)", len(keys))
		}
		for _, k := range keys {
			ix, got, ok := audit.DecodeRow(row(k, audit.Values(e)))
			if !ok || *got != *e || ix != audit.Index(k[0]) {
				t.Errorf("row %q: %c %+v %v, want %+v", k, ix, got, ok, e)
			}
		}
	}
	if v := audit.Values(full)[tables.FamAudit][audit.ColTarget]; !bytes.Equal(v, cat([]byte("r"), be(3))) {
		t.Errorf("target cell %x", v)
	}
	vals := audit.Values(full)
	for _, c := range []struct {
		name string
		key  []byte
		v    hbase.Values
	}{
		{"actor row of another actor", audit.RowKey(audit.ActorPrefix(7), auditID), vals},
		{"target row of another target", audit.RowKey(audit.TargetPrefix(tables.NodeID{Kind: tables.NodeUser, User: 3}), auditID), vals},
		{"action row of another action", audit.RowKey(audit.ActionPrefix("role.revoke"), auditID), vals},
		{"actor row of an event without actor", audit.RowKey(audit.ActorPrefix(7), auditID), audit.Values(bare)},
		{"no action cell", audit.EventKey(auditID), hbase.Values{tables.FamAudit: {audit.ColActor: be(1)}}},
		{"actor cell of 4 bytes", audit.EventKey(auditID), hbase.Values{tables.FamAudit: {audit.ColAction: []byte("x"), audit.ColActor: {0, 0, 0, 1}}}},
		{"target cell of unknown kind", audit.EventKey(auditID), hbase.Values{tables.FamAudit: {audit.ColAction: []byte("x"), audit.ColTarget: cat([]byte("z"), be(1))}}},
	} {
		if _, _, ok := audit.DecodeRow(row(c.key, c.v)); ok {
			t.Errorf("%s: decodes", c.name)
		}
	}
	for _, k := range [][]byte{
		nil, []byte("t"), cat([]byte("t"), docRev(ms)), cat([]byte("t"), docRev(ms), docNonce, []byte{0}),
		cat([]byte("x"), docRev(ms), docNonce), cat([]byte("a"), be(0), docRev(ms), docNonce),
		cat([]byte("gz"), be(1), docRev(ms), docNonce), cat([]byte("gu"), be(0), docRev(ms), docNonce),
		cat([]byte("c\x00"), docRev(ms), docNonce), cat([]byte("crole assign\x00"), docRev(ms), docNonce),
		cat([]byte("crole.assign"), docRev(ms), docNonce), cat([]byte("t"), be(math.MaxInt64+1), docNonce),
	} {
		if _, _, _, ok := audit.DecodeKey(k); ok {
			t.Errorf("DecodeKey(%q) ok", k)
		}
	}
}

// TestRange checks the time bounds of an index scan: [since, until)
// in ms, newest first.
func TestRange(t *testing.T) {
	p := audit.ActorPrefix(22732)
	key := func(ms int64) []byte { return audit.RowKey(p, audit.EventID{Millis: ms, Nonce: math.MaxUint64}) }
	low := func(ms int64) []byte { return audit.RowKey(p, audit.EventID{Millis: ms}) }
	in := func(k, start, stop []byte) bool { return bytes.Compare(k, start) >= 0 && bytes.Compare(k, stop) < 0 }
	start, stop := audit.Range(p, 1000, 2000)
	for _, c := range []struct {
		ms   int64
		want bool
	}{{999, false}, {1000, true}, {1500, true}, {1999, true}, {2000, false}} {
		if in(key(c.ms), start, stop) != c.want || in(low(c.ms), start, stop) != c.want {
			t.Errorf("event at %d in [1000, 2000): %v", c.ms, !c.want)
		}
	}
	start, stop = audit.Range(p, 0, math.MaxInt64)
	if !bytes.Equal(start, p) || !bytes.Equal(stop, hbase.PrefixEnd(p)) {
		t.Errorf("unbounded: [%x, %x)", start, stop)
	}
	for _, w := range [][2]int64{{5, 5}, {6, 5}, {-10, -5}, {0, 0}} {
		if start, stop := audit.Range(p, w[0], w[1]); !bytes.Equal(start, stop) {
			t.Errorf("[%d, %d) is not empty: [%x, %x)", w[0], w[1], start, stop)
		}
	}
	if start, stop := audit.Range(p, -5, 1); !in(key(0), start, stop) || in(key(1), start, stop) {
		t.Error("[-5, 1) should hold exactly ms 0")
	}
}

func TestEventIDs(t *testing.T) {
	if s := auditID.String(); s != "audit:1583037296789_00c0ffee00c0ffee" {
		t.Errorf("String = %q", s)
	}
	for _, id := range []audit.EventID{auditID, {}, {Millis: math.MaxInt64, Nonce: math.MaxUint64}} {
		got, err := audit.ParseEventID(id.String())
		if err != nil || got != id {
			t.Errorf("ParseEventID(%q) = %+v, %v", id.String(), got, err)
		}
	}
	for _, s := range []string{"", "audit:", "audit:1_", "audit:1_00c0ffee", "audit:01_00c0ffee00c0ffee", "audit:-1_00c0ffee00c0ffee",
		"audit:1_00C0FFEE00C0FFEE", "audit:1_00c0ffee00c0ffeg", "1583037296789_00c0ffee00c0ffee", "role:1", "audit:1_+0c0ffee00c0ffee"} {
		if _, err := audit.ParseEventID(s); !errors.Is(err, tables.ErrInvalidID) {
			t.Errorf("ParseEventID(%q): %v, want ErrInvalidID", s, err)
		}
	}
}

// TestCursor encodes the longest audit cursor (an action of
// MaxActionLen bytes, 0x00, rev, nonce: a by-action rowkey after its
// marker byte) and decodes it back.
func TestCursor(t *testing.T) {
	suffix := audit.RowKey(audit.ActionPrefix(strings.Repeat("x", audit.MaxActionLen)), audit.EventID{Millis: 1, Nonce: 2})[1:]
	if len(suffix) != audit.ActionKeyMaxLen-1 {
		t.Fatalf("the longest by-action key is %d bytes, want %d", len(suffix)+1, audit.ActionKeyMaxLen)
	}
	cur := paging.EncodeCursor(paging.CursorAudit, suffix)
	if strings.ContainsAny(cur, "+/=") {
		t.Errorf("cursor %q is not unpadded base64url", cur)
	}
	got, err := paging.DecodeCursor(&cur, paging.CursorAudit, len(suffix), len(suffix))
	if err != nil || !bytes.Equal(got, suffix) {
		t.Errorf("decode(encode(%x)) = %x, %v", suffix, got, err)
	}
}

func TestValidAction(t *testing.T) {
	for s, want := range map[string]bool{
		"role.assign": true, "department.move": true, "A_b.9": true, strings.Repeat("x", 64): true,
		"": false, strings.Repeat("x", 65): false, "role assign": false, "rôle": false, "a\x00b": false, "a-b": false,
	} {
		if audit.ValidAction(s) != want {
			t.Errorf("ValidAction(%q) = %v", s, !want)
		}
	}
}
