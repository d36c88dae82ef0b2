package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"os"
	"time"

	"github.com/weibohbase/gateway/dataset"
	"github.com/weibohbase/gateway/demo"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/seed"
	"github.com/weibohbase/gateway/weibo/domain"
	"github.com/weibohbase/gateway/weibo/tables"
)

func runSeed(ctx context.Context, log *slog.Logger, args []string) error {
	fs := flag.NewFlagSet("seed", flag.ContinueOnError)
	var sf storeFlags
	sf.register(fs)
	edges := fs.String("edges", "", "follow graph: the gzipped edge list (\"A B\" = A follows B)")
	posts := fs.String("posts", "", "posts: the gzipped CSV date,userid,text")
	password := fs.String("password", env("GATEWAY_SEED_PASSWORD", seed.DefaultPassword), "password of every seeded user, 8-72 bytes (env GATEWAY_SEED_PASSWORD)")
	batch := fs.Int("batch", 0, "rows per batched put (0: default)")
	par := fs.Int("parallel", 0, "batched puts in flight (0: 1 for embedded, 4 for hbase)")
	quiet := fs.Bool("quiet", false, "no progress bar")
	from := fs.String("from", "", "import only posts written on or after this day, YYYY-MM-DD (+08:00); the mapping still runs over the whole file")
	to := fs.String("to", "", "import only posts written on or before this day, YYYY-MM-DD (+08:00)")
	scale := fs.Int("scale", 1, fmt.Sprintf("import the data set made this many times larger (1-%d): copy k of user n is u<n+k*stride>, "+
		"a quarter of each copy's follows reach the followee's copy in another copy, each copy's posts k*(1000/scale) ms later (see dataset.Scale)", dataset.MaxScale))
	ft := fanoutThresholdFlag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *scale < 1 || *scale > dataset.MaxScale {
		return fmt.Errorf("--scale %d: want 1 to %d", *scale, dataset.MaxScale)
	}
	var (
		ds  *dataset.Dataset
		err error
	)
	switch {
	case *edges == "" && *posts == "":
		log.Info("no --edges/--posts: importing the demo subset shipped in the binary")
		ds, err = demo.Load()
	case *edges == "" || *posts == "":
		return errors.New("--edges and --posts go together")
	default:
		ds, err = dataset.Load(*edges, *posts)
	}
	if err != nil {
		return err
	}
	if ds, err = ds.Scale(*scale); err != nil {
		return err
	}
	if *from != "" || *to != "" {
		if ds, err = keepDays(ds, *from, *to); err != nil {
			return err
		}
	}
	log.Info("data set loaded", "scale", *scale, "users", len(ds.Users), "follows", len(ds.Follows), "posts", len(ds.Posts), "inbox_entries", ds.InboxEntries())
	st, err := sf.open(ctx, true)
	if err != nil {
		return err
	}
	defer st.Close()
	opts := seed.Options{Password: *password, BatchSize: *batch, Parallelism: *par, FanoutThreshold: thresholdOption(*ft)}
	if !*quiet {
		opts.Progress = os.Stderr
	}
	stats, err := seed.Import(ctx, st, ds, opts)
	if err != nil {
		return err
	}
	log.Info("seeded", "store", st.Backend(), "users", stats.Users, "relations", stats.Relations, "posts", stats.Posts,
		"inbox", stats.Inbox, "topic_rows", stats.Topics, "large_accounts", stats.Large, "elapsed", stats.Elapsed.Round(1e6), "rows_per_s", int(stats.RowsPerSecond()))
	return nil
}

// thresholdOption maps --fanout-threshold onto seed.Options.FanoutThreshold,
// where 0 means the default: 0 or less makes no author large.
func thresholdOption(n int) int {
	if n <= 0 {
		return -1
	}
	return n
}

// keepDays keeps the posts written from day from to day to (inclusive, +08:00; "" = open).
func keepDays(ds *dataset.Dataset, from, to string) (*dataset.Dataset, error) {
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if from != "" {
		d, err := dataset.DayStart(from)
		if err != nil {
			return nil, fmt.Errorf("--from: %w", err)
		}
		lo = d.UnixMilli()
	}
	if to != "" {
		d, err := dataset.DayStart(to)
		if err != nil {
			return nil, fmt.Errorf("--to: %w", err)
		}
		hi = d.AddDate(0, 0, 1).UnixMilli()
	}
	return ds.KeepPosts(func(p dataset.Post) bool { return p.Millis >= lo && p.Millis < hi }), nil
}

// demoMarker is the weibo:users row written once the demo import finished.
var demoMarker = tables.DemoMarkerKey

// seedDemo imports the embedded demo subset when the store holds no seeded
// user yet (the first start of `make run`).
func seedDemo(ctx context.Context, log *slog.Logger, st hbase.StoreAdmin, threshold int) error {
	ds, err := demo.Load()
	if err != nil {
		return err
	}
	r, err := st.Get(ctx, &hbase.Get{Table: tables.Users, Row: demoMarker})
	if err != nil {
		return err
	}
	if r.Exists() { // imported by an earlier start
		if err := seedTopicsDemo(ctx, log, st, ds); err != nil {
			return err
		}
		return seedDemoExtras(ctx, log, st)
	}
	log.Info("first start: importing the demo data set", "users", len(ds.Users), "posts", len(ds.Posts), "inbox_entries", ds.InboxEntries())
	stats, err := seed.Import(ctx, st, ds, seed.Options{Password: seed.DefaultPassword, Progress: os.Stderr, FanoutThreshold: thresholdOption(threshold)})
	if err != nil {
		return err
	}
	for _, marker := range [][]byte{tables.TopicsDemoMarkerKey, demoMarker} { // the import wrote the topics too
		if err := st.Put(ctx, &hbase.Put{Table: tables.Users, Row: marker, Values: hbase.Values{
			tables.FamInfo: {tables.ColCreated: tables.U64(uint64(stats.Elapsed.Milliseconds()))}}}); err != nil {
			return err
		}
	}
	log.Info("demo data imported", "elapsed", stats.Elapsed.Round(1e6), "login_as", ds.Users[0].Username+" .. "+ds.Users[len(ds.Users)-1].Username, "password", seed.DefaultPassword)
	return seedDemoExtras(ctx, log, st)
}

// seedTopicsDemo writes the demo posts' topics (seed.ImportTopics) into a
// store whose demo import predates them, once (marker row
// tables.TopicsDemoMarkerKey).
func seedTopicsDemo(ctx context.Context, log *slog.Logger, st hbase.StoreAdmin, ds *dataset.Dataset) error {
	r, err := st.Get(ctx, &hbase.Get{Table: tables.Users, Row: tables.TopicsDemoMarkerKey})
	if err != nil || r.Exists() {
		return err
	}
	rows, err := seed.ImportTopics(ctx, st, ds, seed.Options{})
	if err != nil {
		return err
	}
	if err := st.Put(ctx, &hbase.Put{Table: tables.Users, Row: tables.TopicsDemoMarkerKey, Values: hbase.Values{
		tables.FamInfo: {tables.ColCreated: tables.EncodeMillis(time.Now().UnixMilli())}}}); err != nil {
		return err
	}
	log.Info("demo topics imported", "rows", rows)
	return nil
}

// seedDemoExtras loads what the demo adds to the data set, each once per
// store: the seed's roles and departments, then the likes (some of them
// by the demo's org users).
func seedDemoExtras(ctx context.Context, log *slog.Logger, st hbase.Store) error {
	if err := seedOrgDemo(ctx, log, st); err != nil {
		return err
	}
	return seedLikesDemo(ctx, log, st)
}

// seedLikesDemo loads the demo's likes (seed.LikesDemo) once per store, so
// that the likes users take back later stay taken back.
func seedLikesDemo(ctx context.Context, log *slog.Logger, st hbase.Store) error {
	r, err := st.Get(ctx, &hbase.Get{Table: tables.Users, Row: tables.LikesDemoMarkerKey})
	if err != nil || r.Exists() {
		return err
	}
	if err := seed.LikesDemo(ctx, domain.New(st, domain.WithLogger(log)), seed.DemoLikesViewer, seed.DemoLikers); err != nil {
		return err
	}
	if err := st.Put(ctx, &hbase.Put{Table: tables.Users, Row: tables.LikesDemoMarkerKey, Values: hbase.Values{
		tables.FamInfo: {tables.ColCreated: tables.U64(uint64(time.Now().UnixMilli()))}}}); err != nil {
		return err
	}
	log.Info("demo likes loaded", "posts_of_the_home_timeline_of", seed.DemoLikesViewer)
	return nil
}

// orgDemoMarker is the weibo:users row written once the seed's role and
// department examples are loaded.
var orgDemoMarker = tables.OrgDemoMarkerKey

// seedOrgDemo loads the seed's roles and department tree (seed.OrgDemo)
// once per store, so that what an admin changes later is not undone by the
// next start.
func seedOrgDemo(ctx context.Context, log *slog.Logger, st hbase.Store) error {
	r, err := st.Get(ctx, &hbase.Get{Table: tables.Users, Row: orgDemoMarker})
	if err != nil || r.Exists() {
		return err
	}
	if err := seed.OrgDemo(ctx, domain.New(st, domain.WithLogger(log))); err != nil {
		return err
	}
	if err := st.Put(ctx, &hbase.Put{Table: tables.Users, Row: orgDemoMarker, Values: hbase.Values{
		tables.FamInfo: {tables.ColCreated: tables.U64(uint64(time.Now().UnixMilli()))}}}); err != nil {
		return err
	}
	log.Info("demo roles and departments loaded (seed 001)", "admin", seed.DemoAdminUsername, "password", seed.DefaultPassword,
		"users", seed.DemoXiaoming+", "+seed.DemoXiaohong)
	return nil
}

// seedCommentDemo adds the demo comments (seed.CommentDemo) once per
// store (marker row tables.CommentDemoMarkerKey), so that comments
// deleted later are not written again by the next start.
func seedCommentDemo(ctx context.Context, log *slog.Logger, st hbase.Store) error {
	r, err := st.Get(ctx, &hbase.Get{Table: tables.Users, Row: tables.CommentDemoMarkerKey})
	if err != nil || r.Exists() {
		return err
	}
	if err := seed.CommentDemo(ctx, domain.New(st, domain.WithLogger(log)), seed.DemoCommentViewer); err != nil {
		return err
	}
	if err := st.Put(ctx, &hbase.Put{Table: tables.Users, Row: tables.CommentDemoMarkerKey, Values: hbase.Values{
		tables.FamInfo: {tables.ColCreated: tables.U64(uint64(time.Now().UnixMilli()))}}}); err != nil {
		return err
	}
	log.Info("demo comments added", "on_the_home_timeline_of", seed.DemoCommentViewer)
	return nil
}
