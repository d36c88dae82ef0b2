package tables

import (
	"encoding/binary"

	"github.com/weibohbase/gateway/hbase"
)

// Cell values. Every value the domain writes or reads is encoded and
// decoded here, beside the rowkeys, so that no business code handles raw
// cell bytes; docs/schema.md documents each byte. Numbers are 8 bytes
// big-endian (U64: HBase's counter and Bytes.toBytes(long) format) unless
// said otherwise; times are ms since the epoch; a missing or malformed cell
// decodes as 0.

// EncodeMillis encodes a time in ms since the epoch (ColCreated,
// ColPendingAt, ColOutboxAt, ColRelSet, ColLinkAt, ...).
func EncodeMillis(ms int64) []byte { return U64(uint64(ms)) }

// EncodeCounter encodes a counter's value (family FamCount).
func EncodeCounter(n int64) []byte { return U64(uint64(n)) }

// CounterValue decodes the counter qual of r's family FamCount.
func CounterValue(r *hbase.Result, qual string) int64 { return CounterIn(r, FamCount, qual) }

// CounterIn decodes the counter qual of r's family fam (a counter kept
// beside other cells, like a department's ColDeptMemberCount).
func CounterIn(r *hbase.Result, fam, qual string) int64 { return int64(DecodeU64(r.Value(fam, qual))) }

// CreatedAt decodes ColCreated of r's family FamInfo (users, roles,
// departments rows): the creation time, ms.
func CreatedAt(r *hbase.Result) int64 { return int64(DecodeU64(r.Value(FamInfo, ColCreated))) }

// EncodeID encodes an id of any type as a cell value (ColUID, ColRoleID,
// ColUserDept, ColParent).
func EncodeID[T ~uint64](id T) []byte { return U64(uint64(id)) }

// UsernameUser decodes a weibo:usernames row's ColUID: the user it names,
// 0 when absent.
func UsernameUser(r *hbase.Result) UserID { return UserID(DecodeU64(r.Value(FamName, ColUID))) }

// RoleNameRole decodes a weibo:rolenames row's ColRoleID: the role it
// names, 0 when absent.
func RoleNameRole(r *hbase.Result) RoleID { return RoleID(DecodeU64(r.Value(FamName, ColRoleID))) }

// DecodeRoleID decodes a ColRoleID cell value.
func DecodeRoleID(v []byte) RoleID { return RoleID(DecodeU64(v)) }

// UserDepartment decodes a users row's ColUserDept (family FamOrg): the
// user's department, 0 (RootDept) when absent.
func UserDepartment(r *hbase.Result) DeptID { return DeptID(DecodeU64(r.Value(FamOrg, ColUserDept))) }

// DecodeDeptID decodes a ColUserDept or ColParent cell value.
func DecodeDeptID(v []byte) DeptID { return DeptID(DecodeU64(v)) }

// DepartmentParent decodes a department row's ColParent (family FamInfo).
func DepartmentParent(r *hbase.Result) DeptID { return DeptID(DecodeU64(r.Value(FamInfo, ColParent))) }

// PendingAt decodes a weibo:pending row's ColPendingAt: when its write
// started, ms.
func PendingAt(r *hbase.Result) int64 { return int64(DecodeU64(r.Value(FamPending, ColPendingAt))) }

// PendingFanouts decodes a weibo:pending row's ColPendingFanouts (an
// unfollow's row only): the time before which fan-outs it raced were
// requested, ms; ok is false when absent.
func PendingFanouts(r *hbase.Result) (ms int64, ok bool) {
	v := r.Value(FamPending, ColPendingFanouts)
	return int64(DecodeU64(v)), v != nil
}

// PendingCounted reports whether a weibo:pending row carries
// ColPendingCounted: its write's counters are exact.
func PendingCounted(r *hbase.Result) bool { return r.Value(FamPending, ColPendingCounted) != nil }

// PendingExtra returns a weibo:pending row's ColPendingExtra, nil when absent.
func PendingExtra(r *hbase.Result) []byte { return r.Value(FamPending, ColPendingExtra) }

// OutboxAt decodes a weibo:outbox row's ColOutboxAt: when its fan-out was
// requested, ms.
func OutboxAt(r *hbase.Result) int64 { return int64(DecodeU64(r.Value(FamOutbox, ColOutboxAt))) }

// OutboxCounted reports whether a weibo:outbox row carries
// ColOutboxCounted: its publish has counted.
func OutboxCounted(r *hbase.Result) bool { return r.Value(FamOutbox, ColOutboxCounted) != nil }

// EncodePath encodes a department's ancestors, top level first (ColPath).
func EncodePath(ancestors []DeptID) []byte {
	b := make([]byte, 0, 8*len(ancestors))
	for _, a := range ancestors {
		b = binary.BigEndian.AppendUint64(b, uint64(a))
	}
	return b
}

// DepartmentPath decodes a department row's ColPath; ok is false when the
// cell is missing or malformed (a department made before paths were kept).
func DepartmentPath(r *hbase.Result) (ancestors []DeptID, ok bool) {
	v := r.Value(FamInfo, ColPath)
	if v == nil || len(v)%8 != 0 {
		return nil, false
	}
	out := make([]DeptID, len(v)/8)
	for i := range out {
		out[i] = DeptID(binary.BigEndian.Uint64(v[8*i:]))
	}
	return out, true
}

// TokenGeneration decodes a users row's ColTokenGen (family FamInfo): the
// user's token generation, 0 when absent.
func TokenGeneration(r *hbase.Result) int64 { return CounterIn(r, FamInfo, ColTokenGen) }

// EncodeTokenGeneration encodes a token generation (ColTokenGen), as an
// Increment writes it.
func EncodeTokenGeneration(gen int64) []byte { return U64(uint64(gen)) }

// EncodeTokenGenerationCheck is the value a CheckAndPut on ColTokenGen
// expects for generation gen: nil (the cell absent) for 0, which is how a
// users row without the cell reads.
func EncodeTokenGenerationCheck(gen int64) []byte {
	if gen == 0 {
		return nil
	}
	return EncodeTokenGeneration(gen)
}

// DisplayName decodes a users row's ColDisplayName; "" when absent.
func DisplayName(r *hbase.Result) string { return string(r.Value(FamInfo, ColDisplayName)) }

// Bio decodes a users row's ColBio; "" when absent.
func Bio(r *hbase.Result) string { return string(r.Value(FamInfo, ColBio)) }

// EndedTokenQualifier is the qualifier of a token's cell in family
// FamEndedTokens: the token id's 16 bytes.
func EndedTokenQualifier(id TokenID) string { return string(id[:]) }

// EndedTokenTimestamp is the timestamp (ms) of the FamEndedTokens cell of a
// token expiring at expires (ms): expires - EndedTokenTTL, so that the
// family's TTL drops the cell exactly when the token expires.
func EndedTokenTimestamp(expires int64) int64 { return expires - EndedTokenTTL.Milliseconds() }

// EndedTokens decodes a users row's family FamEndedTokens: the ids of the
// tokens ended on their own that have not expired (qualifiers of another
// length are skipped).
func EndedTokens(r *hbase.Result) []TokenID {
	cells := r.Family(FamEndedTokens)
	out := make([]TokenID, 0, len(cells))
	for _, c := range cells {
		if len(c.Qualifier) == TokenIDLen {
			out = append(out, TokenID([]byte(c.Qualifier)))
		}
	}
	return out
}
