package tables_test

import (
	"encoding/hex"
	"slices"
	"strings"
	"testing"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo/tables"
)

// unhex decodes hex with spaces (docs/schema.md's form).
func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestNotificationKeys checks the notifications' rowkeys byte for byte
// against docs/schema.md's example (user 22732 liking user 5802's post
// 5802_1583037296789 at 1583037356789) and that they decode back.
func TestNotificationKeys(t *testing.T) {
	post := tables.PostID{Author: 5802, Millis: 1583037296789}
	id := tables.NotificationID{Recipient: 5802, Kind: tables.NotifLike, Subject: tables.PostSubject(post), Gen: 1}
	subject := "00000000000016aa 0000017094603095 0000000000000000 0000000000000000"
	group := "01 00000000000016aa 67 6c " + subject + " fffffffffffffffe"
	index := "01 00000000000016aa 6e 7ffffe8f6b9ee50a 6c " + subject + " fffffffffffffffe"
	if got := tables.NotifGroupKey(id); !slices.Equal(got, unhex(t, group)) {
		t.Errorf("group key %x\nwant      %s", got, group)
	}
	if got := tables.NotifIndexKey(id, 1583037356789); !slices.Equal(got, unhex(t, index)) {
		t.Errorf("index key %x\nwant      %s", got, index)
	}
	if got, ok := tables.DecodeNotifGroupKey(unhex(t, group)); !ok || got != id {
		t.Errorf("decode group key = %+v, %v", got, ok)
	}
	if got, at, ok := tables.DecodeNotifIndexKey(unhex(t, index)); !ok || got != id || at != 1583037356789 {
		t.Errorf("decode index key = %+v, %d, %v", got, at, ok)
	}
	if len(tables.NotifGroupKey(id)) != tables.NotifGroupKeyLen || len(tables.NotifIndexKey(id, 1)) != tables.NotifIndexKeyLen {
		t.Error("key lengths")
	}
	// Generations list newest first; kinds and recipients do not mix.
	id2 := id
	id2.Gen = 2
	if string(tables.NotifGroupKey(id2)) >= string(tables.NotifGroupKey(id)) {
		t.Error("generation 2 sorts after generation 1")
	}
	for _, bad := range [][]byte{unhex(t, group)[:50], append(unhex(t, group), 0), unhex(t, "02"+group[2:]), unhex(t, index)} {
		if _, ok := tables.DecodeNotifGroupKey(bad); ok {
			t.Errorf("%x decodes as a group key", bad)
		}
	}
	if _, _, ok := tables.DecodeNotifIndexKey(unhex(t, group)); ok {
		t.Error("a group key decodes as an index key")
	}
	c := tables.CommentID{Post: post, Millis: 1583037356789, Author: 22732}
	if got, ok := tables.CommentSubject(c).Comment(); !ok || got != c {
		t.Errorf("comment subject = %+v, %v", got, ok)
	}
	if _, ok := tables.PostSubject(post).Comment(); ok {
		t.Error("a post subject names a comment")
	}
	if _, ok := tables.DaySubject(1583037356789).Post(); ok || tables.DaySubject(1583037356789)[1] != 18322 {
		t.Errorf("day subject %v", tables.DaySubject(1583037356789))
	}
}

// TestNotificationIDs checks the GraphQL form of notification ids.
func TestNotificationIDs(t *testing.T) {
	id := tables.NotificationID{Recipient: 5802, Kind: tables.NotifLike, Subject: tables.PostSubject(tables.PostID{Author: 5802, Millis: 1583037296789}), Gen: 1}
	const s = "notification:5802_l_5802_1583037296789_0_0_1"
	if id.String() != s {
		t.Fatalf("String = %s", id.String())
	}
	if got, err := tables.ParseNotificationID(s); err != nil || got != id {
		t.Fatalf("parse = %+v, %v", got, err)
	}
	if n, err := tables.ParseNodeID(s); err != nil || n.Kind != tables.NodeNotification || n.Notification != id || n.String() != s {
		t.Fatalf("node id = %+v, %v", n, err)
	}
	for _, bad := range []string{"notification:", "notification:5802_x_1_2_0_0_1", "notification:0_l_1_2_0_0_1", "notification:5802_l_1_2_0_0_0",
		"notification:5802_l_01_2_0_0_1", "notification:5802_l_1_2_0_0", "notification:5802_ll_1_2_0_0_1", "comment:5802_l_1_2_0_0_1"} {
		if _, err := tables.ParseNotificationID(bad); err == nil {
			t.Errorf("%q parses", bad)
		}
	}
}

// TestNotificationValues checks the cells: head, newest actors, the
// marker's extra bytes, mentions.
func TestNotificationValues(t *testing.T) {
	h := tables.NotifHead{At: 1583037356789, Read: true, Version: 7}
	if got := hex.EncodeToString(tables.EncodeNotifHead(h)); got != "0000017094611af5"+"72"+"0000000000000007" {
		t.Errorf("head = %s", got)
	}
	if got, ok := tables.DecodeNotifHead(tables.EncodeNotifHead(h)); !ok || got != h {
		t.Errorf("decode head = %+v, %v", got, ok)
	}
	if _, ok := tables.DecodeNotifHead([]byte("short")); ok {
		t.Error("a short head decodes")
	}
	actors := []tables.NotifActor{{User: 22732, At: 9}, {User: 1, At: 3}}
	if got := tables.DecodeNotifActors(tables.EncodeNotifActors(actors)); !slices.Equal(got, actors) {
		t.Errorf("actors = %+v", got)
	}
	g := tables.NotifGroup{Head: h, Count: 2, Newest: actors}
	r := &hbase.Result{}
	for q, v := range tables.NotifGroupValues(g) {
		r.Cells = append(r.Cells, &hbase.Cell{Family: tables.FamNotifSummary, Qualifier: q, Value: v})
	}
	r.Cells = append(r.Cells, &hbase.Cell{Family: tables.FamNotifActors, Qualifier: tables.NotifActorQualifier(22732), Value: tables.EncodeMillis(9)},
		&hbase.Cell{Family: tables.FamNotifActors, Qualifier: tables.NotifActorQualifier(5), Value: []byte{}})
	hbase.SortCells(r.Cells)
	if got, ok := tables.DecodeNotifGroup(r); !ok || got.Head != h || got.Count != 2 || !slices.Equal(got.Newest, actors) {
		t.Errorf("group = %+v, %v", got, ok)
	}
	if got := tables.NotifActors(r); len(got) != 1 || got[0] != (tables.NotifActor{User: 22732, At: 9}) {
		t.Errorf("actors present = %+v (an emptied cell is no actor)", got)
	}
	subject := tables.PostSubject(tables.PostID{Author: 5802, Millis: 1583037296789})
	for _, left := range []int64{0, 42} {
		extra := tables.EncodeNotifyExtra(tables.NotifRepost, subject, 7, left)
		if k, s, at, l, ok := tables.DecodeNotifyExtra(extra); !ok || k != tables.NotifRepost || s != subject || at != 7 || l != left {
			t.Errorf("extra %x decodes to %c %v %d %d %v", extra, k, s, at, l, ok)
		}
	}
	if _, _, _, _, ok := tables.DecodeNotifyExtra(nil); ok {
		t.Error("a markNotificationsRead's marker decodes as a notification")
	}
	ms := []tables.Mention{{User: 22732, Name: "u22732"}, {User: 100000001, Name: "alice"}}
	enc := tables.EncodeMentions(ms)
	if hex.EncodeToString(enc[:15]) != "00000000000058cc"+"06"+hex.EncodeToString([]byte("u22732")) {
		t.Errorf("mentions = %x", enc)
	}
	if got := tables.DecodeMentions(enc); !slices.Equal(got, ms) {
		t.Errorf("decode mentions = %+v", got)
	}
	if got := tables.DecodeMentions(enc[:20]); len(got) != 1 {
		t.Errorf("a cut value decodes to %+v", got)
	}
}
