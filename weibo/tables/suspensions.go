package tables

import "github.com/weibohbase/gateway/hbase"

// --- weibo:suspensions -------------------------------------------------------
//
// One row per user suspended by a moderator (suspendUser), deleted when
// the suspension is lifted (unsuspendUser); a suspension whose end has
// passed stays until the next change of the user's suspension and counts
// as none. The table is small (the users suspended, not all users): every
// gateway instance scans it whole at start and keeps it in memory, so
// that hiding a suspended user's content costs no store call of a read.

// Suspensions holds one row per suspended user. Rowkey SuspensionKey.
const Suspensions = Namespace + ":suspensions"

// Family and qualifiers of weibo:suspensions.
const (
	// FamSuspension is family s, the suspension's cells (and, while an
	// audit event of a change is pending, its proof cell).
	FamSuspension = "s"
	// ColSuspendedSince (suspensions, s) is when the suspension was made,
	// ms, 8 bytes BE. A row without it is no suspension (a row holding
	// only an audit proof cell, between an event's record and its
	// change's write).
	ColSuspendedSince = "t"
	// ColSuspendedUntil (suspensions, s) is when the suspension ends by
	// itself, ms, 8 bytes BE; empty: until lifted.
	ColSuspendedUntil = "u"
	// ColSuspendedReason (suspensions, s) is the reason given, UTF-8;
	// empty when none.
	ColSuspendedReason = "r"
	// ColSuspendedBy (suspensions, s) is the moderator who suspended, a
	// user id, 8 bytes BE; absent when unknown (the command line).
	ColSuspendedBy = "b"
)

// SuspensionKey is the rowkey of user uid's weibo:suspensions row, the
// same bytes as UserKey: salt(uid)(1) | uid(8).
func SuspensionKey(uid UserID) []byte { return idKey(uid) }

// DecodeSuspensionKey decodes a weibo:suspensions rowkey; ok is false for
// a malformed key.
func DecodeSuspensionKey(k []byte) (uid UserID, ok bool) {
	id, ok := decodeIDKey(k)
	return UserID(id), ok
}

// SuspensionQualifiers are every qualifier a suspension row's change
// writes or deletes (an unsuspend deletes these, not the family, so as
// not to delete another change's audit proof cell).
var SuspensionQualifiers = []string{ColSuspendedSince, ColSuspendedUntil, ColSuspendedReason, ColSuspendedBy}

// SuspensionCells is a decoded weibo:suspensions row.
type SuspensionCells struct {
	// Since and Until are ms since the epoch; Until 0: until lifted.
	Since, Until int64
	// Reason is "" when none was given.
	Reason string
	// By is the moderator, 0 when unknown.
	By UserID
}

// EncodeSuspension returns the cells of a suspension row (family
// FamSuspension): every qualifier, an absent value written empty, so
// that one Put replaces a suspension whole.
func EncodeSuspension(c SuspensionCells) hbase.Values {
	cells := map[string][]byte{ColSuspendedSince: EncodeMillis(c.Since), ColSuspendedUntil: {}, ColSuspendedReason: []byte(c.Reason), ColSuspendedBy: {}}
	if c.Until != 0 {
		cells[ColSuspendedUntil] = EncodeMillis(c.Until)
	}
	if c.By != 0 {
		cells[ColSuspendedBy] = EncodeID(c.By)
	}
	return hbase.Values{FamSuspension: cells}
}

// DecodeSuspension decodes a weibo:suspensions row. ok is false when the
// row holds no suspension (no ColSuspendedSince) or a malformed one: a
// time or id cell not 8 bytes, or an until not after since.
func DecodeSuspension(r *hbase.Result) (c SuspensionCells, ok bool) {
	since := r.Value(FamSuspension, ColSuspendedSince)
	if len(since) != 8 {
		return c, false
	}
	c.Since = int64(DecodeU64(since))
	if v := r.Value(FamSuspension, ColSuspendedUntil); len(v) != 0 {
		if len(v) != 8 {
			return c, false
		}
		c.Until = int64(DecodeU64(v))
		if c.Until <= c.Since {
			return c, false
		}
	}
	c.Reason = string(r.Value(FamSuspension, ColSuspendedReason))
	if v := r.Value(FamSuspension, ColSuspendedBy); len(v) != 0 {
		if len(v) != 8 {
			return c, false
		}
		c.By = UserID(DecodeU64(v))
	}
	return c, true
}
