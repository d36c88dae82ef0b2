package audit

import (
	"bytes"
	"encoding/binary"
	"math"
	"strconv"
	"strings"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/tables"
)

// The rows of weibo:audit (docs/schema.md, "The audit log"): one
// AUTHORITY row per event, the event row, and up to three DEPENDENT index
// rows of it, by actor, by target and by action. All four rows hold the
// same cells (the whole event), and every rowkey ends with the event's
// rev(8) | nonce(8), so each index lists its events newest first. The
// table is not salted: admin writes are rare, and the by-time listing
// needs one contiguous range. Its name and family (tables.Audit,
// tables.FamAudit) are in package weibo/tables with the other tables'
// specs; its rowkeys and cells are here, next to the code that writes
// and lists them.

// Qualifiers of family tables.FamAudit. Every row of an event, the event
// row and its index rows alike, holds the same cells.
const (
	// ColActor (audit, e) is the acting user's id, 8 bytes BE; absent
	// when no user acted.
	ColActor = "u"
	// ColAction (audit, e) is the action, ASCII (ValidAction).
	ColAction = "a"
	// ColTarget (audit, e) is the object acted on: its kind byte
	// (TargetUser, ...) and its id, 8 bytes BE; absent when none.
	ColTarget = "g"
	// ColBefore (audit, e) is the object's state before the change,
	// compact JSON; absent for null.
	ColBefore = "b"
	// ColAfter (audit, e) is the object's state after the change,
	// compact JSON; absent for null.
	ColAfter = "n"
	// ColRequest (audit, e) is the id of the request that made the
	// change, as the server logged it; absent when unknown.
	ColRequest = "r"
	// ColClient (audit, e) is the name of the provisioning client (SCIM)
	// that made the change, UTF-8; absent when a user or the command line
	// made it.
	ColClient = "c"
)

// Index is the first byte of a weibo:audit rowkey: which listing the
// row belongs to.
type Index byte

// The listings of weibo:audit.
const (
	// ByTime marks the event row, the authority: 't' | rev(8) | nonce(8).
	ByTime Index = 't'
	// ByActor marks an index row by actor: 'a' | actor(8) | rev(8) | nonce(8).
	ByActor Index = 'a'
	// ByTarget marks an index row by target: 'g' | kind(1) | id(8) |
	// rev(8) | nonce(8).
	ByTarget Index = 'g'
	// ByAction marks an index row by action: 'c' | action | 0x00 |
	// rev(8) | nonce(8).
	ByAction Index = 'c'
)

// Kind bytes of an audit target, in ColTarget and in ByTarget rowkeys.
const (
	TargetUser       byte = 'u'
	TargetRole       byte = 'r'
	TargetDepartment byte = 'd'
	TargetReport     byte = 'p'
)

// Lengths of weibo:audit rowkeys, in bytes.
const (
	// EventKeyLen is the length of an event row's key.
	EventKeyLen = 1 + 16
	// ActorKeyLen is the length of an index row's key by actor.
	ActorKeyLen = 1 + 8 + 16
	// TargetKeyLen is the length of an index row's key by target.
	TargetKeyLen = 1 + 1 + 8 + 16
	// ActionKeyMaxLen is the longest index row key by action (an
	// action of MaxActionLen bytes).
	ActionKeyMaxLen = 1 + MaxActionLen + 1 + 16
)

// MaxActionLen is the longest action, in bytes.
const MaxActionLen = 64

// ValidAction reports whether s is an action: 1 to MaxActionLen bytes of
// ASCII letters, digits, '.' and '_' ("role.assign"). None of them is
// 0x00, which ends the action in a ByAction rowkey.
func ValidAction(s string) bool {
	if s == "" || len(s) > MaxActionLen {
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

// IDPrefix starts the GraphQL id of an audit event.
const IDPrefix = "audit:"

// EventID identifies an audit event: the time it was recorded and a random
// nonce, the two parts of its rowkeys. In GraphQL it is
// "audit:<ms>_<nonce>", ms in decimal and the nonce as 16 lower-case hex
// digits ("audit:1583037296789_00c0ffee00c0ffee").
type EventID struct {
	// Millis is the time the event was recorded, ms since the epoch (>= 0).
	Millis int64
	// Nonce keeps apart the events of one millisecond.
	Nonce uint64
}

// String returns the GraphQL form "audit:<ms>_<16 hex digits>".
func (id EventID) String() string {
	b, _ := id.AppendText(make([]byte, 0, 48))
	return string(b)
}

// AppendText appends String's form to b (encoding.TextAppender); it never
// fails.
func (id EventID) AppendText(b []byte) ([]byte, error) {
	b = strconv.AppendInt(append(b, IDPrefix...), id.Millis, 10)
	b = append(b, '_')
	const hexDigits = "0123456789abcdef"
	for shift := 60; shift >= 0; shift -= 4 {
		b = append(b, hexDigits[id.Nonce>>shift&0xf])
	}
	return b, nil
}

// ParseEventID parses String's form, strictly (canonical decimal ms,
// exactly 16 lower-case hex digits); it returns tables.ErrInvalidID for
// anything else.
func ParseEventID(s string) (EventID, error) {
	rest, ok := strings.CutPrefix(s, IDPrefix)
	ms, nonce, cut := strings.Cut(rest, "_")
	if !ok || !cut || len(nonce) != 16 || strings.ToLower(nonce) != nonce {
		return EventID{}, tables.ErrInvalidID
	}
	m, err := strconv.ParseInt(ms, 10, 64)
	if err != nil || m < 0 || strconv.FormatInt(m, 10) != ms {
		return EventID{}, tables.ErrInvalidID
	}
	n, err := strconv.ParseUint(nonce, 16, 64)
	if err != nil {
		return EventID{}, tables.ErrInvalidID
	}
	return EventID{Millis: m, Nonce: n}, nil
}

// Entry is one audit event as weibo:audit stores it: the cells of its
// rows (Values) and the parts of its rowkeys.
type Entry struct {
	// ID is the event's id (its time and nonce).
	ID EventID
	// Actor is the acting user; 0 when none.
	Actor weibo.UserID
	// Action is what was done (ValidAction).
	Action string
	// Target is the object acted on: a user, a role, a department or a report; Kind
	// 0 when none (TargetOK).
	Target weibo.NodeID
	// Before and After are the object's states around the change, compact
	// JSON; "" for null.
	Before, After string
	// RequestID is the id of the request that made the change; "" when unknown.
	RequestID string
	// Client is the provisioning client that made the change; "" when none.
	Client string
}

// TargetOK reports whether n can be an audit target: a user, a role or a
// department with a non-zero id, or no target (Kind 0).
func TargetOK(n weibo.NodeID) bool {
	_, _, ok := targetOf(n)
	return ok || n.Kind == 0
}

// targetOf returns the kind byte and the id of target n; ok is false
// for no target and for kinds that cannot be targets (posts).
func targetOf(n weibo.NodeID) (kind byte, id uint64, ok bool) {
	switch n.Kind {
	case weibo.NodeUser:
		kind, id = TargetUser, uint64(n.User)
	case weibo.NodeRole:
		kind, id = TargetRole, uint64(n.Role)
	case weibo.NodeDepartment:
		kind, id = TargetDepartment, uint64(n.Dept)
	case weibo.NodeReport:
		kind, id = TargetReport, uint64(n.Report)
	default:
		return 0, 0, false
	}
	return kind, id, id != 0
}

// decodeTarget decodes kind(1) | id(8); ok is false for anything else.
func decodeTarget(b []byte) (weibo.NodeID, bool) {
	if len(b) != 9 {
		return weibo.NodeID{}, false
	}
	id := binary.BigEndian.Uint64(b[1:])
	var n weibo.NodeID
	switch b[0] {
	case TargetUser:
		n = weibo.NodeID{Kind: weibo.NodeUser, User: weibo.UserID(id)}
	case TargetRole:
		n = weibo.NodeID{Kind: weibo.NodeRole, Role: weibo.RoleID(id)}
	case TargetDepartment:
		n = weibo.NodeID{Kind: weibo.NodeDepartment, Dept: weibo.DeptID(id)}
	case TargetReport:
		n = weibo.NodeID{Kind: weibo.NodeReport, Report: weibo.ReportID(id)}
	default:
		return weibo.NodeID{}, false
	}
	return n, id != 0
}

// EventPrefix is the prefix of the event rows: 't'. A scan of it lists
// every event, newest first.
func EventPrefix() []byte { return []byte{byte(ByTime)} }

// ActorPrefix is the 9-byte prefix of actor's index rows: 'a' | actor(8).
func ActorPrefix(actor weibo.UserID) []byte {
	return binary.BigEndian.AppendUint64(append(make([]byte, 0, ActorKeyLen), byte(ByActor)), uint64(actor))
}

// TargetPrefix is the 10-byte prefix of target's index rows: 'g' |
// kind(1) | id(8); nil when target is none or a post (TargetOK).
func TargetPrefix(target weibo.NodeID) []byte {
	kind, id, ok := targetOf(target)
	if !ok {
		return nil
	}
	return binary.BigEndian.AppendUint64(append(make([]byte, 0, TargetKeyLen), byte(ByTarget), kind), id)
}

// ActionPrefix is the prefix of action's index rows: 'c' | action |
// 0x00. The caller checks the action (ValidAction).
func ActionPrefix(action string) []byte {
	return append(append(append(make([]byte, 0, len(action)+18), byte(ByAction)), action...), 0)
}

// reverseMillis maps a time in ms to rev(8) = math.MaxInt64 - ms, the
// reversed time of every newest-first rowkey of docs/schema.md, so that
// newer events sort first.
func reverseMillis(ms int64) uint64 { return uint64(math.MaxInt64 - ms) }

// fromReverse is the inverse of reverseMillis.
func fromReverse(r uint64) int64 { return math.MaxInt64 - int64(r) }

// appendSuffix appends rev(8) | nonce(8) of id.
func appendSuffix(dst []byte, id EventID) []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(dst, reverseMillis(id.Millis)), id.Nonce)
}

// RowKey is the rowkey of event id's row under prefix, one of the
// prefixes above: prefix | rev(8) | nonce(8).
func RowKey(prefix []byte, id EventID) []byte {
	return appendSuffix(append(make([]byte, 0, len(prefix)+16), prefix...), id)
}

// EventKey is the rowkey of an event row (the authority): 't' | rev(8) |
// nonce(8), 17 bytes.
func EventKey(id EventID) []byte { return RowKey(EventPrefix(), id) }

// IndexKeys returns the rowkeys of e's index rows, the dependents of
// its event row: by actor (when it has one), by target (when it has one),
// by action.
func IndexKeys(e *Entry) [][]byte {
	keys := make([][]byte, 0, 3)
	if e.Actor != 0 {
		keys = append(keys, RowKey(ActorPrefix(e.Actor), e.ID))
	}
	if p := TargetPrefix(e.Target); p != nil {
		keys = append(keys, RowKey(p, e.ID))
	}
	return append(keys, RowKey(ActionPrefix(e.Action), e.ID))
}

// Range returns the range [start, stop) of the rows under prefix (one
// of the prefixes above) whose event time, ms since the epoch, lies in
// [sinceMs, untilMs). sinceMs <= 0 and untilMs == math.MaxInt64 leave that
// side unbounded (the prefix's own start or end); an empty window gives
// start == stop.
func Range(prefix []byte, sinceMs, untilMs int64) (start, stop []byte) {
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

// DecodeKey decodes a weibo:audit rowkey: its listing, the event's id
// and the prefix it lists the event under (the key without rev | nonce).
// ok is false for a malformed key: a wrong length, an unknown marker or
// target kind, an invalid action.
func DecodeKey(k []byte) (index Index, id EventID, prefix []byte, ok bool) {
	if len(k) < EventKeyLen {
		return 0, EventID{}, nil, false
	}
	n := len(k) - 16
	prefix = k[:n]
	index = Index(k[0])
	switch index {
	case ByTime, Pending:
		ok = n == 1
	case ByActor:
		ok = n == 9 && binary.BigEndian.Uint64(k[1:n]) != 0
	case ByTarget:
		_, ok = decodeTarget(k[1:n])
		ok = ok && n == 10
	case ByAction:
		ok = n >= 3 && k[n-1] == 0 && ValidAction(string(k[1:n-1]))
	}
	if !ok {
		return 0, EventID{}, nil, false
	}
	rev := binary.BigEndian.Uint64(k[n:])
	if rev > math.MaxInt64 { // a time before the epoch: never written
		return 0, EventID{}, nil, false
	}
	return index, EventID{Millis: fromReverse(rev), Nonce: binary.BigEndian.Uint64(k[n+8:])}, prefix, true
}

// Values are the cells of every row of e (the event row and its index
// rows alike).
func Values(e *Entry) hbase.Values {
	cells := map[string][]byte{ColAction: []byte(e.Action)}
	if e.Actor != 0 {
		cells[ColActor] = tables.EncodeID(e.Actor)
	}
	if kind, id, ok := targetOf(e.Target); ok {
		cells[ColTarget] = binary.BigEndian.AppendUint64([]byte{kind}, id)
	}
	for q, v := range map[string]string{ColBefore: e.Before, ColAfter: e.After, ColRequest: e.RequestID, ColClient: e.Client} {
		if v != "" {
			cells[q] = []byte(v)
		}
	}
	return hbase.Values{tables.FamAudit: cells}
}

// DecodeRow decodes a weibo:audit row: its listing and the event it
// holds. ok is false when the key is malformed (DecodeKey), a cell is
// malformed or absent (the action), or the cells disagree with the key
// (an index row by actor whose actor cell names another user, ...).
func DecodeRow(r *hbase.Result) (Index, *Entry, bool) {
	index, id, prefix, ok := DecodeKey(r.Row)
	if !ok {
		return 0, nil, false
	}
	e := &Entry{
		ID:        id,
		Action:    string(r.Value(tables.FamAudit, ColAction)),
		Before:    string(r.Value(tables.FamAudit, ColBefore)),
		After:     string(r.Value(tables.FamAudit, ColAfter)),
		RequestID: string(r.Value(tables.FamAudit, ColRequest)),
		Client:    string(r.Value(tables.FamAudit, ColClient)),
	}
	if v := r.Value(tables.FamAudit, ColActor); v != nil {
		if len(v) != 8 || binary.BigEndian.Uint64(v) == 0 {
			return 0, nil, false
		}
		e.Actor = weibo.UserID(binary.BigEndian.Uint64(v))
	}
	if v := r.Value(tables.FamAudit, ColTarget); v != nil {
		if e.Target, ok = decodeTarget(v); !ok {
			return 0, nil, false
		}
	}
	if !ValidAction(e.Action) {
		return 0, nil, false
	}
	var own []byte // the prefix the cells list the event under
	switch index {
	case ByTime:
		own = EventPrefix()
	case Pending:
		own = []byte{byte(Pending)}
	case ByActor:
		own = ActorPrefix(e.Actor)
	case ByTarget:
		own = TargetPrefix(e.Target)
	case ByAction:
		own = ActionPrefix(e.Action)
	}
	if !bytes.Equal(own, prefix) {
		return 0, nil, false
	}
	return index, e, true
}
