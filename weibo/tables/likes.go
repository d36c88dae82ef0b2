package tables

import (
	"encoding/binary"

	"github.com/weibohbase/gateway/hbase"
)

// --- weibo:likes ------------------------------------------------------------
//
// Likes of posts (点赞). Three kinds of rows, told apart by the byte after
// the owner's prefix (docs/schema.md, "weibo:likes"):
//
//	like         salt(A) A(8) 'u' rev(8) U(8)           26 bytes  U likes post (A, rev): the authority
//	post's likes salt(A) A(8) 't' rev(8) lrev(8) U(8)   34 bytes  the post's likers, newest like first
//	user's likes salt(U) U(8) 'p' lrev(8) A(8) rev(8)   34 bytes  the posts U likes, newest like first
//
// A is the post's author and rev(8) its reversed time, as in its content
// rowkey; lrev(8) is the reversed time of the like. A post's rows are
// salted by its author, like its content row; a user's list by the user.
// The post's like count lives on its content row (ColLikes).

// Likes holds the likes of posts: like rows (LikeKey), the posts' lists of
// likers (PostLikerKey) and the users' lists of liked posts (UserLikeKey).
const Likes = Namespace + ":likes"

// Column families and qualifiers of likes.
const (
	// FamLike is family l of weibo:likes.
	FamLike = "l"
	// ColLikeAt (likes, l, like rows) is the time of the like, ms, 8 bytes
	// BE: which like it is. The rows of a post's and a user's lists carry
	// this time in their rowkey; they belong to the like row holding it.
	ColLikeAt = "t"
	// ColLikeEntry (likes, l, list rows) is empty: the rowkey holds
	// everything.
	ColLikeEntry = "e"
	// ColLikes (content, c) is the post's like count (Increment): its like
	// rows. Kept on the content row, so reading a post reads its count.
	ColLikes = "l"
	// ColLikesSeq (content, c) is the operation sequence of ColLikes (see
	// ColFollowsSeq).
	ColLikesSeq = "sl"
	// ColLikedPosts (users, c) is the user's liked-post count
	// (Increment): their like rows, which a post's retraction removes
	// with the post. 8 bytes BE.
	ColLikedPosts = "lp"
	// ColLikedPostsSeq (users, c) is the operation sequence of
	// ColLikedPosts (see ColFollowsSeq).
	ColLikedPostsSeq = "slp"
)

// Markers of the three kinds of weibo:likes rows, the byte after the
// owner's prefix.
const (
	likeAuthority byte = 'u' // a like row: post prefix | 'u' | rev(8) | uid(8)
	likePostList  byte = 't' // a post's likers: author prefix | 't' | rev(8) | lrev(8) | uid(8)
	likeUserList  byte = 'p' // a user's likes: user prefix | 'p' | lrev(8) | author(8) | rev(8)
)

// Rowkey lengths of weibo:likes, in bytes.
const (
	// LikeKeyLen is the length of a like row's key.
	LikeKeyLen = IDKeyLen + 1 + 8 + 8
	// LikeListKeyLen is the length of a post's or a user's list row key.
	LikeListKeyLen = IDKeyLen + 1 + 8 + 8 + 8
)

// PendingLike is a likePost or unlikePost: owner is the post's author,
// other the post's time in ms, and the marker's ColPendingExtra holds the
// liker and the time of the like (EncodeLikeExtra). Its counters are the
// post's ColLikes and the liker's ColLikedPosts; an unlike of a deleted
// post's like (EncodeLikeGoneExtra) counts the liker's only.
const PendingLike PendingKind = 'l'

// postPrefix appends salt(author) | author(8) | kind | rev(8) to dst.
func postPrefix(dst []byte, p PostID, kind byte) []byte {
	return binary.BigEndian.AppendUint64(append(appendIDKey(dst, p.Author), kind), reverseMillis(p.Millis))
}

// LikeKey is the rowkey of the like of post p by uid, the authority of the
// pair (it exists while uid likes p): salt(author)(1) | author(8) | 'u' |
// rev(8) | uid(8), 26 bytes. "Does uid like p" is one Get.
func LikeKey(p PostID, uid UserID) []byte {
	return binary.BigEndian.AppendUint64(postPrefix(make([]byte, 0, LikeKeyLen), p, likeAuthority), uint64(uid))
}

// LikePrefix is the 18-byte prefix of post p's like rows; a prefix scan
// lists its likers by user id (its like count recounts them).
func LikePrefix(p PostID) []byte { return postPrefix(make([]byte, 0, LikeKeyLen), p, likeAuthority) }

// DecodeLikeKey decodes a like row's key.
func DecodeLikeKey(k []byte) (PostID, UserID, bool) {
	p, ok := decodePostPrefix(k, LikeKeyLen, likeAuthority)
	if !ok {
		return PostID{}, 0, false
	}
	return p, UserID(binary.BigEndian.Uint64(k[IDKeyLen+9:])), true
}

// PostLikerKey is the rowkey of uid's like (made at likeMs) in post p's
// list of likers: salt(author)(1) | author(8) | 't' | rev(8) | lrev(8) |
// uid(8), 34 bytes, lrev = Long.MAX_VALUE - likeMs: a prefix scan of
// PostLikersPrefix(p) lists the likers newest like first.
func PostLikerKey(p PostID, likeMs int64, uid UserID) []byte {
	k := postPrefix(make([]byte, 0, LikeListKeyLen), p, likePostList)
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(k, reverseMillis(likeMs)), uint64(uid))
}

// PostLikersPrefix is the 18-byte prefix of post p's list of likers.
func PostLikersPrefix(p PostID) []byte {
	return postPrefix(make([]byte, 0, LikeListKeyLen), p, likePostList)
}

// DecodePostLikerKey decodes a row of a post's list of likers.
func DecodePostLikerKey(k []byte) (p PostID, likeMs int64, uid UserID, ok bool) {
	if p, ok = decodePostPrefix(k, LikeListKeyLen, likePostList); !ok {
		return PostID{}, 0, 0, false
	}
	return p, fromReverse(binary.BigEndian.Uint64(k[IDKeyLen+9:])), UserID(binary.BigEndian.Uint64(k[IDKeyLen+17:])), true
}

// UserLikeKey is the rowkey of uid's like of post p (made at likeMs) in
// uid's list of liked posts: salt(uid)(1) | uid(8) | 'p' | lrev(8) |
// author(8) | rev(8), 34 bytes: a prefix scan of UserLikesPrefix(uid)
// lists the posts newest like first.
func UserLikeKey(uid UserID, likeMs int64, p PostID) []byte {
	k := binary.BigEndian.AppendUint64(append(appendIDKey(make([]byte, 0, LikeListKeyLen), uid), likeUserList), reverseMillis(likeMs))
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(k, uint64(p.Author)), reverseMillis(p.Millis))
}

// UserLikesPrefix is the 10-byte prefix of uid's list of liked posts.
func UserLikesPrefix(uid UserID) []byte { return append(idKey(uid), likeUserList) }

// DecodeUserLikeKey decodes a row of a user's list of liked posts.
func DecodeUserLikeKey(k []byte) (uid UserID, likeMs int64, p PostID, ok bool) {
	u, ok := decodeIDPrefix(k)
	if !ok || len(k) != LikeListKeyLen || k[IDKeyLen] != likeUserList {
		return 0, 0, PostID{}, false
	}
	p = PostID{Author: UserID(binary.BigEndian.Uint64(k[IDKeyLen+9:])), Millis: fromReverse(binary.BigEndian.Uint64(k[IDKeyLen+17:]))}
	return UserID(u), fromReverse(binary.BigEndian.Uint64(k[IDKeyLen+1:])), p, true
}

// decodePostPrefix decodes the salt(author) | author | kind | rev(8)
// prefix of a key of n bytes.
func decodePostPrefix(k []byte, n int, kind byte) (PostID, bool) {
	a, ok := decodeIDPrefix(k)
	if !ok || len(k) != n || k[IDKeyLen] != kind {
		return PostID{}, false
	}
	return PostID{Author: UserID(a), Millis: fromReverse(binary.BigEndian.Uint64(k[IDKeyLen+1:]))}, true
}

// LikeValues are the cells of a like row made at ms.
func LikeValues(ms int64) hbase.Values { return hbase.Values{FamLike: {ColLikeAt: EncodeMillis(ms)}} }

// likeEntryValues are the cells of every list row (shared, read-only).
var likeEntryValues = hbase.Values{FamLike: {ColLikeEntry: {}}}

// LikeEntryValues are the cells of a row of a post's or a user's list of
// likes: one empty cell. The result is shared: do not modify it.
func LikeEntryValues() hbase.Values { return likeEntryValues }

// LikeAt decodes a like row's ColLikeAt: the time of the like, ms; ok is
// false when the row does not exist (or the cell is malformed).
func LikeAt(r *hbase.Result) (ms int64, ok bool) {
	v := r.Value(FamLike, ColLikeAt)
	return int64(DecodeU64(v)), len(v) == 8
}

// EncodeLikeExtra is the ColPendingExtra of a like's marker: the liker,
// 8 bytes BE, then the time of the like, ms, 8 bytes BE.
func EncodeLikeExtra(uid UserID, likeMs int64) []byte {
	return binary.BigEndian.AppendUint64(U64(uint64(uid)), uint64(likeMs))
}

// likeGone is the last byte of EncodeLikeGoneExtra.
const likeGone byte = 'g'

// EncodeLikeGoneExtra is the ColPendingExtra of the marker of an unlike
// of a deleted post's like (the post's retraction removing it): the
// liker, 8 bytes BE, the time of the like, ms, 8 bytes BE, then 'g' — 17
// bytes. Such a write counts the liker's ColLikedPosts only: the post's
// content row is gone with its ColLikes.
func EncodeLikeGoneExtra(uid UserID, likeMs int64) []byte {
	return append(EncodeLikeExtra(uid, likeMs), likeGone)
}

// LikeExtraGone reports whether b is EncodeLikeGoneExtra's.
func LikeExtraGone(b []byte) bool { return len(b) == 17 && b[16] == likeGone }

// DecodeLikeExtra decodes EncodeLikeExtra and EncodeLikeGoneExtra; ok is
// false for any other bytes.
func DecodeLikeExtra(b []byte) (uid UserID, likeMs int64, ok bool) {
	if len(b) != 16 && !LikeExtraGone(b) {
		return 0, 0, false
	}
	return UserID(binary.BigEndian.Uint64(b)), int64(binary.BigEndian.Uint64(b[8:])), true
}

// PostLikes decodes a content row's ColLikes: the post's like count.
func PostLikes(r *hbase.Result) int64 { return CounterIn(r, FamPost, ColLikes) }

// PostStored reports whether r is a stored post: a content row with its
// text. A row holding only like counter cells (an Increment that reached
// the row of a post deleted meanwhile) is not a post.
func PostStored(r *hbase.Result) bool { return r.Cell(FamPost, ColText) != nil }
