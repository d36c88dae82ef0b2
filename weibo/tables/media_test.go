package tables_test

import (
	"bytes"
	"crypto/sha256"
	"reflect"
	"testing"

	"github.com/weibohbase/gateway/weibo/tables"
)

func TestMediaCodecs(t *testing.T) {
	id := tables.NewMediaID(1583020800123, 0xabcde)
	if got, err := tables.ParseMediaID(id.String()); err != nil || got != id {
		t.Errorf("ParseMediaID(%q) = %v, %v", id, got, err)
	}
	if n, err := tables.ParseNodeID(id.String()); err != nil || n.Kind != tables.NodeMedia || n.Media != id || n.String() != id.String() {
		t.Errorf("ParseNodeID(%q) = %+v, %v", id, n, err)
	}
	for _, bad := range []string{"media:", "media:0", "media:01", "7", "report:7", "media:-1"} {
		if _, err := tables.ParseMediaID(bad); err == nil {
			t.Errorf("ParseMediaID(%q) accepted", bad)
		}
	}
	k := tables.MediaKey(id)
	if got, ok := tables.DecodeMediaKey(k); !ok || got != id || len(k) != 10 || k[1] != 0xde {
		t.Errorf("media key %x decodes to %v, %v", k, got, ok)
	}
	if _, ok := tables.DecodeMediaKey(append([]byte{'m', 0}, k[2:]...)); ok {
		t.Error("a media key with a wrong salt decoded")
	}
	h := sha256.Sum256([]byte("x"))
	if got, ref, _, _, ok := tables.DecodeBlobKey(tables.BlobKey(h)); !ok || ref || got != h {
		t.Error("blob key")
	}
	rk := tables.MediaRefKey(h, tables.HolderReport, 42)
	if !bytes.HasPrefix(rk, tables.BlobKey(h)) {
		t.Error("a reference row outside its blob's prefix")
	}
	if got, ref, kind, holder, ok := tables.DecodeBlobKey(rk); !ok || !ref || got != h || kind != tables.HolderReport || holder != 42 {
		t.Errorf("ref key %x decodes to %v %v %v %v", rk, ref, kind, holder, ok)
	}
	if ms, got, ok := tables.DecodeMediaExpiryKey(tables.MediaExpiryKey(99, id)); !ok || ms != 99 || got != id {
		t.Error("expiry key")
	}
	vs := []tables.MediaVariant{{Name: "THUMB", MIME: "image/jpeg", Width: 180, Height: 180, Bytes: 5000, Hash: h}, {Name: "LARGE", MIME: "image/png", Width: 2048, Height: 1, Bytes: 1 << 33}}
	if got, ok := tables.DecodeMediaVariants(tables.EncodeMediaVariants(vs)); !ok || !reflect.DeepEqual(got, vs) {
		t.Errorf("variants round trip: %v", got)
	}
	if _, ok := tables.DecodeMediaVariants([]byte{5, 'a'}); ok {
		t.Error("a malformed variants value decoded")
	}
	ids := []tables.MediaID{id, 7}
	if got := tables.DecodeMediaIDs(tables.EncodeMediaIDs(ids)); !reflect.DeepEqual(got, ids) {
		t.Errorf("media ids round trip: %v", got)
	}
}
