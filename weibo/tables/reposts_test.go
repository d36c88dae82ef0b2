package tables_test

import (
	"bytes"
	"encoding/hex"
	"testing"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestRepostCodecs checks the reposts' bytes against docs/schema.md
// ("Reposts"): the list row, the content row's root cell, the marker.
func TestRepostCodecs(t *testing.T) {
	root := tables.PostID{Author: 5802, Millis: ms}
	repost := tables.PostID{Author: 22732, Millis: ms + 1000}
	// salt(5802) 5802(8) rev(ms)(8) | rev(ms+1000)(8) 22732(8)
	want := cat(docID(5802), docRev(ms), docRev(ms+1000), be(22732))
	k := tables.RepostKey(root, repost)
	if !bytes.Equal(k, want) || len(k) != tables.RepostKeyLen || tables.RepostKeyLen != 33 {
		t.Fatalf("RepostKey = %x, want %x (33 bytes)", k, want)
	}
	if !bytes.HasPrefix(k, tables.RepostPrefix(root)) || !bytes.Equal(tables.RepostPrefix(root), tables.ContentKey(root)) {
		t.Errorf("RepostPrefix(root) = %x: not the root's content rowkey", tables.RepostPrefix(root))
	}
	// The example of docs/schema.md, byte for byte.
	if doc, _ := hex.DecodeString("0100000000000016aa7ffffe8f6b9fcf6a7ffffe8f6b9fcb8200000000000058cc"); !bytes.Equal(k, doc) {
		t.Errorf("RepostKey = %x, docs/schema.md says %x", k, doc)
	}
	gr, gp, ok := tables.DecodeRepostKey(k)
	if !ok || gr != root || gp != repost {
		t.Errorf("DecodeRepostKey = %v, %v, %v", gr, gp, ok)
	}
	for name, bad := range map[string][]byte{
		"short": k[:32], "long": append(bytes.Clone(k), 0), "wrong salt": append([]byte{k[0] ^ 1}, k[1:]...), "content key": tables.ContentKey(root),
	} {
		if _, _, ok := tables.DecodeRepostKey(bad); ok {
			t.Errorf("DecodeRepostKey accepts %s: %x", name, bad)
		}
	}
	// Newer reposts sort first.
	older := tables.RepostKey(root, tables.PostID{Author: 1, Millis: ms + 10})
	if bytes.Compare(k, older) >= 0 {
		t.Error("a newer repost does not sort before an older one")
	}

	// c:o holds the root: author(8) ms(8).
	cell := tables.EncodeRepostOf(root)
	if !bytes.Equal(cell, cat(be(5802), be(uint64(ms)))) || hex.EncodeToString(cell) != "00000000000016aa0000017094603095" {
		t.Errorf("EncodeRepostOf = %x", cell)
	}
	r := &hbase.Result{Cells: []*hbase.Cell{
		{Family: tables.FamPost, Qualifier: tables.ColRepostOf, Value: cell},
		{Family: tables.FamPost, Qualifier: tables.ColReposts, Value: be(7)},
	}}
	if got, ok := tables.RepostOf(r); !ok || got != root {
		t.Errorf("RepostOf = %v, %v", got, ok)
	}
	if n := tables.PostReposts(r); n != 7 {
		t.Errorf("PostReposts = %d", n)
	}
	if _, ok := tables.RepostOf(&hbase.Result{}); ok {
		t.Error("an original post has a root")
	}
	if tables.ColRepostOf != "o" || tables.ColReposts != "r" || tables.ColRepostsSeq != "sr" || tables.FamRepost != "r" {
		t.Error("qualifiers differ from docs/schema.md")
	}

	// The marker: owner the root's author, other its ms; extra the repost.
	pk := tables.PendingKey(tables.PendingRepost, 5802, uint64(ms), 9)
	if !bytes.Equal(pk, cat(docID(5802), []byte{'s'}, be(uint64(ms)), be(9))) {
		t.Errorf("pending repost key = %x", pk)
	}
	if kind, o, other, _, ok := tables.DecodePendingKey(pk); !ok || kind != tables.PendingRepost || o != 5802 || other != uint64(ms) {
		t.Errorf("DecodePendingKey = %c %d %d %v", kind, o, other, ok)
	}
	if got, ok := tables.DecodeRepostExtra(tables.EncodeRepostExtra(repost)); !ok || got != repost {
		t.Errorf("repost extra round trip = %v, %v", got, ok)
	}
	if _, ok := tables.DecodeRepostExtra([]byte("short")); ok {
		t.Error("DecodeRepostExtra accepts 5 bytes")
	}
}
