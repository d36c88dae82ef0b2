package weibo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/weibohbase/gateway/hbase"
)

// Namespace is the HBase namespace of every table (seed 004: "namespace name:weibo").
const Namespace = "weibo"

// Full table names.
const (
	TableUsers     = Namespace + ":users"
	TableUsernames = Namespace + ":usernames"
	TableRelations = Namespace + ":relations"
	TableContent   = Namespace + ":content"
	TableInbox     = Namespace + ":inbox"
	TableOutbox    = Namespace + ":outbox"

	// Roles and departments (seed 001, cases 1 and 2): see roles.go,
	// departments.go and docs/schema.md.
	TableRoles       = Namespace + ":roles"
	TableRoleNames   = Namespace + ":rolenames"
	TableDepartments = Namespace + ":departments"
)

// Column families and qualifiers. Names are one or two bytes: HBase stores
// the family and qualifier with every cell (seed 003, points 9 and 10).
const (
	// weibo:users
	FamInfo     = "i"  // user info
	ColUsername = "un" // username as registered (UTF-8)
	ColPassword = "pw" // bcrypt hash of the password
	ColCreated  = "ct" // creation time, ms, 8 bytes BE
	FamCount    = "c"  // counters (HBase Increment, 8 bytes BE)
	ColFollows  = "fo" // number of users this user follows
	ColFans     = "fa" // number of fans
	ColPosts    = "po" // number of posts
	ColSeq      = "n"  // the id sequence in row SeqKey (family c)

	// weibo:usernames
	FamName = "i"  // index family
	ColUID  = "id" // the user's id, 8 bytes BE

	// weibo:relations
	FamRel    = "r" // relation family
	ColRelSet = "t" // time the follow was made, ms, 8 bytes BE

	// weibo:content
	FamPost       = "c" // post family
	ColText       = "t" // post text (UTF-8)
	ColAuthorName = "u" // author's username (immutable, denormalized)

	// weibo:inbox
	FamInbox   = "c" // inbox family
	ColInboxAt = "p" // empty marker; the rowkey says everything

	// weibo:outbox
	FamOutbox   = "o" // outbox family
	ColOutboxAt = "t" // time the fan-out was requested, ms, 8 bytes BE

	// weibo:users, family o: the user's place in the organization (the
	// seed's psn cf2). Qualifier RoleQualifier(rid) (the role id, 8 bytes
	// BE) holds the assignment's priority (4 bytes BE); qualifier ColUserDept
	// holds the user's department id (8 bytes BE).
	FamOrg      = "o"
	ColUserDept = "dp"

	// weibo:roles (family i on role rows and member rows, c on role rows)
	ColRoleName    = "n" // role rows: the role's name as given (UTF-8)
	ColMemberCount = "m" // role rows, family c: number of members (Increment)
	ColPriority    = "p" // member rows: the assignment's priority, 4 bytes BE

	// weibo:rolenames (family i)
	ColRoleID = "id" // the role's id, 8 bytes BE

	// weibo:departments (family i on every row)
	ColDeptName = "n"  // department rows: the name (UTF-8)
	ColParent   = "up" // department rows: the parent's id, 8 bytes BE; 0 = top level (the seed's up)
	ColLinkAt   = "t"  // child and member rows: time the link was made, ms, 8 bytes BE
)

// Tables returns the specs of every weibo table, as created by `gateway migrate`.
// docs/schema.md explains each choice.
func Tables() []hbase.TableSpec {
	split := SaltSplitKeys()
	return []hbase.TableSpec{
		{Name: "users", SplitKeys: split, Families: []hbase.FamilySpec{
			{Name: FamInfo, MaxVersions: 1, Bloom: hbase.BloomRow, InMemory: true},
			{Name: FamCount, MaxVersions: 1, Bloom: hbase.BloomRow},
			{Name: FamOrg, MaxVersions: 1, Bloom: hbase.BloomRow},
		}},
		{Name: "usernames", Families: []hbase.FamilySpec{
			{Name: FamName, MaxVersions: 1, Bloom: hbase.BloomRow, InMemory: true},
		}},
		{Name: "relations", SplitKeys: split, Families: []hbase.FamilySpec{
			{Name: FamRel, MaxVersions: 1, Bloom: hbase.BloomRow},
		}},
		{Name: "content", SplitKeys: split, Families: []hbase.FamilySpec{
			{Name: FamPost, MaxVersions: 1, Bloom: hbase.BloomRow},
		}},
		{Name: "inbox", SplitKeys: split, Families: []hbase.FamilySpec{
			{Name: FamInbox, MaxVersions: 1, Bloom: hbase.BloomNone},
		}},
		{Name: "outbox", Families: []hbase.FamilySpec{
			{Name: FamOutbox, MaxVersions: 1, Bloom: hbase.BloomNone, TTL: 7 * 24 * time.Hour},
		}},
		{Name: "roles", SplitKeys: split, Families: []hbase.FamilySpec{
			{Name: FamInfo, MaxVersions: 1, Bloom: hbase.BloomRow, InMemory: true},
			{Name: FamCount, MaxVersions: 1, Bloom: hbase.BloomRow},
		}},
		{Name: "rolenames", Families: []hbase.FamilySpec{
			{Name: FamName, MaxVersions: 1, Bloom: hbase.BloomRow, InMemory: true},
		}},
		{Name: "departments", SplitKeys: split, Families: []hbase.FamilySpec{
			{Name: FamInfo, MaxVersions: 1, Bloom: hbase.BloomRow, InMemory: true},
		}},
	}
}

// Migrate creates the weibo namespace and tables when missing; idempotent.
// It needs the table administration (Admin.EnsureTables) and one read.
//
// EnsureTables leaves existing tables as they are, so a weibo:users table
// created before family o existed does not gain it; Migrate detects that
// with a one-row read and returns an error saying how to add the family.
func Migrate(ctx context.Context, st hbase.StoreAdmin) error {
	if err := st.EnsureTables(ctx, Namespace, Tables()); err != nil {
		return err
	}
	_, err := st.Get(ctx, &hbase.Get{Table: TableUsers, Row: SeqKey, Families: []string{FamOrg}})
	if errors.Is(err, hbase.ErrFamilyNotFound) {
		return fmt.Errorf("table %s was created without column family %q (roles and departments): "+
			"add it, e.g. in the HBase shell: alter '%s', {NAME => '%s', VERSIONS => 1, BLOOMFILTER => 'ROW'}: %w",
			TableUsers, FamOrg, TableUsers, FamOrg, err)
	}
	return err
}
