package server_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/fnv"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"

	"github.com/weibohbase/gateway/internal/testenv"
)

// The rowkey layout of docs/schema.md, written out again here on purpose
// (not imported from package weibo): the test checks the document.
func docSalt(uid uint64) byte {
	h := fnv.New32a()
	h.Write(binary.BigEndian.AppendUint64(nil, uid))
	return byte(h.Sum32() % 16)
}

func docUserKey(uid uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{docSalt(uid)}, uid)
}

func docRev(ms int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(math.MaxInt64-ms)) }

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// TestHBaseRowsReadBack writes through GraphQL, then reads the rows back
// with a plain gohbase client by the rowkeys docs/schema.md documents.
func TestHBaseRowsReadBack(t *testing.T) {
	zk := testenv.HBaseZK(t)
	g := startGateway(t, testenv.HBase(t))
	alice, bob := g.register(uniqueName("Alice")), g.register(uniqueName("bob"))
	g.follow(alice.token, bob.ID)
	post := g.publish(bob.token, "读回 HBase row")
	g.flush()

	client := gohbase.NewClient(zk)
	defer client.Close()
	get := func(table string, key []byte) map[string][]byte {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		req, err := hrpc.NewGet(ctx, []byte(table), key)
		if err != nil {
			t.Fatal(err)
		}
		res, err := client.Get(req)
		if err != nil {
			t.Fatalf("get %s %x: %v", table, key, err)
		}
		out := map[string][]byte{}
		for _, c := range res.Cells {
			out[string(c.Family)+":"+string(c.Qualifier)] = c.Value
		}
		return out
	}
	u64 := func(s string) uint64 {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	a, b := u64(alice.ID), u64(bob.ID)
	be := func(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

	// weibo:users: salt(1) uid(8); i:un, i:pw (bcrypt), i:ct; counters in c.
	row := get("weibo:users", docUserKey(a))
	if string(row["i:un"]) != alice.Username || !bytes.HasPrefix(row["i:pw"], []byte("$2")) || len(row["i:ct"]) != 8 {
		t.Fatalf("weibo:users alice = %q", row)
	}
	if !bytes.Equal(row["c:fo"], be(1)) || !bytes.Equal(row["c:fa"], be(0)) {
		t.Fatalf("alice's counters fo=%x fa=%x, want 1 and 0", row["c:fo"], row["c:fa"])
	}
	if row := get("weibo:users", docUserKey(b)); !bytes.Equal(row["c:fa"], be(1)) || !bytes.Equal(row["c:po"], be(1)) {
		t.Fatalf("bob's counters = %q", row)
	}
	// weibo:usernames: lower-cased username -> i:id.
	if row := get("weibo:usernames", []byte(strings.ToLower(alice.Username))); !bytes.Equal(row["i:id"], be(a)) {
		t.Fatalf("weibo:usernames %s = %q", strings.ToLower(alice.Username), row)
	}
	// weibo:relations: salt(A) A 'a' B and salt(B) B 'f' A, r:t.
	if row := get("weibo:relations", cat(docUserKey(a), []byte("a"), be(b))); len(row["r:t"]) != 8 {
		t.Fatalf("attends row = %q", row)
	}
	if row := get("weibo:relations", cat(docUserKey(b), []byte("f"), be(a))); len(row["r:t"]) != 8 {
		t.Fatalf("fans row = %q", row)
	}
	// weibo:content: salt(author) author rev(ms); c:t text, c:u username.
	author, ms, _ := strings.Cut(post.ID, "_")
	msv, _ := strconv.ParseInt(ms, 10, 64)
	if author != bob.ID || msv != post.CreatedAt.UnixMilli() {
		t.Fatalf("post id %s does not match author %s and createdAt %s", post.ID, bob.ID, post.CreatedAt)
	}
	if row := get("weibo:content", cat(docUserKey(b), docRev(msv))); string(row["c:t"]) != post.Content || string(row["c:u"]) != bob.Username {
		t.Fatalf("content row = %q", row)
	}
	// weibo:inbox: salt(owner) owner rev(ms) author, for the author and each fan.
	for _, owner := range []uint64{a, b} {
		if row := get("weibo:inbox", cat(docUserKey(owner), docRev(msv), be(b))); len(row) != 1 {
			t.Fatalf("inbox row of %d = %q", owner, row)
		}
	}
	// weibo:outbox: the fan-out request is gone once the fan-out is done.
	if row := get("weibo:outbox", cat(docUserKey(b), docRev(msv))); len(row) != 0 {
		t.Fatalf("outbox row left after the fan-out: %q", row)
	}
}
