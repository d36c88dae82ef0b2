package tables

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"strings"

	"github.com/weibohbase/gateway/hbase"
)

// Rowkey codecs. All integers are big-endian so that byte order equals
// numeric order. Every user-, role- and department-keyed rowkey starts with
// the owner's 9-byte prefix salt(1) | id(8).

// Rowkey lengths, in bytes.
const (
	// IDKeyLen is the length of a user, role or department row's key:
	// salt(1) | id(8). It is also the prefix of every row the id owns.
	IDKeyLen = 9
	// RelationKeyLen is the length of a weibo:relations rowkey.
	RelationKeyLen = IDKeyLen + 1 + 8
	// ContentKeyLen is the length of a weibo:content (and weibo:outbox) rowkey.
	ContentKeyLen = IDKeyLen + 8
	// InboxKeyLen is the length of a weibo:inbox rowkey.
	InboxKeyLen = IDKeyLen + 8 + 8
	// LinkKeyLen is the length of a role member row's key and of a
	// department child or member row's key: prefix(9) | marker(1) | id(8).
	LinkKeyLen = IDKeyLen + 1 + 8
	// PendingKeyLen is the length of a weibo:pending rowkey.
	PendingKeyLen = IDKeyLen + 1 + 8 + 8
)

// SaltBuckets is the number of salt values. The first byte of every
// user-, role- and department-keyed rowkey is Salt(id), in [0,
// SaltBuckets): consecutive ids land in different regions, so the writes
// of a burst of new users or of a fan-out do not all hit one region (seed
// 004's "散列原则").
const SaltBuckets = 16

// Salt returns the one-byte salt of an id: FNV-1a-32 of its 8-byte
// big-endian form, modulo SaltBuckets. It is a pure function of the id, so
// a reader recomputes it. User, role and department ids are salted alike.
func Salt[ID ~uint64](id ID) byte {
	h := fnv.New32a()
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(id))
	h.Write(b[:])
	return byte(h.Sum32() % SaltBuckets)
}

// SaltSplitKeys are the split keys that pre-split a salted table into four
// regions (salts 0-3, 4-7, 8-11, 12-15); HBase splits further by size.
func SaltSplitKeys() [][]byte { return [][]byte{{4}, {8}, {12}} }

// SeqKey is the rowkey of the id sequence row of weibo:users (registered
// users' ids), weibo:roles and weibo:departments; its counter is ColSeq.
// 0xff sorts after every salted rowkey, and no decoder accepts it.
var SeqKey = []byte("\xffseq")

// Marker rows of weibo:users written by `gateway serve --demo` (family i,
// ColCreated), beside SeqKey after every salted rowkey.
var (
	// DemoMarkerKey marks a store into which the demo data set was imported.
	DemoMarkerKey = []byte("\xffdemo")
	// OrgDemoMarkerKey marks a store into which the seed's roles and
	// department tree were loaded.
	OrgDemoMarkerKey = []byte("\xfforgdemo")
	// LikesDemoMarkerKey marks a store into which the demo's likes were
	// loaded.
	LikesDemoMarkerKey = []byte("\xfflikesdemo")
)

// appendIDKey appends salt(id) | id(8).
func appendIDKey[ID ~uint64](dst []byte, id ID) []byte {
	return binary.BigEndian.AppendUint64(append(dst, Salt(id)), uint64(id))
}

// idKey returns salt(id) | id(8) with room for a suffix.
func idKey[ID ~uint64](id ID) []byte { return appendIDKey(make([]byte, 0, 32), id) }

// decodeIDPrefix decodes the salt | id prefix of k; ok is false when k is
// shorter than it or the salt is not the id's.
func decodeIDPrefix(k []byte) (uint64, bool) {
	if len(k) < IDKeyLen {
		return 0, false
	}
	id := binary.BigEndian.Uint64(k[1:IDKeyLen])
	return id, k[0] == Salt(id)
}

// decodeIDKey decodes a 9-byte salt | id rowkey.
func decodeIDKey(k []byte) (uint64, bool) {
	id, ok := decodeIDPrefix(k)
	return id, ok && len(k) == IDKeyLen
}

// decodeLinkKey decodes a tall link rowkey salt(a) | a(8) | marker | b(8).
func decodeLinkKey(k []byte, marker byte) (a, b uint64, ok bool) {
	a, ok = decodeIDPrefix(k)
	if !ok || len(k) != LinkKeyLen || k[IDKeyLen] != marker {
		return 0, 0, false
	}
	return a, binary.BigEndian.Uint64(k[IDKeyLen+1:]), true
}

// reverseMillis maps a time in ms to math.MaxInt64 - ms, so that newer
// times sort first (the seeds' "Long.MAX_VALUE - timestamp").
func reverseMillis(ms int64) uint64 { return uint64(math.MaxInt64 - ms) }

func fromReverse(r uint64) int64 { return math.MaxInt64 - int64(r) }

// --- weibo:users and weibo:usernames ---------------------------------------

// UserKey is the rowkey of a weibo:users row: salt(uid)(1) | uid(8).
func UserKey(uid UserID) []byte { return idKey(uid) }

// AppendUserKey appends UserKey(uid) to dst.
func AppendUserKey(dst []byte, uid UserID) []byte { return appendIDKey(dst, uid) }

// DecodeUserKey decodes a weibo:users rowkey; ok is false for any other
// row (SeqKey, the marker rows, a malformed key).
func DecodeUserKey(k []byte) (uid UserID, ok bool) {
	id, ok := decodeIDKey(k)
	return UserID(id), ok
}

// UsernameKey is the rowkey of weibo:usernames: the username lower-cased,
// UTF-8 (usernames are unique ignoring case).
func UsernameKey(username string) []byte { return []byte(strings.ToLower(username)) }

// --- weibo:relations --------------------------------------------------------

// Dir is the direction of a weibo:relations row, the byte after the
// owner's prefix (seed 004's two families "attends" and "fans", made tall).
type Dir byte

// Relation directions.
const (
	// Attends marks row salt(a) | a | 'a' | b: a follows b.
	Attends Dir = 'a'
	// Fans marks row salt(b) | b | 'f' | a: a is a fan of b.
	Fans Dir = 'f'
)

// RelationKey is the rowkey of weibo:relations: salt(owner)(1) | owner(8) |
// dir(1) | other(8), 18 bytes.
func RelationKey(owner UserID, dir Dir, other UserID) []byte {
	return AppendRelationKey(make([]byte, 0, RelationKeyLen), owner, dir, other)
}

// AppendRelationKey appends RelationKey(owner, dir, other) to dst.
func AppendRelationKey(dst []byte, owner UserID, dir Dir, other UserID) []byte {
	return binary.BigEndian.AppendUint64(append(appendIDKey(dst, owner), byte(dir)), uint64(other))
}

// RelationPrefix is the 10-byte prefix of owner's follow (Attends) or fan
// (Fans) rows; a prefix scan lists them in id order of the other user.
func RelationPrefix(owner UserID, dir Dir) []byte { return append(idKey(owner), byte(dir)) }

// DecodeRelationKey decodes a weibo:relations rowkey.
func DecodeRelationKey(k []byte) (owner UserID, dir Dir, other UserID, ok bool) {
	if len(k) != RelationKeyLen || (Dir(k[IDKeyLen]) != Attends && Dir(k[IDKeyLen]) != Fans) {
		return 0, 0, 0, false
	}
	a, b, ok := decodeLinkKey(k, k[IDKeyLen])
	return UserID(a), Dir(k[IDKeyLen]), UserID(b), ok
}

// --- weibo:content, weibo:outbox, weibo:inbox ------------------------------

// ContentKey is the rowkey of weibo:content: salt(author)(1) | author(8) |
// reverse ms(8), 17 bytes; one author's posts are contiguous, newest first
// (seeds 000/001/004: "uid_(Long.MAX_VALUE - timestamp)", salted).
func ContentKey(p PostID) []byte { return AppendContentKey(make([]byte, 0, ContentKeyLen), p) }

// AppendContentKey appends ContentKey(p) to dst.
func AppendContentKey(dst []byte, p PostID) []byte {
	return binary.BigEndian.AppendUint64(appendIDKey(dst, p.Author), reverseMillis(p.Millis))
}

// ContentPrefix is the 9-byte prefix of one author's posts.
func ContentPrefix(author UserID) []byte { return idKey(author) }

// DecodeContentKey decodes a weibo:content rowkey into the post's id.
func DecodeContentKey(k []byte) (PostID, bool) {
	a, ok := decodeIDPrefix(k)
	if !ok || len(k) != ContentKeyLen {
		return PostID{}, false
	}
	return PostID{Author: UserID(a), Millis: fromReverse(binary.BigEndian.Uint64(k[IDKeyLen:]))}, true
}

// OutboxKey is the rowkey of weibo:outbox: the post's ContentKey (17
// bytes). A row exists while the post's fan-out is not known to be done.
func OutboxKey(p PostID) []byte { return ContentKey(p) }

// DecodeOutboxKey decodes a weibo:outbox rowkey into the post's id.
func DecodeOutboxKey(k []byte) (PostID, bool) { return DecodeContentKey(k) }

// EncodeLease is the value of an outbox row's ColOutboxLease cell: the
// lease's expiry, ms since the epoch (8 bytes BE), then the owner's name
// (the gateway instance that holds it, UTF-8).
func EncodeLease(owner string, expiresMillis int64) []byte {
	return append(binary.BigEndian.AppendUint64(nil, uint64(expiresMillis)), owner...)
}

// DecodeLease decodes a ColOutboxLease value; ok is false for an absent or
// malformed one (no lease).
func DecodeLease(v []byte) (owner string, expiresMillis int64, ok bool) {
	if len(v) <= 8 {
		return "", 0, false
	}
	return string(v[8:]), int64(binary.BigEndian.Uint64(v)), true
}

// InboxKey is the rowkey of weibo:inbox (the tall "receive-content-email"
// table): salt(owner)(1) | owner(8) | reverse ms(8) | author(8), 25 bytes.
// A prefix scan of InboxPrefix(owner) returns the owner's home timeline
// newest first; ties on the same millisecond are ordered by author id.
func InboxKey(owner UserID, p PostID) []byte {
	return AppendInboxKey(make([]byte, 0, InboxKeyLen), owner, p)
}

// AppendInboxKey appends InboxKey(owner, p) to dst.
func AppendInboxKey(dst []byte, owner UserID, p PostID) []byte {
	k := binary.BigEndian.AppendUint64(appendIDKey(dst, owner), reverseMillis(p.Millis))
	return binary.BigEndian.AppendUint64(k, uint64(p.Author))
}

// InboxPrefix is the 9-byte prefix of one user's inbox.
func InboxPrefix(owner UserID) []byte { return idKey(owner) }

// DecodeInboxKey decodes a weibo:inbox rowkey: whose timeline it is in and
// which post it points at.
func DecodeInboxKey(k []byte) (owner UserID, p PostID, ok bool) {
	o, ok := decodeIDPrefix(k)
	if !ok || len(k) != InboxKeyLen {
		return 0, PostID{}, false
	}
	return UserID(o), PostID{
		Millis: fromReverse(binary.BigEndian.Uint64(k[IDKeyLen : IDKeyLen+8])),
		Author: UserID(binary.BigEndian.Uint64(k[IDKeyLen+8:])),
	}, true
}

// --- weibo:roles, weibo:rolenames, weibo:users family o --------------------

// Markers of the tall link rows of weibo:roles and weibo:departments, the
// byte after the owner's prefix.
const (
	linkMember  byte = 'm' // a member row: prefix | 'm' | uid(8)
	linkChild   byte = 'c' // a child row (departments): prefix | 'c' | child(8)
	linkManager byte = 'g' // a manager row (departments): prefix | 'g' | uid(8)
)

// RoleKey is the rowkey of a role row of weibo:roles: salt(rid)(1) | rid(8).
func RoleKey(rid RoleID) []byte { return idKey(rid) }

// DecodeRoleKey decodes the rowkey of a role row; ok is false for member
// rows, SeqKey and malformed keys.
func DecodeRoleKey(k []byte) (RoleID, bool) {
	id, ok := decodeIDKey(k)
	return RoleID(id), ok
}

// RoleMemberKey is the rowkey of a member row of weibo:roles:
// salt(rid)(1) | rid(8) | 'm' | uid(8), 18 bytes.
func RoleMemberKey(rid RoleID, uid UserID) []byte {
	return binary.BigEndian.AppendUint64(RoleMemberPrefix(rid), uint64(uid))
}

// RoleMemberPrefix is the 10-byte prefix of a role's member rows; a prefix
// scan lists them by user id.
func RoleMemberPrefix(rid RoleID) []byte { return append(idKey(rid), linkMember) }

// DecodeRoleMemberKey decodes the rowkey of a member row of weibo:roles.
func DecodeRoleMemberKey(k []byte) (RoleID, UserID, bool) {
	r, u, ok := decodeLinkKey(k, linkMember)
	return RoleID(r), UserID(u), ok
}

// RoleQualifier is the qualifier of a role assignment in family o of
// weibo:users: the role id, 8 bytes BE.
func RoleQualifier(rid RoleID) string { return string(U64(uint64(rid))) }

// DecodeRoleQualifier decodes a qualifier of family o of weibo:users that
// holds a role assignment; ok is false for ColUserDept and anything else.
func DecodeRoleQualifier(q string) (RoleID, bool) {
	if len(q) != 8 {
		return 0, false
	}
	return RoleID(binary.BigEndian.Uint64([]byte(q))), true
}

// RoleNameKey is the rowkey of weibo:rolenames: the role name, trimmed and
// lower-cased, UTF-8 (role names are unique ignoring case and surrounding
// space).
func RoleNameKey(name string) []byte { return []byte(strings.ToLower(strings.TrimSpace(name))) }

// --- weibo:departments ------------------------------------------------------

// DeptKey is the rowkey of a department row of weibo:departments:
// salt(did)(1) | did(8).
func DeptKey(did DeptID) []byte { return idKey(did) }

// DecodeDeptKey decodes the rowkey of a department row; ok is false for
// child and member rows, SeqKey and malformed keys.
func DecodeDeptKey(k []byte) (DeptID, bool) {
	id, ok := decodeIDKey(k)
	return DeptID(id), ok
}

// DeptChildKey is the rowkey of a child row: salt(parent)(1) | parent(8) |
// 'c' | child(8), 18 bytes. The top-level departments are the child rows
// of RootDept.
func DeptChildKey(parent, child DeptID) []byte {
	return binary.BigEndian.AppendUint64(DeptChildPrefix(parent), uint64(child))
}

// DeptChildPrefix is the 10-byte prefix of a department's child rows; a
// prefix scan lists them by child id (creation order).
func DeptChildPrefix(parent DeptID) []byte { return append(idKey(parent), linkChild) }

// DecodeDeptChildKey decodes the rowkey of a child row.
func DecodeDeptChildKey(k []byte) (parent, child DeptID, ok bool) {
	p, c, ok := decodeLinkKey(k, linkChild)
	return DeptID(p), DeptID(c), ok
}

// DeptManagerKey is the rowkey of a manager row: salt(did)(1) | did(8) |
// 'g' | uid(8), 18 bytes: the dependent side of a department's managers,
// listing them by user id.
func DeptManagerKey(did DeptID, uid UserID) []byte {
	return binary.BigEndian.AppendUint64(DeptManagerPrefix(did), uint64(uid))
}

// DeptManagerPrefix is the 10-byte prefix of a department's manager rows.
func DeptManagerPrefix(did DeptID) []byte { return append(idKey(did), linkManager) }

// DecodeDeptManagerKey decodes the rowkey of a manager row.
func DecodeDeptManagerKey(k []byte) (DeptID, UserID, bool) {
	d, u, ok := decodeLinkKey(k, linkManager)
	return DeptID(d), UserID(u), ok
}

// ManagerQualifier is the qualifier of a department a user manages in
// family o of weibo:users (the authority of the manager pair): 'g' |
// did(8), 9 bytes; the value is the time it was granted, ms.
func ManagerQualifier(did DeptID) string { return "g" + string(U64(uint64(did))) }

// DecodeManagerQualifier decodes ManagerQualifier; ok is false for role
// qualifiers, ColUserDept and anything else.
func DecodeManagerQualifier(q string) (DeptID, bool) {
	if len(q) != 9 || q[0] != 'g' {
		return 0, false
	}
	return DeptID(binary.BigEndian.Uint64([]byte(q[1:]))), true
}

// DeptMemberKey is the rowkey of a member row: salt(did)(1) | did(8) | 'm' |
// uid(8), 18 bytes.
func DeptMemberKey(did DeptID, uid UserID) []byte {
	return binary.BigEndian.AppendUint64(DeptMemberPrefix(did), uint64(uid))
}

// DeptMemberPrefix is the 10-byte prefix of a department's member rows; a
// prefix scan lists them by user id.
func DeptMemberPrefix(did DeptID) []byte { return append(idKey(did), linkMember) }

// DecodeDeptMemberKey decodes the rowkey of a member row of weibo:departments.
func DecodeDeptMemberKey(k []byte) (DeptID, UserID, bool) {
	d, u, ok := decodeLinkKey(k, linkMember)
	return DeptID(d), UserID(u), ok
}

// DeptPrefix is the 9-byte prefix of every row department did owns: its
// department row, its child rows and its member rows.
func DeptPrefix(did DeptID) []byte { return idKey(did) }

// LinkValues are the cells of a department child or member row: ColLinkAt
// = ms, the time the link was made.
func LinkValues(ms int64) hbase.Values { return hbase.Values{FamInfo: {ColLinkAt: U64(uint64(ms))}} }

// --- weibo:pending -----------------------------------------------------------

// PendingKind is the byte after the owner's prefix in a weibo:pending
// rowkey: which kind of write the row stands for.
type PendingKind byte

// Kinds of pending writes.
const (
	// PendingFollow is a follow or unfollow: owner is the follower (a
	// UserID), other the followee. Its counters are the follower's
	// ColFollows and the followee's ColFans.
	PendingFollow PendingKind = 'f'
	// PendingRole is an assignment or revocation of a role: owner is the
	// role (a RoleID), other the user. Its counter is the role's
	// ColMemberCount.
	PendingRole PendingKind = 'r'
	// PendingDeptMember is a user joining or leaving a department: owner
	// is the department (a DeptID), other the user. Its counter is the
	// department's ColDeptMemberCount.
	PendingDeptMember PendingKind = 'd'
	// PendingPostDelete is a deletePost: owner is the post's author (a
	// UserID), other the post's creation time (ms). Its counter is the
	// author's ColPosts.
	PendingPostDelete PendingKind = 'x'
)

// PendingKey is the rowkey of weibo:pending: salt(owner)(1) | owner(8) |
// kind(1) | other(8) | nonce(8), 26 bytes. The nonce (random) keeps the
// rows of concurrent writes of one pair apart.
func PendingKey(kind PendingKind, owner, other, nonce uint64) []byte {
	k := binary.BigEndian.AppendUint64(append(appendIDKey(make([]byte, 0, PendingKeyLen), owner), byte(kind)), other)
	return binary.BigEndian.AppendUint64(k, nonce)
}

// PendingPrefix is the prefix of owner's weibo:pending rows of kind: a
// prefix scan lists the writes of that kind in flight for owner.
func PendingPrefix(kind PendingKind, owner uint64) []byte {
	return append(appendIDKey(make([]byte, 0, IDKeyLen+1), owner), byte(kind))
}

// DecodePendingKey decodes a weibo:pending rowkey; ok is false for a
// malformed key or an unknown kind.
func DecodePendingKey(k []byte) (kind PendingKind, owner, other, nonce uint64, ok bool) {
	owner, ok = decodeIDPrefix(k)
	if !ok || len(k) != PendingKeyLen {
		return 0, 0, 0, 0, false
	}
	kind = PendingKind(k[IDKeyLen])
	if kind != PendingFollow && kind != PendingRole && kind != PendingDeptMember && kind != PendingLike && kind != PendingPostDelete && kind != PendingRepost && kind != PendingComment && kind != PendingTopic &&
		kind != PendingNotify && kind != PendingRegister && kind != PendingBlock && kind != PendingReport && kind != PendingMediaRef && kind != PendingMediaAttach {
		return 0, 0, 0, 0, false
	}
	return kind, owner, binary.BigEndian.Uint64(k[IDKeyLen+1:]), binary.BigEndian.Uint64(k[IDKeyLen+9:]), true
}

// --- values -----------------------------------------------------------------

// U64 encodes v as 8 bytes big-endian (HBase's counter and
// Bytes.toBytes(long) format).
func U64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

// DecodeU64 decodes an 8-byte big-endian value; anything else gives 0.
func DecodeU64(b []byte) uint64 {
	if len(b) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}

// EncodePriority encodes a role assignment's priority as 4 bytes BE (the
// value of RoleQualifier cells and of ColPriority).
func EncodePriority(p int) []byte { return binary.BigEndian.AppendUint32(nil, uint32(p)) }

// DecodePriority decodes EncodePriority's 4 bytes; ok is false for any
// other length.
func DecodePriority(b []byte) (int, bool) {
	if len(b) != 4 {
		return 0, false
	}
	return int(binary.BigEndian.Uint32(b)), true
}

// --- the large accounts (hybrid fan-out) -----------------------------------

// LargeKey is the rowkey of the one row of weibo:users that lists the
// large accounts (authors whose posts are not pushed into inboxes but
// merged into home timelines at read time): family FamInfo, one column per
// account, qualifier LargeQualifier(uid), value EncodeLarge. 0xff sorts
// after every salted rowkey, and DecodeUserKey refuses it.
var LargeKey = []byte("\xfflarge")

// LargeState is the first byte of a LargeKey cell.
type LargeState byte

// States of a large account.
const (
	// LargeOn: the account's posts are not pushed; readers merge them.
	LargeOn LargeState = 'L'
	// LargeDraining: the account has dropped below the threshold; its
	// posts are pushed again and its recent posts are being copied into
	// its fans' inboxes, while readers still merge them.
	LargeDraining LargeState = 'D'
)

// LargeQualifier is the qualifier of uid's cell in row LargeKey: the id,
// 8 bytes BE.
func LargeQualifier(uid UserID) string { return string(U64(uint64(uid))) }

// DecodeLargeQualifier decodes a qualifier of row LargeKey.
func DecodeLargeQualifier(q string) (UserID, bool) {
	if len(q) != 8 {
		return 0, false
	}
	return UserID(binary.BigEndian.Uint64([]byte(q))), true
}

// EncodeLarge is the value of a LargeKey cell: the state (1 byte), then the
// time the state was entered, ms since the epoch, 8 bytes BE.
func EncodeLarge(st LargeState, sinceMillis int64) []byte {
	return binary.BigEndian.AppendUint64([]byte{byte(st)}, uint64(sinceMillis))
}

// DecodeLarge decodes a LargeKey cell; ok is false for a malformed value.
func DecodeLarge(v []byte) (st LargeState, sinceMillis int64, ok bool) {
	if len(v) != 9 || (LargeState(v[0]) != LargeOn && LargeState(v[0]) != LargeDraining) {
		return 0, 0, false
	}
	return LargeState(v[0]), int64(binary.BigEndian.Uint64(v[1:])), true
}
