package tables

import (
	"encoding/binary"
	"math"
	"strconv"
	"strings"
)

// --- weibo:reports ------------------------------------------------------------
//
// Reports of content to the moderators (docs/schema.md, "weibo:reports"):
// four kinds of rows, told apart by their first byte:
//
//	report    'r' ~id(8)                     9 bytes  the report: the AUTHORITY
//	status    's' status(1) ~id(8)          10 bytes  the queue of one status, newest first
//	reporter  'u' reporter(8) ~id(8)        17 bytes  a reporter's reports, newest first
//	counts    'c'                            1 byte   the kept counts of reports per status
//
// ~id is MaxUint64 - id: a report's id starts with its creation time, so
// a scan of the report rows ('r') lists every report newest first, and a
// scan of one status's or one reporter's index rows lists theirs newest
// first. The report row holds the report's state, its status cell
// (ColReportState) the status and a version that every change bumps —
// the cell every conditional write of the row checks — and the reported
// posts' and comments' text as it was reported. The status and reporter
// rows are its DEPENDENTS (package moderation/report settles them): a
// status row exists while the report row holds that status; a reporter
// row exists while the report row does (reports are never deleted).

// Reports holds the reports of content. Rowkeys ReportKey,
// ReportStatusKey, ReportReporterKey and ReportCountsKey.
const Reports = Namespace + ":reports"

// Families and qualifiers of weibo:reports.
const (
	// FamReport is family r of weibo:reports: the report rows' cells, and
	// the proof cells of their pending audit events.
	FamReport = "r"
	// ColReportState (reports, r) is EncodeReportState: status and version.
	ColReportState = "s"
	// ColReportCategory (reports, r) is the category's byte (ReportCategory).
	ColReportCategory = "k"
	// ColReportComment (reports, r) is the reporter's comment, UTF-8;
	// absent when none.
	ColReportComment = "m"
	// ColReportReporter (reports, r) is the reporter's user id, 8 bytes BE.
	ColReportReporter = "u"
	// ColReportTarget (reports, r) is the reported user's id, 8 bytes BE.
	ColReportTarget = "g"
	// ColReportAssignee (reports, r) is the assigned moderator's user id,
	// 8 bytes BE; empty or absent when none.
	ColReportAssignee = "a"
	// ColReportAction (reports, r) is the resolving action's byte
	// (ReportAction); empty or absent while open.
	ColReportAction = "x"
	// ColReportNote (reports, r) is the moderator's note, UTF-8; empty or
	// absent when none.
	ColReportNote = "n"
	// ColReportCreated (reports, r) is the creation time, ms, 8 bytes BE.
	ColReportCreated = "t"
	// ColReportResolved (reports, r) is the time of the last resolution,
	// ms, 8 bytes BE; empty or absent while open.
	ColReportResolved = "d"
	// FamReportIndex is family i of weibo:reports: the index rows' one
	// cell, ColReportEntry.
	FamReportIndex = "i"
	// ColReportEntry (reports, i) is empty: the rowkey says everything.
	ColReportEntry = "e"
	// FamReportCount is family c of weibo:reports: the counts row's
	// counters (Increment, 8 bytes BE) and their operation sequences.
	FamReportCount = "c"
	// ColReportsOpen and ColReportsResolved (reports, c) are the numbers
	// of report rows whose status is OPEN and RESOLVED; ColReportsOpenSeq
	// and ColReportsResolvedSeq their operation sequences (see
	// ColFollowsSeq).
	ColReportsOpen        = "o"
	ColReportsResolved    = "r"
	ColReportsOpenSeq     = "so"
	ColReportsResolvedSeq = "sr"
)

// Qualifier prefixes of a report row's reported items (family r): a
// post's cell is 'P' ms(8) (its author is the report's target), a
// comment's 'C' postAuthor(8) postMs(8) ms(8) (its author is the
// target); the value is the text as it was reported.
const (
	reportPostPrefix    byte = 'P'
	reportCommentPrefix byte = 'C'
)

// PendingReport is a counted write of a report's status (its creation,
// resolution or reopening): owner the report's id, other 0. Its counters
// are the counts row's ColReportsOpen and ColReportsResolved.
const PendingReport PendingKind = 'q'

// Rowkey markers and lengths of weibo:reports.
const (
	reportRow      byte = 'r'
	reportStatus   byte = 's'
	reportReporter byte = 'u'
	reportCounts   byte = 'c'
	// ReportKeyLen, ReportStatusKeyLen and ReportReporterKeyLen are the
	// lengths of the three kinds of rowkeys that name a report.
	ReportKeyLen         = 1 + 8
	ReportStatusKeyLen   = 1 + 1 + 8
	ReportReporterKeyLen = 1 + 8 + 8
)

// ReportStatus is a report's status byte.
type ReportStatus byte

// The statuses of a report.
const (
	ReportOpen     ReportStatus = 'o'
	ReportResolved ReportStatus = 'r'
)

// ReportCategory is a report's category byte.
type ReportCategory byte

// The categories of a report.
const (
	ReportSpam    ReportCategory = 's'
	ReportAbuse   ReportCategory = 'a'
	ReportIllegal ReportCategory = 'i'
	ReportOther   ReportCategory = 'o'
)

// ReportAction is the byte of the action that resolved a report.
type ReportAction byte

// The actions of a resolution.
const (
	ReportDismiss       ReportAction = 'd'
	ReportDeleteContent ReportAction = 'c'
	ReportSuspendUser   ReportAction = 'u'
)

// ReportIDPrefix starts the GraphQL id of a report.
const ReportIDPrefix = "report:"

// ReportID is a report's id: its creation time in ms shifted left by
// ReportIDRandomBits, ORed with random bits (unique through the report
// row's CheckAndPut(absent)), so that ids order like creation times. In
// GraphQL it is "report:<decimal>"; in rowkeys MaxUint64 - id, 8 bytes BE.
type ReportID uint64

// ReportIDRandomBits is how many low bits of a ReportID are random.
const ReportIDRandomBits = 20

// NewReportID returns the id of a report created at ms with the random
// bits of r.
func NewReportID(ms int64, r uint64) ReportID {
	return ReportID(uint64(ms)<<ReportIDRandomBits | r&(1<<ReportIDRandomBits-1))
}

// Millis returns the creation time the id holds, ms.
func (id ReportID) Millis() int64 { return int64(uint64(id) >> ReportIDRandomBits) }

// String returns the GraphQL ID, e.g. "report:1663205227970560".
func (id ReportID) String() string { return textOf(id) }

// AppendText appends String's form to b (encoding.TextAppender); it never
// fails.
func (id ReportID) AppendText(b []byte) ([]byte, error) {
	return strconv.AppendUint(append(b, ReportIDPrefix...), uint64(id), 10), nil
}

// ParseReportID parses "report:<n>", n decimal (1 to 20 digits, no sign
// or leading zeros, not 0); it returns ErrInvalidID for anything else.
func ParseReportID(s string) (ReportID, error) {
	rest, ok := strings.CutPrefix(s, ReportIDPrefix)
	if !ok {
		return 0, ErrInvalidID
	}
	n, err := parseID(rest)
	return ReportID(n), err
}

func appendReportID(dst []byte, id ReportID) []byte {
	return binary.BigEndian.AppendUint64(dst, math.MaxUint64-uint64(id))
}

// ReportKey is the report row of id.
func ReportKey(id ReportID) []byte {
	return appendReportID(append(make([]byte, 0, ReportKeyLen), reportRow), id)
}

// ReportsPrefix is the prefix of every report row: a scan lists every
// report, newest first.
func ReportsPrefix() []byte { return []byte{reportRow} }

// DecodeReportKey decodes a report row's key; ok is false for any other.
func DecodeReportKey(k []byte) (ReportID, bool) {
	if len(k) != ReportKeyLen || k[0] != reportRow {
		return 0, false
	}
	return ReportID(math.MaxUint64 - binary.BigEndian.Uint64(k[1:])), true
}

// ReportStatusPrefix is the prefix of status st's index rows.
func ReportStatusPrefix(st ReportStatus) []byte { return []byte{reportStatus, byte(st)} }

// ReportStatusKey is the index row of report id in status st's queue.
func ReportStatusKey(st ReportStatus, id ReportID) []byte {
	return appendReportID(append(make([]byte, 0, ReportStatusKeyLen), reportStatus, byte(st)), id)
}

// DecodeReportStatusKey decodes a status index row's key; ok is false for
// any other.
func DecodeReportStatusKey(k []byte) (ReportStatus, ReportID, bool) {
	if len(k) != ReportStatusKeyLen || k[0] != reportStatus || (ReportStatus(k[1]) != ReportOpen && ReportStatus(k[1]) != ReportResolved) {
		return 0, 0, false
	}
	return ReportStatus(k[1]), ReportID(math.MaxUint64 - binary.BigEndian.Uint64(k[2:])), true
}

// ReportReporterPrefix is the prefix of reporter's index rows.
func ReportReporterPrefix(reporter UserID) []byte {
	return binary.BigEndian.AppendUint64(append(make([]byte, 0, ReportReporterKeyLen), reportReporter), uint64(reporter))
}

// ReportReporterKey is the index row of report id among reporter's.
func ReportReporterKey(reporter UserID, id ReportID) []byte {
	return appendReportID(ReportReporterPrefix(reporter), id)
}

// ReportReporterStart is the first row of reporter's index rows of
// reports made at or before ms: a scan from it reads back in time.
func ReportReporterStart(reporter UserID, ms int64) []byte {
	return ReportReporterKey(reporter, NewReportID(ms, 1<<ReportIDRandomBits-1))
}

// DecodeReportReporterKey decodes a reporter index row's key; ok is false
// for any other.
func DecodeReportReporterKey(k []byte) (UserID, ReportID, bool) {
	if len(k) != ReportReporterKeyLen || k[0] != reportReporter {
		return 0, 0, false
	}
	return UserID(binary.BigEndian.Uint64(k[1:])), ReportID(math.MaxUint64 - binary.BigEndian.Uint64(k[9:])), true
}

// ReportCountsKey is the counts row.
var ReportCountsKey = []byte{reportCounts}

// ReportState is the value of ColReportState: a status and the version
// that every change of the report row bumps.
type ReportState struct {
	Status  ReportStatus
	Version uint64
}

// EncodeReportState encodes s: status(1) version(8 BE).
func EncodeReportState(s ReportState) []byte {
	return binary.BigEndian.AppendUint64([]byte{byte(s.Status)}, s.Version)
}

// DecodeReportState decodes ColReportState; ok is false when malformed.
func DecodeReportState(b []byte) (ReportState, bool) {
	if len(b) != 9 || (ReportStatus(b[0]) != ReportOpen && ReportStatus(b[0]) != ReportResolved) {
		return ReportState{}, false
	}
	return ReportState{Status: ReportStatus(b[0]), Version: binary.BigEndian.Uint64(b[1:])}, true
}

// ReportPostQualifier is the qualifier of a reported post's cell: the
// post of the report's target made at ms.
func ReportPostQualifier(ms int64) string {
	return string(binary.BigEndian.AppendUint64([]byte{reportPostPrefix}, uint64(ms)))
}

// ReportCommentQualifier is the qualifier of a reported comment's cell:
// the comment of the report's target on post made at ms.
func ReportCommentQualifier(post PostID, ms int64) string {
	b := binary.BigEndian.AppendUint64([]byte{reportCommentPrefix}, uint64(post.Author))
	b = binary.BigEndian.AppendUint64(b, uint64(post.Millis))
	return string(binary.BigEndian.AppendUint64(b, uint64(ms)))
}

// DecodeReportItemQualifier decodes a reported item's qualifier: a post
// (isPost, its ms in post.Millis) or a comment (post and ms); ok is false
// for any other qualifier.
func DecodeReportItemQualifier(q string) (isPost bool, post PostID, ms int64, ok bool) {
	switch {
	case len(q) == 9 && q[0] == reportPostPrefix:
		return true, PostID{Millis: int64(binary.BigEndian.Uint64([]byte(q[1:])))}, 0, true
	case len(q) == 25 && q[0] == reportCommentPrefix:
		b := []byte(q[1:])
		return false, PostID{Author: UserID(binary.BigEndian.Uint64(b)), Millis: int64(binary.BigEndian.Uint64(b[8:]))},
			int64(binary.BigEndian.Uint64(b[16:])), true
	}
	return false, PostID{}, 0, false
}
