package tables_test

import (
	"bytes"
	"testing"

	"github.com/weibohbase/gateway/weibo/tables"
)

// TestUserCountRow checks the user count's row of docs/schema.md: rowkey
// 0xff "users" in weibo:users, which no user row decoder takes, and its
// registration markers in weibo:pending, kind 'a'.
func TestUserCountRow(t *testing.T) {
	if !bytes.Equal(tables.UserCountKey, []byte("\xffusers")) {
		t.Errorf("UserCountKey = %q", tables.UserCountKey)
	}
	if _, ok := tables.DecodeUserKey(tables.UserCountKey); ok {
		t.Error("UserCountKey decodes as a user row")
	}
	if tables.ColUserCount != "uc" || tables.ColUserCountSeq != "suc" {
		t.Errorf("qualifiers %q %q", tables.ColUserCount, tables.ColUserCountSeq)
	}
	k := tables.PendingKey(tables.PendingRegister, 100000007, 0, 9)
	if k[9] != 'a' || len(k) != 26 {
		t.Errorf("PendingKey(PendingRegister) = %x", k)
	}
	if kind, owner, other, nonce, ok := tables.DecodePendingKey(k); !ok || kind != tables.PendingRegister || owner != 100000007 || other != 0 || nonce != 9 {
		t.Errorf("DecodePendingKey = %c %d %d %d %v", kind, owner, other, nonce, ok)
	}
}
