// Package tables is the byte layout of the weibo tables, in one place:
// table names, column families and qualifiers, the table specs that
// `gateway migrate` creates (Specs, Migrate), every rowkey codec with its
// named decoder, the one id-sequence rowkey, the value codecs, and the id
// types (UserID, PostID, RoleID, DeptID) whose bytes the rowkeys hold —
// with their parsers and their GraphQL ID form (ids.go, ids_gql.go).
// docs/schema.md is the reference for every byte; this package is its
// implementation, and nothing outside it computes a rowkey or reads one at
// an offset — except the admin audit log: weibo:audit's name, spec and
// family are here, but its rowkeys, cells and event ids are package
// weibo/audit's (rows.go), as no other table or id shares them.
//
// It imports only package hbase (for TableSpec and the store Migrate runs
// on), package weibo/topic (the topic rule, for topic ids) and the
// standard library, so the domain (weibo), the offline tools
// (fsck, seed) and the tests share it without importing each other.
//
// Choices made here:
//   - Names do not repeat the package: the users table is tables.Users,
//     its rowkey tables.UserKey, its decoder tables.DecodeUserKey.
//   - Every decoder checks the whole key: its length, the marker byte of
//     tall rows ('a', 'f', 'm', 'c') and that the salt byte is the salt of
//     the owner's id. A key that fails is reported with ok == false rather
//     than decoded into a wrong id (the sequence row "\xffseq", for example,
//     is never a user, role or department).
//   - Rowkeys that a bulk importer writes by the million also have Append*
//     forms that write into a caller's buffer, so the importer allocates
//     nothing per row and still computes no offset itself.
//   - The id types' methods live here with the types, including
//     MarshalGQL/UnmarshalGQL (gqlgen binds them as the ID scalar; only the
//     standard library is needed): package weibo aliases the types, and Go
//     allows methods only in the package that defines a type.
//   - Only byte layout lives here. What a row means (which side of a pair
//     is the authority, when a row is stale) is the domain's, in the
//     package of each capability (weibo/feed, weibo/follow, weibo/like, …,
//     docs/modules.md) and weibo/counted.
package tables

import (
	"context"
	"time"

	"github.com/weibohbase/gateway/hbase"
)

// Namespace is the HBase namespace of every table (seed 004: "namespace name:weibo").
const Namespace = "weibo"

// Full table names (namespace:table), as every request names them.
const (
	// Users holds one row per user: profile, password and token generation
	// (family i), counters (c), roles and department (o), and ended tokens
	// (t). Rowkey UserKey; plus the row SeqKey.
	Users = Namespace + ":users"
	// Usernames is the unique-username index. Rowkey UsernameKey.
	Usernames = Namespace + ":usernames"
	// Relations holds one row per direction of a follow. Rowkey RelationKey.
	Relations = Namespace + ":relations"
	// Content holds one row per post. Rowkey ContentKey.
	Content = Namespace + ":content"
	// Inbox holds one row per home-timeline entry. Rowkey InboxKey.
	Inbox = Namespace + ":inbox"
	// Outbox holds one row per fan-out not known to be done. Rowkey OutboxKey.
	Outbox = Namespace + ":outbox"
	// Roles holds role rows (RoleKey), member rows (RoleMemberKey) and the
	// role id sequence (SeqKey).
	Roles = Namespace + ":roles"
	// RoleNames is the unique-role-name index. Rowkey RoleNameKey.
	RoleNames = Namespace + ":rolenames"
	// Departments holds department rows (DeptKey), child rows
	// (DeptChildKey), member rows (DeptMemberKey) and the department id
	// sequence (SeqKey).
	Departments = Namespace + ":departments"
	// Pending holds one row per write in flight that changes a counter
	// together with a two-sided pair (a follow or unfollow, an assignment
	// or revocation of a role, a like or unlike): written before the write's first row and
	// deleted after its last, so that a row older than the repair grace is
	// the trace of a write that died. Rowkey PendingKey.
	Pending = Namespace + ":pending"
	// Audit is the admin audit log: one event row per event (the
	// authority) and its index rows by actor, target and action, all
	// newest first. Its rowkeys and cells are package weibo/audit's
	// (audit.EventKey, audit.IndexKeys, audit.Values).
	Audit = Namespace + ":audit"
)

// Column families and qualifiers. Names are one or two bytes: HBase stores
// the family and qualifier with every cell (seed 003, points 9 and 10).
const (
	// FamInfo is family i of weibo:users (profile), weibo:roles (role and
	// member rows) and weibo:departments (every row).
	FamInfo = "i"
	// ColUsername (users, i) is the username as registered, UTF-8.
	ColUsername = "un"
	// ColPassword (users, i) is the bcrypt hash of the password.
	ColPassword = "pw"
	// ColCreated (users, roles and departments, i) is the creation time,
	// ms since the epoch, 8 bytes BE.
	ColCreated = "ct"
	// ColTokenGen (users, i) is the user's token generation, 8 bytes BE (a
	// counter: Increment, or written with the password in one Put): a
	// token carries the generation it was issued at and is good only while
	// the row holds it. Absent means 0.
	ColTokenGen = "tg"
	// ColDisplayName (users, i) is the display name, UTF-8; absent when
	// not set.
	ColDisplayName = "dn"
	// ColBio (users, i) is the user's bio, UTF-8; absent when not set.
	ColBio = "bi"
	// FamCount is family c of weibo:users and weibo:roles: counters
	// written by HBase Increment (8 bytes BE).
	FamCount = "c"
	// ColFollows (users, c) is the number of users the user follows.
	ColFollows = "fo"
	// ColFans (users, c) is the user's number of fans.
	ColFans = "fa"
	// ColPosts (users, c) is the user's number of posts.
	ColPosts = "po"
	// ColFollowsSeq, ColFansSeq and ColPostsSeq (users, c) are the
	// operation sequences of ColFollows, ColFans and ColPosts: Incremented
	// by every write that may change the counter, before it changes the
	// rows the counter counts. A recount's Put is conditional on the
	// sequence it read before counting (CheckAndPut), so it never
	// overwrites a change it did not count.
	ColFollowsSeq = "sfo"
	ColFansSeq    = "sfa"
	ColPostsSeq   = "spo"
	// ColSeq is the id sequence in row SeqKey: family c of weibo:users and
	// weibo:roles, family i of weibo:departments.
	ColSeq = "n"

	// FamName is family i of the unique-name indexes weibo:usernames and
	// weibo:rolenames.
	FamName = "i"
	// ColUID (usernames, i) is the user's id, 8 bytes BE.
	ColUID = "id"

	// FamRel is family r of weibo:relations.
	FamRel = "r"
	// ColRelSet (relations, r) is the time the follow was made, ms, 8 bytes BE.
	ColRelSet = "t"

	// FamPost is family c of weibo:content.
	FamPost = "c"
	// ColText (content, c) is the post's text, UTF-8.
	ColText = "t"
	// ColAuthorName (content, c) is the author's username (denormalized;
	// usernames never change).
	ColAuthorName = "u"

	// FamInbox is family c of weibo:inbox.
	FamInbox = "c"
	// ColInboxAt (inbox, c) is an empty marker: the rowkey says everything.
	ColInboxAt = "p"

	// FamOutbox is family o of weibo:outbox.
	FamOutbox = "o"
	// ColOutboxAt (outbox, o) is the time the fan-out was requested, ms, 8 bytes BE.
	ColOutboxAt = "t"
	// ColOutboxCounted (outbox, o) is written (empty) once the publish has
	// Incremented the author's post counter. A row without it and older
	// than the repair grace is a publish that died before counting.
	ColOutboxCounted = "c"
	// ColOutboxLease (outbox, o) is the fan-out's lease: which gateway
	// instance works the post, and until when (EncodeLease). Absent until a
	// worker takes the post.
	ColOutboxLease = "l"

	// FamEndedTokens is family t of weibo:users: one cell per token ended
	// on its own (logout) and not yet expired. Qualifier: the token's id
	// (EndedTokenQualifier, 16 bytes); value: its expiry (EncodeMillis);
	// timestamp: EndedTokenTimestamp of the expiry, so that the family's
	// TTL (EndedTokenTTL) removes the cell when the token expires.
	FamEndedTokens = "t"

	// FamOrg is family o of weibo:users: the user's place in the
	// organization (the seed's psn cf2). Qualifier RoleQualifier(rid) holds
	// the priority of the user's role rid (EncodePriority); qualifier
	// ColUserDept the user's department.
	FamOrg = "o"
	// ColUserDept (users, o) is the user's department id, 8 bytes BE.
	ColUserDept = "dp"

	// ColRoleName (roles, i, role rows) is the role's name as given, UTF-8.
	ColRoleName = "n"
	// ColMemberCount (roles, c, role rows) is the number of members (Increment).
	ColMemberCount = "m"
	// ColMemberSeq (roles, c, role rows) is the operation sequence of
	// ColMemberCount (see ColFollowsSeq).
	ColMemberSeq = "sm"
	// ColPriority (roles, i, member rows) is the assignment's priority, a
	// copy of the user's RoleQualifier cell (EncodePriority).
	ColPriority = "p"

	// ColRoleID (rolenames, i) is the role's id, 8 bytes BE.
	ColRoleID = "id"

	// ColDeptName (departments, i, department rows) is the name, UTF-8.
	ColDeptName = "n"
	// ColParent (departments, i, department rows) is the parent's id,
	// 8 bytes BE; RootDept (0) for a top-level department (the seed's up).
	ColParent = "up"
	// ColDeptMemberCount (departments, i, department rows) is the number
	// of users directly in the department (Increment), memberCount.
	ColDeptMemberCount = "m"
	// ColDeptMemberSeq (departments, i, department rows) is the operation
	// sequence of ColDeptMemberCount (see ColFollowsSeq).
	ColDeptMemberSeq = "sm"
	// ColPath (departments, i, department rows) is the department's
	// ancestors, top level first, 8 bytes BE each (empty at the top
	// level): a copy of the parent chain that authorization reads with one
	// batched read and verifies against the rows it names.
	ColPath = "pa"
	// ColLinkAt (departments, i, child, member and manager rows) is the time the
	// link was made, ms, 8 bytes BE.
	ColLinkAt = "t"

	// FamPending is family p of weibo:pending.
	FamPending = "p"
	// ColPendingAt (pending, p) is the time the write started, ms since
	// the epoch (the writing process's clock), 8 bytes BE.
	ColPendingAt = "t"
	// ColPendingFanouts (pending, p), on an unfollow's row only, is a time
	// in ms: the row must stay until no fan-out of the followee requested
	// before that time is left in weibo:outbox (a fan-out that read the
	// fans list before the unfollow and died part-way may have written the
	// followee's post into the former follower's inbox after the unfollow
	// cleaned it).
	ColPendingFanouts = "f"
	// ColPendingCounted (pending, p), written (empty) with
	// ColPendingFanouts when the write had finished everything else, its
	// counters included: the repairer then only settles the pair again and
	// recounts nothing.
	ColPendingCounted = "c"
	// ColPendingExtra (pending, p) is what a relation's marker carries
	// beyond its owner and other (8 bytes each in the rowkey): the rest of
	// its pair, in the relation's own encoding (a like's post, for one).
	ColPendingExtra = "x"

	// FamAudit is family e of weibo:audit. Its qualifiers are package
	// weibo/audit's (audit.ColActor and the others).
	FamAudit = "e"
)

// OutboxTTL is how long an outbox row lives at most (the table's TTL): a
// safety net, since a fan-out normally deletes its row within seconds.
const OutboxTTL = 7 * 24 * time.Hour

// EndedTokenTTL is the TTL of family FamEndedTokens. A cell's timestamp
// is its token's expiry minus EndedTokenTTL, so it expires with the token
// whatever the token's lifetime; tokens living at most MaxTokenTTL keep
// those timestamps in the past.
const EndedTokenTTL = 366 * 24 * time.Hour

// MaxTokenTTL is the longest token lifetime the ended-token records are
// designed for (see EndedTokenTTL).
const MaxTokenTTL = 365 * 24 * time.Hour

// pointBlock is the HFile block size of the families read mostly by
// rowkey (a Get, a page's GetMany): a Get reads and decodes one block, so
// smaller blocks than HBase's 64 KiB cost less per Get; the scanned
// families keep 64 KiB.
const pointBlock = 16 << 10

// Specs returns the specs of every weibo table (names without the
// namespace), as `gateway migrate` creates them. docs/schema.md explains
// each choice.
func Specs() []hbase.TableSpec {
	split := SaltSplitKeys()
	return []hbase.TableSpec{
		{Name: "users", SplitKeys: split, Families: []hbase.FamilySpec{
			{Name: FamInfo, MaxVersions: 1, Encoding: hbase.EncodingRowIndex, BlockSize: pointBlock, Bloom: hbase.BloomRow, InMemory: true},
			{Name: FamCount, MaxVersions: 1, Encoding: hbase.EncodingRowIndex, BlockSize: pointBlock, Bloom: hbase.BloomRow},
			{Name: FamOrg, MaxVersions: 1, Encoding: hbase.EncodingRowIndex, BlockSize: pointBlock, Bloom: hbase.BloomRow},
			// Read with family i by every token check; the bloom filter
			// skips the files without the row (most users end no token).
			{Name: FamEndedTokens, MaxVersions: 1, Encoding: hbase.EncodingRowIndex, BlockSize: pointBlock, Bloom: hbase.BloomRow, TTL: EndedTokenTTL},
		}},
		{Name: "usernames", Families: []hbase.FamilySpec{
			{Name: FamName, MaxVersions: 1, Encoding: hbase.EncodingRowIndex, BlockSize: pointBlock, Bloom: hbase.BloomRow, InMemory: true},
		}},
		{Name: "relations", SplitKeys: split, Families: []hbase.FamilySpec{
			{Name: FamRel, MaxVersions: 1, Encoding: hbase.EncodingRowIndex, BlockSize: pointBlock, Bloom: hbase.BloomRow},
		}},
		{Name: "content", SplitKeys: split, Families: []hbase.FamilySpec{
			{Name: FamPost, MaxVersions: 1, Encoding: hbase.EncodingRowIndex, BlockSize: pointBlock, Bloom: hbase.BloomRow},
		}},
		// Salted by the post's author, like the post (comments.go).
		{Name: "comments", SplitKeys: split, Families: []hbase.FamilySpec{
			{Name: FamComment, MaxVersions: 1, Encoding: hbase.EncodingFastDiff, Bloom: hbase.BloomRow},
		}},
		{Name: "inbox", SplitKeys: split, Families: []hbase.FamilySpec{
			{Name: FamInbox, MaxVersions: 1, Encoding: hbase.EncodingFastDiff, Bloom: hbase.BloomNone},
		}},
		{Name: "outbox", SplitKeys: split, Families: []hbase.FamilySpec{
			{Name: FamOutbox, MaxVersions: 1, Encoding: hbase.EncodingFastDiff, Bloom: hbase.BloomNone, TTL: OutboxTTL},
		}},
		{Name: "roles", SplitKeys: split, Families: []hbase.FamilySpec{
			{Name: FamInfo, MaxVersions: 1, Encoding: hbase.EncodingRowIndex, BlockSize: pointBlock, Bloom: hbase.BloomRow, InMemory: true},
			{Name: FamCount, MaxVersions: 1, Encoding: hbase.EncodingRowIndex, BlockSize: pointBlock, Bloom: hbase.BloomRow},
		}},
		{Name: "rolenames", Families: []hbase.FamilySpec{
			{Name: FamName, MaxVersions: 1, Encoding: hbase.EncodingRowIndex, BlockSize: pointBlock, Bloom: hbase.BloomRow, InMemory: true},
		}},
		{Name: "departments", SplitKeys: split, Families: []hbase.FamilySpec{
			{Name: FamInfo, MaxVersions: 1, Encoding: hbase.EncodingRowIndex, BlockSize: pointBlock, Bloom: hbase.BloomRow, InMemory: true},
		}},
		{Name: "pending", SplitKeys: split, Families: []hbase.FamilySpec{
			{Name: FamPending, MaxVersions: 1, Encoding: hbase.EncodingFastDiff, Bloom: hbase.BloomNone},
		}},
		// Not salted and not pre-split: admin writes are rare, and the
		// listing of every event is one contiguous range.
		{Name: "audit", Families: []hbase.FamilySpec{
			{Name: FamAudit, MaxVersions: 1, Encoding: hbase.EncodingFastDiff, Bloom: hbase.BloomRow},
		}},
		{Name: "likes", SplitKeys: split, Families: []hbase.FamilySpec{
			{Name: FamLike, MaxVersions: 1, Encoding: hbase.EncodingRowIndex, BlockSize: pointBlock, Bloom: hbase.BloomRow},
		}},
		// Only scanned (a root's reposts, a recount, fsck): bloom NONE.
		{Name: "reposts", SplitKeys: split, Families: []hbase.FamilySpec{
			{Name: FamRepost, MaxVersions: 1, Encoding: hbase.EncodingFastDiff, Bloom: hbase.BloomNone},
		}},
		// Topic rows and hour rows (topics.go), split between the two
		// kinds: topic(name:) is a Get, the hour rows a GetMany.
		{Name: "topics", SplitKeys: [][]byte{TopicRowsStart}, Families: []hbase.FamilySpec{
			{Name: FamTopicCount, MaxVersions: 1, Encoding: hbase.EncodingRowIndex, BlockSize: pointBlock, Bloom: hbase.BloomRow},
			{Name: FamTopicSeq, MaxVersions: 1, Encoding: hbase.EncodingRowIndex, BlockSize: pointBlock, Bloom: hbase.BloomRow},
		}},
		// Only scanned (a topic's page, a recount, fsck): bloom NONE. The
		// buckets of one topic fall one in each pre-split region.
		{Name: "topicposts", SplitKeys: split, Families: []hbase.FamilySpec{
			{Name: FamTopicEntry, MaxVersions: 1, Encoding: hbase.EncodingFastDiff, Bloom: hbase.BloomNone},
		}},
		// Salted by the recipient; group rows are point reads (bloom ROW),
		// index rows are scanned.
		// One row per user, read by rowkey with every page (safety.go).
		{Name: "safety", SplitKeys: split, Families: []hbase.FamilySpec{
			{Name: FamSafetySet, MaxVersions: 1, Encoding: hbase.EncodingRowIndex, BlockSize: pointBlock, Bloom: hbase.BloomRow},
			{Name: FamSafetyBlockedBy, MaxVersions: 1, Encoding: hbase.EncodingRowIndex, BlockSize: pointBlock, Bloom: hbase.BloomRow},
			// Read alone by every home page (the version of the Set a
			// gateway remembers): IN_MEMORY, like the users' info.
			{Name: FamSafetyVersion, MaxVersions: 1, Encoding: hbase.EncodingRowIndex, BlockSize: pointBlock, Bloom: hbase.BloomRow, InMemory: true},
		}},
		// Not salted and not pre-split, like the audit log: reports are
		// few, and each queue is one contiguous range (reports.go).
		{Name: "reports", Families: []hbase.FamilySpec{
			{Name: FamReport, MaxVersions: 1, Encoding: hbase.EncodingFastDiff, Bloom: hbase.BloomRow},
			{Name: FamReportIndex, MaxVersions: 1, Encoding: hbase.EncodingFastDiff, Bloom: hbase.BloomNone},
			{Name: FamReportCount, MaxVersions: 1, Encoding: hbase.EncodingRowIndex, BlockSize: pointBlock, Bloom: hbase.BloomRow},
		}},
		// Small (the users suspended now), scanned whole by every instance:
		// no splits, kept in memory.
		{Name: "suspensions", Families: []hbase.FamilySpec{
			{Name: FamSuspension, MaxVersions: 1, Encoding: hbase.EncodingRowIndex, BlockSize: pointBlock, Bloom: hbase.BloomRow, InMemory: true},
		}},
		// Small and read by rowkey or short prefix scans (scim.go): the
		// managed users' range, the externalId index, the clients.
		{Name: "scim", Families: []hbase.FamilySpec{
			{Name: FamScim, MaxVersions: 1, Encoding: hbase.EncodingFastDiff, Bloom: hbase.BloomRow},
		}},
		{Name: "notifications", SplitKeys: split, Families: []hbase.FamilySpec{
			{Name: FamNotifSummary, MaxVersions: 1, Encoding: hbase.EncodingFastDiff, Bloom: hbase.BloomRow},
			{Name: FamNotifActors, MaxVersions: 1, Encoding: hbase.EncodingFastDiff, Bloom: hbase.BloomRow},
		}},
		// Registered documents (documents.go): read by rowkey, listed by
		// `gateway documents list`.
		{Name: "documents", Families: []hbase.FamilySpec{
			{Name: FamDocument, MaxVersions: 1, Encoding: hbase.EncodingRowIndex, BlockSize: pointBlock, Bloom: hbase.BloomRow},
		}},
		// Pictures (media.go): media rows read by GetMany, blobs by Get
		// (bloom ROW); the bytes in a MOB family on HBase.
		{Name: "media", Families: []hbase.FamilySpec{
			{Name: FamMediaUpload, MaxVersions: 1, Bloom: hbase.BloomRow, TTL: MediaUploadTTL},
			{Name: FamMediaAttached, MaxVersions: 1, Bloom: hbase.BloomRow},
			{Name: FamMediaData, MaxVersions: 1, Bloom: hbase.BloomRow, MOB: true, MOBThreshold: MediaMOBThreshold},
			{Name: FamCount, MaxVersions: 1, Bloom: hbase.BloomRow},
			{Name: FamMediaRef, MaxVersions: 1, Encoding: hbase.EncodingFastDiff, Bloom: hbase.BloomNone},
		}},
	}
}

// Migrate creates the weibo namespace and the tables of Specs when
// missing, and adds to existing tables the families of Specs they lack
// (Admin.EnsureTables: a weibo:users table of an older version gains
// family o, then t); it is idempotent and never removes anything. Errors
// are the store's.
func Migrate(ctx context.Context, st hbase.StoreAdmin) error {
	return st.EnsureTables(ctx, Namespace, Specs())
}
