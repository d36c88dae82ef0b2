package weibo

import (
	"context"
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
)

// Tables returns the specs of every weibo table, as created by `gateway migrate`.
// docs/schema.md explains each choice.
func Tables() []hbase.TableSpec {
	split := SaltSplitKeys()
	return []hbase.TableSpec{
		{Name: "users", SplitKeys: split, Families: []hbase.FamilySpec{
			{Name: FamInfo, MaxVersions: 1, Bloom: hbase.BloomRow, InMemory: true},
			{Name: FamCount, MaxVersions: 1, Bloom: hbase.BloomRow},
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
	}
}

// Migrate creates the weibo namespace and tables when missing; idempotent.
func Migrate(ctx context.Context, st hbase.Store) error {
	return st.EnsureTables(ctx, Namespace, Tables())
}
