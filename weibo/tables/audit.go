package tables

import (
	"bytes"
	"encoding/binary"
	"math"
	"strconv"
	"strings"

	"github.com/weibohbase/gateway/hbase"
)

// --- weibo:audit -------------------------------------------------------------
//
// The admin audit log (docs/schema.md, "The audit log"): one AUTHORITY row
// per event, the event row, and up to three DEPENDENT index rows of it, by
// actor, by target and by action. All four rows hold the same cells (the
// whole event), and every rowkey ends with the event's rev(8) | nonce(8),
// so each index lists its events newest first. The table is not salted:
// admin writes are rare, and the by-time listing needs one contiguous
// range.

// Family and qualifiers of weibo:audit. Every row of an event, the event
// row and its index rows alike, holds the same cells.
const (
	// FamAudit is family e of weibo:audit.
	FamAudit = "e"
	// ColAuditActor (audit, e) is the acting user's id, 8 bytes BE;
	// absent when no user acted.
	ColAuditActor = "u"
	// ColAuditAction (audit, e) is the action, ASCII (ValidAuditAction).
	ColAuditAction = "a"
	// ColAuditTarget (audit, e) is the object acted on: its kind byte
	// (AuditTargetUser, ...) and its id, 8 bytes BE; absent when none.
	ColAuditTarget = "g"
	// ColAuditBefore (audit, e) is the object's state before the change,
	// compact JSON; absent for null.
	ColAuditBefore = "b"
	// ColAuditAfter (audit, e) is the object's state after the change,
	// compact JSON; absent for null.
	ColAuditAfter = "n"
	// ColAuditRequest (audit, e) is the id of the request that made the
	// change, as the server logged it; absent when unknown.
	ColAuditRequest = "r"
)

// AuditIndex is the first byte of a weibo:audit rowkey: which listing the
// row belongs to.
type AuditIndex byte

// The listings of weibo:audit.
const (
	// AuditByTime marks the event row, the authority: 't' | rev(8) | nonce(8).
	AuditByTime AuditIndex = 't'
	// AuditByActor marks an index row by actor: 'a' | actor(8) | rev(8) | nonce(8).
	AuditByActor AuditIndex = 'a'
	// AuditByTarget marks an index row by target: 'g' | kind(1) | id(8) |
	// rev(8) | nonce(8).
	AuditByTarget AuditIndex = 'g'
	// AuditByAction marks an index row by action: 'c' | action | 0x00 |
	// rev(8) | nonce(8).
	AuditByAction AuditIndex = 'c'
)

// Kind bytes of an audit target, in ColAuditTarget and in AuditByTarget
// rowkeys.
const (
	AuditTargetUser       byte = 'u'
	AuditTargetRole       byte = 'r'
	AuditTargetDepartment byte = 'd'
)

// Lengths of weibo:audit rowkeys, in bytes.
const (
	// AuditKeyLen is the length of an event row's key.
	AuditKeyLen = 1 + 16
	// AuditActorKeyLen is the length of an index row's key by actor.
	AuditActorKeyLen = 1 + 8 + 16
	// AuditTargetKeyLen is the length of an index row's key by target.
	AuditTargetKeyLen = 1 + 1 + 8 + 16
	// AuditActionKeyMaxLen is the longest index row key by action (an
	// action of MaxAuditActionLen bytes).
	AuditActionKeyMaxLen = 1 + MaxAuditActionLen + 1 + 16
)

// MaxAuditActionLen is the longest action, in bytes.
const MaxAuditActionLen = 64

// ValidAuditAction reports whether s is an action: 1 to MaxAuditActionLen
// bytes of ASCII letters, digits, '.' and '_' ("role.assign"). None of
// them is 0x00, which ends the action in an AuditByAction rowkey.
func ValidAuditAction(s string) bool {
	if s == "" || len(s) > MaxAuditActionLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '.' && c != '_' && !('a' <= c && c <= 'z') && !('A' <= c && c <= 'Z') && !('0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// AuditIDPrefix starts the GraphQL id of an audit event.
const AuditIDPrefix = "audit:"

// AuditID identifies an audit event: the time it was recorded and a random
// nonce, the two parts of its rowkeys. In GraphQL it is
// "audit:<ms>_<nonce>", ms in decimal and the nonce as 16 lower-case hex
// digits ("audit:1583037296789_00c0ffee00c0ffee").
type AuditID struct {
	// Millis is the time the event was recorded, ms since the epoch (>= 0).
	Millis int64
	// Nonce keeps apart the events of one millisecond.
	Nonce uint64
}

// String returns the GraphQL form "audit:<ms>_<16 hex digits>".
func (id AuditID) String() string { return textOf(id) }

// AppendText appends String's form to b (encoding.TextAppender); it never
// fails.
func (id AuditID) AppendText(b []byte) ([]byte, error) {
	b = strconv.AppendInt(append(b, AuditIDPrefix...), id.Millis, 10)
	b = append(b, '_')
	const hexDigits = "0123456789abcdef"
	for shift := 60; shift >= 0; shift -= 4 {
		b = append(b, hexDigits[id.Nonce>>shift&0xf])
	}
	return b, nil
}

// ParseAuditID parses String's form, strictly (canonical decimal ms,
// exactly 16 lower-case hex digits); it returns ErrInvalidID for anything
// else.
func ParseAuditID(s string) (AuditID, error) {
	rest, ok := strings.CutPrefix(s, AuditIDPrefix)
	ms, nonce, cut := strings.Cut(rest, "_")
	if !ok || !cut || len(nonce) != 16 || strings.ToLower(nonce) != nonce {
		return AuditID{}, ErrInvalidID
	}
	m, err := strconv.ParseInt(ms, 10, 64)
	if err != nil || m < 0 || strconv.FormatInt(m, 10) != ms {
		return AuditID{}, ErrInvalidID
	}
	n, err := strconv.ParseUint(nonce, 16, 64)
	if err != nil {
		return AuditID{}, ErrInvalidID
	}
	return AuditID{Millis: m, Nonce: n}, nil
}

// AuditEntry is one audit event as weibo:audit stores it: the cells of its
// rows (AuditValues) and the parts of its rowkeys.
type AuditEntry struct {
	// ID is the event's id (its time and nonce).
	ID AuditID
	// Actor is the acting user; 0 when none.
	Actor UserID
	// Action is what was done (ValidAuditAction).
	Action string
	// Target is the object acted on: a user, a role or a department; Kind
	// 0 when none (AuditTargetOK).
	Target NodeID
	// Before and After are the object's states around the change, compact
	// JSON; "" for null.
	Before, After string
	// RequestID is the id of the request that made the change; "" when unknown.
	RequestID string
}

// AuditTargetOK reports whether n can be an audit target: a user, a role
// or a department with a non-zero id, or no target (Kind 0).
func AuditTargetOK(n NodeID) bool {
	_, _, ok := auditTarget(n)
	return ok || n.Kind == 0
}

// auditTarget returns the kind byte and the id of target n; ok is false
// for no target and for kinds that cannot be targets (posts).
func auditTarget(n NodeID) (kind byte, id uint64, ok bool) {
	switch n.Kind {
	case NodeUser:
		kind, id = AuditTargetUser, uint64(n.User)
	case NodeRole:
		kind, id = AuditTargetRole, uint64(n.Role)
	case NodeDepartment:
		kind, id = AuditTargetDepartment, uint64(n.Dept)
	default:
		return 0, 0, false
	}
	return kind, id, id != 0
}

// decodeAuditTarget decodes kind(1) | id(8); ok is false for anything else.
func decodeAuditTarget(b []byte) (NodeID, bool) {
	if len(b) != 9 {
		return NodeID{}, false
	}
	id := binary.BigEndian.Uint64(b[1:])
	var n NodeID
	switch b[0] {
	case AuditTargetUser:
		n = NodeID{Kind: NodeUser, User: UserID(id)}
	case AuditTargetRole:
		n = NodeID{Kind: NodeRole, Role: RoleID(id)}
	case AuditTargetDepartment:
		n = NodeID{Kind: NodeDepartment, Dept: DeptID(id)}
	default:
		return NodeID{}, false
	}
	return n, id != 0
}

// AuditEventPrefix is the prefix of the event rows: 't'. A scan of it
// lists every event, newest first.
func AuditEventPrefix() []byte { return []byte{byte(AuditByTime)} }

// AuditActorPrefix is the 9-byte prefix of actor's index rows: 'a' | actor(8).
func AuditActorPrefix(actor UserID) []byte {
	return binary.BigEndian.AppendUint64(append(make([]byte, 0, AuditActorKeyLen), byte(AuditByActor)), uint64(actor))
}

// AuditTargetPrefix is the 10-byte prefix of target's index rows: 'g' |
// kind(1) | id(8); nil when target is none or a post (AuditTargetOK).
func AuditTargetPrefix(target NodeID) []byte {
	kind, id, ok := auditTarget(target)
	if !ok {
		return nil
	}
	return binary.BigEndian.AppendUint64(append(make([]byte, 0, AuditTargetKeyLen), byte(AuditByTarget), kind), id)
}

// AuditActionPrefix is the prefix of action's index rows: 'c' | action |
// 0x00. The caller checks the action (ValidAuditAction).
func AuditActionPrefix(action string) []byte {
	return append(append(append(make([]byte, 0, len(action)+18), byte(AuditByAction)), action...), 0)
}

// appendAuditSuffix appends rev(8) | nonce(8) of id.
func appendAuditSuffix(dst []byte, id AuditID) []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(dst, reverseMillis(id.Millis)), id.Nonce)
}

// AuditRowKey is the rowkey of event id's row under prefix, one of the
// prefixes above: prefix | rev(8) | nonce(8).
func AuditRowKey(prefix []byte, id AuditID) []byte {
	return appendAuditSuffix(append(make([]byte, 0, len(prefix)+16), prefix...), id)
}

// AuditKey is the rowkey of an event row (the authority): 't' | rev(8) |
// nonce(8), 17 bytes.
func AuditKey(id AuditID) []byte { return AuditRowKey(AuditEventPrefix(), id) }

// AuditIndexKeys returns the rowkeys of e's index rows, the dependents of
// its event row: by actor (when it has one), by target (when it has one),
// by action.
func AuditIndexKeys(e *AuditEntry) [][]byte {
	keys := make([][]byte, 0, 3)
	if e.Actor != 0 {
		keys = append(keys, AuditRowKey(AuditActorPrefix(e.Actor), e.ID))
	}
	if p := AuditTargetPrefix(e.Target); p != nil {
		keys = append(keys, AuditRowKey(p, e.ID))
	}
	return append(keys, AuditRowKey(AuditActionPrefix(e.Action), e.ID))
}

// AuditRange returns the range [start, stop) of the rows under prefix (one
// of the prefixes above) whose event time, ms since the epoch, lies in
// [sinceMs, untilMs). sinceMs <= 0 and untilMs == math.MaxInt64 leave that
// side unbounded (the prefix's own start or end); an empty window gives
// start == stop.
func AuditRange(prefix []byte, sinceMs, untilMs int64) (start, stop []byte) {
	sinceMs = max(sinceMs, 0)
	if untilMs <= sinceMs {
		return bytes.Clone(prefix), bytes.Clone(prefix)
	}
	start = bytes.Clone(prefix)
	if untilMs != math.MaxInt64 {
		// Newer events sort first: the range starts at the newest time
		// it admits.
		start = binary.BigEndian.AppendUint64(start, reverseMillis(untilMs-1))
	}
	if sinceMs == 0 {
		return start, hbase.PrefixEnd(prefix)
	}
	return start, binary.BigEndian.AppendUint64(bytes.Clone(prefix), reverseMillis(sinceMs-1))
}

// DecodeAuditKey decodes a weibo:audit rowkey: its listing, the event's id
// and the prefix it lists the event under (the key without rev | nonce).
// ok is false for a malformed key: a wrong length, an unknown marker or
// target kind, an invalid action.
func DecodeAuditKey(k []byte) (index AuditIndex, id AuditID, prefix []byte, ok bool) {
	if len(k) < AuditKeyLen {
		return 0, AuditID{}, nil, false
	}
	n := len(k) - 16
	prefix = k[:n]
	index = AuditIndex(k[0])
	switch index {
	case AuditByTime:
		ok = n == 1
	case AuditByActor:
		ok = n == 9 && binary.BigEndian.Uint64(k[1:n]) != 0
	case AuditByTarget:
		_, ok = decodeAuditTarget(k[1:n])
		ok = ok && n == 10
	case AuditByAction:
		ok = n >= 3 && k[n-1] == 0 && ValidAuditAction(string(k[1:n-1]))
	}
	if !ok {
		return 0, AuditID{}, nil, false
	}
	rev := binary.BigEndian.Uint64(k[n:])
	if rev > math.MaxInt64 { // a time before the epoch: never written
		return 0, AuditID{}, nil, false
	}
	return index, AuditID{Millis: fromReverse(rev), Nonce: binary.BigEndian.Uint64(k[n+8:])}, prefix, true
}

// AuditValues are the cells of every row of e (the event row and its
// index rows alike).
func AuditValues(e *AuditEntry) hbase.Values {
	cells := map[string][]byte{ColAuditAction: []byte(e.Action)}
	if e.Actor != 0 {
		cells[ColAuditActor] = EncodeID(e.Actor)
	}
	if kind, id, ok := auditTarget(e.Target); ok {
		cells[ColAuditTarget] = binary.BigEndian.AppendUint64([]byte{kind}, id)
	}
	for q, v := range map[string]string{ColAuditBefore: e.Before, ColAuditAfter: e.After, ColAuditRequest: e.RequestID} {
		if v != "" {
			cells[q] = []byte(v)
		}
	}
	return hbase.Values{FamAudit: cells}
}

// DecodeAuditRow decodes a weibo:audit row: its listing and the event it
// holds. ok is false when the key is malformed (DecodeAuditKey), a cell is
// malformed or absent (the action), or the cells disagree with the key
// (an index row by actor whose actor cell names another user, ...).
func DecodeAuditRow(r *hbase.Result) (AuditIndex, *AuditEntry, bool) {
	index, id, prefix, ok := DecodeAuditKey(r.Row)
	if !ok {
		return 0, nil, false
	}
	e := &AuditEntry{
		ID:        id,
		Action:    string(r.Value(FamAudit, ColAuditAction)),
		Before:    string(r.Value(FamAudit, ColAuditBefore)),
		After:     string(r.Value(FamAudit, ColAuditAfter)),
		RequestID: string(r.Value(FamAudit, ColAuditRequest)),
	}
	if v := r.Value(FamAudit, ColAuditActor); v != nil {
		if len(v) != 8 || binary.BigEndian.Uint64(v) == 0 {
			return 0, nil, false
		}
		e.Actor = UserID(binary.BigEndian.Uint64(v))
	}
	if v := r.Value(FamAudit, ColAuditTarget); v != nil {
		if e.Target, ok = decodeAuditTarget(v); !ok {
			return 0, nil, false
		}
	}
	if !ValidAuditAction(e.Action) {
		return 0, nil, false
	}
	var own []byte // the prefix the cells list the event under
	switch index {
	case AuditByTime:
		own = AuditEventPrefix()
	case AuditByActor:
		own = AuditActorPrefix(e.Actor)
	case AuditByTarget:
		own = AuditTargetPrefix(e.Target)
	case AuditByAction:
		own = AuditActionPrefix(e.Action)
	}
	if !bytes.Equal(own, prefix) {
		return 0, nil, false
	}
	return index, e, true
}
