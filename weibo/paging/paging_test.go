package paging

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestCursorRoundTrip encodes the cursor of every kind and decodes it back.
func TestCursorRoundTrip(t *testing.T) {
	for _, c := range []struct {
		kind   CursorKind
		suffix []byte
	}{
		{CursorTimeline, tables.InboxKey(7, weibo.PostID{Author: 9, Millis: 1583037296789})[tables.IDKeyLen:]},
		{CursorPosts, tables.ContentKey(weibo.PostID{Author: 9, Millis: 1})[tables.IDKeyLen:]},
		{CursorUsers, tables.U64(22732)},
		{CursorRoleMembers, tables.U64(1)},
		{CursorDepartments, tables.U64(1<<64 - 1)},
		{CursorRoleNames, []byte("体育委员")},
		{CursorRoleNames, []byte("a")},
		{CursorReposts, tables.RepostKey(weibo.PostID{Author: 9, Millis: 1}, weibo.PostID{Author: 7, Millis: 2})[tables.ContentKeyLen:]},
		{CursorLikers, tables.PostLikerKey(weibo.PostID{Author: 9, Millis: 1}, 2, 7)[tables.IDKeyLen+9:]},
		{CursorLikedPosts, tables.UserLikeKey(7, 2, weibo.PostID{Author: 9, Millis: 1})[tables.IDKeyLen+1:]},
		{CursorComments, tables.CommentKey(weibo.CommentID{Post: weibo.PostID{Author: 9, Millis: 1}, Millis: 2, Author: 7})[tables.ContentKeyLen:]},
	} {
		cur := EncodeCursor(c.kind, c.suffix)
		if strings.ContainsAny(cur, "+/=") {
			t.Errorf("cursor %q is not unpadded base64url", cur)
		}
		got, err := DecodeCursor(&cur, c.kind, len(c.suffix), len(c.suffix))
		if err != nil || !bytes.Equal(got, c.suffix) {
			t.Errorf("kind %c: decode(encode(%x)) = %x, %v", c.kind, c.suffix, got, err)
		}
	}
	for _, empty := range []*string{nil, new("")} {
		if got, err := DecodeCursor(empty, CursorUsers, 8, 8); got != nil || err != nil {
			t.Errorf("an absent cursor gives %x, %v; want nil, nil", got, err)
		}
	}
}

// TestCursorRejects feeds DecodeCursor malformed cursors: each must give
// BAD_USER_INPUT on "after".
func TestCursorRejects(t *testing.T) {
	user := EncodeCursor(CursorUsers, tables.U64(5))
	raw := func(b ...byte) string { return base64.RawURLEncoding.EncodeToString(b) }
	for _, c := range []struct {
		name, cursor string
	}{
		{"not base64", "not a cursor!"},
		{"padding", user + "=="},
		{"standard base64 alphabet", strings.NewReplacer("-", "+", "_", "/").Replace(raw('U', 0xfb, 0xff, 0xfe, 0, 0, 0, 0, 1))},
		{"another connection's kind", EncodeCursor(CursorPosts, tables.U64(5))},
		{"payload one byte short", raw('U', 0, 0, 0, 0, 0, 0, 5)},
		{"payload one byte long", raw('U', 0, 0, 0, 0, 0, 0, 0, 5, 0)},
		{"kind only", raw('U')},
		{"truncated", user[:len(user)-2]},
	} {
		t.Run(c.name, func(t *testing.T) {
			cur := c.cursor
			_, err := DecodeCursor(&cur, CursorUsers, 8, 8)
			if e, ok := errors.AsType[*weibo.Error](err); !ok || e.Code != weibo.CodeBadUserInput || e.Field != "after" {
				t.Fatalf("decode(%q) error %v, want BAD_USER_INPUT on after", c.cursor, err)
			}
		})
	}
	// Variable-length payloads (role names): 1 to max bytes.
	for _, payload := range [][]byte{{}, bytes.Repeat([]byte("x"), 4*maxRoleName+1)} {
		cur := EncodeCursor(CursorRoleNames, payload)
		if _, err := DecodeCursor(&cur, CursorRoleNames, 1, 4*maxRoleName); weibo.CodeOf(err) != weibo.CodeBadUserInput {
			t.Errorf("role-name cursor of %d bytes: %v, want BAD_USER_INPUT", len(payload), err)
		}
	}
}

// maxRoleName is the longest role name in characters (org.MaxRoleNameLength).
const maxRoleName = 64

// TestPageStart checks first's bounds and the start row after a cursor.
func TestPageStart(t *testing.T) {
	prefix := tables.RelationPrefix(22732, tables.Attends)
	q := Query{Kind: CursorUsers, RowLen: tables.RelationKeyLen, Scan: hbase.Scan{Prefix: prefix}}
	for _, first := range []*int{new(0), new(-1), new(weibo.MaxPageSize + 1)} {
		if _, _, err := q.Start(first, nil); weibo.CodeOf(err) != weibo.CodeBadUserInput {
			t.Errorf("first %d: %v, want BAD_USER_INPUT", *first, err)
		}
	}
	n, start, err := q.Start(nil, nil)
	if n != weibo.DefaultPageSize || start != nil || err != nil {
		t.Errorf("defaults: %d, %x, %v", n, start, err)
	}
	cur := EncodeCursor(CursorUsers, tables.U64(5802))
	n, start, err = q.Start(new(weibo.MaxPageSize), &cur)
	want := append(tables.RelationKey(22732, tables.Attends, 5802), 0)
	if n != weibo.MaxPageSize || !bytes.Equal(start, want) || err != nil {
		t.Errorf("after a cursor: %d, %x, %v; want %d, %x", n, start, err, weibo.MaxPageSize, want)
	}
	if !bytes.HasPrefix(start, prefix) {
		t.Errorf("start row %x leaves the prefix %x", start, prefix)
	}
	// A prefix-less connection (roles by name) takes variable cursors.
	names := Query{Kind: CursorRoleNames, MaxRowLen: 4 * maxRoleName}
	cur = EncodeCursor(CursorRoleNames, []byte("admin"))
	if _, start, err := names.Start(nil, &cur); err != nil || string(start) != "admin\x00" {
		t.Errorf("role-name start = %q, %v", start, err)
	}
}

// TestBuildPage checks HasNextPage and the page's cursors.
func TestBuildPage(t *testing.T) {
	items := []*int{new(1), new(2), new(3)}
	keys := [][]byte{{1}, {2}, {3}}
	// Cursors of different lengths: "b", "cc", "ddd" (the page's cursors
	// are parts of one string).
	cursor := func(dst, k []byte) []byte { return append(dst, strings.Repeat(string('a'+rune(k[0])), int(k[0]))...) }
	edge := func(it *int, c string) string { return c }
	for _, c := range []struct {
		n         int
		edges     []string
		next      bool
		start, to string
	}{{1, []string{"b"}, true, "b", "b"}, {2, []string{"b", "cc"}, true, "b", "cc"}, {3, []string{"b", "cc", "ddd"}, false, "b", "ddd"}, {5, []string{"b", "cc", "ddd"}, false, "b", "ddd"}} {
		edges, info := Build(items, keys, c.n, cursor, edge)
		if strings.Join(edges, ",") != strings.Join(c.edges, ",") || info.HasNextPage != c.next || info.HasPreviousPage ||
			*info.StartCursor != c.start || *info.EndCursor != c.to {
			t.Errorf("n=%d: %v %+v", c.n, edges, info)
		}
	}
	edges, info := Build[int, string](nil, nil, 3, cursor, edge)
	if len(edges) != 0 || info.HasNextPage || info.StartCursor != nil || info.EndCursor != nil {
		t.Errorf("empty page: %v %+v", edges, info)
	}
}

func TestMalformedCursorMessageIsShort(t *testing.T) {
	huge := strings.Repeat("Zm9v", 1<<18) // 1 MiB of base64
	for _, c := range []string{huge, "!" + huge, "not a cursor"} {
		_, err := DecodeCursor(&c, CursorPosts, 8, 8)
		if weibo.CodeOf(err) != weibo.CodeBadUserInput {
			t.Fatalf("code %q, want BAD_USER_INPUT", weibo.CodeOf(err))
		}
		if len(err.Error()) > 100 {
			t.Errorf("message of %d bytes: %.120q…", len(err.Error()), err.Error())
		}
	}
}
