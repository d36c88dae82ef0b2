package tables

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"unicode/utf8"
)

// --- weibo:safety ------------------------------------------------------------
//
// One row per user that blocks, mutes, filters or is blocked: the viewer's
// whole safety set, read with one Get (or one more Get in a page's batched
// read), so that a page costs the same store calls with blocks, mutes and
// filters as without. The sets the viewer controls are packed, each in one
// cell (family FamSafetySet), so that a page decodes three cells however
// many entries they hold; the users who block the viewer are one cell each
// (family FamSafetyBlockedBy), written by those users' blocks.

// Safety holds one row per user. Rowkey SafetyKey.
const Safety = Namespace + ":safety"

// Families and qualifiers of weibo:safety.
const (
	// FamSafetySet is family s: the sets the row's user controls, each
	// packed in one cell.
	FamSafetySet = "s"
	// ColBlocks (safety, s) is the users the row's user blocks: entries of
	// BlockEntryLen bytes, uid(8) | at(8) (ms the block was made), sorted
	// by uid. The authority of the block relation (a CheckAndPut of the
	// whole cell). Absent means none.
	ColBlocks = "b"
	// ColMutes (safety, s) is the users the row's user mutes: entries of
	// MuteEntryLen bytes, uid(8) | at(8) | expires(8) (ms; 0: until
	// unmuted) | flags(1) (MuteNotifications), sorted by uid. An entry
	// whose expires has passed is no mute (reads skip it, the next write
	// of the cell drops it).
	ColMutes = "m"
	// ColFilters (safety, s) is the row's user's keyword filters, in
	// creation order: per filter id(8) | at(8) | expires(8) (ms; 0: never)
	// | action(1) | contexts(1) (FilterHome…, a bit set) | flags(1)
	// (FilterWholeWord) | len(1) | phrase (len bytes, UTF-8).
	ColFilters = "f"
	// FamSafetyBlockedBy is family r: one cell per user who blocks the
	// row's user, qualifier uid(8), value at(8) — the dependents of their
	// blocks.
	FamSafetyBlockedBy = "r"
	// FamSafetyVersion is family v, of one cell: ColSafetyVersion.
	FamSafetyVersion = "v"
	// ColSafetyVersion (safety, v) is the row's version: 8 random bytes,
	// written anew in the same atomic mutation as every change of the
	// row's other cells, so that a reader who remembers the row's Set by
	// its version reads this one cell to know it is still the row's. A row
	// without it holds nothing.
	ColSafetyVersion = "v"
)

// Entry sizes of the packed cells.
const (
	BlockEntryLen = 16
	MuteEntryLen  = 25
)

// MuteNotifications is the flag of a mute that also hides the muted
// user's notifications.
const MuteNotifications = 1

// Filter actions (the action byte).
const (
	FilterHide byte = 1
	FilterWarn byte = 2
)

// Filter contexts (bits of the contexts byte).
const (
	FilterHome          byte = 1 << 0
	FilterNotifications byte = 1 << 1
	FilterTopic         byte = 1 << 2
	FilterComments      byte = 1 << 3
)

// FilterWholeWord is the flag of a filter matched on Latin word
// boundaries only.
const FilterWholeWord byte = 1

// PendingBlock is a block or unblock: owner the blocker, other the user
// blocked. Its counter is the blocker's ColBlockCount.
const PendingBlock PendingKind = 'k'

// Qualifiers of the block counter on the users row (family FamCount).
const (
	// ColBlockCount (users, c) is the number of users the user blocks
	// (the entries of their ColBlocks).
	ColBlockCount = "bk"
	// ColBlockCountSeq (users, c) is ColBlockCount's operation sequence.
	ColBlockCountSeq = "sbk"
)

// SafetyKey is the rowkey of a weibo:safety row: salt(uid)(1) | uid(8).
func SafetyKey(uid UserID) []byte { return idKey(uid) }

// DecodeSafetyKey decodes a weibo:safety rowkey.
func DecodeSafetyKey(k []byte) (UserID, bool) {
	id, ok := decodeIDKey(k)
	return UserID(id), ok
}

// BlockedByQualifier is the qualifier (family FamSafetyBlockedBy) of
// blocker's cell on the row of the user they block.
func BlockedByQualifier(blocker UserID) string { return string(U64(uint64(blocker))) }

// DecodeBlockedByQualifier decodes a FamSafetyBlockedBy qualifier.
func DecodeBlockedByQualifier(q string) (UserID, bool) {
	if len(q) != 8 {
		return 0, false
	}
	return UserID(binary.BigEndian.Uint64([]byte(q))), true
}

// BlockEntry is one entry of a ColBlocks cell.
type BlockEntry struct {
	UID UserID
	At  int64 // ms
}

// MuteEntry is one entry of a ColMutes cell.
type MuteEntry struct {
	UID           UserID
	At            int64 // ms
	Expires       int64 // ms; 0: until unmuted
	Notifications bool  // the mute hides the user's notifications too
}

// FilterEntry is one filter of a ColFilters cell.
type FilterEntry struct {
	ID        uint64
	At        int64 // ms
	Expires   int64 // ms; 0: never
	Action    byte  // FilterHide or FilterWarn
	Contexts  byte  // FilterHome | …
	WholeWord bool
	Phrase    string
}

// Blocks is a ColBlocks cell: entries sorted by uid.
type Blocks []byte

// Len is the number of entries.
func (b Blocks) Len() int { return len(b) / BlockEntryLen }

// At returns entry i.
func (b Blocks) At(i int) BlockEntry {
	e := b[i*BlockEntryLen:]
	return BlockEntry{UID: UserID(binary.BigEndian.Uint64(e)), At: int64(binary.BigEndian.Uint64(e[8:]))}
}

// search returns the index of uid's entry in a packed cell of entries of
// size bytes sorted by their leading uid, or where it would go.
func search(cell []byte, size int, uid UserID) (int, bool) {
	lo, hi := 0, len(cell)/size
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if UserID(binary.BigEndian.Uint64(cell[m*size:])) < uid {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(cell)/size && UserID(binary.BigEndian.Uint64(cell[lo*size:])) == uid
}

// Find returns uid's entry.
func (b Blocks) Find(uid UserID) (BlockEntry, bool) {
	i, ok := search(b, BlockEntryLen, uid)
	if !ok {
		return BlockEntry{}, false
	}
	return b.At(i), true
}

// With returns a new cell with e added (or its time replaced).
func (b Blocks) With(e BlockEntry) Blocks {
	i, ok := search(b, BlockEntryLen, e.UID)
	var ent [BlockEntryLen]byte
	binary.BigEndian.PutUint64(ent[:], uint64(e.UID))
	binary.BigEndian.PutUint64(ent[8:], uint64(e.At))
	out := slices.Clone([]byte(b))
	if ok {
		copy(out[i*BlockEntryLen:], ent[:])
		return out
	}
	return slices.Insert(out, i*BlockEntryLen, ent[:]...)
}

// Without returns a new cell without uid's entry.
func (b Blocks) Without(uid UserID) Blocks {
	i, ok := search(b, BlockEntryLen, uid)
	if !ok {
		return slices.Clone(b)
	}
	return slices.Delete(slices.Clone([]byte(b)), i*BlockEntryLen, (i+1)*BlockEntryLen)
}

// Valid reports whether the cell is well formed (whole entries, uids
// strictly ascending).
func (b Blocks) Valid() bool { return validPacked(b, BlockEntryLen) }

func validPacked(cell []byte, size int) bool {
	if len(cell)%size != 0 {
		return false
	}
	for i := size; i < len(cell); i += size {
		if binary.BigEndian.Uint64(cell[i-size:]) >= binary.BigEndian.Uint64(cell[i:]) {
			return false
		}
	}
	return true
}

// Mutes is a ColMutes cell: entries sorted by uid.
type Mutes []byte

// Len is the number of entries (live or not).
func (m Mutes) Len() int { return len(m) / MuteEntryLen }

// At returns entry i.
func (m Mutes) At(i int) MuteEntry {
	e := m[i*MuteEntryLen:]
	return MuteEntry{UID: UserID(binary.BigEndian.Uint64(e)), At: int64(binary.BigEndian.Uint64(e[8:])),
		Expires: int64(binary.BigEndian.Uint64(e[16:])), Notifications: e[24]&MuteNotifications != 0}
}

// Find returns uid's entry, live or not.
func (m Mutes) Find(uid UserID) (MuteEntry, bool) {
	i, ok := search(m, MuteEntryLen, uid)
	if !ok {
		return MuteEntry{}, false
	}
	return m.At(i), true
}

// Live reports whether e is a mute at now (ms).
func (e MuteEntry) Live(now int64) bool { return e.Expires == 0 || e.Expires > now }

// Put returns a new cell holding the live entries of m at now (ms) and e
// (replacing uid's entry), sorted by uid.
func (m Mutes) Put(e MuteEntry, now int64) Mutes {
	out := m.Prune(now)
	i, ok := search(out, MuteEntryLen, e.UID)
	var ent [MuteEntryLen]byte
	binary.BigEndian.PutUint64(ent[:], uint64(e.UID))
	binary.BigEndian.PutUint64(ent[8:], uint64(e.At))
	binary.BigEndian.PutUint64(ent[16:], uint64(e.Expires))
	if e.Notifications {
		ent[24] = MuteNotifications
	}
	if ok {
		copy(out[i*MuteEntryLen:], ent[:])
		return out
	}
	return slices.Insert([]byte(out), i*MuteEntryLen, ent[:]...)
}

// Prune returns a new cell holding only the entries live at now (ms).
func (m Mutes) Prune(now int64) Mutes {
	out := make([]byte, 0, len(m))
	for i := range m.Len() {
		if m.At(i).Live(now) {
			out = append(out, m[i*MuteEntryLen:(i+1)*MuteEntryLen]...)
		}
	}
	return out
}

// Without returns a new cell of the entries live at now without uid's.
func (m Mutes) Without(uid UserID, now int64) Mutes {
	out := m.Prune(now)
	if i, ok := search(out, MuteEntryLen, uid); ok {
		return slices.Delete([]byte(out), i*MuteEntryLen, (i+1)*MuteEntryLen)
	}
	return out
}

// LiveLen is the number of entries live at now (ms).
func (m Mutes) LiveLen(now int64) int {
	n := 0
	for i := range m.Len() {
		if m.At(i).Live(now) {
			n++
		}
	}
	return n
}

// Valid reports whether the cell is well formed.
func (m Mutes) Valid() bool { return validPacked(m, MuteEntryLen) }

// filterHead is the fixed part of a ColFilters entry.
const filterHead = 8 + 8 + 8 + 1 + 1 + 1 + 1

// AppendFilter appends f's entry to a ColFilters cell. The phrase must be
// at most 255 bytes.
func AppendFilter(dst []byte, f FilterEntry) []byte {
	dst = binary.BigEndian.AppendUint64(dst, f.ID)
	dst = binary.BigEndian.AppendUint64(dst, uint64(f.At))
	dst = binary.BigEndian.AppendUint64(dst, uint64(f.Expires))
	var flags byte
	if f.WholeWord {
		flags = FilterWholeWord
	}
	dst = append(dst, f.Action, f.Contexts, flags, byte(len(f.Phrase)))
	return append(dst, f.Phrase...)
}

// DecodeFilters decodes a ColFilters cell; ok is false when it is
// malformed (the entries before the fault are returned).
func DecodeFilters(cell []byte) ([]FilterEntry, bool) {
	var out []FilterEntry
	for len(cell) > 0 {
		if len(cell) < filterHead {
			return out, false
		}
		n := int(cell[filterHead-1])
		if len(cell) < filterHead+n || !utf8.Valid(cell[filterHead:filterHead+n]) {
			return out, false
		}
		out = append(out, FilterEntry{
			ID: binary.BigEndian.Uint64(cell), At: int64(binary.BigEndian.Uint64(cell[8:])), Expires: int64(binary.BigEndian.Uint64(cell[16:])),
			Action: cell[24], Contexts: cell[25], WholeWord: cell[26]&FilterWholeWord != 0, Phrase: string(cell[filterHead : filterHead+n]),
		})
		cell = cell[filterHead+n:]
	}
	return out, true
}

// EncodeFilters encodes filters as a ColFilters cell.
func EncodeFilters(fs []FilterEntry) []byte {
	var out []byte
	for _, f := range fs {
		out = AppendFilter(out, f)
	}
	return out
}

// NewSafetyVersion returns a fresh ColSafetyVersion value: 8 random bytes.
func NewSafetyVersion() []byte { return U64(rand.Uint64()) }
