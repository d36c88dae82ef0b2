package weibo

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo/tables"
)

// TestCursorRoundTrip encodes the cursor of every kind and decodes it back.
func TestCursorRoundTrip(t *testing.T) {
	for _, c := range []struct {
		kind   cursorKind
		suffix []byte
	}{
		{cursorTimeline, tables.InboxKey(7, PostID{Author: 9, Millis: 1583037296789})[tables.IDKeyLen:]},
		{cursorPosts, tables.ContentKey(PostID{Author: 9, Millis: 1})[tables.IDKeyLen:]},
		{cursorUsers, tables.U64(22732)},
		{cursorRoleMembers, tables.U64(1)},
		{cursorDepartments, tables.U64(1<<64 - 1)},
		{cursorRoleNames, []byte("体育委员")},
		{cursorRoleNames, []byte("a")},
	} {
		cur := encodeCursor(c.kind, c.suffix)
		if strings.ContainsAny(cur, "+/=") {
			t.Errorf("cursor %q is not unpadded base64url", cur)
		}
		got, err := decodeCursor(&cur, c.kind, len(c.suffix), len(c.suffix))
		if err != nil || !bytes.Equal(got, c.suffix) {
			t.Errorf("kind %c: decode(encode(%x)) = %x, %v", c.kind, c.suffix, got, err)
		}
	}
	for _, empty := range []*string{nil, new("")} {
		if got, err := decodeCursor(empty, cursorUsers, 8, 8); got != nil || err != nil {
			t.Errorf("an absent cursor gives %x, %v; want nil, nil", got, err)
		}
	}
}

// TestCursorRejects feeds decodeCursor malformed cursors: each must give
// BAD_USER_INPUT on "after".
func TestCursorRejects(t *testing.T) {
	user := encodeCursor(cursorUsers, tables.U64(5))
	raw := func(b ...byte) string { return base64.RawURLEncoding.EncodeToString(b) }
	for _, c := range []struct {
		name, cursor string
	}{
		{"not base64", "not a cursor!"},
		{"padding", user + "=="},
		{"standard base64 alphabet", strings.NewReplacer("-", "+", "_", "/").Replace(raw('U', 0xfb, 0xff, 0xfe, 0, 0, 0, 0, 1))},
		{"another connection's kind", encodeCursor(cursorPosts, tables.U64(5))},
		{"payload one byte short", raw('U', 0, 0, 0, 0, 0, 0, 5)},
		{"payload one byte long", raw('U', 0, 0, 0, 0, 0, 0, 0, 5, 0)},
		{"kind only", raw('U')},
		{"truncated", user[:len(user)-2]},
	} {
		t.Run(c.name, func(t *testing.T) {
			cur := c.cursor
			_, err := decodeCursor(&cur, cursorUsers, 8, 8)
			if e, ok := errors.AsType[*Error](err); !ok || e.Code != CodeBadUserInput || e.Field != "after" {
				t.Fatalf("decode(%q) error %v, want BAD_USER_INPUT on after", c.cursor, err)
			}
		})
	}
	// Variable-length payloads (role names): 1 to max bytes.
	for _, payload := range [][]byte{{}, bytes.Repeat([]byte("x"), 4*MaxRoleNameLength+1)} {
		cur := encodeCursor(cursorRoleNames, payload)
		if _, err := decodeCursor(&cur, cursorRoleNames, 1, 4*MaxRoleNameLength); CodeOf(err) != CodeBadUserInput {
			t.Errorf("role-name cursor of %d bytes: %v, want BAD_USER_INPUT", len(payload), err)
		}
	}
}

// TestPageStart checks first's bounds and the start row after a cursor.
func TestPageStart(t *testing.T) {
	prefix := tables.RelationPrefix(22732, tables.Attends)
	q := pageQuery{kind: cursorUsers, rowLen: tables.RelationKeyLen, scan: hbase.Scan{Prefix: prefix}}
	for _, first := range []*int{new(0), new(-1), new(MaxPageSize + 1)} {
		if _, _, err := q.start(first, nil); CodeOf(err) != CodeBadUserInput {
			t.Errorf("first %d: %v, want BAD_USER_INPUT", *first, err)
		}
	}
	n, start, err := q.start(nil, nil)
	if n != DefaultPageSize || start != nil || err != nil {
		t.Errorf("defaults: %d, %x, %v", n, start, err)
	}
	cur := encodeCursor(cursorUsers, tables.U64(5802))
	n, start, err = q.start(new(MaxPageSize), &cur)
	want := append(tables.RelationKey(22732, tables.Attends, 5802), 0)
	if n != MaxPageSize || !bytes.Equal(start, want) || err != nil {
		t.Errorf("after a cursor: %d, %x, %v; want %d, %x", n, start, err, MaxPageSize, want)
	}
	if !bytes.HasPrefix(start, prefix) {
		t.Errorf("start row %x leaves the prefix %x", start, prefix)
	}
	// A prefix-less connection (roles by name) takes variable cursors.
	names := pageQuery{kind: cursorRoleNames, maxRowLen: 4 * MaxRoleNameLength}
	cur = encodeCursor(cursorRoleNames, []byte("admin"))
	if _, start, err := names.start(nil, &cur); err != nil || string(start) != "admin\x00" {
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
		edges, info := buildPage(items, keys, c.n, cursor, edge)
		if strings.Join(edges, ",") != strings.Join(c.edges, ",") || info.HasNextPage != c.next || info.HasPreviousPage ||
			*info.StartCursor != c.start || *info.EndCursor != c.to {
			t.Errorf("n=%d: %v %+v", c.n, edges, info)
		}
	}
	edges, info := buildPage[int, string](nil, nil, 3, cursor, edge)
	if len(edges) != 0 || info.HasNextPage || info.StartCursor != nil || info.EndCursor != nil {
		t.Errorf("empty page: %v %+v", edges, info)
	}
}
