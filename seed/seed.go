// Package seed holds the importers: Import writes the real data set (package
// dataset: a Twitter follow graph and Weibo posts, mapped onto one set of
// users) into the weibo tables in bulk, and OrgDemo loads seed 001's own
// examples of roles and departments through the domain (package weibo).
// They are offline tools beside the domain, which does not import the
// data-set reader; `gateway seed` and `gateway serve --demo` run them.
//
// Choices made here: Import writes rows directly with PutMany, bypassing
// the Service (whose writes go one user at a time and would take hours for
// 10.9 million inbox rows), so it computes every rowkey with the codecs of
// package weibo/tables and nothing else — TestSeedSmallExact checks every
// cell it writes against them. OrgDemo, by contrast, goes through the
// Service, since its handful of writes are two-row changes whose write order
// only the domain knows.
package seed

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/crypto/bcrypt"
	"golang.org/x/sync/errgroup"

	"github.com/weibohbase/gateway/dataset"
	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/account"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/tables"
)

// DefaultPassword is the password of every seeded user when
// Options.Password is empty (it satisfies Register's 8-72 byte rule).
const DefaultPassword = "weibo-demo"

// Epoch is the import's constant time, 2020-03-01T00:00:00+08:00 (the
// first day of the posts): every seeded user's creation time (tables.ColCreated) and
// every seeded follow's time (tables.ColRelSet), so that a re-run writes the same
// values.
var Epoch = time.Date(2020, 3, 1, 0, 0, 0, 0, dataset.Beijing)

// Defaults of Options.
const (
	DefaultBatch = 4000 // rows per PutMany
)

// Options tunes Import. The zero value is usable.
type Options struct {
	// Password is every seeded user's password; "" means DefaultPassword.
	// It must be 8 to 72 bytes of UTF-8, as weibo's Register requires.
	Password string
	// BcryptCost is the cost of the password's hash; 0 means
	// bcrypt.DefaultCost. Login reads the cost from the hash.
	BcryptCost int
	// BatchSize is the number of rows per PutMany; 0 means DefaultBatch.
	BatchSize int
	// Parallelism is the number of shards of a table written concurrently,
	// each a contiguous rowkey range with one PutMany in flight while its next
	// batch is built; 0 means 1 for the embedded backend and 4 for HBase. The
	// embedded store (pebble) does best with one sorted write stream:
	// interleaved streams make its flushed files overlap, so the full import
	// gets slower with every stream added. HBase's weibo tables are pre-split
	// into four regions by salt (tables.SaltSplitKeys), and four shards of
	// about equal row counts roughly follow them.
	Parallelism int
	// Progress, when non-nil, receives a progress bar (rows written of the
	// total, rate, ETA), e.g. os.Stderr.
	Progress io.Writer
	// FanoutThreshold is the gateway's fan-out threshold (the hybrid
	// fan-out, domain.WithFanoutThreshold): a user with at least this many
	// fans in the data set is a large account, whose posts go into no
	// fan's inbox (home timelines merge them at read time). 0 means
	// feed.DefaultFanoutThreshold; a negative value makes no user large.
	FanoutThreshold int
}

// Stats counts the rows Import wrote, per table.
type Stats struct {
	// Users is the number of weibo:users rows (one per user).
	Users int64
	// Usernames is the number of weibo:usernames rows (one per user).
	Usernames int64
	// Relations is the number of weibo:relations rows (two per follow).
	Relations int64
	// Posts is the number of weibo:content rows (one per post).
	Posts int64
	// Inbox is the number of weibo:inbox rows (home-timeline entries).
	Inbox int64
	// Large is the number of large accounts (Options.FanoutThreshold),
	// written as columns of row tables.LargeKey of weibo:users.
	Large int64
	// Topics is the number of rows of the topics: the posts' entries in
	// their topics' lists (weibo:topicposts), the topic rows and the hour
	// rows (weibo:topics).
	Topics int64
	// Elapsed is the wall time of the whole Import call, hash and Migrate included.
	Elapsed time.Duration
	// TableElapsed is the wall time spent writing each table (full table name).
	TableElapsed map[string]time.Duration
}

// Rows returns the total number of rows written.
func (s Stats) Rows() int64 {
	return s.Users + s.Usernames + s.Relations + s.Posts + s.Inbox + s.Topics
}

// RowsPerSecond returns Rows divided by Elapsed (0 when Elapsed is 0).
func (s Stats) RowsPerSecond() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Rows()) / s.Elapsed.Seconds()
}

// Import imports ds into st following the tables' layout (package
// weibo/tables) and the project's import mapping (package dataset). It
// calls tables.Migrate, then
// writes with PutMany, table after table, each in rowkey order:
//
//   - weibo:users, one row per user (salted, seed 004's user table): family
//     i = username "u<n>", password hash, creation time Epoch (ms, 8 bytes
//     BE); family c = follows, fans and posts as absolute 8-byte BE counters;
//   - weibo:usernames, the username index: "u<n>" -> i:id = id (8 bytes BE);
//   - weibo:relations, seed 004's attends and fans families made tall: for
//     every follow a->b the rows tables.RelationKey(a,'a',b) and tables.RelationKey(b,'f',a),
//     r:t = Epoch in ms;
//   - weibo:content, one row per post (seeds 000/001/004 "uid_(MAX-ts)",
//     salted): c:t = text, c:u = author's username;
//   - weibo:inbox, the tall "receive-content-email" table of the push model
//     (fan-out on write): for every post, tables.InboxKey(author, post) and
//     tables.InboxKey(fan, post) for each fan of the author, c:p = empty —
//     except the fans' rows of a large account's posts (hybrid fan-out,
//     Options.FanoutThreshold);
//   - then row tables.LargeKey of weibo:users: one column per large account
//     (state On since Epoch), and the columns of seeded users that are no
//     longer large deleted (their posts were just pushed);
//   - last, row tables.UserCountKey of weibo:users: the number of all users,
//     recounted (userCount).
//
// Every Put has Timestamp 0 (the store's clock). Import is idempotent: a
// re-run writes the same values into the same cells, and never touches the
// id sequence (registered users get ids from account.RegisteredIDBase on). It does
// not merge with activity through the API, though: a re-run sets the
// seeded users' counters back to the data set's values and leaves rows the
// API added (follows, posts, inbox entries) in place. It returns
// an error for a user id of 0 or at/above account.RegisteredIDBase, an invalid
// password, ctx's error when ctx ends, or the first store error (some rows
// may then have been written; re-run to finish).
func Import(ctx context.Context, st hbase.StoreAdmin, ds *dataset.Dataset, opts Options) (Stats, error) {
	start := time.Now()
	stats := Stats{TableElapsed: map[string]time.Duration{}}
	if ds == nil {
		return stats, errors.New("seed: nil dataset")
	}
	if opts.Password == "" {
		opts.Password = DefaultPassword
	}
	if len(opts.Password) < account.MinPasswordLen || len(opts.Password) > account.MaxPasswordLen || !utf8.ValidString(opts.Password) {
		return stats, fmt.Errorf("seed: password must be %d to %d bytes of UTF-8", account.MinPasswordLen, account.MaxPasswordLen)
	}
	if opts.BcryptCost == 0 {
		opts.BcryptCost = bcrypt.DefaultCost
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = DefaultBatch
	}
	if opts.FanoutThreshold == 0 {
		opts.FanoutThreshold = feed.DefaultFanoutThreshold
	}
	if opts.Parallelism <= 0 {
		opts.Parallelism = 4
		if st.Backend() == hbase.BackendEmbedded {
			opts.Parallelism = 1
		}
	}
	for _, u := range ds.Users {
		if u.ID == 0 || u.ID >= account.RegisteredIDBase {
			return stats, fmt.Errorf("seed: user id %d outside [1, %d)", u.ID, account.RegisteredIDBase)
		}
	}
	if err := tables.Migrate(ctx, st); err != nil {
		return stats, fmt.Errorf("seed: migrate: %w", err)
	}
	// ONE hash for every user: they share the demo password, and bcrypt is
	// deliberately slow at the default cost, so hashing once per user of the
	// full data set would take hours on a small machine. (Equal hashes reveal
	// only that the passwords are equal, which is public here anyway.)
	hash, err := bcrypt.GenerateFromPassword([]byte(opts.Password), opts.BcryptCost)
	if err != nil {
		return stats, fmt.Errorf("seed: bcrypt: %w", err)
	}

	s := newSeeder(ctx, st, ds, opts)
	total := int64(len(ds.Users))*2 + int64(len(ds.Follows))*2 + int64(len(ds.Posts)) + s.inboxTotal + s.topicIndex.rows
	if opts.Progress != nil {
		s.bar = progressbar.NewOptions64(total,
			progressbar.OptionSetWriter(opts.Progress),
			progressbar.OptionSetDescription("seed"),
			progressbar.OptionShowCount(),
			progressbar.OptionShowIts(),
			progressbar.OptionSetItsString("rows"),
			progressbar.OptionThrottle(250*time.Millisecond),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(opts.Progress) }),
		)
	}

	phases := []struct {
		table string
		count *int64
		run   func() error
	}{
		{tables.Users, &stats.Users, func() error { return s.users(hash) }},
		{tables.Usernames, &stats.Usernames, s.usernames},
		{tables.Relations, &stats.Relations, s.relations},
		{tables.Content, &stats.Posts, s.content},
		{tables.Inbox, &stats.Inbox, s.inbox},
		{tables.Topics, &stats.Topics, s.topics},
		{tables.Users, &stats.Large, s.largeAccounts},
	}
	for _, ph := range phases {
		t0 := time.Now()
		if s.bar != nil {
			s.bar.Describe("seed " + ph.table)
		}
		s.written.Store(0)
		err := ph.run()
		*ph.count = s.written.Load()
		stats.TableElapsed[ph.table] += time.Since(t0)
		if err != nil {
			stats.Elapsed = time.Since(start)
			return stats, fmt.Errorf("seed %s: %w", ph.table, err)
		}
	}
	if s.bar != nil {
		_ = s.bar.Finish()
	}
	t0 := time.Now()
	err = s.userCount()
	stats.TableElapsed[tables.Users] += time.Since(t0)
	stats.Elapsed = time.Since(start)
	if err != nil {
		return stats, fmt.Errorf("seed the user count: %w", err)
	}
	return stats, nil
}

// userCountRetry is how long userCount waits for a registration in flight
// before it recounts again.
const userCountRetry = 50 * time.Millisecond

// userCount sets the number of all users (row tables.UserCountKey) to a
// count of the users the store now holds, the data set's and those
// registered through the API alike, through the recount of package
// counted (account.RegisterCounted on a protocol of its own): the count
// is written only if no registration changed it meanwhile, so a gateway
// registering users beside the import keeps it exact. While a
// registration is in flight (its marker younger than the default repair
// grace) it waits and counts again.
func (s *seeder) userCount() error {
	w := counted.New(s.st, counted.WithBatch(s.opts.BatchSize), counted.WithLogger(slog.New(slog.DiscardHandler)))
	account.RegisterCounted(s.st, w)
	for {
		res, err := w.RecountCounters(s.ctx, []counted.Counter{account.UserCounter})
		if err != nil {
			return err
		}
		if res[0].Done {
			return nil
		}
		select {
		case <-s.ctx.Done():
			return s.ctx.Err()
		case <-time.After(userCountRetry):
		}
	}
}

// seeder holds what the phases share: the data set, users in rowkey order
// and the posts in timeline order.
type seeder struct {
	ctx  context.Context
	st   hbase.Store
	ds   *dataset.Dataset
	opts Options
	bar  *progressbar.ProgressBar

	// owners are the indexes into ds.Users in weibo:users rowkey order
	// (salt, then id); salt[i] is tables.Salt(ds.Users[i].ID).
	owners []int32
	salt   []byte
	// order lists the indexes into ds.Posts newest first (inbox order);
	// rank is its inverse. Sorting a timeline's ranks sorts it.
	order, rank []int32
	// timeline[i] is the number of inbox rows of ds.Users[i].
	timeline   []int64
	inboxTotal int64
	// large holds the large accounts (Options.FanoutThreshold): their
	// posts are pushed into no fan's inbox.
	large map[uint64]bool

	// topicIndex is every post's topics and their counts (topics.go).
	topicIndex *topicIndex

	written atomic.Int64 // rows written by the current phase
}

func newSeeder(ctx context.Context, st hbase.Store, ds *dataset.Dataset, opts Options) *seeder {
	s := &seeder{ctx: ctx, st: st, ds: ds, opts: opts}
	n := len(ds.Users)
	s.salt = make([]byte, n)
	s.owners = make([]int32, n)
	for i, u := range ds.Users {
		s.salt[i] = tables.Salt(u.ID)
		s.owners[i] = int32(i)
	}
	slices.SortFunc(s.owners, func(a, b int32) int {
		if c := cmp.Compare(s.salt[a], s.salt[b]); c != 0 {
			return c
		}
		return cmp.Compare(ds.Users[a].ID, ds.Users[b].ID)
	})

	s.order = make([]int32, len(ds.Posts))
	for i := range s.order {
		s.order[i] = int32(i)
	}
	slices.SortFunc(s.order, func(a, b int32) int { return dataset.NewerFirst(ds.Posts[a], ds.Posts[b]) })
	s.rank = make([]int32, len(ds.Posts))
	for r, i := range s.order {
		s.rank[i] = int32(r)
	}

	s.large = map[uint64]bool{}
	if opts.FanoutThreshold > 0 {
		for _, u := range ds.Users {
			if ds.FanCount(u.ID) >= opts.FanoutThreshold {
				s.large[u.ID] = true
			}
		}
	}
	s.topicIndex = newTopicIndex(ds)
	s.timeline = make([]int64, n)
	for i, u := range ds.Users {
		t := int64(ds.PostCount(u.ID))
		for _, f := range ds.Following(u.ID) {
			if !s.large[f] {
				t += int64(ds.PostCount(f))
			}
		}
		s.timeline[i] = t
		s.inboxTotal += t
	}
	return s
}

// forEachOwner runs fn for every user index of items, split into
// opts.Parallelism contiguous shards of about equal weight, and waits for
// all. Each shard has a goroutine that builds its rows in order (fn adds them
// to the shard's writer) and one that writes the full batches with PutMany,
// so building the next batch overlaps writing the last one.
func (s *seeder) forEachOwner(items []int32, weight func(i int32) int64, fn func(w *writer, i int32) error) error {
	p := s.opts.Parallelism
	var sum int64
	for _, i := range items {
		sum += weight(i)
	}
	g, ctx := errgroup.WithContext(s.ctx)
	lo := 0
	var acc int64
	for shard := 0; shard < p && lo < len(items); shard++ {
		hi := len(items)
		if shard < p-1 {
			// Extend the shard until it holds its share of the weight.
			target := sum * int64(shard+1) / int64(p)
			hi = lo
			for hi < len(items) && acc < target {
				acc += weight(items[hi])
				hi++
			}
		}
		part := items[lo:hi]
		lo = hi
		batches := make(chan []*hbase.Put, 1)
		g.Go(func() error {
			for puts := range batches {
				if err := s.st.PutMany(ctx, puts); err != nil {
					return err // cancels ctx, which stops the builder
				}
				s.written.Add(int64(len(puts)))
				if s.bar != nil {
					_ = s.bar.Add(len(puts))
				}
			}
			return nil
		})
		g.Go(func() error {
			defer close(batches)
			w := &writer{ctx: ctx, size: s.opts.BatchSize, out: batches}
			for _, i := range part {
				if err := fn(w, i); err != nil {
					return err
				}
			}
			return w.flush()
		})
	}
	return g.Wait()
}

func (s *seeder) users(hash []byte) error {
	created := tables.EncodeMillis(Epoch.UnixMilli())
	return s.forEachOwner(s.owners, one, func(w *writer, i int32) error {
		u := s.ds.Users[i]
		k := tables.AppendUserKey(w.key(tables.IDKeyLen), weibo.UserID(u.ID))
		return w.put(tables.Users, k, hbase.Values{
			tables.FamInfo: {tables.ColUsername: []byte(u.Username), tables.ColPassword: hash, tables.ColCreated: created},
			tables.FamCount: {
				tables.ColFollows: tables.EncodeCounter(int64(s.ds.FollowCount(u.ID))),
				tables.ColFans:    tables.EncodeCounter(int64(s.ds.FanCount(u.ID))),
				tables.ColPosts:   tables.EncodeCounter(int64(s.ds.PostCount(u.ID))),
			},
		})
	})
}

func (s *seeder) usernames() error {
	byName := slices.Clone(s.owners)
	slices.SortFunc(byName, func(a, b int32) int {
		return cmp.Compare(s.ds.Users[a].Username, s.ds.Users[b].Username)
	})
	return s.forEachOwner(byName, one, func(w *writer, i int32) error {
		u := s.ds.Users[i]
		return w.put(tables.Usernames, tables.UsernameKey(u.Username), hbase.Values{tables.FamName: {tables.ColUID: tables.EncodeID(u.ID)}})
	})
}

func (s *seeder) relations() error {
	// One shared, read-only Values for every relation row.
	vals := hbase.Values{tables.FamRel: {tables.ColRelSet: tables.EncodeMillis(Epoch.UnixMilli())}}
	weight := func(i int32) int64 {
		id := s.ds.Users[i].ID
		return int64(s.ds.FollowCount(id) + s.ds.FanCount(id))
	}
	return s.forEachOwner(s.owners, weight, func(w *writer, i int32) error {
		id := s.ds.Users[i].ID
		// Rowkey order: salt|owner|'a'|other... before salt|owner|'f'|other...
		for _, dir := range [2]tables.Dir{tables.Attends, tables.Fans} {
			others := s.ds.Following(id)
			if dir == tables.Fans {
				others = s.ds.Fans(id)
			}
			for _, o := range others {
				k := tables.AppendRelationKey(w.key(tables.RelationKeyLen), weibo.UserID(id), dir, weibo.UserID(o))
				if err := w.put(tables.Relations, k, vals); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

func (s *seeder) content() error {
	weight := func(i int32) int64 { return int64(s.ds.PostCount(s.ds.Users[i].ID)) }
	return s.forEachOwner(s.owners, weight, func(w *writer, i int32) error {
		u := s.ds.Users[i]
		name := []byte(u.Username)
		posts := s.ds.PostsOf(u.ID) // oldest first; rowkeys run newest first
		for j := len(posts) - 1; j >= 0; j-- {
			p := &s.ds.Posts[posts[j]]
			k := tables.AppendContentKey(w.key(tables.ContentKeyLen), weibo.PostID{Author: weibo.UserID(u.ID), Millis: p.Millis})
			if err := w.put(tables.Content, k, hbase.Values{tables.FamPost: {tables.ColText: []byte(p.Text), tables.ColAuthorName: name}}); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *seeder) inbox() error {
	// One shared, read-only Values for every inbox row: the rowkey says all.
	vals := hbase.Values{tables.FamInbox: {tables.ColInboxAt: []byte{}}}
	weight := func(i int32) int64 { return s.timeline[i] }
	return s.forEachOwner(s.owners, weight, func(w *writer, i int32) error {
		if s.timeline[i] == 0 {
			return nil
		}
		// The owner's home timeline (own posts and those of everyone the
		// owner follows) in inbox rowkey order: newest first, then author.
		// This is the same set of rows as fanning every post out to the
		// author and each fan, written owner by owner in rowkey order.
		ranks := w.scratch[:0]
		id := s.ds.Users[i].ID
		for _, j := range s.ds.PostsOf(id) {
			ranks = append(ranks, s.rank[j])
		}
		for _, f := range s.ds.Following(id) {
			if s.large[f] {
				continue // merged at read time
			}
			for _, j := range s.ds.PostsOf(f) {
				ranks = append(ranks, s.rank[j])
			}
		}
		slices.Sort(ranks)
		for _, r := range ranks {
			p := &s.ds.Posts[s.order[r]]
			k := tables.AppendInboxKey(w.key(tables.InboxKeyLen), weibo.UserID(id), weibo.PostID{Author: weibo.UserID(p.Author), Millis: p.Millis})
			if err := w.put(tables.Inbox, k, vals); err != nil {
				return err
			}
		}
		w.scratch = ranks
		return nil
	})
}

// largeAccounts writes row tables.LargeKey: a column (state On since
// Epoch) per large account, and deletes the columns of seeded users that
// are not large (an earlier import with another threshold made them so;
// the inbox phase has just pushed their posts).
func (s *seeder) largeAccounts() error {
	r, err := s.st.Get(s.ctx, &hbase.Get{Table: tables.Users, Row: tables.LargeKey, Families: []string{tables.FamInfo}})
	if err != nil {
		return err
	}
	seeded := make(map[uint64]bool, len(s.ds.Users))
	for _, u := range s.ds.Users {
		seeded[u.ID] = true
	}
	stale := map[string][]byte{}
	for _, c := range r.Family(tables.FamInfo) {
		if uid, ok := tables.DecodeLargeQualifier(c.Qualifier); ok && seeded[uint64(uid)] && !s.large[uint64(uid)] {
			stale[c.Qualifier] = nil
		}
	}
	if len(stale) > 0 {
		if err := s.st.Delete(s.ctx, &hbase.Delete{Table: tables.Users, Row: tables.LargeKey, Values: hbase.Values{tables.FamInfo: stale}}); err != nil {
			return err
		}
	}
	if len(s.large) == 0 {
		return nil
	}
	cols := make(map[string][]byte, len(s.large))
	for id := range s.large {
		cols[tables.LargeQualifier(weibo.UserID(id))] = tables.EncodeLarge(tables.LargeOn, Epoch.UnixMilli())
	}
	if err := s.st.Put(s.ctx, &hbase.Put{Table: tables.Users, Row: tables.LargeKey, Values: hbase.Values{tables.FamInfo: cols}}); err != nil {
		return err
	}
	s.written.Store(int64(len(s.large)))
	return nil
}

func one(int32) int64 { return 1 }

// writer collects the rows one shard builds into batches of opts.BatchSize
// puts and hands each full batch to the shard's PutMany goroutine. The
// rowkeys of a batch are cut from one buffer and its Put structs come from
// one array, so a row costs no allocation of its own; the buffers are fresh
// for each batch, since the batch is written while the next is built.
type writer struct {
	ctx  context.Context
	size int
	out  chan<- []*hbase.Put
	buf  []hbase.Put
	puts []*hbase.Put
	keys []byte
	// scratch is reused by inbox for one owner's timeline ranks.
	scratch []int32
}

// key returns an empty buffer for an n-byte rowkey (capacity n), cut from
// the batch's key buffer, for a tables.Append*Key codec to fill.
func (w *writer) key(n int) []byte {
	if cap(w.keys)-len(w.keys) < n {
		w.keys = make([]byte, 0, max(n, w.size*tables.InboxKeyLen))
	}
	l := len(w.keys)
	w.keys = w.keys[:l+n]
	return w.keys[l : l : l+n]
}

func (w *writer) put(table string, row []byte, vals hbase.Values) error {
	if w.buf == nil {
		w.buf = make([]hbase.Put, 0, w.size)
		w.puts = make([]*hbase.Put, 0, w.size)
	}
	w.buf = append(w.buf, hbase.Put{Table: table, Row: row, Values: vals})
	w.puts = append(w.puts, &w.buf[len(w.buf)-1])
	if len(w.puts) >= w.size {
		return w.flush()
	}
	return nil
}

// flush hands the batch built so far (if any) to the PutMany goroutine.
func (w *writer) flush() error {
	if len(w.puts) == 0 {
		return nil
	}
	select {
	case w.out <- w.puts:
	case <-w.ctx.Done():
		return w.ctx.Err()
	}
	w.buf, w.puts, w.keys = nil, nil, nil
	return nil
}
