package seed

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/weibohbase/gateway/dataset"
	"github.com/weibohbase/gateway/demo"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/hbase/embedded"
	"github.com/weibohbase/gateway/internal/testenv"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/account"
	"github.com/weibohbase/gateway/weibo/tables"
)

// seedTestOptions keeps the one bcrypt hash cheap.
var seedTestOptions = Options{Password: "demo-pass-1", BcryptCost: bcrypt.MinCost, BatchSize: 1000}

// countRows counts the rows of table (weibo:users without the id sequence row).
func countRows(t *testing.T, st hbase.Store, table string) int64 {
	t.Helper()
	var n int64
	s := &hbase.Scan{Table: table}
	if table == tables.Users {
		s.Stop = tables.SeqKey
	}
	if err := st.Scan(context.Background(), s, func(*hbase.Result) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// dumpTable renders every newest cell of table as "row fam:qual=value" lines.
func dumpTable(t *testing.T, st hbase.Store, table string) []string {
	t.Helper()
	var out []string
	err := st.Scan(context.Background(), &hbase.Scan{Table: table}, func(r *hbase.Result) error {
		for _, fam := range []string{tables.FamInfo, tables.FamCount, tables.FamRel, tables.FamPost, tables.FamInbox, tables.FamName} {
			for _, c := range r.Family(fam) {
				out = append(out, fmt.Sprintf("%x %s:%s=%x", r.Row, c.Family, c.Qualifier, c.Value))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// expectedCells renders what Import must write for ds, computed with the
// documented rowkey codecs (package weibo/tables) only, in dumpTable's format. The
// password hash is taken from the store (bcrypt salts it).
func expectedCells(ds *dataset.Dataset, hash []byte) map[string][]string {
	cell := func(row []byte, fam, qual string, v []byte) string {
		return fmt.Sprintf("%x %s:%s=%x", row, fam, qual, v)
	}
	epoch := tables.U64(uint64(Epoch.UnixMilli()))
	out := map[string][]string{}
	add := func(table string, s string) { out[table] = append(out[table], s) }
	for _, u := range ds.Users {
		id := weibo.UserID(u.ID)
		k := tables.UserKey(id)
		add(tables.Users, cell(k, tables.FamInfo, tables.ColUsername, []byte(u.Username)))
		add(tables.Users, cell(k, tables.FamInfo, tables.ColPassword, hash))
		add(tables.Users, cell(k, tables.FamInfo, tables.ColCreated, epoch))
		add(tables.Users, cell(k, tables.FamCount, tables.ColFollows, tables.U64(uint64(ds.FollowCount(u.ID)))))
		add(tables.Users, cell(k, tables.FamCount, tables.ColFans, tables.U64(uint64(ds.FanCount(u.ID)))))
		add(tables.Users, cell(k, tables.FamCount, tables.ColPosts, tables.U64(uint64(ds.PostCount(u.ID)))))
		add(tables.Usernames, cell(tables.UsernameKey(u.Username), tables.FamName, tables.ColUID, tables.U64(u.ID)))
	}
	// The number of all users, recounted after the import.
	add(tables.Users, cell(tables.UserCountKey, tables.FamCount, tables.ColUserCount, tables.U64(uint64(len(ds.Users)))))
	for _, e := range ds.Follows {
		a, b := weibo.UserID(e.Follower), weibo.UserID(e.Followee)
		add(tables.Relations, cell(tables.RelationKey(a, tables.Attends, b), tables.FamRel, tables.ColRelSet, epoch))
		add(tables.Relations, cell(tables.RelationKey(b, tables.Fans, a), tables.FamRel, tables.ColRelSet, epoch))
	}
	for _, p := range ds.Posts {
		id := weibo.PostID{Author: weibo.UserID(p.Author), Millis: p.Millis}
		u, _ := ds.User(p.Author)
		add(tables.Content, cell(tables.ContentKey(id), tables.FamPost, tables.ColText, []byte(p.Text)))
		add(tables.Content, cell(tables.ContentKey(id), tables.FamPost, tables.ColAuthorName, []byte(u.Username)))
		add(tables.Inbox, cell(tables.InboxKey(id.Author, id), tables.FamInbox, tables.ColInboxAt, nil))
		for _, f := range ds.Fans(p.Author) {
			add(tables.Inbox, cell(tables.InboxKey(weibo.UserID(f), id), tables.FamInbox, tables.ColInboxAt, nil))
		}
	}
	for _, v := range out {
		slices.Sort(v)
	}
	return out
}

// smallDataset is a hand-made data set: a self-loop, a reciprocal follow,
// two days of posts, a blank and a dropped row, a multi-line text.
func smallDataset(t *testing.T) *dataset.Dataset {
	t.Helper()
	edges := "1 2\n3 2\n4 2\n2 2\n1 3\n5 3\n2 1\n6 4\n6 5\n70000 1\n"
	posts := "date,userid,text\n" +
		"2020-03-01,500,a\n" +
		"2020-03-01,40,  \n" +
		"2020-03-01,40,b\n" +
		"2020-03-01,500,\"multi\nline, \"\"quoted\"\" \"\n" +
		"2020-03-02,7,c\n" +
		"2020-03-02,40,d\n" +
		"2020-03-02,9999999999,e\n" +
		"2020-03-02,1,f\n" +
		"2020-03-02,2,g\n" +
		"2020-03-02,3,\u4e2d\u6587 ?\n" +
		"2020-03-02,4,i\n" +
		"2020-03-02,77,j\n"
	ds, err := dataset.Read(strings.NewReader(edges), strings.NewReader(posts))
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// TestSeedSmallExact seeds a hand-made data set and compares every cell of
// every table with what the documented codecs say, for several batch sizes
// and parallelisms, and after a re-run.
func TestSeedSmallExact(t *testing.T) {
	ds := smallDataset(t)
	ctx := context.Background()
	for _, opt := range []struct{ batch, par int }{{1, 1}, {3, 2}, {1000, 4}} {
		t.Run(fmt.Sprintf("batch%d_par%d", opt.batch, opt.par), func(t *testing.T) {
			st := newSeedStore(t)
			opts := seedTestOptions
			opts.BatchSize, opts.Parallelism = opt.batch, opt.par
			for run := 0; run < 2; run++ {
				stats, err := Import(ctx, st, ds, opts)
				if err != nil {
					t.Fatal(err)
				}
				want := Stats{Users: 7, Usernames: 7, Relations: 18, Posts: int64(len(ds.Posts)), Inbox: ds.InboxEntries()}
				if stats.Users != want.Users || stats.Usernames != want.Usernames || stats.Relations != want.Relations ||
					stats.Posts != want.Posts || stats.Inbox != want.Inbox {
					t.Fatalf("run %d: stats %+v, want %+v", run, stats, want)
				}
				r, err := st.Get(ctx, &hbase.Get{Table: tables.Users, Row: tables.UserKey(1)})
				if err != nil {
					t.Fatal(err)
				}
				hash := r.Value(tables.FamInfo, tables.ColPassword)
				if err := bcrypt.CompareHashAndPassword(hash, []byte(opts.Password)); err != nil {
					t.Fatalf("password hash: %v", err)
				}
				exp := expectedCells(ds, hash)
				for _, table := range []string{tables.Users, tables.Usernames, tables.Relations, tables.Content, tables.Inbox} {
					got := dumpTable(t, st, table)
					if !slices.Equal(got, exp[table]) {
						t.Errorf("run %d: %s:\n got %q\nwant %q", run, table, got, exp[table])
					}
				}
			}
		})
	}
}

// TestSeedDemo seeds the demo subset and reads it back through the Store
// with the documented rowkeys.
func TestSeedDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	ds, err := demo.Load()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st := newSeedStore(t)
	stats, err := Import(ctx, st, ds, seedTestOptions)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("demo seed: %d rows in %v (%.0f rows/s); per table %v", stats.Rows(), stats.Elapsed, stats.RowsPerSecond(), stats.TableElapsed)
	want := map[string]int64{
		tables.Users:     20088,
		tables.Usernames: 20088,
		tables.Relations: 2 * 50122,
		tables.Content:   21673,
		tables.Inbox:     271307,
	}
	gotStats := map[string]int64{tables.Users: stats.Users, tables.Usernames: stats.Usernames,
		tables.Relations: stats.Relations, tables.Content: stats.Posts, tables.Inbox: stats.Inbox}
	for table, n := range want {
		if gotStats[table] != n {
			t.Errorf("stats %s = %d, want %d", table, gotStats[table], n)
		}
		if got := countRows(t, st, table); got != n {
			t.Errorf("%s has %d rows, want %d", table, got, n)
		}
	}

	// A few users: the longest timeline, the most followed, a follower of
	// few, someone who only posts, someone with an empty timeline.
	var longest, quiet uint64
	var longestN int
	for _, u := range ds.Users {
		n := len(ds.TimelineIndexes(u.ID))
		if n > longestN {
			longest, longestN = u.ID, n
		}
		if n == 0 && quiet == 0 {
			quiet = u.ID
		}
	}
	top := ds.RankUsers()[0]
	users := []uint64{longest, top, 5802, 22, quiet}
	for _, uid := range users {
		checkUser(t, st, ds, uid)
	}

	// A re-run writes the same cells: same counts, same timeline.
	stats2, err := Import(ctx, st, ds, seedTestOptions)
	if err != nil {
		t.Fatal(err)
	}
	if stats2.Rows() != stats.Rows() {
		t.Errorf("re-run wrote %d rows, first run %d", stats2.Rows(), stats.Rows())
	}
	for table, n := range want {
		if got := countRows(t, st, table); got != n {
			t.Errorf("after re-run %s has %d rows, want %d", table, got, n)
		}
	}
	checkUser(t, st, ds, longest)
}

// checkUser compares uid's users, usernames, relations, content and inbox
// rows with the data set.
func checkUser(t *testing.T, st hbase.Store, ds *dataset.Dataset, uid uint64) {
	t.Helper()
	ctx := context.Background()
	u, ok := ds.User(uid)
	if !ok {
		t.Fatalf("no user %d in the data set", uid)
	}
	id := weibo.UserID(uid)
	r, err := st.Get(ctx, &hbase.Get{Table: tables.Users, Row: tables.UserKey(id)})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(r.Value(tables.FamInfo, tables.ColUsername)); got != u.Username {
		t.Errorf("user %d: username %q", uid, got)
	}
	if got := int64(tables.DecodeU64(r.Value(tables.FamInfo, tables.ColCreated))); got != Epoch.UnixMilli() {
		t.Errorf("user %d: created %d", uid, got)
	}
	for col, want := range map[string]int{tables.ColFollows: ds.FollowCount(uid), tables.ColFans: ds.FanCount(uid), tables.ColPosts: ds.PostCount(uid)} {
		if got := tables.DecodeU64(r.Value(tables.FamCount, col)); got != uint64(want) {
			t.Errorf("user %d: counter %s = %d, want %d", uid, col, got, want)
		}
	}
	if err := bcrypt.CompareHashAndPassword(r.Value(tables.FamInfo, tables.ColPassword), []byte(seedTestOptions.Password)); err != nil {
		t.Errorf("user %d: password: %v", uid, err)
	}
	r, err = st.Get(ctx, &hbase.Get{Table: tables.Usernames, Row: tables.UsernameKey(u.Username)})
	if err != nil {
		t.Fatal(err)
	}
	if got := tables.DecodeU64(r.Value(tables.FamName, tables.ColUID)); got != uid {
		t.Errorf("usernames %s -> %d", u.Username, got)
	}

	// Relations: follows and fans lists, in rowkey (= id) order.
	for _, dir := range []tables.Dir{tables.Attends, tables.Fans} {
		want := ds.Following(uid)
		if dir == tables.Fans {
			want = ds.Fans(uid)
		}
		rows, err := hbase.ScanAll(ctx, st, &hbase.Scan{Table: tables.Relations, Prefix: tables.RelationPrefix(id, dir)})
		if err != nil {
			t.Fatal(err)
		}
		got := make([]uint64, 0, len(rows))
		for _, row := range rows {
			owner, d, other, ok := tables.DecodeRelationKey(row.Row)
			if !ok || owner != id || d != dir {
				t.Fatalf("user %d: relation row %x does not decode as %c", uid, row.Row, dir)
			}
			got = append(got, uint64(other))
		}
		if !slices.Equal(got, want) {
			t.Errorf("user %d relations %c: %d rows, want %d", uid, dir, len(got), len(want))
		}
	}

	// Content: the user's posts newest first.
	rows, err := hbase.ScanAll(ctx, st, &hbase.Scan{Table: tables.Content, Prefix: tables.ContentPrefix(id)})
	if err != nil {
		t.Fatal(err)
	}
	posts := ds.PostsOf(uid)
	if len(rows) != len(posts) {
		t.Errorf("user %d: %d content rows, want %d", uid, len(rows), len(posts))
	}
	for i, row := range rows {
		if i >= len(posts) {
			break
		}
		want := ds.Posts[posts[len(posts)-1-i]]
		pid, ok := tables.DecodeContentKey(row.Row)
		if !ok || pid != (weibo.PostID{Author: id, Millis: want.Millis}) ||
			string(row.Value(tables.FamPost, tables.ColText)) != want.Text || string(row.Value(tables.FamPost, tables.ColAuthorName)) != u.Username {
			t.Errorf("user %d content row %d: %v %q, want %+v", uid, i, pid, row.Value(tables.FamPost, tables.ColText), want)
			break
		}
	}

	// Inbox: the whole home timeline, and a first page of 20.
	for _, limit := range []int{0, 20} {
		rows, err := hbase.ScanAll(ctx, st, &hbase.Scan{Table: tables.Inbox, Prefix: tables.InboxPrefix(id), Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		want := ds.HomeTimeline(uid, limit)
		if len(rows) != len(want) {
			t.Errorf("user %d inbox (limit %d): %d rows, want %d", uid, limit, len(rows), len(want))
			continue
		}
		for i, row := range rows {
			owner, pid, ok := tables.DecodeInboxKey(row.Row)
			if !ok || owner != id || pid != (weibo.PostID{Author: weibo.UserID(want[i].Author), Millis: want[i].Millis}) {
				t.Errorf("user %d inbox row %d: %v, want %d_%d", uid, i, pid, want[i].Author, want[i].Millis)
				break
			}
		}
	}
}

func TestSeedRejects(t *testing.T) {
	ctx := context.Background()
	st := newSeedStore(t)
	ds := smallDataset(t)
	if _, err := Import(ctx, st, ds, Options{Password: "short"}); err == nil {
		t.Error("Seed with a 5-byte password: no error")
	}
	big, err := dataset.Read(strings.NewReader(fmt.Sprintf("1 %d\n", account.RegisteredIDBase)), strings.NewReader("date,userid,text\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Import(ctx, st, big, seedTestOptions); err == nil {
		t.Error("Seed with a user id at account.RegisteredIDBase: no error")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Import(cctx, st, ds, seedTestOptions); err == nil {
		t.Error("Seed with a cancelled context: no error")
	}
}

// TestSeedProgress checks that a progress bar is drawn when asked for.
func TestSeedProgress(t *testing.T) {
	var buf bytes.Buffer
	opts := seedTestOptions
	opts.Progress = &buf
	if _, err := Import(context.Background(), newSeedStore(t), smallDataset(t), opts); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "seed") {
		t.Errorf("progress output %q", buf.String())
	}
}

// newSeedStore opens an empty in-memory embedded store, closed at the end of the test.
func newSeedStore(t testing.TB) hbase.StoreAdmin { return testenv.Embedded(t) }

// BenchmarkSeedFull imports the FULL data set (76,851 users, 10.9M inbox
// rows) into a fresh persistent embedded store on disk (opened WithNoSync,
// under $TMPDIR, default /tmp) once per iteration, Close (the final sync)
// included; run it once with
//
//	go test ./seed -run XXX -bench SeedFull -benchtime 1x
//
// GATEWAY_SEED_PARALLELISM and GATEWAY_SEED_BATCH override the options'
// defaults. It reports rows/s, and skips when the full files are absent.
func BenchmarkSeedFull(b *testing.B) {
	edges, posts, ok := dataset.FullFiles()
	if !ok {
		b.Skipf("full data set not found (set %s)", dataset.EnvDatasets)
	}
	ds, err := dataset.Load(edges, posts)
	if err != nil {
		b.Fatal(err)
	}
	benchSeed(b, ds)
}

// BenchmarkSeedDemo is BenchmarkSeedFull on the demo subset.
func BenchmarkSeedDemo(b *testing.B) {
	ds, err := demo.Load()
	if err != nil {
		b.Fatal(err)
	}
	benchSeed(b, ds)
}

func benchSeed(b *testing.B, ds *dataset.Dataset) {
	opts := Options{}
	if v, err := strconv.Atoi(os.Getenv("GATEWAY_SEED_PARALLELISM")); err == nil {
		opts.Parallelism = v
	}
	if v, err := strconv.Atoi(os.Getenv("GATEWAY_SEED_BATCH")); err == nil {
		opts.BatchSize = v
	}
	var rows int64
	var total time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		t0 := time.Now()
		st, err := embedded.Open(dir, embedded.WithNoSync())
		if err != nil {
			b.Fatal(err)
		}
		stats, err := Import(context.Background(), st, ds, opts)
		if err != nil {
			b.Fatal(err)
		}
		if err := st.Close(); err != nil {
			b.Fatal(err)
		}
		el := time.Since(t0)
		rows += stats.Rows()
		total += el
		b.Logf("seeded %d rows in %v (Seed %v, %.0f rows/s; close+sync %v); per table %v; store %s",
			stats.Rows(), el.Round(time.Millisecond), stats.Elapsed.Round(time.Millisecond), stats.RowsPerSecond(),
			(el - stats.Elapsed).Round(time.Millisecond), stats.TableElapsed, duSize(dir))
	}
	b.ReportMetric(float64(rows)/total.Seconds(), "rows/s")
	b.ReportMetric(float64(rows)/float64(b.N), "rows/op")
}

// duSize returns the total size of the files under dir, for the log.
func duSize(dir string) string {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}
