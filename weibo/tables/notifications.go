package tables

import (
	"encoding/binary"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/weibohbase/gateway/hbase"
)

// --- weibo:notifications ------------------------------------------------------
//
// Notifications (docs/schema.md, "weibo:notifications"): two kinds of rows
// per recipient R, told apart by the byte after R's prefix:
//
//	group  salt(R) R(8) 'g' kind(1) subject(32) ~gen(8)            51 bytes  the notification: summary and actors
//	index  salt(R) R(8) 'n' rev(at)(8) kind(1) subject(32) ~gen(8) 59 bytes  its place in R's list, newest first
//
// The group row is the AUTHORITY of a notification: it exists while the
// notification does, and its head cell (ColNotifHead) holds its time `at`,
// whether it is read, and a version every change bumps (the cell every
// conditional write of the row checks). The index row is its DEPENDENT:
// the list is a prefix scan of R's index rows, each kept only while its
// group's head holds its time. subject names what the notification is
// about (NotifSubject); ~gen is MaxUint64 - gen, so the newest generation
// of a (kind, subject) comes first: a grouped notification that was read
// gets no new actors, the next ones start the next generation.

// Notifications holds every user's notifications. Rowkeys
// NotifGroupKey and NotifIndexKey.
const Notifications = Namespace + ":notifications"

// Families and qualifiers of weibo:notifications, and the notification
// cells of other tables.
const (
	// FamNotifSummary is family s of weibo:notifications: a group's head,
	// actor count and newest actors, and the index rows' one cell.
	FamNotifSummary = "s"
	// FamNotifActors is family a of weibo:notifications: one cell per
	// actor of a group, qualifier NotifActorQualifier(uid), value the time
	// the actor joined, ms, 8 bytes BE; empty once the actor left (an
	// undone like or follow).
	FamNotifActors = "a"
	// ColNotifHead (notifications, s, group rows) is EncodeNotifHead: the
	// notification's time, its read state and its version.
	ColNotifHead = "h"
	// ColNotifCount (notifications, s, group rows) is the number of actors
	// (non-empty cells of family a), 8 bytes BE.
	ColNotifCount = "c"
	// ColNotifNewest (notifications, s, group rows) is
	// EncodeNotifActors: the newest NotifActorsKept actors, newest first.
	ColNotifNewest = "n"
	// ColNotifEntry (notifications, s, index rows) is empty: the rowkey
	// holds everything.
	ColNotifEntry = "e"
	// ColUnread (users, c) is the user's unread notification count
	// (Increment): their unread group rows with an actor.
	ColUnread = "nu"
	// ColUnreadSeq (users, c) is the operation sequence of ColUnread (see
	// ColFollowsSeq).
	ColUnreadSeq = "snu"
	// ColMentions (content, c; comments, c) is EncodeMentions: the users
	// a post's or a comment's text mentions, resolved when it was written.
	ColMentions = "m"
)

// NotifActorsKept is how many of a group's newest actors its summary
// keeps (ColNotifNewest): a page of notifications answers actors(first:)
// up to this many from the group rows it reads anyway.
const NotifActorsKept = 10

// Rowkey lengths of weibo:notifications, in bytes.
const (
	// NotifSubjectLen is the length of an encoded NotifSubject.
	NotifSubjectLen = 32
	// NotifGroupKeyLen is the length of a group row's key.
	NotifGroupKeyLen = IDKeyLen + 1 + 1 + NotifSubjectLen + 8
	// NotifIndexKeyLen is the length of an index row's key.
	NotifIndexKeyLen = IDKeyLen + 1 + 8 + 1 + NotifSubjectLen + 8
)

// Markers of the two kinds of rows, the byte after the recipient's prefix.
const (
	notifGroup byte = 'g'
	notifIndex byte = 'n'
)

// PendingNotify is a write of one notification (adding or taking out one
// actor) or a markNotificationsRead: owner is the recipient, other the
// actor (0 for a markNotificationsRead), and the marker's ColPendingExtra
// is EncodeNotifyExtra. Its counter is the recipient's ColUnread.
const PendingNotify PendingKind = 'n'

// NotifKind is the kind byte of a notification's rowkeys.
type NotifKind byte

// Kinds of notification.
const (
	NotifFollow  NotifKind = 'f' // a new fan; grouped per day (UTC) of the follow
	NotifMention NotifKind = 'm' // a mention in a post, a repost's comment or a comment
	NotifComment NotifKind = 'c' // a comment on the recipient's post
	NotifReply   NotifKind = 'y' // a reply to the recipient's comment
	NotifRepost  NotifKind = 'r' // a repost of the recipient's post; grouped per post
	NotifLike    NotifKind = 'l' // a like of the recipient's post; grouped per post
	// NotifReportResolved: the recipient's report was resolved; its one
	// actor is NotifSystemActor, never shown (the moderator stays
	// anonymous); subject ReportSubject.
	NotifReportResolved NotifKind = 'p'
)

// NotifSystemActor is the actor a notification without a user acting
// holds (REPORT_RESOLVED): a user id no account has.
const NotifSystemActor UserID = math.MaxUint64

// Valid reports whether k is one of the kinds.
func (k NotifKind) Valid() bool {
	switch k {
	case NotifFollow, NotifMention, NotifComment, NotifReply, NotifRepost, NotifLike, NotifReportResolved:
		return true
	}
	return false
}

// Grouped reports whether notifications of kind k gather several actors
// (like, repost, follow); the others have one actor each.
func (k NotifKind) Grouped() bool { return k == NotifLike || k == NotifRepost || k == NotifFollow }

// MillisPerDay is the length of the days FOLLOW notifications are grouped
// by (UTC days since the epoch).
const MillisPerDay = 24 * 60 * 60 * 1000

// NotifSubject is what a notification is about, four numbers (32 bytes BE
// in the rowkeys): for a post (like, repost, mention in a post) its author
// and ms, then 0, 0; for a comment (comment, reply, mention in a comment)
// its post's author and ms, then its ms and author; for a follow 0, the
// day of the follow (ms / MillisPerDay), 0, 0.
type NotifSubject [4]uint64

// PostSubject is the subject of a notification about post p.
func PostSubject(p PostID) NotifSubject {
	return NotifSubject{uint64(p.Author), uint64(p.Millis), 0, 0}
}

// CommentSubject is the subject of a notification about comment c.
func CommentSubject(c CommentID) NotifSubject {
	return NotifSubject{uint64(c.Post.Author), uint64(c.Post.Millis), uint64(c.Millis), uint64(c.Author)}
}

// DaySubject is the subject of the follows made on the day of ms.
func DaySubject(ms int64) NotifSubject { return NotifSubject{0, uint64(ms / MillisPerDay), 0, 0} }

// ReportSubject is the subject of the resolution of report id at ms:
// 0, 0, id, ms (no post: a report's notification names none).
func ReportSubject(id ReportID, ms int64) NotifSubject {
	return NotifSubject{0, 0, uint64(id), uint64(ms)}
}

// Report returns the report and the time of its resolution the subject
// of a REPORT_RESOLVED notification names.
func (s NotifSubject) Report() (ReportID, int64) { return ReportID(s[2]), int64(s[3]) }

// Post returns the post the subject names (the post commented on for a
// comment); ok is false for a day.
func (s NotifSubject) Post() (PostID, bool) {
	return PostID{Author: UserID(s[0]), Millis: int64(s[1])}, s[0] != 0
}

// Comment returns the comment the subject names; ok is false when it
// names none.
func (s NotifSubject) Comment() (CommentID, bool) {
	p, ok := s.Post()
	return CommentID{Post: p, Millis: int64(s[2]), Author: UserID(s[3])}, ok && s[3] != 0
}

func appendSubject(dst []byte, s NotifSubject) []byte {
	for _, v := range s {
		dst = binary.BigEndian.AppendUint64(dst, v)
	}
	return dst
}

func decodeSubject(b []byte) NotifSubject {
	var s NotifSubject
	for i := range s {
		s[i] = binary.BigEndian.Uint64(b[8*i:])
	}
	return s
}

// NotificationIDPrefix starts the GraphQL id of a notification.
const NotificationIDPrefix = "notification:"

// NotificationID identifies a notification: its recipient, kind, subject
// and generation, the parts of its group rowkey. In GraphQL it is
// "notification:<recipient>_<kind byte>_<s0>_<s1>_<s2>_<s3>_<gen>"
// ("notification:5802_l_5802_1583037296789_0_0_1"), which maps back to
// the rowkey without a lookup.
type NotificationID struct {
	// Recipient is the user notified.
	Recipient UserID
	// Kind is the notification's kind.
	Kind NotifKind
	// Subject is what it is about.
	Subject NotifSubject
	// Gen is the generation of a grouped notification (1, 2, ...: a new
	// one starts once the one before was read); 1 for the others.
	Gen uint64
}

// String returns the GraphQL form.
func (n NotificationID) String() string { return textOf(n) }

// AppendText appends String's form to b (encoding.TextAppender); it never
// fails.
func (n NotificationID) AppendText(b []byte) ([]byte, error) {
	b = strconv.AppendUint(append(b, NotificationIDPrefix...), uint64(n.Recipient), 10)
	b = append(b, '_', byte(n.Kind))
	for _, v := range n.Subject {
		b = strconv.AppendUint(append(b, '_'), v, 10)
	}
	return strconv.AppendUint(append(b, '_'), n.Gen, 10), nil
}

// ParseNotificationID parses String's form strictly (canonical decimals, a
// known kind, a recipient and a generation above 0); it returns
// ErrInvalidID for anything else.
func ParseNotificationID(s string) (NotificationID, error) {
	rest, ok := strings.CutPrefix(s, NotificationIDPrefix)
	parts := strings.Split(rest, "_")
	if !ok || len(parts) != 7 || len(parts[1]) != 1 || !NotifKind(parts[1][0]).Valid() {
		return NotificationID{}, ErrInvalidID
	}
	var nums [6]uint64
	for i, p := range append([]string{parts[0]}, parts[2:]...) {
		v, err := strconv.ParseUint(p, 10, 64)
		if err != nil || strconv.FormatUint(v, 10) != p {
			return NotificationID{}, ErrInvalidID
		}
		nums[i] = v
	}
	if nums[0] == 0 || nums[5] == 0 {
		return NotificationID{}, ErrInvalidID
	}
	return NotificationID{Recipient: UserID(nums[0]), Kind: NotifKind(parts[1][0]),
		Subject: NotifSubject{nums[1], nums[2], nums[3], nums[4]}, Gen: nums[5]}, nil
}

// MarshalGQL writes n as a GraphQL ID.
func (n NotificationID) MarshalGQL(w io.Writer) { writeAppended(w, n) }

// UnmarshalGQL sets n from a GraphQL ID in ParseNotificationID's form; it
// returns an error wrapping ErrInvalidID for anything else.
func (n *NotificationID) UnmarshalGQL(v any) error {
	return unmarshalID(v, "notification", ParseNotificationID, n)
}

// NotifSubjectPrefix is the prefix of the group rows of every generation
// of (kind, subject) of recipient r: a scan lists them newest generation
// first.
func NotifSubjectPrefix(r UserID, kind NotifKind, s NotifSubject) []byte {
	k := append(appendIDKey(make([]byte, 0, NotifGroupKeyLen), r), notifGroup, byte(kind))
	return appendSubject(k, s)
}

// NotifGroupKey is the rowkey of notification n's group row:
// salt(R)(1) | R(8) | 'g' | kind(1) | subject(32) | ~gen(8), 51 bytes.
func NotifGroupKey(n NotificationID) []byte {
	return binary.BigEndian.AppendUint64(NotifSubjectPrefix(n.Recipient, n.Kind, n.Subject), math.MaxUint64-n.Gen)
}

// NotifKindPrefix is the prefix of the group rows of kind of recipient r.
func NotifKindPrefix(r UserID, kind NotifKind) []byte {
	return append(idKey(r), notifGroup, byte(kind))
}

// NotifGroupsPrefix is the prefix of every group row of recipient r.
func NotifGroupsPrefix(r UserID) []byte { return append(idKey(r), notifGroup) }

// DecodeNotifGroupKey decodes a group row's key.
func DecodeNotifGroupKey(k []byte) (NotificationID, bool) {
	r, ok := decodeIDPrefix(k)
	if !ok || len(k) != NotifGroupKeyLen || k[IDKeyLen] != notifGroup || !NotifKind(k[IDKeyLen+1]).Valid() {
		return NotificationID{}, false
	}
	gen := math.MaxUint64 - binary.BigEndian.Uint64(k[NotifGroupKeyLen-8:])
	return NotificationID{Recipient: UserID(r), Kind: NotifKind(k[IDKeyLen+1]),
		Subject: decodeSubject(k[IDKeyLen+2:]), Gen: gen}, gen != 0
}

// NotifIndexKey is the rowkey of the index row of notification n at time
// at (ms): salt(R)(1) | R(8) | 'n' | rev(at)(8) | kind(1) | subject(32) |
// ~gen(8), 59 bytes. R's list is a prefix scan of NotifIndexPrefix(R),
// newest first.
func NotifIndexKey(n NotificationID, at int64) []byte {
	k := binary.BigEndian.AppendUint64(append(appendIDKey(make([]byte, 0, NotifIndexKeyLen), n.Recipient), notifIndex), reverseMillis(at))
	k = appendSubject(append(k, byte(n.Kind)), n.Subject)
	return binary.BigEndian.AppendUint64(k, math.MaxUint64-n.Gen)
}

// NotifIndexPrefix is the prefix of recipient r's index rows.
func NotifIndexPrefix(r UserID) []byte { return append(idKey(r), notifIndex) }

// DecodeNotifIndexKey decodes an index row's key: the notification and
// the time the row places it at.
func DecodeNotifIndexKey(k []byte) (NotificationID, int64, bool) {
	r, ok := decodeIDPrefix(k)
	if !ok || len(k) != NotifIndexKeyLen || k[IDKeyLen] != notifIndex || !NotifKind(k[IDKeyLen+9]).Valid() {
		return NotificationID{}, 0, false
	}
	at := fromReverse(binary.BigEndian.Uint64(k[IDKeyLen+1:]))
	gen := math.MaxUint64 - binary.BigEndian.Uint64(k[NotifIndexKeyLen-8:])
	return NotificationID{Recipient: UserID(r), Kind: NotifKind(k[IDKeyLen+9]),
		Subject: decodeSubject(k[IDKeyLen+10:]), Gen: gen}, at, gen != 0
}

// NotifEntryValues are the cells of an index row (shared: do not modify).
func NotifEntryValues() hbase.Values { return notifEntryValues }

var notifEntryValues = hbase.Values{FamNotifSummary: {ColNotifEntry: {}}}

// NotifActorQualifier is the qualifier of uid's cell in family
// FamNotifActors: the id, 8 bytes BE.
func NotifActorQualifier(uid UserID) string { return string(U64(uint64(uid))) }

// DecodeNotifActorQualifier decodes a qualifier of family FamNotifActors.
func DecodeNotifActorQualifier(q string) (UserID, bool) {
	if len(q) != 8 {
		return 0, false
	}
	return UserID(binary.BigEndian.Uint64([]byte(q))), true
}

// NotifHead is a group row's head cell, decoded.
type NotifHead struct {
	// At is the notification's time: when it last gained an actor, ms.
	At int64
	// Read tells that the recipient marked it read.
	Read bool
	// Version is bumped by every change of the row.
	Version uint64
}

// EncodeNotifHead encodes h as ColNotifHead: at(8) | state(1: 'u' unread,
// 'r' read) | version(8), 17 bytes.
func EncodeNotifHead(h NotifHead) []byte {
	state := byte('u')
	if h.Read {
		state = 'r'
	}
	return binary.BigEndian.AppendUint64(append(U64(uint64(h.At)), state), h.Version)
}

// DecodeNotifHead decodes a ColNotifHead value; ok is false when absent or
// malformed.
func DecodeNotifHead(v []byte) (NotifHead, bool) {
	if len(v) != 17 || (v[8] != 'u' && v[8] != 'r') {
		return NotifHead{}, false
	}
	return NotifHead{At: int64(binary.BigEndian.Uint64(v)), Read: v[8] == 'r', Version: binary.BigEndian.Uint64(v[9:])}, true
}

// NotifActor is one actor of a notification and the time they joined it.
type NotifActor struct {
	// User is the actor.
	User UserID
	// At is when they joined the notification, ms.
	At int64
}

// EncodeNotifActors encodes actors as ColNotifNewest: uid(8) | at(8) each.
func EncodeNotifActors(actors []NotifActor) []byte {
	b := make([]byte, 0, 16*len(actors))
	for _, a := range actors {
		b = binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(b, uint64(a.User)), uint64(a.At))
	}
	return b
}

// DecodeNotifActors decodes EncodeNotifActors; a malformed value gives nil.
func DecodeNotifActors(v []byte) []NotifActor {
	if len(v)%16 != 0 {
		return nil
	}
	out := make([]NotifActor, len(v)/16)
	for i := range out {
		out[i] = NotifActor{User: UserID(binary.BigEndian.Uint64(v[16*i:])), At: int64(binary.BigEndian.Uint64(v[16*i+8:]))}
	}
	return out
}

// NotifGroup is a group row's summary (family FamNotifSummary), decoded.
type NotifGroup struct {
	// Head is the head cell.
	Head NotifHead
	// Count is the number of actors.
	Count int64
	// Newest are the newest NotifActorsKept actors, newest first.
	Newest []NotifActor
	// HeadCell is the head cell's raw value, what a conditional write of
	// the row expects.
	HeadCell []byte
}

// DecodeNotifGroup decodes a group row's summary; ok is false when the
// row has no head, or a tombstone (a head whose count is 0: every actor
// left) — no notification. A tombstone's Head and HeadCell are still
// set (what the next conditional write of the row expects).
func DecodeNotifGroup(r *hbase.Result) (NotifGroup, bool) {
	raw := r.Value(FamNotifSummary, ColNotifHead)
	h, ok := DecodeNotifHead(raw)
	if !ok {
		return NotifGroup{}, false
	}
	g := NotifGroup{Head: h, Count: int64(DecodeU64(r.Value(FamNotifSummary, ColNotifCount))),
		Newest: DecodeNotifActors(r.Value(FamNotifSummary, ColNotifNewest)), HeadCell: raw}
	return g, g.Count > 0
}

// NotifGroupValues are the summary cells of g (its HeadCell ignored).
func NotifGroupValues(g NotifGroup) map[string][]byte {
	return map[string][]byte{ColNotifHead: EncodeNotifHead(g.Head), ColNotifCount: U64(uint64(g.Count)),
		ColNotifNewest: EncodeNotifActors(g.Newest)}
}

// NotifActors decodes a group row's family FamNotifActors: every actor
// present (cells that are not empty).
func NotifActors(r *hbase.Result) []NotifActor {
	var out []NotifActor
	for _, c := range r.Family(FamNotifActors) {
		if uid, ok := DecodeNotifActorQualifier(c.Qualifier); ok && len(c.Value) == 8 {
			out = append(out, NotifActor{User: uid, At: int64(binary.BigEndian.Uint64(c.Value))})
		}
	}
	return out
}

// EncodeNotifyExtra is the ColPendingExtra of a notification's marker:
// kind(1) | subject(32) | at(8), 41 bytes — the notification the write
// adds its actor to or takes them out of, and the time of the action —,
// then, once the write is about to move or delete an index row of the
// notification, that row's time, ms, 8 bytes (49 bytes; before then
// left ms 0: none).
func EncodeNotifyExtra(kind NotifKind, s NotifSubject, at, left int64) []byte {
	b := binary.BigEndian.AppendUint64(appendSubject([]byte{byte(kind)}, s), uint64(at))
	if left != 0 {
		b = binary.BigEndian.AppendUint64(b, uint64(left))
	}
	return b
}

// DecodeNotifyExtra decodes EncodeNotifyExtra (left 0 for none); ok is
// false for anything else (a markNotificationsRead's marker carries none).
func DecodeNotifyExtra(b []byte) (kind NotifKind, s NotifSubject, at, left int64, ok bool) {
	n := 1 + NotifSubjectLen + 8
	if (len(b) != n && len(b) != n+8) || !NotifKind(b[0]).Valid() {
		return 0, NotifSubject{}, 0, 0, false
	}
	if len(b) == n+8 {
		left = int64(binary.BigEndian.Uint64(b[n:]))
	}
	return NotifKind(b[0]), decodeSubject(b[1:]), int64(binary.BigEndian.Uint64(b[1+NotifSubjectLen:])), left, true
}

// Mention is a user a text mentions, as resolved when it was written.
type Mention struct {
	// User is the user's id.
	User UserID
	// Name is the username as registered.
	Name string
}

// EncodeMentions encodes ms as ColMentions: uid(8) | len(1) | username
// (UTF-8, at most 255 bytes; usernames are 32) each, in the order of the
// text.
func EncodeMentions(ms []Mention) []byte {
	var b []byte
	for _, m := range ms {
		name := m.Name[:min(len(m.Name), 255)]
		b = append(append(binary.BigEndian.AppendUint64(b, uint64(m.User)), byte(len(name))), name...)
	}
	return b
}

// DecodeMentions decodes EncodeMentions; it stops at a malformed rest.
func DecodeMentions(v []byte) []Mention {
	var out []Mention
	for len(v) >= 9 {
		n := int(v[8])
		if len(v) < 9+n {
			break
		}
		out = append(out, Mention{User: UserID(binary.BigEndian.Uint64(v)), Name: string(v[9 : 9+n])})
		v = v[9+n:]
	}
	return out
}
