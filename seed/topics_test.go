package seed

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/weibohbase/gateway/dataset"
	"github.com/weibohbase/gateway/fsck"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/internal/domaintest"
	"github.com/weibohbase/gateway/weibo/tables"
	"github.com/weibohbase/gateway/weibo/topic/hashtag"
)

// TestSeedTopicsBounded imports a post of 10,000 characters of "#1##2#…"
// pairs and a post naming its 31st pair and its first: only the first
// post's first 30 names are its topics (hashtag.MaxTopics), as a publish
// makes them, so the lists and counters hold 30 topics of it and fsck,
// over the imported store, finds nothing.
func TestSeedTopicsBounded(t *testing.T) {
	var spam strings.Builder
	pairs := 0
	for i := 1; ; i++ {
		p := "#" + strconv.Itoa(i) + "#"
		if spam.Len()+len(p) > 10000 {
			break
		}
		spam.WriteString(p)
		pairs++
	}
	posts := "date,userid,text\n" +
		"2020-03-01,1," + spam.String() + "\n" +
		"2020-03-01,2,#31# and #1#\n"
	ds, err := dataset.Read(strings.NewReader("1 2\n2 1\n"), strings.NewReader(posts))
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Posts) != 2 || pairs < 1800 {
		t.Fatalf("%d posts, %d pairs", len(ds.Posts), pairs)
	}
	ctx := context.Background()
	st := newSeedStore(t)
	stats, err := Import(ctx, st, ds, seedTestOptions)
	if err != nil {
		t.Fatal(err)
	}
	hours := map[int64]bool{}
	for _, p := range ds.Posts {
		hours[tables.HourStart(p.Millis)] = true
	}
	// Entries: 30 and 2; topic rows: 1 to 31; and the hour rows.
	if want := int64(hashtag.MaxTopics + 2 + hashtag.MaxTopics + 1 + len(hours)); stats.Topics != want {
		t.Errorf("the topic phase wrote %d rows, want %d", stats.Topics, want)
	}
	if n := countRows(t, st, tables.TopicPosts); n != hashtag.MaxTopics+2 {
		t.Errorf("%d list entries, want %d", n, hashtag.MaxTopics+2)
	}
	for name, want := range map[string]int64{"1": 2, "30": 1, "31": 1, "32": 0, strconv.Itoa(pairs): 0} {
		r, err := st.Get(ctx, &hbase.Get{Table: tables.Topics, Row: tables.TopicKey(name)})
		if err != nil {
			t.Fatal(err)
		}
		if got := tables.TopicPostCount(r); got != want || r.Exists() != (want > 0) {
			t.Errorf("topic %q: postCount %d (row %v), want %d", name, got, r.Exists(), want)
		}
	}
	svc := domaintest.Service(t, st)
	rep, err := fsck.Run(ctx, svc, fsck.Options{})
	if err != nil || len(rep.Issues) != 0 {
		t.Errorf("fsck over the import: %v %+v", err, rep.Issues)
	}
}
