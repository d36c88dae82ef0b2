package tables

// --- the count of all users ---------------------------------------------------

// UserCountKey is the rowkey of the one row of weibo:users that keeps the
// number of users (Query.users' totalCount): family FamCount, the counter
// ColUserCount and its operation sequence ColUserCountSeq, both 8 bytes
// BE written by Increment. 0xff sorts after every salted rowkey (beside
// SeqKey and LargeKey), and DecodeUserKey refuses it.
var UserCountKey = []byte("\xffusers")

// Qualifiers of row UserCountKey (family FamCount).
const (
	// ColUserCount is the number of users: the weibo:usernames rows whose
	// users row holds that username.
	ColUserCount = "uc"
	// ColUserCountSeq is ColUserCount's operation sequence: Incremented by
	// every registration before its usernames row is written.
	ColUserCountSeq = "suc"
)

// PendingRegister is a registration (a counted write of the user count):
// owner is the new user's id, other 0. Its counter is ColUserCount of row
// UserCountKey.
const PendingRegister PendingKind = 'a'
