package weibo

import (
	"encoding/binary"
	"errors"
	"hash/fnv"
	"math"
	"strconv"
)

// Rowkey codecs of the weibo tables. docs/schema.md is the reference for every
// byte; this file is its implementation. All integers are big-endian so that
// byte order equals numeric order.

// UserID is a user's numeric id. In GraphQL it is the decimal string
// ("22732"); in rowkeys it is 8 bytes big-endian.
type UserID uint64

// String returns the decimal form used as the GraphQL ID.
func (id UserID) String() string { return strconv.FormatUint(uint64(id), 10) }

// ParseUserID parses a GraphQL user ID (a decimal string of 1 to 20 digits
// with no sign or leading zeros). It returns ErrInvalidID for anything else.
func ParseUserID(s string) (UserID, error) {
	if s == "" || len(s) > 20 || (len(s) > 1 && s[0] == '0') {
		return 0, ErrInvalidID
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n == 0 {
		return 0, ErrInvalidID
	}
	return UserID(n), nil
}

// ErrInvalidID is returned by the ID parsers for a malformed ID.
var ErrInvalidID = errors.New("malformed id")

// SaltBuckets is the number of salt values. The first byte of every
// user-keyed rowkey is Salt(uid), in [0, SaltBuckets): consecutive user ids
// land in different regions, so the writes of a burst of new users or of a
// fan-out do not all hit one region (seed 004's "散列原则").
const SaltBuckets = 16

// Salt returns the one-byte salt of uid: FNV-1a of its 8-byte form, modulo
// SaltBuckets. It is a pure function of uid, so a reader recomputes it.
func Salt(uid UserID) byte {
	h := fnv.New32a()
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(uid))
	h.Write(b[:])
	return byte(h.Sum32() % SaltBuckets)
}

// SaltSplitKeys are the split keys that pre-split a salted table into four
// regions (salts 0-3, 4-7, 8-11, 12-15); HBase splits further by size.
func SaltSplitKeys() [][]byte { return [][]byte{{4}, {8}, {12}} }

// userPrefix returns salt(uid) | uid (9 bytes), the prefix of every row a user owns.
func userPrefix(uid UserID) []byte {
	k := make([]byte, 9, 32)
	k[0] = Salt(uid)
	binary.BigEndian.PutUint64(k[1:], uint64(uid))
	return k
}

func appendU64(b []byte, v uint64) []byte { return binary.BigEndian.AppendUint64(b, v) }

// reverseMillis maps a time in ms to math.MaxInt64 - ms, so that newer times
// sort first (the seeds' "Long.MAX_VALUE - timestamp").
func reverseMillis(ms int64) uint64 { return uint64(math.MaxInt64 - ms) }

func fromReverse(r uint64) int64 { return math.MaxInt64 - int64(r) }

// UserKey is the rowkey of weibo:users: salt(1) | uid(8).
func UserKey(uid UserID) []byte { return userPrefix(uid) }

// UsernameKey is the rowkey of weibo:usernames: the username's bytes,
// lower-cased (usernames are unique case-insensitively).
func UsernameKey(lower string) []byte { return []byte(lower) }

// SeqKey is the rowkey of the weibo:users row that holds the id sequence
// counter for registered users. 0xff sorts after every salted rowkey.
var SeqKey = []byte("\xffseq")

// Relation directions, the byte after the user prefix in weibo:relations
// (seed 004's two families "attends" and "fans", made tall).
const (
	dirAttends byte = 'a' // row salt(a)|a|'a'|b: a follows b
	dirFans    byte = 'f' // row salt(b)|b|'f'|a: a is a fan of b
)

// RelationKey is the rowkey of weibo:relations: salt(owner)(1) | owner(8) |
// dir(1: 'a' attends / 'f' fans) | other(8), 18 bytes.
func RelationKey(owner UserID, dir byte, other UserID) []byte {
	k := append(userPrefix(owner), dir)
	return appendU64(k, uint64(other))
}

// RelationPrefix is the 10-byte prefix of one user's follow ('a') or fan ('f') list.
func RelationPrefix(owner UserID, dir byte) []byte { return append(userPrefix(owner), dir) }

// PostID identifies a post: its author and its creation time in ms. In
// GraphQL it is "<author>_<createdAtMs>" (seed 004's "uid_timestamp").
type PostID struct {
	// Author is the author's user id.
	Author UserID
	// Millis is the creation time, ms since the Unix epoch.
	Millis int64
}

// String returns the GraphQL form "<author>_<ms>".
func (p PostID) String() string {
	return p.Author.String() + "_" + strconv.FormatInt(p.Millis, 10)
}

// ParsePostID parses "<author>_<ms>"; it returns ErrInvalidID when malformed.
func ParsePostID(s string) (PostID, error) {
	for i := 0; i < len(s); i++ {
		if s[i] == '_' {
			a, err := ParseUserID(s[:i])
			if err != nil {
				return PostID{}, ErrInvalidID
			}
			ms, err := strconv.ParseInt(s[i+1:], 10, 64)
			if err != nil || ms < 0 {
				return PostID{}, ErrInvalidID
			}
			return PostID{Author: a, Millis: ms}, nil
		}
	}
	return PostID{}, ErrInvalidID
}

// ContentKey is the rowkey of weibo:content: salt(author)(1) | author(8) |
// reverse ms(8), 17 bytes; one author's posts are contiguous, newest first
// (seed 000/001/004: "uid_(Long.MAX_VALUE - timestamp)", salted).
func ContentKey(p PostID) []byte {
	return appendU64(userPrefix(p.Author), reverseMillis(p.Millis))
}

// ContentPrefix is the 9-byte prefix of one author's posts.
func ContentPrefix(author UserID) []byte { return userPrefix(author) }

// PostIDFromContentKey decodes a weibo:content (or weibo:outbox) rowkey.
func PostIDFromContentKey(k []byte) (PostID, bool) {
	if len(k) != 17 {
		return PostID{}, false
	}
	return PostID{
		Author: UserID(binary.BigEndian.Uint64(k[1:9])),
		Millis: fromReverse(binary.BigEndian.Uint64(k[9:17])),
	}, true
}

// InboxKey is the rowkey of weibo:inbox (the tall "receive-content-email"
// table): salt(owner)(1) | owner(8) | reverse ms(8) | author(8), 25 bytes.
// A prefix scan of salt(owner)|owner returns the owner's home timeline newest
// first; ties on the same millisecond are ordered by author id.
func InboxKey(owner UserID, p PostID) []byte {
	k := appendU64(userPrefix(owner), reverseMillis(p.Millis))
	return appendU64(k, uint64(p.Author))
}

// InboxPrefix is the 9-byte prefix of one user's inbox.
func InboxPrefix(owner UserID) []byte { return userPrefix(owner) }

// PostIDFromInboxKey decodes the post an inbox rowkey points at.
func PostIDFromInboxKey(k []byte) (PostID, bool) {
	if len(k) != 25 {
		return PostID{}, false
	}
	return PostID{
		Millis: fromReverse(binary.BigEndian.Uint64(k[9:17])),
		Author: UserID(binary.BigEndian.Uint64(k[17:25])),
	}, true
}

// OutboxKey is the rowkey of weibo:outbox: the same 17 bytes as the post's
// ContentKey. A row exists while the post's fan-out is not known to be done.
func OutboxKey(p PostID) []byte { return ContentKey(p) }

// U64 encodes v as 8 bytes big-endian (HBase's counter and Bytes.toBytes(long) format).
func U64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

// DecodeU64 decodes an 8-byte big-endian value; anything else gives 0.
func DecodeU64(b []byte) uint64 {
	if len(b) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}
