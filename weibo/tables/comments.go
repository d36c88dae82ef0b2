package tables

import (
	"encoding/binary"
	"io"
	"strconv"
	"strings"

	"github.com/weibohbase/gateway/hbase"
)

// --- weibo:comments ---------------------------------------------------------
//
// Comments on posts (评论), one row per comment (docs/schema.md,
// "weibo:comments"):
//
//	salt(A) A(8) rev(8) crev(8) C(8)   33 bytes
//
// A is the post's author and rev(8) the post's reversed time: the first 17
// bytes are the post's content rowkey, so a post's comments are one
// contiguous range, salted by the post's author like the post itself.
// crev(8) is the comment's reversed time (newest comment first) and C the
// commenter, who keeps apart the comments of one millisecond. The row is
// the comment's authority: the comment exists exactly while the row holds
// its text. Deleting a comment deletes its text and reply cells and keeps
// the username cell as the row's tombstone, so that no later comment
// takes its id (CheckAndPut on that cell being absent). The post's comment
// count lives on its content row (ColComments).

// Comments holds one row per comment on a post. Rowkey CommentKey.
const Comments = Namespace + ":comments"

// Column families and qualifiers of comments.
const (
	// FamComment is family c of weibo:comments.
	FamComment = "c"
	// ColCommentText (comments, c) is the comment's text, UTF-8 (the post
	// content rules).
	ColCommentText = "t"
	// ColCommentAuthorName (comments, c) is the commenter's username
	// (denormalized like a post's; usernames never change). It stays when
	// the comment is deleted: the tombstone that keeps the id taken.
	ColCommentAuthorName = "u"
	// ColCommentReplyTo (comments, c) is the comment replied to, of the same
	// post (EncodeCommentRef); absent when the comment replies to none.
	ColCommentReplyTo = "r"
	// ColComments (content, c) is the post's comment count (Increment): its
	// comment rows. Kept on the content row, so reading a post reads it.
	ColComments = "c"
	// ColCommentsSeq (content, c) is the operation sequence of ColComments
	// (see ColFollowsSeq).
	ColCommentsSeq = "sc"
)

// CommentKeyLen is the length of a weibo:comments rowkey.
const CommentKeyLen = ContentKeyLen + 8 + 8

// PendingComment is an addComment or deleteComment: owner is the post's
// author, other the post's time in ms, and the marker's ColPendingExtra
// names the comment (EncodeCommentRef). Its counter is the post's
// ColComments.
const PendingComment PendingKind = 'c'

// CommentDemoMarkerKey marks a store into which the demo comments were
// loaded (weibo:users, family i, ColCreated), beside DemoMarkerKey.
var CommentDemoMarkerKey = []byte("\xffcommentdemo")

// CommentIDPrefix starts the GraphQL id of a comment.
const CommentIDPrefix = "comment:"

// CommentID identifies a comment: its post, its creation time and its
// author, the parts of its rowkey. In GraphQL it is
// "comment:<post author>_<post ms>_<ms>_<author>"
// ("comment:5802_1583020800000_1583037296789_22732"): the post's id, then
// the comment's time and author, which maps back to the rowkey without a
// lookup.
type CommentID struct {
	// Post is the post commented on.
	Post PostID
	// Millis is the comment's creation time, ms since the epoch (>= 0).
	Millis int64
	// Author is the commenter's user id.
	Author UserID
}

// String returns the GraphQL form "comment:<post>_<ms>_<author>".
func (c CommentID) String() string { return textOf(c) }

// AppendText appends String's form to b (encoding.TextAppender); it never
// fails.
func (c CommentID) AppendText(b []byte) ([]byte, error) {
	b, _ = c.Post.AppendText(append(b, CommentIDPrefix...))
	b = strconv.AppendInt(append(b, '_'), c.Millis, 10)
	return strconv.AppendUint(append(b, '_'), uint64(c.Author), 10), nil
}

// ParseCommentID parses String's form strictly (the post as ParsePostID,
// the ms canonical and non-negative, the author as ParseUserID); it returns
// ErrInvalidID for anything else.
func ParseCommentID(s string) (CommentID, error) {
	rest, ok := strings.CutPrefix(s, CommentIDPrefix)
	parts := strings.Split(rest, "_")
	if !ok || len(parts) != 4 {
		return CommentID{}, ErrInvalidID
	}
	p, err := ParsePostID(parts[0] + "_" + parts[1])
	if err != nil {
		return CommentID{}, ErrInvalidID
	}
	ms, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil || ms < 0 || strconv.FormatInt(ms, 10) != parts[2] {
		return CommentID{}, ErrInvalidID
	}
	a, err := ParseUserID(parts[3])
	if err != nil {
		return CommentID{}, ErrInvalidID
	}
	return CommentID{Post: p, Millis: ms, Author: a}, nil
}

// MarshalGQL writes c as a GraphQL ID, e.g.
// "comment:5802_1583020800000_1583037296789_22732".
func (c CommentID) MarshalGQL(w io.Writer) { writeAppended(w, c) }

// UnmarshalGQL sets c from a GraphQL ID input in ParseCommentID's form; it
// returns an error wrapping ErrInvalidID for anything else.
func (c *CommentID) UnmarshalGQL(v any) error { return unmarshalID(v, "comment", ParseCommentID, c) }

// CommentKey is the rowkey of comment c: salt(post author)(1) | post
// author(8) | post rev(8) | comment rev(8) | author(8), 33 bytes.
func CommentKey(c CommentID) []byte {
	k := AppendContentKey(make([]byte, 0, CommentKeyLen), c.Post)
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(k, reverseMillis(c.Millis)), uint64(c.Author))
}

// CommentsPrefix is the 17-byte prefix of post p's comments (its
// ContentKey); a prefix scan lists them newest first, ties in one
// millisecond by author id.
func CommentsPrefix(p PostID) []byte { return ContentKey(p) }

// DecodeCommentKey decodes a weibo:comments rowkey.
func DecodeCommentKey(k []byte) (CommentID, bool) {
	if len(k) != CommentKeyLen {
		return CommentID{}, false
	}
	p, ok := DecodeContentKey(k[:ContentKeyLen])
	if !ok {
		return CommentID{}, false
	}
	return CommentID{Post: p, Millis: fromReverse(binary.BigEndian.Uint64(k[ContentKeyLen:])),
		Author: UserID(binary.BigEndian.Uint64(k[ContentKeyLen+8:]))}, true
}

// CommentDeleted are the cells a comment's delete removes (its text,
// reply and mentions; the username stays as the tombstone). The result is shared: do
// not modify it.
func CommentDeleted() hbase.Values { return commentDeleted }

var commentDeleted = hbase.Values{FamComment: {ColCommentText: nil, ColCommentReplyTo: nil, ColMentions: nil}}

// CommentValues are the cells of a new comment's row: its text, its
// author's username and, when replyTo is not nil, the comment it replies
// to, and the users it mentions (ColMentions) when there are any.
func CommentValues(text, authorName string, replyTo *CommentID, mentions []Mention) hbase.Values {
	cells := map[string][]byte{ColCommentText: []byte(text), ColCommentAuthorName: []byte(authorName)}
	if replyTo != nil {
		cells[ColCommentReplyTo] = EncodeCommentRef(*replyTo)
	}
	if len(mentions) > 0 {
		cells[ColMentions] = EncodeMentions(mentions)
	}
	return hbase.Values{FamComment: cells}
}

// EncodeCommentRef names a comment within its post: its time, ms, 8 bytes
// BE, then its author's id, 8 bytes BE. It is the value of
// ColCommentReplyTo and the ColPendingExtra of a comment's marker.
func EncodeCommentRef(c CommentID) []byte {
	return binary.BigEndian.AppendUint64(U64(uint64(c.Millis)), uint64(c.Author))
}

// DecodeCommentRef decodes EncodeCommentRef into the id of a comment on
// post p; ok is false for any other length.
func DecodeCommentRef(p PostID, b []byte) (CommentID, bool) {
	if len(b) != 16 {
		return CommentID{}, false
	}
	return CommentID{Post: p, Millis: int64(binary.BigEndian.Uint64(b)), Author: UserID(binary.BigEndian.Uint64(b[8:]))}, true
}

// CommentReplyTo decodes a comment row's ColCommentReplyTo, the id of the
// comment it replies to (of the same post, p); ok is false when it replies
// to none.
func CommentReplyTo(p PostID, r *hbase.Result) (CommentID, bool) {
	return DecodeCommentRef(p, r.Value(FamComment, ColCommentReplyTo))
}

// CommentStored reports whether r is a stored comment: a comments row
// with its text (not the tombstone of a deleted one).
func CommentStored(r *hbase.Result) bool { return r.Value(FamComment, ColCommentText) != nil }

// PostCommentCount decodes a content row's ColComments: the post's comment
// count.
func PostCommentCount(r *hbase.Result) int64 { return CounterIn(r, FamPost, ColComments) }
