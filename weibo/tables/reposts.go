package tables

import (
	"encoding/binary"

	"github.com/weibohbase/gateway/hbase"
)

// --- reposts (转发) ------------------------------------------------------------
//
// A repost is a post of its own (a content row, fanned out like any post)
// whose content row names the ROOT post it reposts in one more cell,
// ColRepostOf: the AUTHORITY of the pair (root, repost). Its DEPENDENT is
// the root's list of reposts in weibo:reposts, newest first:
//
//	list row   salt(A) A(8) rev(8) | rrev(8) R(8)   33 bytes   repost (R, rrev) of root (A, rev)
//
// The first 17 bytes are the root's content rowkey (salted by the root's
// author), so one root's reposts are contiguous; then the repost's
// reversed time and its author, so they list newest first, ties in one
// millisecond by author id. The root's repost count and its operation
// sequence live on the root's content row (ColReposts, ColRepostsSeq), so
// reading a post reads its count (docs/schema.md, "Reposts").

// Reposts lists every root post's reposts. Rowkey RepostKey.
const Reposts = Namespace + ":reposts"

// Family and qualifiers of the reposts.
const (
	// FamRepost is family r of weibo:reposts.
	FamRepost = "r"
	// ColRepostEntry (reposts, r) is empty: the rowkey holds everything.
	ColRepostEntry = "p"
	// ColRepostOf (content, c) is, on a repost's content row only, the
	// root post it reposts: EncodeRepostOf, 16 bytes. A repost of a repost
	// names the root, never the repost in between.
	ColRepostOf = "o"
	// ColReposts (content, c) is the post's repost count (Increment): the
	// content rows whose ColRepostOf names it.
	ColReposts = "r"
	// ColRepostsSeq (content, c) is the operation sequence of ColReposts
	// (see ColFollowsSeq).
	ColRepostsSeq = "sr"
)

// RepostKeyLen is the length of a weibo:reposts rowkey.
const RepostKeyLen = ContentKeyLen + 8 + 8

// PendingRepost is a repost being written: owner is the root's author,
// other the root's time in ms, and the marker's ColPendingExtra holds the
// repost's id (EncodeRepostExtra). Its counter is the root's ColReposts.
const PendingRepost PendingKind = 's'

// RepostDemoMarkerKey marks a store into which `gateway serve --demo`
// wrote its demo reposts (a weibo:users row, family i, ColCreated), beside
// DemoMarkerKey.
var RepostDemoMarkerKey = []byte("\xffrepostdemo")

// RepostKey is the rowkey of repost's entry in root's list of reposts:
// ContentKey(root) | rev(repost)(8) | repost's author(8), 33 bytes.
func RepostKey(root, repost PostID) []byte {
	k := binary.BigEndian.AppendUint64(AppendContentKey(make([]byte, 0, RepostKeyLen), root), reverseMillis(repost.Millis))
	return binary.BigEndian.AppendUint64(k, uint64(repost.Author))
}

// RepostPrefix is the 17-byte prefix of root's list of reposts: its
// content rowkey. A prefix scan lists them newest first.
func RepostPrefix(root PostID) []byte { return ContentKey(root) }

// DecodeRepostKey decodes a weibo:reposts rowkey into the root and the
// repost it lists.
func DecodeRepostKey(k []byte) (root, repost PostID, ok bool) {
	if len(k) != RepostKeyLen {
		return PostID{}, PostID{}, false
	}
	if root, ok = DecodeContentKey(k[:ContentKeyLen]); !ok {
		return PostID{}, PostID{}, false
	}
	return root, PostID{
		Millis: fromReverse(binary.BigEndian.Uint64(k[ContentKeyLen : ContentKeyLen+8])),
		Author: UserID(binary.BigEndian.Uint64(k[ContentKeyLen+8:])),
	}, true
}

// appendPostID appends author(8) | ms(8).
func appendPostID(dst []byte, p PostID) []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(dst, uint64(p.Author)), uint64(p.Millis))
}

// decodePostID decodes appendPostID's 16 bytes.
func decodePostID(v []byte) (PostID, bool) {
	if len(v) != 16 {
		return PostID{}, false
	}
	return PostID{Author: UserID(binary.BigEndian.Uint64(v)), Millis: int64(binary.BigEndian.Uint64(v[8:]))}, true
}

// EncodeRepostOf is the value of ColRepostOf: the root's author(8) then
// its time in ms(8), both BE.
func EncodeRepostOf(root PostID) []byte { return appendPostID(make([]byte, 0, 16), root) }

// RepostOf decodes a content row's ColRepostOf: the root post the row's
// post reposts; ok is false for an original post (or a malformed cell).
func RepostOf(r *hbase.Result) (PostID, bool) { return decodePostID(r.Value(FamPost, ColRepostOf)) }

// PostReposts decodes a content row's ColReposts: the post's repost count.
func PostReposts(r *hbase.Result) int64 { return CounterIn(r, FamPost, ColReposts) }

// EncodeRepostExtra is the ColPendingExtra of a PendingRepost marker: the
// repost's author(8) then its time in ms(8).
func EncodeRepostExtra(repost PostID) []byte { return appendPostID(make([]byte, 0, 16), repost) }

// DecodeRepostExtra decodes EncodeRepostExtra.
func DecodeRepostExtra(v []byte) (PostID, bool) { return decodePostID(v) }
