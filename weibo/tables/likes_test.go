package tables_test

import (
	"bytes"
	"encoding/hex"
	"testing"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestLikeKeys checks the rows of weibo:likes and the like's marker
// against docs/schema.md ("weibo:likes"), byte for byte, and decodes them
// back.
func TestLikeKeys(t *testing.T) {
	const liker = tables.UserID(22732)
	post := tables.PostID{Author: 5802, Millis: ms}
	const likeMs = ms + 60_000
	for _, c := range []struct {
		name   string
		key    []byte
		want   []byte
		decode func(k []byte) (any, bool)
		value  any
	}{
		{"like", tables.LikeKey(post, liker), cat(docID(5802), []byte("u"), docRev(ms), be(22732)),
			func(k []byte) (any, bool) { p, u, ok := tables.DecodeLikeKey(k); return [2]any{p, u}, ok },
			[2]any{post, liker}},
		{"post's likers", tables.PostLikerKey(post, likeMs, liker), cat(docID(5802), []byte("t"), docRev(ms), docRev(likeMs), be(22732)),
			func(k []byte) (any, bool) {
				p, at, u, ok := tables.DecodePostLikerKey(k)
				return [3]any{p, at, u}, ok
			}, [3]any{post, likeMs, liker}},
		{"user's likes", tables.UserLikeKey(liker, likeMs, post), cat(docID(22732), []byte("p"), docRev(likeMs), be(5802), docRev(ms)),
			func(k []byte) (any, bool) {
				u, at, p, ok := tables.DecodeUserLikeKey(k)
				return [3]any{u, at, p}, ok
			}, [3]any{liker, likeMs, post}},
		{"pending like", tables.PendingKey(tables.PendingLike, uint64(post.Author), uint64(post.Millis), 9),
			cat(docID(5802), []byte("l"), be(uint64(ms)), be(9)),
			func(k []byte) (any, bool) {
				kind, o, b, n, ok := tables.DecodePendingKey(k)
				return [4]any{kind, o, b, n}, ok
			}, [4]any{tables.PendingLike, uint64(5802), uint64(ms), uint64(9)}},
		{"like extra", tables.EncodeLikeExtra(liker, likeMs), cat(be(22732), be(uint64(likeMs))),
			func(k []byte) (any, bool) { u, at, ok := tables.DecodeLikeExtra(k); return [2]any{u, at}, ok },
			[2]any{liker, likeMs}},
		{"like gone extra", tables.EncodeLikeGoneExtra(liker, likeMs), cat(be(22732), be(uint64(likeMs)), []byte("g")),
			func(k []byte) (any, bool) {
				u, at, ok := tables.DecodeLikeExtra(k)
				return [3]any{u, at, tables.LikeExtraGone(k)}, ok
			}, [3]any{liker, likeMs, true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !bytes.Equal(c.key, c.want) {
				t.Fatalf("key = %s, docs/schema.md says %s", hex.EncodeToString(c.key), hex.EncodeToString(c.want))
			}
			got, ok := c.decode(c.key)
			if !ok || got != c.value {
				t.Fatalf("decode(%x) = %v, %v; want %v", c.key, got, ok, c.value)
			}
		})
	}
	if !bytes.HasPrefix(tables.ContentKey(post), tables.ContentPrefix(post.Author)) {
		t.Fatal("content prefix")
	}
	for _, c := range []struct {
		name        string
		prefix, row []byte
		wantLen     int
	}{
		{"a post's likes", tables.LikePrefix(post), tables.LikeKey(post, liker), 18},
		{"a post's likers", tables.PostLikersPrefix(post), tables.PostLikerKey(post, likeMs, liker), 18},
		{"a user's likes", tables.UserLikesPrefix(liker), tables.UserLikeKey(liker, likeMs, post), 10},
	} {
		if len(c.prefix) != c.wantLen || !bytes.HasPrefix(c.row, c.prefix) {
			t.Errorf("%s: prefix %x (len %d) of row %x", c.name, c.prefix, len(c.prefix), c.row)
		}
	}
	// A post's three kinds of rows do not overlap, nor do two posts' rows.
	other := tables.PostID{Author: post.Author, Millis: ms + 1}
	if bytes.HasPrefix(tables.LikeKey(post, liker), tables.PostLikersPrefix(post)) ||
		bytes.HasPrefix(tables.PostLikerKey(post, likeMs, liker), tables.LikePrefix(post)) ||
		bytes.HasPrefix(tables.LikeKey(other, liker), tables.LikePrefix(post)) {
		t.Error("like rows fall under another list's prefix")
	}
}

// TestLikeOrder checks the orders the lists promise: newest like first,
// ties in one millisecond by user id (a post's likers) or by post (a
// user's likes).
func TestLikeOrder(t *testing.T) {
	post := tables.PostID{Author: 5802, Millis: ms}
	if bytes.Compare(tables.PostLikerKey(post, ms+2, 9), tables.PostLikerKey(post, ms+1, 1)) >= 0 {
		t.Error("a post's likers: a newer like does not sort first")
	}
	if bytes.Compare(tables.PostLikerKey(post, ms, 1), tables.PostLikerKey(post, ms, 2)) >= 0 {
		t.Error("a post's likers: ties are not by user id")
	}
	if bytes.Compare(tables.UserLikeKey(7, ms+2, post), tables.UserLikeKey(7, ms+1, post)) >= 0 {
		t.Error("a user's likes: a newer like does not sort first")
	}
}

// TestLikeDecodersReject feeds the like decoders each other's keys and
// broken ones.
func TestLikeDecodersReject(t *testing.T) {
	post := tables.PostID{Author: 22732, Millis: ms}
	like, liker, liked := tables.LikeKey(post, 5), tables.PostLikerKey(post, ms, 5), tables.UserLikeKey(5, ms, post)
	wrongSalt := bytes.Clone(like)
	wrongSalt[0] = (wrongSalt[0] + 1) % tables.SaltBuckets
	for name, k := range map[string][]byte{"post's likers row": liker, "user's likes row": liked, "short": like[:25],
		"pending": tables.PendingKey(tables.PendingLike, 22732, uint64(ms), 1), "wrong salt": wrongSalt} {
		if _, _, ok := tables.DecodeLikeKey(k); ok {
			t.Errorf("DecodeLikeKey accepts %s", name)
		}
	}
	if _, _, _, ok := tables.DecodePostLikerKey(liked); ok {
		t.Error("DecodePostLikerKey accepts a user's likes row")
	}
	if _, _, _, ok := tables.DecodeUserLikeKey(liker); ok {
		t.Error("DecodeUserLikeKey accepts a post's likers row")
	}
	if _, _, _, _, ok := tables.DecodePendingKey(like); ok {
		t.Error("DecodePendingKey accepts a like row")
	}
	if _, _, ok := tables.DecodeLikeExtra(make([]byte, 15)); ok {
		t.Error("DecodeLikeExtra accepts 15 bytes")
	}
	if _, _, ok := tables.DecodeLikeExtra(append(tables.EncodeLikeExtra(5, ms), 'x')); ok {
		t.Error("DecodeLikeExtra accepts 17 bytes not ending in 'g'")
	}
	if tables.LikeExtraGone(tables.EncodeLikeExtra(5, ms)) {
		t.Error("LikeExtraGone accepts a like's extra")
	}
}

// TestLikeValues checks the cells: a like row's time, and that a content
// row holding only counter cells is not a post.
func TestLikeValues(t *testing.T) {
	r := &hbase.Result{Cells: []*hbase.Cell{{Family: tables.FamLike, Qualifier: tables.ColLikeAt, Value: be(uint64(ms))}}}
	if at, ok := tables.LikeAt(r); !ok || at != ms {
		t.Errorf("LikeAt = %d, %v", at, ok)
	}
	if _, ok := tables.LikeAt(&hbase.Result{}); ok {
		t.Error("LikeAt of an absent row")
	}
	counterOnly := &hbase.Result{Cells: []*hbase.Cell{{Family: tables.FamPost, Qualifier: tables.ColLikes, Value: be(3)}}}
	if tables.PostStored(counterOnly) || tables.PostLikes(counterOnly) != 3 {
		t.Error("a counter-only content row")
	}
}

// TestLikeGolden pins the example of docs/schema.md ("weibo:likes"): post
// 5802_1583037296789 liked by user 22732 one minute later.
func TestLikeGolden(t *testing.T) {
	post := tables.PostID{Author: 5802, Millis: 1583037296789}
	const at = 1583037356789
	for _, c := range []struct {
		name string
		got  []byte
		want string
	}{
		{"like", tables.LikeKey(post, 22732), "0100000000000016aa757ffffe8f6b9fcf6a00000000000058cc"},
		{"like time", tables.LikeValues(at)[tables.FamLike][tables.ColLikeAt], "0000017094611af5"},
		{"post's likers", tables.PostLikerKey(post, at, 22732), "0100000000000016aa747ffffe8f6b9fcf6a7ffffe8f6b9ee50a00000000000058cc"},
		{"user's likes", tables.UserLikeKey(22732, at, post), "0900000000000058cc707ffffe8f6b9ee50a00000000000016aa7ffffe8f6b9fcf6a"},
	} {
		if hex.EncodeToString(c.got) != c.want {
			t.Errorf("%s = %x, docs/schema.md says %s", c.name, c.got, c.want)
		}
	}
}
