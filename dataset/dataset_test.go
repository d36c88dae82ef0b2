package dataset

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestFullDataSet(t *testing.T) {
	edges, posts, ok := FullFiles()
	if !ok {
		t.Skipf("full data set not found (set %s)", EnvDatasets)
	}
	if testing.Short() {
		t.Skip("-short: skipping the full data set")
	}
	ds, err := Load(edges, posts)
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, got, want int64) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %d, want %d", name, got, want)
		}
	}
	check("users", int64(len(ds.Users)), 76851)
	check("follows", int64(len(ds.Follows)), 355060)
	check("posts", int64(len(ds.Posts)), 203571)
	check("inbox entries", ds.InboxEntries(), 10898214)
	// Figures stated in /work/shared/datasets/README.md.
	check("edge lines", int64(ds.EdgeLines), 355074)
	check("self-loops", int64(ds.SelfLoops), 14)
	check("duplicate edges", int64(ds.DuplicateEdges), 0)
	check("csv rows", int64(ds.Rows), 221677)
	check("blank rows", int64(ds.BlankRows), 3)
	check("dropped rows", int64(ds.Rows-ds.BlankRows-len(ds.Posts)), int64(ds.DroppedRows))
	for i, u := range ds.Users {
		if u.ID != uint64(i+1) {
			t.Fatalf("Users[%d].ID = %d, want ids exactly 1..76851", i, u.ID)
		}
	}
	if u, _ := ds.User(22732); u.Username != "u22732" {
		t.Errorf("User(22732).Username = %q", u.Username)
	}
	// Times are unique and increase in file order; first and last of a day.
	for i := 1; i < len(ds.Posts); i++ {
		if ds.Posts[i].Millis <= ds.Posts[i-1].Millis {
			t.Fatalf("Posts[%d].Millis %d <= Posts[%d].Millis %d", i, ds.Posts[i].Millis, i-1, ds.Posts[i-1].Millis)
		}
	}
	first := time.Date(2020, 3, 1, 0, 0, 0, 0, Beijing).UnixMilli()
	if ds.Posts[0].Millis != first {
		t.Errorf("first post at %v, want 2020-03-01 00:00:00 +08:00", ds.Posts[0].CreatedAt())
	}
	if last := ds.Posts[len(ds.Posts)-1].CreatedAt(); !last.Before(time.Date(2020, 3, 21, 0, 0, 0, 0, Beijing)) || last.Before(time.Date(2020, 3, 20, 23, 59, 0, 0, Beijing)) {
		t.Errorf("last post at %v, want late on 2020-03-20", last)
	}
	// The most followed user (node with in-degree 1,055) wrote the most posts
	// (552, the busiest userid).
	top := ds.RankUsers()[0]
	if ds.FanCount(top) != 1055 || ds.PostCount(top) != 552 {
		t.Errorf("top user %d: %d fans, %d posts; want 1055 fans, 552 posts", top, ds.FanCount(top), ds.PostCount(top))
	}
	var maxFollow int
	for _, u := range ds.Users {
		maxFollow = max(maxFollow, ds.FollowCount(u.ID))
	}
	check("max out-degree", int64(maxFollow), 786)
	var longest int
	for _, p := range ds.Posts {
		longest = max(longest, len([]rune(p.Text)))
	}
	check("longest text (runes)", int64(longest), 6364)
}

func TestRankAuthors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		counts map[uint64]int
		want   []uint64
	}{
		{"empty", map[uint64]int{}, []uint64{}},
		{"by count", map[uint64]int{5: 1, 6: 3, 7: 2}, []uint64{6, 7, 5}},
		{"ties by id as integer", map[uint64]int{100: 2, 99: 2, 1000000000: 2, 24151: 1}, []uint64{99, 100, 1000000000, 24151}},
		{"mixed", map[uint64]int{9: 1, 3: 4, 8: 4, 1: 1}, []uint64{3, 8, 1, 9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := RankAuthors(tc.counts); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("RankAuthors(%v) = %v, want %v", tc.counts, got, tc.want)
			}
		})
	}
}

func TestPostMillis(t *testing.T) {
	d1, err := DayStart("2020-03-01")
	if err != nil {
		t.Fatal(err)
	}
	base := int64(1582992000000) // 2020-03-01T00:00:00+08:00 = 2020-02-29T16:00:00Z
	if d1.UnixMilli() != base {
		t.Fatalf("DayStart(2020-03-01) = %v (%d ms)", d1, d1.UnixMilli())
	}
	for _, tc := range []struct {
		k, n int
		want int64 // seconds after midnight
	}{
		{0, 1, 0},
		{0, 3, 0},
		{1, 3, 28800},
		{2, 3, 57600},
		{1, 7, 12342},         // 86400/7 = 12342.86 -> floor
		{6, 7, 74057},         // 518400/7 = 74057.14
		{11253, 11254, 86392}, // last row of 2020-03-01: 972259200/11254 = 86392.32
		{1, 86400, 1},
		{1, 100000, 0}, // more rows than seconds: floors collide (not in the project's files)
	} {
		if got := PostMillis(d1, tc.k, tc.n); got != base+tc.want*1000 {
			t.Errorf("PostMillis(k=%d, n=%d) = +%d ms, want +%d s", tc.k, tc.n, got-base, tc.want)
		}
	}
	for _, bad := range []string{"2020-3-1", "2020-02-30", "20200301", ""} {
		if _, err := DayStart(bad); err == nil {
			t.Errorf("DayStart(%q): no error", bad)
		}
	}
}

// The hand-made case: graph 1..6, posts over two days with a blank row, a
// dropped author and a text with an embedded newline and outer spaces.
const (
	smallEdges = "1 2\n3 2\n4 2\n2 2\n1 3\n5 3\n2 1\n6 4\n6 5\n"
	// fans: 2:{1,3,4} 3:{1,5} 1:{2} 4:{6} 5:{6} 6:{}
	// graph ranking by fans desc, id asc: 2, 3, 1, 4, 5, 6
	smallPosts = "date,userid,text\n" +
		"2020-03-01,500,a\n" + // k=0 of 4
		"2020-03-01,40,  \n" + // blank: ignored, still counted in k
		"2020-03-01,40,b\n" + // k=2
		"2020-03-01,500,\"multi\nline, \"\"quoted\"\" \"\n" + // k=3
		"2020-03-02,7,c\n" + // k=0 of 7 (dropped author)
		"2020-03-02,40,d\n" + // k=1
		"2020-03-02,9999999999,e\n" + // k=2 (dropped author)
		"2020-03-02,1,f\n" + // k=3
		"2020-03-02,2,g\n" + // k=4
		"2020-03-02,3,h\n" + // k=5
		"2020-03-02,4,i" // k=6, no final newline
)

func TestSmall(t *testing.T) {
	ds, err := Read(strings.NewReader(smallEdges), strings.NewReader(smallPosts))
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Users) != 6 || len(ds.Follows) != 8 || ds.SelfLoops != 1 || ds.EdgeLines != 9 {
		t.Fatalf("users %d follows %d self-loops %d lines %d", len(ds.Users), len(ds.Follows), ds.SelfLoops, ds.EdgeLines)
	}
	if got := ds.RankUsers(); !reflect.DeepEqual(got, []uint64{2, 3, 1, 4, 5, 6}) {
		t.Fatalf("RankUsers = %v", got)
	}
	if got := ds.Fans(2); !reflect.DeepEqual(got, []uint64{1, 3, 4}) {
		t.Errorf("Fans(2) = %v", got)
	}
	if got := ds.Following(6); !reflect.DeepEqual(got, []uint64{4, 5}) {
		t.Errorf("Following(6) = %v", got)
	}
	// Author counts (blank row excluded): 500:2, 40:2, 7:1, 9999999999:1,
	// 1:1, 2:1, 3:1, 4:1. Ranking: 40, 500, 1, 2, 3, 4, 7, 9999999999.
	// Graph users: 2, 3, 1, 4, 5, 6. So 40->2, 500->3, 1->1, 2->4, 3->5, 4->6;
	// authors 7 and 9999999999 are dropped.
	wantSrc := map[uint64]uint64{2: 40, 3: 500, 1: 1, 4: 2, 5: 3, 6: 4}
	for _, u := range ds.Users {
		if u.SourceUserID != wantSrc[u.ID] || u.Username != "u"+strconv.FormatUint(u.ID, 10) {
			t.Errorf("user %+v, want source %d", u, wantSrc[u.ID])
		}
	}
	d1 := time.Date(2020, 3, 1, 0, 0, 0, 0, Beijing).Unix()
	d2 := d1 + 86400
	at := func(day int64, k, n int64) int64 { return (day + k*86400/n) * 1000 }
	want := []Post{
		{Author: 3, Millis: at(d1, 0, 4), Text: "a"},
		{Author: 2, Millis: at(d1, 2, 4), Text: "b"},
		{Author: 3, Millis: at(d1, 3, 4), Text: "multi\nline, \"quoted\" "},
		{Author: 2, Millis: at(d2, 1, 7), Text: "d"},
		{Author: 1, Millis: at(d2, 3, 7), Text: "f"},
		{Author: 4, Millis: at(d2, 4, 7), Text: "g"},
		{Author: 5, Millis: at(d2, 5, 7), Text: "h"},
		{Author: 6, Millis: at(d2, 6, 7), Text: "i"},
	}
	if !reflect.DeepEqual(ds.Posts, want) {
		t.Fatalf("Posts =\n%+v\nwant\n%+v", ds.Posts, want)
	}
	if ds.Rows != 11 || ds.BlankRows != 1 || ds.DroppedRows != 2 || ds.Authors != 8 {
		t.Errorf("rows %d blank %d dropped %d authors %d", ds.Rows, ds.BlankRows, ds.DroppedRows, ds.Authors)
	}
	// Inbox entries: author fans+1 per post: 3:(2+1)*2, 2:(3+1)*2, 1:2, 4:2, 5:2, 6:1.
	if got := ds.InboxEntries(); got != 6+8+2+2+2+1 {
		t.Errorf("InboxEntries = %d", got)
	}
	// Home timeline of 1: self (1) + follows 2, 3.
	tl := ds.HomeTimeline(1, 0)
	wantTL := []Post{want[4], want[3], want[2], want[1], want[0]}
	if !reflect.DeepEqual(tl, wantTL) {
		t.Errorf("HomeTimeline(1) = %+v, want %+v", tl, wantTL)
	}
	if tl := ds.HomeTimeline(1, 2); !reflect.DeepEqual(tl, wantTL[:2]) {
		t.Errorf("HomeTimeline(1, 2) = %+v", tl)
	}
	if tl := ds.HomeTimeline(6, 10); !reflect.DeepEqual(tl, []Post{want[7], want[6], want[5]}) {
		t.Errorf("HomeTimeline(6) = %+v", tl)
	}
	if tl := ds.HomeTimeline(42, 10); tl != nil {
		t.Errorf("HomeTimeline(unknown) = %+v", tl)
	}
}

func TestNewerFirstTies(t *testing.T) {
	a := Post{Author: 9, Millis: 5}
	b := Post{Author: 3, Millis: 5}
	c := Post{Author: 1, Millis: 4}
	if NewerFirst(b, a) >= 0 || NewerFirst(a, c) >= 0 || NewerFirst(c, b) <= 0 {
		t.Error("NewerFirst: want Millis desc, then author asc")
	}
}

func TestReadErrors(t *testing.T) {
	for _, tc := range []struct{ name, edges, posts string }{
		{"edge missing column", "1 2\n3\n", "date,userid,text\n"},
		{"edge two spaces", "1  2\n", "date,userid,text\n"},
		{"edge sign", "1 -2\n", "date,userid,text\n"},
		{"edge node 0", "0 2\n", "date,userid,text\n"},
		{"blank line", "1 2\n\n", "date,userid,text\n"},
		{"bad header", "1 2\n", "userid,text\n"},
		{"empty posts", "1 2\n", ""},
		{"bad userid", "1 2\n", "date,userid,text\n2020-03-01,x1,a\n"},
		{"bad date", "1 2\n", "date,userid,text\n2020/03/01,1,a\n"},
		{"four fields", "1 2\n", "date,userid,text\n2020-03-01,1,a,b\n"},
	} {
		if _, err := Read(strings.NewReader(tc.edges), strings.NewReader(tc.posts)); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

// TestLoadFiles loads a gzipped and a plain file (Open detects gzip by its
// magic bytes) and gets what Read gets.
func TestLoadFiles(t *testing.T) {
	dir := t.TempDir()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(smallEdges))
	zw.Close()
	edges, posts := filepath.Join(dir, "e.gz"), filepath.Join(dir, "p.csv")
	if err := os.WriteFile(edges, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(posts, []byte(smallPosts), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Load(edges, posts)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Read(strings.NewReader(smallEdges), strings.NewReader(smallPosts))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Error("Load(files) differs from Read(strings)")
	}
	n := 0
	if err := ReadEdgesFile(edges, func(Edge) error { n++; return nil }); err != nil || n != 9 {
		t.Errorf("ReadEdgesFile: %d edges, %v", n, err)
	}
	if _, err := Load(filepath.Join(dir, "missing"), posts); err == nil {
		t.Error("Load(missing file): no error")
	}
}
