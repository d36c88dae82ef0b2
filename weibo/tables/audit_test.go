package tables_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo/tables"
)

// auditID is an event id of the examples of docs/schema.md ("The audit log").
var auditID = tables.AuditID{Millis: ms, Nonce: 0x00c0ffee00c0ffee}

// docNonce is nonce(8) of auditID.
var docNonce = be(0x00c0ffee00c0ffee)

// TestAuditKeys checks every weibo:audit rowkey against docs/schema.md.
func TestAuditKeys(t *testing.T) {
	for _, c := range []struct {
		name string
		got  []byte
		want []byte
	}{
		{"event", tables.AuditKey(auditID), cat([]byte("t"), docRev(ms), docNonce)},
		{"by actor", tables.AuditRowKey(tables.AuditActorPrefix(22732), auditID), cat([]byte("a"), be(22732), docRev(ms), docNonce)},
		{"by target user", tables.AuditRowKey(tables.AuditTargetPrefix(tables.NodeID{Kind: tables.NodeUser, User: 5}), auditID),
			cat([]byte("gu"), be(5), docRev(ms), docNonce)},
		{"by target role", tables.AuditRowKey(tables.AuditTargetPrefix(tables.NodeID{Kind: tables.NodeRole, Role: 3}), auditID),
			cat([]byte("gr"), be(3), docRev(ms), docNonce)},
		{"by target department", tables.AuditRowKey(tables.AuditTargetPrefix(tables.NodeID{Kind: tables.NodeDepartment, Dept: 2}), auditID),
			cat([]byte("gd"), be(2), docRev(ms), docNonce)},
		{"by action", tables.AuditRowKey(tables.AuditActionPrefix("role.assign"), auditID),
			cat([]byte("crole.assign\x00"), docRev(ms), docNonce)},
	} {
		if !bytes.Equal(c.got, c.want) {
			t.Errorf("%s: %x, want %x", c.name, c.got, c.want)
		}
	}
	// The example of docs/schema.md, byte for byte.
	if got := hex.EncodeToString(tables.AuditKey(auditID)); got != "747ffffe8f6b9fcf6a00c0ffee00c0ffee" {
		t.Errorf("the documented event row is %s", got)
	}
	if len(tables.AuditKey(auditID)) != tables.AuditKeyLen {
		t.Error("AuditKeyLen")
	}
	if tables.AuditTargetPrefix(tables.NodeID{Kind: tables.NodePost, Post: tables.PostID{Author: 1, Millis: 2}}) != nil ||
		tables.AuditTargetPrefix(tables.NodeID{}) != nil || tables.AuditTargetPrefix(tables.NodeID{Kind: tables.NodeRole}) != nil {
		t.Error("a post, no target or id 0 has a target prefix")
	}
}

// TestAuditRows writes an entry's cells and keys and decodes them back;
// rows whose key or cells are malformed or disagree do not decode.
func TestAuditRows(t *testing.T) {
	full := &tables.AuditEntry{ID: auditID, Actor: 22732, Action: "role.assign",
		Target: tables.NodeID{Kind: tables.NodeRole, Role: 3}, Before: `{"p":1}`, After: `{"p":2}`, RequestID: "req-1"}
	bare := &tables.AuditEntry{ID: auditID, Action: "seed.load"}
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
	for _, e := range []*tables.AuditEntry{full, bare} {
		keys := append([][]byte{tables.AuditKey(e.ID)}, tables.AuditIndexKeys(e)...)
		if e == bare && len(keys) != 2 {
			t.Fatalf("an event without actor and target has %d rows, want 2 (event, action)", len(keys))
		}
		for _, k := range keys {
			ix, got, ok := tables.DecodeAuditRow(row(k, tables.AuditValues(e)))
			if !ok || *got != *e || ix != tables.AuditIndex(k[0]) {
				t.Errorf("row %q: %c %+v %v, want %+v", k, ix, got, ok, e)
			}
		}
	}
	if v := tables.AuditValues(full)[tables.FamAudit][tables.ColAuditTarget]; !bytes.Equal(v, cat([]byte("r"), be(3))) {
		t.Errorf("target cell %x", v)
	}
	vals := tables.AuditValues(full)
	for _, c := range []struct {
		name string
		key  []byte
		v    hbase.Values
	}{
		{"actor row of another actor", tables.AuditRowKey(tables.AuditActorPrefix(7), auditID), vals},
		{"target row of another target", tables.AuditRowKey(tables.AuditTargetPrefix(tables.NodeID{Kind: tables.NodeUser, User: 3}), auditID), vals},
		{"action row of another action", tables.AuditRowKey(tables.AuditActionPrefix("role.revoke"), auditID), vals},
		{"actor row of an event without actor", tables.AuditRowKey(tables.AuditActorPrefix(7), auditID), tables.AuditValues(bare)},
		{"no action cell", tables.AuditKey(auditID), hbase.Values{tables.FamAudit: {tables.ColAuditActor: be(1)}}},
		{"actor cell of 4 bytes", tables.AuditKey(auditID), hbase.Values{tables.FamAudit: {tables.ColAuditAction: []byte("x"), tables.ColAuditActor: {0, 0, 0, 1}}}},
		{"target cell of unknown kind", tables.AuditKey(auditID), hbase.Values{tables.FamAudit: {tables.ColAuditAction: []byte("x"), tables.ColAuditTarget: cat([]byte("p"), be(1))}}},
	} {
		if _, _, ok := tables.DecodeAuditRow(row(c.key, c.v)); ok {
			t.Errorf("%s: decodes", c.name)
		}
	}
	for _, k := range [][]byte{
		nil, []byte("t"), cat([]byte("t"), docRev(ms)), cat([]byte("t"), docRev(ms), docNonce, []byte{0}),
		cat([]byte("x"), docRev(ms), docNonce), cat([]byte("a"), be(0), docRev(ms), docNonce),
		cat([]byte("gp"), be(1), docRev(ms), docNonce), cat([]byte("gu"), be(0), docRev(ms), docNonce),
		cat([]byte("c\x00"), docRev(ms), docNonce), cat([]byte("crole assign\x00"), docRev(ms), docNonce),
		cat([]byte("crole.assign"), docRev(ms), docNonce), cat([]byte("t"), be(math.MaxInt64+1), docNonce),
	} {
		if _, _, _, ok := tables.DecodeAuditKey(k); ok {
			t.Errorf("DecodeAuditKey(%q) ok", k)
		}
	}
}

// TestAuditRange checks the time bounds of an index scan: [since, until)
// in ms, newest first.
func TestAuditRange(t *testing.T) {
	p := tables.AuditActorPrefix(22732)
	key := func(ms int64) []byte { return tables.AuditRowKey(p, tables.AuditID{Millis: ms, Nonce: math.MaxUint64}) }
	low := func(ms int64) []byte { return tables.AuditRowKey(p, tables.AuditID{Millis: ms}) }
	in := func(k, start, stop []byte) bool { return bytes.Compare(k, start) >= 0 && bytes.Compare(k, stop) < 0 }
	start, stop := tables.AuditRange(p, 1000, 2000)
	for _, c := range []struct {
		ms   int64
		want bool
	}{{999, false}, {1000, true}, {1500, true}, {1999, true}, {2000, false}} {
		if in(key(c.ms), start, stop) != c.want || in(low(c.ms), start, stop) != c.want {
			t.Errorf("event at %d in [1000, 2000): %v", c.ms, !c.want)
		}
	}
	start, stop = tables.AuditRange(p, 0, math.MaxInt64)
	if !bytes.Equal(start, p) || !bytes.Equal(stop, hbase.PrefixEnd(p)) {
		t.Errorf("unbounded: [%x, %x)", start, stop)
	}
	for _, w := range [][2]int64{{5, 5}, {6, 5}, {-10, -5}, {0, 0}} {
		if start, stop := tables.AuditRange(p, w[0], w[1]); !bytes.Equal(start, stop) {
			t.Errorf("[%d, %d) is not empty: [%x, %x)", w[0], w[1], start, stop)
		}
	}
	if start, stop := tables.AuditRange(p, -5, 1); !in(key(0), start, stop) || in(key(1), start, stop) {
		t.Error("[-5, 1) should hold exactly ms 0")
	}
}

func TestAuditIDs(t *testing.T) {
	if s := auditID.String(); s != "audit:1583037296789_00c0ffee00c0ffee" {
		t.Errorf("String = %q", s)
	}
	for _, id := range []tables.AuditID{auditID, {}, {Millis: math.MaxInt64, Nonce: math.MaxUint64}} {
		got, err := tables.ParseAuditID(id.String())
		if err != nil || got != id {
			t.Errorf("ParseAuditID(%q) = %+v, %v", id.String(), got, err)
		}
	}
	for _, s := range []string{"", "audit:", "audit:1_", "audit:1_00c0ffee", "audit:01_00c0ffee00c0ffee", "audit:-1_00c0ffee00c0ffee",
		"audit:1_00C0FFEE00C0FFEE", "audit:1_00c0ffee00c0ffeg", "1583037296789_00c0ffee00c0ffee", "role:1", "audit:1_+0c0ffee00c0ffee"} {
		if _, err := tables.ParseAuditID(s); !errors.Is(err, tables.ErrInvalidID) {
			t.Errorf("ParseAuditID(%q): %v, want ErrInvalidID", s, err)
		}
	}
}

func TestValidAuditAction(t *testing.T) {
	for s, want := range map[string]bool{
		"role.assign": true, "department.move": true, "A_b.9": true, strings.Repeat("x", 64): true,
		"": false, strings.Repeat("x", 65): false, "role assign": false, "rôle": false, "a\x00b": false, "a-b": false,
	} {
		if tables.ValidAuditAction(s) != want {
			t.Errorf("ValidAuditAction(%q) = %v", s, !want)
		}
	}
}
