package tables

import (
	"encoding/binary"
	"io"
	"strconv"
	"strings"
	"time"
)

// Media is the table of pictures (docs/schema.md, "weibo:media"): one
// table, four kinds of rows told apart by their first byte —
//
//	media row       'm' salt id                     10 bytes  family u (unattached, TTL 24 h) or m (attached)
//	blob row        'b' sha256                      33 bytes  family d (the bytes, MOB) and c (refCount)
//	reference row   'b' sha256 holderKind holder    42 bytes  family r: one holder of the blob
//	expiry row      'e' expiresMs id                17 bytes  family r: an upload to release if never attached
//
// The blob rows and their references share a prefix, so one prefix scan
// reads a blob's data row and every reference of it.
const Media = Namespace + ":media"

// Families of weibo:media.
const (
	// FamMediaUpload holds an unattached upload's cells; its TTL
	// (MediaUploadTTL) removes an upload nobody attached.
	FamMediaUpload = "u"
	// FamMediaAttached holds an attached media's cells (the upload's,
	// with ColMediaPost); no TTL.
	FamMediaAttached = "m"
	// FamMediaData holds a blob's bytes and MIME type: a MOB family on
	// HBase (MediaMOBThreshold).
	FamMediaData = "d"
	// FamMediaRef holds reference and expiry rows.
	FamMediaRef = "r"
)

// Qualifiers of weibo:media.
const (
	ColMediaOwner    = "o" // media row: the owner, 8 bytes BE
	ColMediaAlt      = "a" // media row: the alt text, UTF-8; absent when none
	ColMediaBlurhash = "h" // media row: the blurhash, ASCII
	ColMediaVariants = "v" // media row: EncodeMediaVariants
	ColMediaCreated  = "t" // media row: created, ms 8 bytes BE
	ColMediaPost     = "p" // media row (family m): the post, author 8 bytes + ms 8 bytes
	ColBlobData      = "b" // blob row (family d): the bytes
	ColBlobMIME      = "t" // blob row (family d): the MIME type
	ColBlobRefCount  = "n" // blob row (family c): the number of references
	ColBlobRefSeq    = "s" // blob row (family c): the refCount's operation sequence
	ColMediaRefAt    = "t" // reference and expiry rows: written, ms 8 bytes BE
)

// MediaUploadTTL is how long an upload nobody attached lives (the TTL of
// family FamMediaUpload).
const MediaUploadTTL = 24 * time.Hour

// MediaMOBThreshold is the MOB threshold of FamMediaData, bytes: values
// larger are HBase medium objects.
const MediaMOBThreshold = 100 << 10

// PendingMediaRef is the weibo:pending kind of a reference's counted
// write (owner: the holder's id, other: the holder kind; extra: the
// blob's sha256).
const PendingMediaRef PendingKind = 'i'

// MediaIDPrefix starts the GraphQL id of a media.
const MediaIDPrefix = "media:"

// MediaID is a picture's id: its creation time in ms shifted left by
// MediaIDRandomBits, ORed with random bits (unique through the media
// row's CheckAndPut(absent)). In GraphQL it is "media:<decimal>"; in
// rowkeys 8 bytes BE after a salt byte.
type MediaID uint64

// MediaIDRandomBits is how many low bits of a MediaID are random.
const MediaIDRandomBits = 20

// NewMediaID returns the id of a media created at ms with the random bits
// of r.
func NewMediaID(ms int64, r uint64) MediaID {
	return MediaID(uint64(ms)<<MediaIDRandomBits | r&(1<<MediaIDRandomBits-1))
}

// String returns the GraphQL ID, e.g. "media:1663205227970560".
func (id MediaID) String() string { return textOf(id) }

// AppendText appends String's form to b (encoding.TextAppender); it never
// fails.
func (id MediaID) AppendText(b []byte) ([]byte, error) {
	return strconv.AppendUint(append(b, MediaIDPrefix...), uint64(id), 10), nil
}

// ParseMediaID parses "media:<n>", n decimal (1 to 20 digits, no sign or
// leading zeros, not 0); it returns ErrInvalidID for anything else.
func ParseMediaID(s string) (MediaID, error) {
	rest, ok := strings.CutPrefix(s, MediaIDPrefix)
	if !ok {
		return 0, ErrInvalidID
	}
	n, err := parseID(rest)
	return MediaID(n), err
}

// MarshalGQL writes id as a GraphQL ID, e.g. "media:7".
func (id MediaID) MarshalGQL(w io.Writer) { writeAppended(w, id) }

// UnmarshalGQL sets id from a GraphQL ID input in ParseMediaID's form; it
// returns an error wrapping ErrInvalidID for anything else.
func (id *MediaID) UnmarshalGQL(v any) error { return unmarshalID(v, "media", ParseMediaID, id) }

// MediaKey is the rowkey of media id: 'm', a salt byte (the id's low
// byte, random), the id 8 bytes BE.
func MediaKey(id MediaID) []byte {
	return binary.BigEndian.AppendUint64([]byte{'m', byte(id)}, uint64(id))
}

// DecodeMediaKey returns the id of a media rowkey; ok is false for any
// other key.
func DecodeMediaKey(k []byte) (MediaID, bool) {
	if len(k) != 10 || k[0] != 'm' {
		return 0, false
	}
	id := MediaID(binary.BigEndian.Uint64(k[2:]))
	return id, k[1] == byte(id)
}

// MediaRowsPrefix is the prefix of every media row.
var MediaRowsPrefix = []byte{'m'}

// BlobRowsPrefix is the prefix of every blob and reference row.
var BlobRowsPrefix = []byte{'b'}

// BlobKey is the rowkey of the blob of sha256 hash: 'b' and the hash; it
// is also the prefix of the blob's reference rows.
func BlobKey(hash [32]byte) []byte { return append([]byte{'b'}, hash[:]...) }

// MediaHolder is the kind of a blob's holder.
type MediaHolder byte

// Holders of a blob.
const (
	// HolderMedia is a media row whose variant the blob is (holder: the
	// media id).
	HolderMedia MediaHolder = 'm'
	// HolderReport is an unresolved report of a post the media was
	// attached to (holder: the report id).
	HolderReport MediaHolder = 'q'
)

// MediaRefKey is the rowkey of holder's reference to the blob of hash.
func MediaRefKey(hash [32]byte, kind MediaHolder, holder uint64) []byte {
	return binary.BigEndian.AppendUint64(append(BlobKey(hash), byte(kind)), holder)
}

// DecodeBlobKey returns the hash of a blob row (ref false) or of a
// reference row with its holder (ref true); ok is false for any other key.
func DecodeBlobKey(k []byte) (hash [32]byte, ref bool, kind MediaHolder, holder uint64, ok bool) {
	if len(k) < 33 || k[0] != 'b' {
		return hash, false, 0, 0, false
	}
	copy(hash[:], k[1:33])
	switch len(k) {
	case 33:
		return hash, false, 0, 0, true
	case 42:
		return hash, true, MediaHolder(k[33]), binary.BigEndian.Uint64(k[34:]), true
	}
	return hash, false, 0, 0, false
}

// MediaExpiryKey is the rowkey of the expiry row of an upload: 'e', the
// time after which it is released if never attached (ms 8 bytes BE) and
// its id; the rows sort by that time.
func MediaExpiryKey(expiresMs int64, id MediaID) []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64([]byte{'e'}, uint64(expiresMs)), uint64(id))
}

// MediaExpiryPrefix is the prefix of every expiry row.
var MediaExpiryPrefix = []byte{'e'}

// DecodeMediaExpiryKey returns the time and id of an expiry row.
func DecodeMediaExpiryKey(k []byte) (expiresMs int64, id MediaID, ok bool) {
	if len(k) != 17 || k[0] != 'e' {
		return 0, 0, false
	}
	return int64(binary.BigEndian.Uint64(k[1:])), MediaID(binary.BigEndian.Uint64(k[9:])), true
}

// MediaVariant is one variant as a media row records it.
type MediaVariant struct {
	Name          string
	MIME          string
	Width, Height int
	Bytes         int64
	Hash          [32]byte
}

// EncodeMediaVariants encodes vs: per variant, the name and the MIME type
// each as a length byte and bytes, width and height 4 bytes BE each, the
// size 8 bytes BE and the sha256.
func EncodeMediaVariants(vs []MediaVariant) []byte {
	var b []byte
	for _, v := range vs {
		b = append(append(b, byte(len(v.Name))), v.Name...)
		b = append(append(b, byte(len(v.MIME))), v.MIME...)
		b = binary.BigEndian.AppendUint32(b, uint32(v.Width))
		b = binary.BigEndian.AppendUint32(b, uint32(v.Height))
		b = binary.BigEndian.AppendUint64(b, uint64(v.Bytes))
		b = append(b, v.Hash[:]...)
	}
	return b
}

// DecodeMediaVariants decodes EncodeMediaVariants' form; ok is false when
// b is malformed.
func DecodeMediaVariants(b []byte) (vs []MediaVariant, ok bool) {
	str := func() (string, bool) {
		if len(b) < 1 || len(b) < 1+int(b[0]) {
			return "", false
		}
		s := string(b[1 : 1+int(b[0])])
		b = b[1+int(b[0]):]
		return s, true
	}
	for len(b) > 0 {
		var v MediaVariant
		var ok1, ok2 bool
		if v.Name, ok1 = str(); !ok1 {
			return nil, false
		}
		if v.MIME, ok2 = str(); !ok2 || len(b) < 48 {
			return nil, false
		}
		v.Width, v.Height = int(binary.BigEndian.Uint32(b)), int(binary.BigEndian.Uint32(b[4:]))
		v.Bytes = int64(binary.BigEndian.Uint64(b[8:]))
		copy(v.Hash[:], b[16:48])
		b = b[48:]
		vs = append(vs, v)
	}
	return vs, true
}

// EncodeMediaPost encodes a media's post: author and ms, 8 bytes BE each.
func EncodeMediaPost(p PostID) []byte {
	return binary.BigEndian.AppendUint64(U64(uint64(p.Author)), uint64(p.Millis))
}

// DecodeMediaPost decodes EncodeMediaPost's form.
func DecodeMediaPost(b []byte) (PostID, bool) {
	if len(b) != 16 {
		return PostID{}, false
	}
	return PostID{Author: UserID(binary.BigEndian.Uint64(b)), Millis: int64(binary.BigEndian.Uint64(b[8:]))}, true
}

// EncodeMediaIDs encodes a post's or a report's media ids: 8 bytes BE
// each, in order.
func EncodeMediaIDs(ids []MediaID) []byte {
	b := make([]byte, 0, 8*len(ids))
	for _, id := range ids {
		b = binary.BigEndian.AppendUint64(b, uint64(id))
	}
	return b
}

// DecodeMediaIDs decodes EncodeMediaIDs' form; nil for an empty or
// malformed value.
func DecodeMediaIDs(b []byte) []MediaID {
	if len(b)%8 != 0 || len(b) == 0 {
		return nil
	}
	ids := make([]MediaID, len(b)/8)
	for i := range ids {
		ids[i] = MediaID(binary.BigEndian.Uint64(b[8*i:]))
	}
	return ids
}

// ColPostMedia (content, family c) is, on a post with pictures, its media
// ids in order (EncodeMediaIDs), so a page of posts knows them without
// another read.
const ColPostMedia = "pi"

// ColMediaExpiryHashes (expiry row, family r) lists the sha256 of every
// blob the upload references, 32 bytes each: what to release should the
// upload never be attached (or never be written whole).
const ColMediaExpiryHashes = "h"

// PendingMediaAttach is the weibo:pending kind of the attach of a post's
// media, and of their release when the post goes (owner: the post's
// author, other: its ms; extra: EncodeMediaIDs of its media).
const PendingMediaAttach PendingKind = 'j'

// MediaHolderKey is the rowkey of the holder row of a holder other than a
// media row (a report): 'h', the holder kind, the holder's id 8 bytes BE;
// family r, cell ColMediaExpiryHashes the sha256 of every blob it holds.
func MediaHolderKey(kind MediaHolder, holder uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{'h', byte(kind)}, holder)
}

// ColReportMedia (weibo:reports, family r) is, on a report of posts with
// pictures, the media ids of those posts (EncodeMediaIDs): the report
// holds their bytes while it is open.
const ColReportMedia = "md"

// DecodeMediaHolderKey returns the kind and id of a holder row; ok is
// false for any other key.
func DecodeMediaHolderKey(k []byte) (kind MediaHolder, holder uint64, ok bool) {
	if len(k) != 10 || k[0] != 'h' {
		return 0, 0, false
	}
	return MediaHolder(k[1]), binary.BigEndian.Uint64(k[2:]), true
}
