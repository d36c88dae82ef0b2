package tables_test

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"hash/fnv"
	"math"
	"slices"
	"testing"

	"github.com/weibohbase/gateway/weibo/tables"
)

// The layout of docs/schema.md, written out again here on purpose (not
// calling the package's helpers): the tests check the codecs against the
// document.

// docSalt is salt(1): FNV-1a-32 of the id's 8 bytes BE, mod 16.
func docSalt(id uint64) byte {
	h := fnv.New32a()
	h.Write(binary.BigEndian.AppendUint64(nil, id))
	return byte(h.Sum32() % 16)
}

// docID is salt(1) id(8).
func docID(id uint64) []byte { return binary.BigEndian.AppendUint64([]byte{docSalt(id)}, id) }

func be(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

// docRev is rev(8) = Long.MAX_VALUE - ms.
func docRev(ms int64) []byte { return be(uint64(math.MaxInt64 - ms)) }

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// ms is 2020-03-01T12:34:56.789+08:00, a post time of the data set.
const ms = int64(1583037296789)

// TestSaltGolden pins a few salts, so that a change of the salt function
// (which would orphan every stored row) cannot pass unnoticed.
func TestSaltGolden(t *testing.T) {
	for _, c := range []struct {
		id   uint64
		salt byte
	}{{0, 0x05}, {1, 0x02}, {2, 0x0f}, {22732, 0x09}, {100_000_001, 0x01}, {math.MaxUint64, 0x0d}} {
		if got := tables.Salt(c.id); got != c.salt || got != docSalt(c.id) {
			t.Errorf("Salt(%d) = %#x, want %#x (doc %#x)", c.id, got, c.salt, docSalt(c.id))
		}
	}
	if tables.Salt(tables.UserID(7)) != tables.Salt(tables.RoleID(7)) || tables.Salt(tables.RoleID(7)) != tables.Salt(tables.DeptID(7)) {
		t.Error("user, role and department ids are not salted alike")
	}
	seen := map[byte]bool{}
	for id := range uint64(1000) {
		s := tables.Salt(id)
		if s >= tables.SaltBuckets {
			t.Fatalf("Salt(%d) = %d, out of range", id, s)
		}
		seen[s] = true
	}
	if len(seen) != tables.SaltBuckets {
		t.Errorf("1000 ids use %d salts, want all %d", len(seen), tables.SaltBuckets)
	}
}

// TestKeyRoundTrips builds every rowkey kind from ids, compares it with
// the bytes docs/schema.md gives, and decodes it back with its named
// decoder.
func TestKeyRoundTrips(t *testing.T) {
	const uid, other = tables.UserID(22732), tables.UserID(5802)
	post := tables.PostID{Author: other, Millis: ms}
	const rid, did, child = tables.RoleID(3), tables.DeptID(2), tables.DeptID(9)
	for _, c := range []struct {
		name   string
		key    []byte
		want   []byte
		decode func(k []byte) (any, bool)
		value  any // what decode must return
	}{
		{"user", tables.UserKey(uid), docID(22732),
			func(k []byte) (any, bool) { return tables.DecodeUserKey(k) }, uid},
		{"user, largest id", tables.UserKey(math.MaxUint64), docID(math.MaxUint64),
			func(k []byte) (any, bool) { return tables.DecodeUserKey(k) }, tables.UserID(math.MaxUint64)},
		{"user, appended", tables.AppendUserKey([]byte("x"), uid)[1:], docID(22732),
			func(k []byte) (any, bool) { return tables.DecodeUserKey(k) }, uid},
		{"relation attends", tables.RelationKey(uid, tables.Attends, other), cat(docID(22732), []byte("a"), be(5802)),
			func(k []byte) (any, bool) { o, d, b, ok := tables.DecodeRelationKey(k); return [3]any{o, d, b}, ok },
			[3]any{uid, tables.Attends, other}},
		{"relation fans", tables.RelationKey(other, tables.Fans, uid), cat(docID(5802), []byte("f"), be(22732)),
			func(k []byte) (any, bool) { o, d, b, ok := tables.DecodeRelationKey(k); return [3]any{o, d, b}, ok },
			[3]any{other, tables.Fans, uid}},
		{"relation, appended", tables.AppendRelationKey(nil, uid, tables.Fans, other), cat(docID(22732), []byte("f"), be(5802)),
			func(k []byte) (any, bool) { o, d, b, ok := tables.DecodeRelationKey(k); return [3]any{o, d, b}, ok },
			[3]any{uid, tables.Fans, other}},
		{"content", tables.ContentKey(post), cat(docID(5802), docRev(ms)),
			func(k []byte) (any, bool) { return tables.DecodeContentKey(k) }, post},
		{"content, epoch", tables.ContentKey(tables.PostID{Author: 1}), cat(docID(1), be(math.MaxInt64)),
			func(k []byte) (any, bool) { return tables.DecodeContentKey(k) }, tables.PostID{Author: 1}},
		{"content, appended", tables.AppendContentKey(nil, post), cat(docID(5802), docRev(ms)),
			func(k []byte) (any, bool) { return tables.DecodeContentKey(k) }, post},
		{"outbox", tables.OutboxKey(post), cat(docID(5802), docRev(ms)),
			func(k []byte) (any, bool) { return tables.DecodeOutboxKey(k) }, post},
		{"inbox", tables.InboxKey(uid, post), cat(docID(22732), docRev(ms), be(5802)),
			func(k []byte) (any, bool) { o, p, ok := tables.DecodeInboxKey(k); return [2]any{o, p}, ok },
			[2]any{uid, post}},
		{"inbox, appended", tables.AppendInboxKey(nil, other, post), cat(docID(5802), docRev(ms), be(5802)),
			func(k []byte) (any, bool) { o, p, ok := tables.DecodeInboxKey(k); return [2]any{o, p}, ok },
			[2]any{other, post}},
		{"role", tables.RoleKey(rid), docID(3),
			func(k []byte) (any, bool) { return tables.DecodeRoleKey(k) }, rid},
		{"role member", tables.RoleMemberKey(rid, uid), cat(docID(3), []byte("m"), be(22732)),
			func(k []byte) (any, bool) { r, u, ok := tables.DecodeRoleMemberKey(k); return [2]any{r, u}, ok },
			[2]any{rid, uid}},
		{"department", tables.DeptKey(did), docID(2),
			func(k []byte) (any, bool) { return tables.DecodeDeptKey(k) }, did},
		{"department child", tables.DeptChildKey(did, child), cat(docID(2), []byte("c"), be(9)),
			func(k []byte) (any, bool) { p, c, ok := tables.DecodeDeptChildKey(k); return [2]any{p, c}, ok },
			[2]any{did, child}},
		{"top-level department", tables.DeptChildKey(tables.RootDept, child), cat(docID(0), []byte("c"), be(9)),
			func(k []byte) (any, bool) { p, c, ok := tables.DecodeDeptChildKey(k); return [2]any{p, c}, ok },
			[2]any{tables.RootDept, child}},
		{"department member", tables.DeptMemberKey(did, uid), cat(docID(2), []byte("m"), be(22732)),
			func(k []byte) (any, bool) { d, u, ok := tables.DecodeDeptMemberKey(k); return [2]any{d, u}, ok },
			[2]any{did, uid}},
		{"pending follow", tables.PendingKey(tables.PendingFollow, uint64(uid), uint64(other), 0x0102030405060708),
			cat(docID(22732), []byte("f"), be(5802), []byte{1, 2, 3, 4, 5, 6, 7, 8}),
			func(k []byte) (any, bool) {
				kind, o, b, n, ok := tables.DecodePendingKey(k)
				return [4]any{kind, o, b, n}, ok
			}, [4]any{tables.PendingFollow, uint64(uid), uint64(other), uint64(0x0102030405060708)}},
		{"pending role", tables.PendingKey(tables.PendingRole, uint64(rid), uint64(uid), 1),
			cat(docID(3), []byte("r"), be(22732), be(1)),
			func(k []byte) (any, bool) {
				kind, o, b, n, ok := tables.DecodePendingKey(k)
				return [4]any{kind, o, b, n}, ok
			}, [4]any{tables.PendingRole, uint64(rid), uint64(uid), uint64(1)}},
		{"role qualifier", []byte(tables.RoleQualifier(rid)), be(3),
			func(k []byte) (any, bool) { return tables.DecodeRoleQualifier(string(k)) }, rid},
		{"priority", tables.EncodePriority(1000), []byte{0, 0, 0x03, 0xe8},
			func(k []byte) (any, bool) { return tables.DecodePriority(k) }, 1000},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !bytes.Equal(c.key, c.want) {
				t.Fatalf("key = %s, docs/schema.md says %s", hex.EncodeToString(c.key), hex.EncodeToString(c.want))
			}
			got, ok := c.decode(c.key)
			if !ok || got != c.value {
				t.Fatalf("decode(%x) = %v, %v; want %v", c.key, got, ok, c.value)
			}
		})
	}
}

// TestPrefixes checks that every prefix a connection scans is the prefix of
// its rows and excludes its neighbours' rows.
func TestPrefixes(t *testing.T) {
	const uid, other = tables.UserID(22732), tables.UserID(5802)
	post := tables.PostID{Author: uid, Millis: ms}
	for _, c := range []struct {
		name      string
		prefix    []byte
		in, notIn []byte
		wantLen   int
		rowLen    int
	}{
		{"follows", tables.RelationPrefix(uid, tables.Attends), tables.RelationKey(uid, tables.Attends, other),
			tables.RelationKey(uid, tables.Fans, other), 10, tables.RelationKeyLen},
		{"fans", tables.RelationPrefix(uid, tables.Fans), tables.RelationKey(uid, tables.Fans, other),
			tables.RelationKey(uid, tables.Attends, other), 10, tables.RelationKeyLen},
		{"posts", tables.ContentPrefix(uid), tables.ContentKey(post),
			tables.ContentKey(tables.PostID{Author: other, Millis: ms}), 9, tables.ContentKeyLen},
		{"inbox", tables.InboxPrefix(uid), tables.InboxKey(uid, tables.PostID{Author: other, Millis: ms}),
			tables.InboxKey(other, post), 9, tables.InboxKeyLen},
		{"role members", tables.RoleMemberPrefix(3), tables.RoleMemberKey(3, uid), tables.RoleKey(3), 10, tables.LinkKeyLen},
		{"children", tables.DeptChildPrefix(2), tables.DeptChildKey(2, 9), tables.DeptMemberKey(2, uid), 10, tables.LinkKeyLen},
		{"department members", tables.DeptMemberPrefix(2), tables.DeptMemberKey(2, uid), tables.DeptChildKey(2, 9), 10, tables.LinkKeyLen},
		{"department rows", tables.DeptPrefix(2), tables.DeptChildKey(2, 9), tables.DeptKey(3), 9, tables.IDKeyLen + 9},
	} {
		t.Run(c.name, func(t *testing.T) {
			if len(c.prefix) != c.wantLen {
				t.Errorf("prefix length %d, want %d", len(c.prefix), c.wantLen)
			}
			if !bytes.HasPrefix(c.in, c.prefix) || len(c.in) != c.rowLen {
				t.Errorf("row %x (len %d) not under prefix %x or not %d bytes", c.in, len(c.in), c.prefix, c.rowLen)
			}
			if bytes.HasPrefix(c.notIn, c.prefix) {
				t.Errorf("row %x wrongly under prefix %x", c.notIn, c.prefix)
			}
		})
	}
}

// TestOrder checks the orders the layout promises: a user's posts and
// inbox newest first, inbox ties by author, relations by the other's id.
func TestOrder(t *testing.T) {
	const u = tables.UserID(42)
	older, newer := tables.PostID{Author: u, Millis: ms}, tables.PostID{Author: u, Millis: ms + 1}
	if bytes.Compare(tables.ContentKey(newer), tables.ContentKey(older)) >= 0 {
		t.Error("content: a newer post does not sort first")
	}
	if bytes.Compare(tables.InboxKey(7, newer), tables.InboxKey(7, older)) >= 0 {
		t.Error("inbox: a newer post does not sort first")
	}
	if bytes.Compare(tables.InboxKey(7, tables.PostID{Author: 5, Millis: ms}), tables.InboxKey(7, tables.PostID{Author: 6, Millis: ms})) >= 0 {
		t.Error("inbox: ties in one millisecond are not ordered by author")
	}
	if bytes.Compare(tables.RelationKey(u, tables.Attends, 255), tables.RelationKey(u, tables.Attends, 256)) >= 0 {
		t.Error("relations: not in the other user's id order")
	}
	if bytes.Compare(tables.UserKey(u), tables.SeqKey) >= 0 || bytes.Compare(tables.UserKey(math.MaxUint64), tables.DemoMarkerKey) >= 0 {
		t.Error("the 0xff rows do not sort after every salted rowkey")
	}
}

// TestDecodersReject feeds every decoder keys that are not its kind: too
// short or long, a wrong salt, a wrong marker, the sequence and marker
// rows.
func TestDecodersReject(t *testing.T) {
	wrongSalt := func(k []byte) []byte {
		k = bytes.Clone(k)
		k[0] = (k[0] + 1) % tables.SaltBuckets
		return k
	}
	post := tables.PostID{Author: 22732, Millis: ms}
	decoders := []struct {
		name   string
		decode func([]byte) bool
		good   []byte
	}{
		{"user", func(k []byte) bool { _, ok := tables.DecodeUserKey(k); return ok }, tables.UserKey(22732)},
		{"relation", func(k []byte) bool { _, _, _, ok := tables.DecodeRelationKey(k); return ok }, tables.RelationKey(1, tables.Attends, 2)},
		{"content", func(k []byte) bool { _, ok := tables.DecodeContentKey(k); return ok }, tables.ContentKey(post)},
		{"outbox", func(k []byte) bool { _, ok := tables.DecodeOutboxKey(k); return ok }, tables.OutboxKey(post)},
		{"inbox", func(k []byte) bool { _, _, ok := tables.DecodeInboxKey(k); return ok }, tables.InboxKey(5, post)},
		{"role", func(k []byte) bool { _, ok := tables.DecodeRoleKey(k); return ok }, tables.RoleKey(3)},
		{"role member", func(k []byte) bool { _, _, ok := tables.DecodeRoleMemberKey(k); return ok }, tables.RoleMemberKey(3, 4)},
		{"department", func(k []byte) bool { _, ok := tables.DecodeDeptKey(k); return ok }, tables.DeptKey(3)},
		{"department child", func(k []byte) bool { _, _, ok := tables.DecodeDeptChildKey(k); return ok }, tables.DeptChildKey(3, 4)},
		{"department member", func(k []byte) bool { _, _, ok := tables.DecodeDeptMemberKey(k); return ok }, tables.DeptMemberKey(3, 4)},
		{"pending", func(k []byte) bool { _, _, _, _, ok := tables.DecodePendingKey(k); return ok }, tables.PendingKey(tables.PendingFollow, 3, 4, 5)},
	}
	for _, d := range decoders {
		t.Run(d.name, func(t *testing.T) {
			if !d.decode(d.good) {
				t.Fatalf("rejects its own key %x", d.good)
			}
			bad := map[string][]byte{
				"empty": nil, "sequence row": tables.SeqKey, "demo marker": tables.DemoMarkerKey,
				"org demo marker": tables.OrgDemoMarkerKey, "one byte short": d.good[:len(d.good)-1],
				"one byte long": append(bytes.Clone(d.good), 0), "wrong salt": wrongSalt(d.good),
			}
			// Each tall row kind must refuse the other kinds of the same length.
			for _, o := range decoders {
				if o.name != d.name && len(o.good) == len(d.good) && !sameKind(o.name, d.name) {
					bad["a "+o.name+" key"] = o.good
				}
			}
			for what, k := range bad {
				if d.decode(k) {
					t.Errorf("accepts %s: %x", what, k)
				}
			}
		})
	}
	if _, ok := tables.DecodeRoleQualifier(tables.ColUserDept); ok {
		t.Error("DecodeRoleQualifier accepts the department qualifier")
	}
	if _, ok := tables.DecodePriority([]byte{1, 2, 3}); ok {
		t.Error("DecodePriority accepts 3 bytes")
	}
	if got := tables.DecodeU64([]byte{1}); got != 0 {
		t.Errorf("DecodeU64 of 1 byte = %d, want 0", got)
	}
}

// sameKind tells the decoders whose keys are alike by design: the outbox
// key is the content key; a role and a department row are both salt | id,
// as are their member rows ('m').
func sameKind(a, b string) bool {
	kinds := map[string]string{"content": "post", "outbox": "post", "user": "id", "role": "id", "department": "id",
		"role member": "member", "department member": "member"}
	return kinds[a] != "" && kinds[a] == kinds[b]
}

// TestNameKeys checks the two unique-name indexes' rowkeys.
func TestNameKeys(t *testing.T) {
	for _, c := range []struct{ in, want string }{{"Alice_1", "alice_1"}, {"u1", "u1"}} {
		if got := string(tables.UsernameKey(c.in)); got != c.want {
			t.Errorf("UsernameKey(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	for _, c := range []struct{ in, want string }{{"  体育委员 ", "体育委员"}, {"Admin", "admin"}, {"A-TIE x", "a-tie x"}} {
		if got := string(tables.RoleNameKey(c.in)); got != c.want {
			t.Errorf("RoleNameKey(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestIDs checks the GraphQL forms of the ids: String and the parsers.
func TestIDs(t *testing.T) {
	for _, c := range []struct {
		in string
		ok bool
	}{
		{"1", true}, {"22732", true}, {"18446744073709551615", true},
		{"", false}, {"0", false}, {"01", false}, {"-1", false}, {"+1", false}, {"1.0", false},
		{"18446744073709551616", false}, {"123456789012345678901", false}, {"x", false}, {" 1", false},
	} {
		u, err := tables.ParseUserID(c.in)
		if (err == nil) != c.ok || (c.ok && u.String() != c.in) {
			t.Errorf("ParseUserID(%q) = %v, %v", c.in, u, err)
		}
		if !c.ok && err != tables.ErrInvalidID {
			t.Errorf("ParseUserID(%q): error %v, want ErrInvalidID", c.in, err)
		}
		r, err := tables.ParseRoleID(c.in)
		if (err == nil) != c.ok || (c.ok && r.String() != "role:"+c.in) {
			t.Errorf("ParseRoleID(%q) = %v, %v", c.in, r, err)
		}
		d, err := tables.ParseDeptID(c.in)
		if (err == nil) != c.ok || (c.ok && d.String() != "department:"+c.in) {
			t.Errorf("ParseDeptID(%q) = %v, %v", c.in, d, err)
		}
		// The global forms, with the same digits.
		if r, err := tables.ParseRoleID("role:" + c.in); (err == nil) != c.ok || (c.ok && r.String() != "role:"+c.in) {
			t.Errorf("ParseRoleID(%q) = %v, %v", "role:"+c.in, r, err)
		}
		if d, err := tables.ParseDeptID("department:" + c.in); (err == nil) != c.ok || (c.ok && d.String() != "department:"+c.in) {
			t.Errorf("ParseDeptID(%q) = %v, %v", "department:"+c.in, d, err)
		}
	}
	for _, c := range []struct {
		in   string
		want tables.PostID
		ok   bool
	}{
		{"22732_1583037296789", tables.PostID{Author: 22732, Millis: ms}, true},
		{"1_0", tables.PostID{Author: 1}, true},
		{"22732", tables.PostID{}, false}, {"_1", tables.PostID{}, false}, {"1_", tables.PostID{}, false},
		{"0_1", tables.PostID{}, false}, {"1_-1", tables.PostID{}, false}, {"1_2_3", tables.PostID{}, false},
		{"1_x", tables.PostID{}, false}, {"1_05", tables.PostID{}, false}, {"1_+5", tables.PostID{}, false},
		{"1_00", tables.PostID{}, false},
	} {
		p, err := tables.ParsePostID(c.in)
		if (err == nil) != c.ok || p != c.want || (c.ok && p.String() != c.in) {
			t.Errorf("ParsePostID(%q) = %v, %v; want %v ok=%v", c.in, p, err, c.want, c.ok)
		}
	}
}

// TestSpecs checks the table specs against docs/schema.md's families.
func TestSpecs(t *testing.T) {
	want := map[string][]string{
		"users": {"i", "c", "o", "t"}, "usernames": {"i"}, "relations": {"r"}, "content": {"c"}, "inbox": {"c"},
		"outbox": {"o"}, "roles": {"i", "c"}, "rolenames": {"i"}, "departments": {"i"}, "pending": {"p"},
		"audit": {"e"},
		"likes": {"l"}, "reposts": {"r"}, "comments": {"c"}, "topics": {"c", "s"}, "topicposts": {"p"},
		"notifications": {"s", "a"}, "safety": {"s", "r", "v"}, "reports": {"r", "i", "c"}, "suspensions": {"s"},
		"media": {"u", "m", "d", "c", "r"}, "scim": {"s"}, "documents": {"d"},
	}
	salted := map[string]bool{"users": true, "relations": true, "content": true, "inbox": true, "outbox": true, "roles": true, "departments": true, "pending": true, "likes": true, "reposts": true, "comments": true, "topicposts": true,
		"notifications": true, "safety": true}
	specs := tables.Specs()
	if len(specs) != len(want) {
		t.Fatalf("%d specs, want %d", len(specs), len(want))
	}
	for _, s := range specs {
		var fams []string
		for _, f := range s.Families {
			fams = append(fams, f.Name)
			if f.MaxVersions != 1 {
				t.Errorf("%s:%s keeps %d versions, want 1", s.Name, f.Name, f.MaxVersions)
			}
		}
		if w, ok := want[s.Name]; !ok || !slices.Equal(w, fams) {
			t.Errorf("table %s families %v, want %v", s.Name, fams, w)
		}
		if s.Name == "topics" {
			if len(s.SplitKeys) != 1 || string(s.SplitKeys[0]) != "t" {
				t.Errorf("table topics split keys %q, want [t]", s.SplitKeys)
			}
		} else if salted[s.Name] != (len(s.SplitKeys) == 3) {
			t.Errorf("table %s split keys %v", s.Name, s.SplitKeys)
		}
		if got := tables.Namespace + ":" + s.Name; !isTable(got) {
			t.Errorf("spec %s has no table constant", got)
		}
	}
}

func isTable(name string) bool {
	return slices.Contains([]string{tables.Users, tables.Usernames, tables.Relations, tables.Content, tables.Inbox,
		tables.Outbox, tables.Roles, tables.RoleNames, tables.Departments, tables.Pending, tables.Audit, tables.Likes, tables.Reposts, tables.Comments, tables.Topics, tables.TopicPosts,
		tables.Notifications, tables.Reports, tables.Safety, tables.Suspensions, tables.Media, tables.Scim, tables.Documents}, name)
}

func TestLeaseCodec(t *testing.T) {
	tests := []struct {
		name    string
		in      []byte
		owner   string
		expires int64
		ok      bool
	}{
		{"round trip", tables.EncodeLease("host:42:abcd", 1795430541076), "host:42:abcd", 1795430541076, true},
		{"absent", nil, "", 0, false},
		{"expiry without owner", tables.EncodeLease("", 7), "", 0, false},
		{"too short", []byte{1, 2, 3}, "", 0, false},
	}
	for _, tt := range tests {
		owner, exp, ok := tables.DecodeLease(tt.in)
		if owner != tt.owner || exp != tt.expires || ok != tt.ok {
			t.Errorf("%s: DecodeLease = %q, %d, %v; want %q, %d, %v", tt.name, owner, exp, ok, tt.owner, tt.expires, tt.ok)
		}
	}
}

// TestLargeCodec checks the large-accounts row of docs/schema.md ("Large
// accounts"): rowkey 0xff "large", qualifier uid(8), value state(1) since(8).
func TestLargeCodec(t *testing.T) {
	if !bytes.Equal(tables.LargeKey, []byte("\xfflarge")) {
		t.Errorf("LargeKey = %q", tables.LargeKey)
	}
	if _, ok := tables.DecodeUserKey(tables.LargeKey); ok {
		t.Error("LargeKey decodes as a user row")
	}
	if q := tables.LargeQualifier(22732); q != "\x00\x00\x00\x00\x00\x00\x58\xcc" {
		t.Errorf("LargeQualifier(22732) = %x", q)
	}
	if uid, ok := tables.DecodeLargeQualifier(tables.LargeQualifier(22732)); !ok || uid != 22732 {
		t.Errorf("DecodeLargeQualifier = %d, %v", uid, ok)
	}
	tests := []struct {
		name  string
		in    []byte
		state tables.LargeState
		since int64
		ok    bool
	}{
		{"large", []byte("L\x00\x00\x01\x9a\xb5\x8c\x3c\x14"), tables.LargeOn, 0x019ab58c3c14, true},
		{"draining", tables.EncodeLarge(tables.LargeDraining, 7), tables.LargeDraining, 7, true},
		{"unknown state", []byte("X\x00\x00\x00\x00\x00\x00\x00\x07"), 0, 0, false},
		{"too short", []byte("L\x00"), 0, 0, false},
		{"absent", nil, 0, 0, false},
	}
	for _, tt := range tests {
		st, since, ok := tables.DecodeLarge(tt.in)
		if st != tt.state || since != tt.since || ok != tt.ok {
			t.Errorf("%s: DecodeLarge = %c, %d, %v; want %c, %d, %v", tt.name, st, since, ok, tt.state, tt.since, tt.ok)
		}
	}
	if got := tables.EncodeLarge(tables.LargeOn, 0x019ab58c3c14); !bytes.Equal(got, []byte("L\x00\x00\x01\x9a\xb5\x8c\x3c\x14")) {
		t.Errorf("EncodeLarge = %x", got)
	}
}

func TestScimKeys(t *testing.T) {
	for _, tc := range []struct {
		kind byte
		ext  string
		id   uint64
	}{{'u', "00u1abcd", 7}, {'d', "", 1 << 40}, {'r', "Sales & Marketing", 3}} {
		k := tables.ScimExternalIDKey(tc.kind, tc.ext, tc.id)
		kind, ext, id, ok := tables.DecodeScimExternalIDKey(k)
		if !ok || kind != tc.kind || ext != tc.ext || id != tc.id {
			t.Errorf("externalId key %q decodes to %c %q %d %v", k, kind, ext, id, ok)
		}
	}
	if _, _, _, ok := tables.DecodeScimExternalIDKey([]byte("x")); ok {
		t.Error("a short key decodes")
	}
	uid, ok := tables.DecodeScimManagedUserKey(tables.ScimManagedUserKey(42))
	if !ok || uid != 42 {
		t.Errorf("managed user key decodes to %d %v", uid, ok)
	}
	if _, ok := tables.DecodeScimManagedUserKey(tables.ScimClientKey("okta")); ok {
		t.Error("a client key decodes as a managed user")
	}
}

// TestDocumentKey checks the rowkey of weibo:documents against
// docs/schema.md: the 32-byte SHA-256 of the text.
func TestDocumentKey(t *testing.T) {
	text := "query Home { me { username } }"
	// sha256 of the text above, as `printf %s "$text" | sha256sum` prints it.
	want := "4a81c9dfd409593dcc689eaf1fd1c2121d12f3aa51457ce9afc1828fca4cf1ec"
	k := tables.DocumentKey(text)
	if got := hex.EncodeToString(k); got != want || len(k) != tables.DocumentKeyLen {
		t.Fatalf("DocumentKey = %s, want %s", got, want)
	}
	sum, ok := tables.DecodeDocumentKey(k)
	if !ok || !bytes.Equal(sum[:], k) {
		t.Errorf("DecodeDocumentKey(%x) = %x, %v", k, sum, ok)
	}
	if _, ok := tables.DecodeDocumentKey(k[1:]); ok {
		t.Error("a 31-byte key decoded")
	}
}
