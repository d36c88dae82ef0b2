package server_test

import (
	"os"
	"testing"

	"github.com/weibohbase/gateway/dataset"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/hbase/embedded"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/seed"
	"github.com/weibohbase/gateway/weibo/tables"
)

// loadFull loads the full data set from ../shared/datasets (or
// $GATEWAY_DATASETS); outside CI it skips when the files are absent.
func loadFull(t *testing.T) *dataset.Dataset {
	t.Helper()
	edges, posts, ok := dataset.FullFiles()
	if !ok {
		if os.Getenv("CI") == "true" {
			t.Fatal("the full data set is missing: CI has ../shared/datasets beside the clone")
		}
		t.Skip("the full data set is not beside the repository (../shared/datasets)")
	}
	ds, err := dataset.Load(edges, posts)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// spread returns the busiest users plus users spread over the id range.
func spread(ds *dataset.Dataset) []uint64 {
	users := busiest(ds, 3)
	for i := 1; i <= 5; i++ {
		users = append(users, ds.Users[i*len(ds.Users)/6].ID)
	}
	return users
}

// TestFullDataSet imports the whole real data set (76,851 users, 355,060
// follows, 203,571 posts, 10,898,214 home-timeline entries) into an on-disk
// embedded store and checks users against the import mapping over GraphQL,
// and the topics (pages, postCount, topics, topTopics, trendingTopics)
// against a recomputation from the data set with the topic rule.
func TestFullDataSet(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	ds := loadFull(t)
	st, err := embedded.Open(t.TempDir(), embedded.WithNoSync())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	stats, err := seed.Import(t.Context(), st, ds, seed.Options{BcryptCost: 4})
	if err != nil {
		t.Fatal(err)
	}
	if stats.Users != 76851 || stats.Relations != 2*355060 || stats.Posts != 203571 || stats.Inbox != 10898214 {
		t.Fatalf("imported %+v; want 76,851 users, 710,120 relation rows, 203,571 posts, 10,898,214 inbox rows", stats)
	}
	t.Logf("full import into embedded: %s (%.0f rows/s); topics: %d rows in %s", stats.Elapsed, stats.RowsPerSecond(),
		stats.Topics, stats.TableElapsed[tables.Topics])
	g := startGateway(t, st)
	checkSeeded(t, g, ds, spread(ds))
	checkTopics(t, g, ds) // topics_test.go
}

// TestFullDataSetOneDayHBase imports one full day of the real data set
// (every user and follow, the posts of 2020-03-01 as the mapping over the
// whole file assigns them) into the real HBase, in a namespace of its own so
// that it does not mix with the demo subset's users, and checks users
// against the mapping over GraphQL, and the topics as TestFullDataSet does.
func TestFullDataSetOneDayHBase(t *testing.T) {
	raw := testenv.HBase(t)
	ds := loadFull(t)
	day, _ := dataset.DayStart("2020-03-01")
	end := day.AddDate(0, 0, 1)
	ds = ds.KeepPosts(func(p dataset.Post) bool { return p.Millis >= day.UnixMilli() && p.Millis < end.UnixMilli() })
	st := hbase.WithNamespace(raw, tables.Namespace, "weibo_oneday")
	stats, err := seed.Import(t.Context(), st, ds, seed.Options{BcryptCost: 4})
	if err != nil {
		t.Fatal(err)
	}
	if stats.Users != 76851 || stats.Posts != int64(len(ds.Posts)) || stats.Inbox != ds.InboxEntries() {
		t.Fatalf("imported %+v; want 76,851 users, %d posts, %d inbox rows", stats, len(ds.Posts), ds.InboxEntries())
	}
	t.Logf("one day into HBase: %d posts, %d inbox rows, %s (%.0f rows/s); topics: %d rows in %s", stats.Posts, stats.Inbox,
		stats.Elapsed, stats.RowsPerSecond(), stats.Topics, stats.TableElapsed[tables.Topics])
	g := startGateway(t, st)
	checkSeeded(t, g, ds, spread(ds))
	checkTopics(t, g, ds) // topics_test.go
}
