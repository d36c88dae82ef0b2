package tables_test

import (
	"bytes"
	"encoding/hex"
	"testing"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo/tables"
)

// The example of docs/schema.md ("weibo:comments"): user 22732 comments a
// minute later on post 5802_1583037296789.
var (
	docPost    = tables.PostID{Author: 5802, Millis: ms}
	docComment = tables.CommentID{Post: docPost, Millis: ms + 60_000, Author: 22732}
)

// TestCommentKeys checks the comment rowkey, the comment's marker and its
// extra bytes against docs/schema.md, byte for byte, and decodes them back.
func TestCommentKeys(t *testing.T) {
	key := tables.CommentKey(docComment)
	want := cat(docID(5802), docRev(ms), docRev(ms+60_000), be(22732))
	if !bytes.Equal(key, want) || tables.CommentKeyLen != 33 {
		t.Fatalf("CommentKey = %s, docs/schema.md says %s", hex.EncodeToString(key), hex.EncodeToString(want))
	}
	if got := hex.EncodeToString(key); got != "0100000000000016aa7ffffe8f6b9fcf6a7ffffe8f6b9ee50a00000000000058cc" {
		t.Errorf("CommentKey = %s, not the bytes docs/schema.md shows", got)
	}
	if c, ok := tables.DecodeCommentKey(key); !ok || c != docComment {
		t.Errorf("DecodeCommentKey = %v, %v", c, ok)
	}
	prefix := tables.CommentsPrefix(docPost)
	if !bytes.Equal(prefix, tables.ContentKey(docPost)) || !bytes.HasPrefix(key, prefix) {
		t.Errorf("CommentsPrefix %x is not the post's content key, or not the comment's prefix", prefix)
	}
	marker := tables.PendingKey(tables.PendingComment, 5802, uint64(ms), 9)
	if want := cat(docID(5802), []byte("c"), be(uint64(ms)), be(9)); !bytes.Equal(marker, want) {
		t.Errorf("pending comment = %x, want %x", marker, want)
	}
	if kind, o, other, n, ok := tables.DecodePendingKey(marker); !ok || kind != tables.PendingComment || o != 5802 || other != uint64(ms) || n != 9 {
		t.Errorf("DecodePendingKey = %q %d %d %d %v", kind, o, other, n, ok)
	}
	ref := tables.EncodeCommentRef(docComment)
	if want := cat(be(uint64(ms+60_000)), be(22732)); !bytes.Equal(ref, want) {
		t.Errorf("EncodeCommentRef = %x, want %x", ref, want)
	}
	if c, ok := tables.DecodeCommentRef(docPost, ref); !ok || c != docComment {
		t.Errorf("DecodeCommentRef = %v, %v", c, ok)
	}
}

// TestCommentOrder checks the order a post's comments list in: newest
// first, ties in one millisecond by author id, and a post's comments
// apart from its neighbours'.
func TestCommentOrder(t *testing.T) {
	c := func(ms int64, a tables.UserID) []byte {
		return tables.CommentKey(tables.CommentID{Post: docPost, Millis: ms, Author: a})
	}
	if bytes.Compare(c(ms+2, 9), c(ms+1, 1)) >= 0 {
		t.Error("a newer comment does not sort first")
	}
	if bytes.Compare(c(ms, 1), c(ms, 2)) >= 0 {
		t.Error("ties are not by author id")
	}
	next := tables.PostID{Author: docPost.Author, Millis: ms + 1}
	if bytes.HasPrefix(tables.CommentKey(tables.CommentID{Post: next, Millis: ms, Author: 1}), tables.CommentsPrefix(docPost)) {
		t.Error("another post's comment falls under the prefix")
	}
}

// TestCommentDecodersReject feeds the decoders broken keys and values.
func TestCommentDecodersReject(t *testing.T) {
	key := tables.CommentKey(docComment)
	wrongSalt := bytes.Clone(key)
	wrongSalt[0] = (wrongSalt[0] + 1) % tables.SaltBuckets
	for name, k := range map[string][]byte{"short": key[:32], "long": append(bytes.Clone(key), 0), "wrong salt": wrongSalt,
		"content row": tables.ContentKey(docPost), "pending": tables.PendingKey(tables.PendingComment, 5802, uint64(ms), 1)} {
		if _, ok := tables.DecodeCommentKey(k); ok {
			t.Errorf("DecodeCommentKey accepts %s", name)
		}
	}
	if _, ok := tables.DecodeCommentRef(docPost, make([]byte, 15)); ok {
		t.Error("DecodeCommentRef accepts 15 bytes")
	}
}

// TestCommentIDs checks the GraphQL form of comment ids and that
// ParseNodeID tells them from the other kinds.
func TestCommentIDs(t *testing.T) {
	const s = "comment:5802_1583037296789_1583037356789_22732"
	if got := docComment.String(); got != s {
		t.Fatalf("String = %q, want %q", got, s)
	}
	if c, err := tables.ParseCommentID(s); err != nil || c != docComment {
		t.Fatalf("ParseCommentID = %v, %v", c, err)
	}
	n, err := tables.ParseNodeID(s)
	if err != nil || n.Kind != tables.NodeComment || n.Comment != docComment || n.String() != s {
		t.Fatalf("ParseNodeID = %+v, %v", n, err)
	}
	var buf bytes.Buffer
	docComment.MarshalGQL(&buf)
	if buf.String() != `"`+s+`"` {
		t.Errorf("MarshalGQL = %s", buf.String())
	}
	var c tables.CommentID
	if err := c.UnmarshalGQL(s); err != nil || c != docComment {
		t.Errorf("UnmarshalGQL = %v, %v", c, err)
	}
	for _, bad := range []string{"", "comment:", "comment:5802_1583037296789", "comment:5802_1583037296789_1", "5802_1583037296789_1_2",
		"comment:5802_1583037296789_01_2", "comment:5802_1583037296789_-1_2", "comment:5802_1583037296789_1_0",
		"comment:0_1_1_1", "comment:1_1_1_1_1", "comment:1_+1_1_1", "Comment:1_1_1_1", "comment:1_1_1_x"} {
		if _, err := tables.ParseCommentID(bad); err != tables.ErrInvalidID {
			t.Errorf("ParseCommentID(%q) = %v, want ErrInvalidID", bad, err)
		}
		if err := c.UnmarshalGQL(bad); err == nil {
			t.Errorf("UnmarshalGQL(%q) accepted", bad)
		}
	}
	if _, err := tables.ParseNodeID("comment:1_2"); err != tables.ErrInvalidID {
		t.Errorf("ParseNodeID of a short comment id: %v", err)
	}
}

// TestCommentValues checks the cells of a comment row.
func TestCommentValues(t *testing.T) {
	reply := tables.CommentID{Post: docPost, Millis: ms + 1, Author: 7}
	vals := tables.CommentValues("好", "u22732", &reply, nil)
	r := &hbase.Result{}
	for q, v := range vals[tables.FamComment] {
		r.Cells = append(r.Cells, &hbase.Cell{Family: tables.FamComment, Qualifier: q, Value: v})
	}
	if !tables.CommentStored(r) || string(r.Value(tables.FamComment, tables.ColCommentText)) != "好" ||
		string(r.Value(tables.FamComment, tables.ColCommentAuthorName)) != "u22732" {
		t.Errorf("cells %v", vals)
	}
	if got, ok := tables.CommentReplyTo(docPost, r); !ok || got != reply {
		t.Errorf("CommentReplyTo = %v, %v", got, ok)
	}
	if _, ok := tables.CommentReplyTo(docPost, &hbase.Result{}); ok || tables.CommentStored(&hbase.Result{}) {
		t.Error("an absent row replies or is stored")
	}
	if _, ok := tables.CommentValues("x", "u", nil, nil)[tables.FamComment][tables.ColCommentReplyTo]; ok {
		t.Error("a comment replying to none has a reply cell")
	}
	for q := range tables.CommentDeleted()[tables.FamComment] {
		if q == tables.ColCommentAuthorName {
			t.Error("a delete removes the tombstone")
		}
	}
	if len(tables.CommentDeleted()[tables.FamComment]) != 3 {
		t.Error("a delete keeps the text, the reply or the mentions")
	}
	counter := &hbase.Result{Cells: []*hbase.Cell{{Family: tables.FamPost, Qualifier: tables.ColComments, Value: be(3)}}}
	if tables.PostCommentCount(counter) != 3 {
		t.Error("PostCommentCount")
	}
}
