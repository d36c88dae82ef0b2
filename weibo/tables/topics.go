package tables

import (
	"crypto/sha256"
	"encoding/binary"
	"hash/fnv"

	"github.com/weibohbase/gateway/hbase"
)

// --- topics (#话题#) -----------------------------------------------------------
//
// A post's topics are a function of its text (package weibo/topic), so the
// AUTHORITY of the pair (topic, post) is the post's content row. Its
// DEPENDENT is the post's entry in the topic's list (weibo:topicposts);
// its COUNTERS are the topic's postCount (its row of weibo:topics) and the
// topic's count in the hour row of the post's hour (weibo:topics):
//
//	list entry  bucket(1) tid(8) rev(8) author(8)   25 bytes   weibo:topicposts, p:e empty
//	topic row   't' name                             1+n bytes  weibo:topics, c:n postCount, s:n its sequence
//	hour row    'h' hour(8)                          9 bytes    weibo:topics, c:<name> count, s:<name> its sequence
//
// tid(8) is the first 8 bytes of SHA-256 of the name (TopicID): a fixed
// length prefix that a client cannot aim at another topic (finding a
// second name with the same 8 bytes takes 2^64 hashes). bucket spreads
// one topic's entries over TopicBuckets of the 16 salt values, one in each
// region of the pre-split (SaltSplitKeys), so a hot topic writes to four
// regions, not one: bucket = (tid's last byte mod 4) + 4 * (FNV-1a-32 of
// the post's author(8) ms(8) mod 4). hour(8) is the hour's first ms since
// the epoch (HourStart). docs/schema.md, "Topics", documents every byte.

// Tables of the topics.
const (
	// Topics holds one row per topic (TopicKey: its postCount) and one
	// row per hour (HourKey: every topic's count of posts of that hour).
	Topics = Namespace + ":topics"
	// TopicPosts holds one row per (topic, post): each topic's posts,
	// newest first within each bucket. Rowkey TopicPostKey.
	TopicPosts = Namespace + ":topicposts"
)

// Families and qualifiers of the topics.
const (
	// FamTopicCount is family c of weibo:topics: the counters (Increment).
	FamTopicCount = "c"
	// FamTopicSeq is family s of weibo:topics: each counter's operation
	// sequence, under the counter's qualifier (see ColFollowsSeq), kept
	// apart so that reading an hour's counters does not read them.
	FamTopicSeq = "s"
	// ColTopicPosts (topics, c and s, topic rows) is the topic's postCount
	// and its sequence. An hour row's qualifiers are the topic names.
	ColTopicPosts = "n"
	// FamTopicEntry is family p of weibo:topicposts.
	FamTopicEntry = "p"
	// ColTopicEntry (topicposts, p) is empty: the rowkey holds everything.
	ColTopicEntry = "e"
)

// Lengths and bounds of the topics' rowkeys.
const (
	// TopicBuckets is how many buckets one topic's list is spread over.
	TopicBuckets = 4
	// TopicPostPrefixLen is the length of one bucket's prefix: bucket(1) tid(8).
	TopicPostPrefixLen = 1 + 8
	// TopicPostKeyLen is the length of a weibo:topicposts rowkey.
	TopicPostKeyLen = TopicPostPrefixLen + 8 + 8
	// HourKeyLen is the length of an hour row's key.
	HourKeyLen = 1 + 8
	// HourMillis is one hour in ms.
	HourMillis = 3_600_000
)

// Marker bytes of the rows of weibo:topics.
const (
	topicRow = 't'
	hourRow  = 'h'
)

// PendingTopic is a write that changes a post's topics (its publish or its
// delete): owner is the post's author, other its time in ms, and the
// marker's ColPendingExtra names the topics (EncodeTopicExtra). Its
// counters are each topic's postCount and its count in the post's hour.
const PendingTopic PendingKind = 'h'

// TopicsDemoMarkerKey marks a store into which `gateway serve --demo`
// wrote the demo posts' topics (a weibo:users row, family i, ColCreated),
// beside DemoMarkerKey: a store seeded before topics existed gets them at
// its next start.
var TopicsDemoMarkerKey = []byte("\xfftopicsdemo")

// TopicID is the 8-byte id of topic name in the list's rowkeys: the first 8
// bytes of SHA-256 of its UTF-8, as a big-endian number.
func TopicID(name string) uint64 {
	h := sha256.Sum256([]byte(name))
	return binary.BigEndian.Uint64(h[:8])
}

// topicBucket returns the bucket of post in the list of the topic with id tid.
func topicBucket(tid uint64, post PostID) byte {
	h := fnv.New32a()
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(post.Author))
	binary.BigEndian.PutUint64(b[8:], uint64(post.Millis))
	h.Write(b[:])
	return byte(tid%TopicBuckets) + byte(TopicBuckets*(h.Sum32()%TopicBuckets))
}

// TopicPostKey is the rowkey of post's entry in the list of topic name:
// bucket(1) | tid(8) | rev(8) | author(8), 25 bytes.
func TopicPostKey(name string, post PostID) []byte {
	return AppendTopicPostKey(make([]byte, 0, TopicPostKeyLen), TopicID(name), post)
}

// AppendTopicPostKey appends the rowkey of post's entry in the list of the
// topic whose TopicID is tid to dst (the importer's form).
func AppendTopicPostKey(dst []byte, tid uint64, post PostID) []byte {
	dst = binary.BigEndian.AppendUint64(append(dst, topicBucket(tid, post)), tid)
	dst = binary.BigEndian.AppendUint64(dst, reverseMillis(post.Millis))
	return binary.BigEndian.AppendUint64(dst, uint64(post.Author))
}

// TopicPostPrefixes are the TopicBuckets prefixes of topic name's list,
// bucket(1) | tid(8), in bucket order: a page merges one scan of each.
func TopicPostPrefixes(name string) [][]byte {
	tid := TopicID(name)
	out := make([][]byte, TopicBuckets)
	for j := range out {
		out[j] = binary.BigEndian.AppendUint64([]byte{byte(tid%TopicBuckets) + byte(TopicBuckets*j)}, tid)
	}
	return out
}

// TopicPostSuffix is the part of a list entry's rowkey after its bucket's
// prefix: rev(8) | author(8), the same in every bucket, so entries of
// several buckets merge by it (newest first, ties by author id).
func TopicPostSuffix(post PostID) []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(make([]byte, 0, 16), reverseMillis(post.Millis)), uint64(post.Author))
}

// DecodeTopicPostSuffix decodes TopicPostSuffix.
func DecodeTopicPostSuffix(s []byte) (PostID, bool) {
	if len(s) != 16 {
		return PostID{}, false
	}
	return PostID{Millis: fromReverse(binary.BigEndian.Uint64(s)), Author: UserID(binary.BigEndian.Uint64(s[8:]))}, true
}

// DecodeTopicPostKey decodes a weibo:topicposts rowkey into the topic's id
// and the post; ok is false for a malformed key or a bucket that is not
// the post's.
func DecodeTopicPostKey(k []byte) (tid uint64, post PostID, ok bool) {
	if len(k) != TopicPostKeyLen {
		return 0, PostID{}, false
	}
	tid = binary.BigEndian.Uint64(k[1:9])
	post, _ = DecodeTopicPostSuffix(k[TopicPostPrefixLen:])
	if k[0] != topicBucket(tid, post) {
		return 0, PostID{}, false
	}
	return tid, post, true
}

// TopicKey is the rowkey of topic name's row in weibo:topics: 't' | name.
func TopicKey(name string) []byte { return append([]byte{topicRow}, name...) }

// TopicNamePrefix is the prefix of the rows of the topics whose names
// start with prefix: 't' | prefix (a prefix scan lists them by name).
func TopicNamePrefix(prefix string) []byte { return TopicKey(prefix) }

// DecodeTopicKey decodes a topic row's key into the name.
func DecodeTopicKey(k []byte) (string, bool) {
	if len(k) < 2 || k[0] != topicRow {
		return "", false
	}
	return string(k[1:]), true
}

// HourStart returns the first ms of the hour of ms (since the epoch).
func HourStart(ms int64) int64 {
	h := ms - ms%HourMillis
	if ms%HourMillis < 0 {
		h -= HourMillis
	}
	return h
}

// HourKey is the rowkey of the hour row of the hour starting at hourMs:
// 'h' | hourMs(8), 9 bytes (hours sort in time order).
func HourKey(hourMs int64) []byte {
	return binary.BigEndian.AppendUint64([]byte{hourRow}, uint64(hourMs))
}

// DecodeHourKey decodes an hour row's key into the hour's first ms.
func DecodeHourKey(k []byte) (int64, bool) {
	if len(k) != HourKeyLen || k[0] != hourRow {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(k[1:])), true
}

// HourRowsStart and HourRowsStop bound the scan of every hour row
// (fsck): [HourRowsStart, HourRowsStop).
var (
	HourRowsStart = []byte{hourRow}
	HourRowsStop  = []byte{hourRow + 1}
)

// TopicRowsStart and TopicRowsStop bound the scan of every topic row.
var (
	TopicRowsStart = []byte{topicRow}
	TopicRowsStop  = []byte{topicRow + 1}
)

// TopicPostCount decodes a topic row's postCount (c:n).
func TopicPostCount(r *hbase.Result) int64 { return CounterIn(r, FamTopicCount, ColTopicPosts) }

// HourCounts calls fn with every topic's count in hour row r (family c),
// in name order; a count of 0 or less (every post of the hour deleted) is
// skipped.
func HourCounts(r *hbase.Result, fn func(name string, n int64)) {
	for _, c := range r.Family(FamTopicCount) {
		if n := int64(DecodeU64(c.Value)); n > 0 {
			fn(c.Qualifier, n)
		}
	}
}

// EncodeTopicExtra is the ColPendingExtra of a PendingTopic marker: each
// name as its length in bytes (2 bytes BE) then its UTF-8.
func EncodeTopicExtra(names []string) []byte {
	var b []byte
	for _, n := range names {
		b = append(binary.BigEndian.AppendUint16(b, uint16(len(n))), n...)
	}
	return b
}

// DecodeTopicExtra decodes EncodeTopicExtra; ok is false for malformed bytes.
func DecodeTopicExtra(v []byte) (names []string, ok bool) {
	for len(v) > 0 {
		if len(v) < 2 {
			return nil, false
		}
		n := int(binary.BigEndian.Uint16(v))
		if len(v) < 2+n {
			return nil, false
		}
		names = append(names, string(v[2:2+n]))
		v = v[2+n:]
	}
	return names, true
}

// TopicEntryValues are the cells of a list entry: p:e, empty.
func TopicEntryValues() hbase.Values { return hbase.Values{FamTopicEntry: {ColTopicEntry: {}}} }
