package dataset

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Beijing is the fixed +08:00 zone of the posts' dates (China Standard Time,
// no daylight saving).
var Beijing = time.FixedZone("CST", 8*3600)

// User is one user of the data set: one node of the follow graph.
type User struct {
	// ID is the graph node id, which is also the gateway user id (≥ 1).
	ID uint64
	// Username is "u" followed by ID in decimal, e.g. "u22732".
	Username string
	// SourceUserID is the pseudonymized Weibo userid whose posts this user
	// got by the author ranking, or 0 when the user got no posts.
	SourceUserID uint64
}

// Post is one imported post.
type Post struct {
	// Author is the id of the user who wrote it.
	Author uint64
	// Millis is the creation time in milliseconds since the Unix epoch: a
	// whole second for a data set Read or Load built, plus the copy's
	// sub-second shift in one Scale built.
	Millis int64
	// Text is the post's content, exactly as the CSV parser returned it.
	Text string
}

// CreatedAt returns the post's creation time in the +08:00 zone.
func (p Post) CreatedAt() time.Time { return time.UnixMilli(p.Millis).In(Beijing) }

// Dataset is a loaded and joined data set. Its slices are shared and must not
// be modified. All ids are graph node ids (gateway user ids).
type Dataset struct {
	// Users are all users, by ascending id.
	Users []User
	// Follows are the follow edges in edge-list order, self-loops and
	// repeated lines removed.
	Follows []Edge
	// Posts are the imported posts in CSV order; for files whose dates are
	// contiguous and ascending (like the project's), that is ascending
	// Millis, and every Millis is distinct.
	Posts []Post

	// EdgeLines is the number of lines of the edge list.
	EdgeLines int
	// SelfLoops is the number of ignored "A A" lines.
	SelfLoops int
	// DuplicateEdges is the number of ignored repeated lines (0 for the
	// project's files).
	DuplicateEdges int
	// Rows is the number of data records of the posts CSV.
	Rows int
	// BlankRows is the number of records ignored because their text is
	// empty or only white space.
	BlankRows int
	// Authors is the number of distinct userids among the non-blank records.
	Authors int
	// DroppedRows is the number of non-blank records dropped because their
	// author's rank is at or past len(Users).
	DroppedRows int

	index     map[uint64]int32 // user id -> index in Users
	fanOff    []int32          // fans of Users[i]: fanIDs[fanOff[i]:fanOff[i+1]]
	fanIDs    []uint64
	followOff []int32 // users Users[i] follows: followIDs[followOff[i]:followOff[i+1]]
	followIDs []uint64
	postOff   []int32 // posts of Users[i]: postIdx[postOff[i]:postOff[i+1]]
	postIdx   []int32
}

// Load reads the edge list at edgesPath and the posts CSV at postsPath (each
// gzipped or plain) and joins them with the import mapping; see Read.
func Load(edgesPath, postsPath string) (*Dataset, error) {
	ef, err := Open(edgesPath)
	if err != nil {
		return nil, err
	}
	defer ef.Close()
	pf, err := Open(postsPath)
	if err != nil {
		return nil, err
	}
	defer pf.Close()
	ds, err := read(ef, pf, edgesPath, postsPath)
	if err != nil {
		return nil, err
	}
	return ds, nil
}

// Read reads an edge list and a posts CSV (uncompressed streams, formats as
// for ReadEdges and ReadPosts) and joins them with the import mapping
// described in the package comment. It returns an error for a malformed input,
// a node id 0 (not a valid user id), or a date that is not YYYY-MM-DD.
func Read(edges, posts io.Reader) (*Dataset, error) {
	return read(edges, posts, "edge list", "posts csv")
}

func read(edges, posts io.Reader, edgesName, postsName string) (*Dataset, error) {
	ds := &Dataset{}
	if err := ds.readGraph(edges); err != nil {
		return nil, fmt.Errorf("%s: %w", edgesName, err)
	}
	if err := ds.readPosts(posts); err != nil {
		return nil, fmt.Errorf("%s: %w", postsName, err)
	}
	return ds, nil
}

// edgeKey packs an edge for duplicate detection.
type edgeKey struct{ a, b uint64 }

func (ds *Dataset) readGraph(r io.Reader) error {
	seen := make(map[edgeKey]struct{}, 1<<16)
	nodes := make(map[uint64]struct{}, 1<<16)
	err := ReadEdges(r, func(e Edge) error {
		ds.EdgeLines++
		if e.Follower == 0 || e.Followee == 0 {
			return fmt.Errorf("line %d: node id 0 is not a valid user id", ds.EdgeLines)
		}
		nodes[e.Follower] = struct{}{}
		nodes[e.Followee] = struct{}{}
		if e.Follower == e.Followee {
			ds.SelfLoops++
			return nil
		}
		k := edgeKey{e.Follower, e.Followee}
		if _, dup := seen[k]; dup {
			ds.DuplicateEdges++
			return nil
		}
		seen[k] = struct{}{}
		ds.Follows = append(ds.Follows, e)
		return nil
	})
	if err != nil {
		return err
	}

	ids := make([]uint64, 0, len(nodes))
	for id := range nodes {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	ds.Users = make([]User, len(ids))
	for i, id := range ids {
		ds.Users[i] = User{ID: id, Username: Username(id)}
	}
	ds.indexGraph()
	return nil
}

// Username is rule 1's username of user id: "u" followed by id in decimal.
func Username(id uint64) string { return "u" + strconv.FormatUint(id, 10) }

// indexGraph builds the id index and the adjacency of ds.Users (ids
// ascending) and ds.Follows (no self-loops, no repeated edges).
func (ds *Dataset) indexGraph() {
	n := len(ds.Users)
	ds.index = make(map[uint64]int32, n)
	for i, u := range ds.Users {
		ds.index[u.ID] = int32(i)
	}

	// Adjacency in CSR form, both directions, neighbour ids ascending.
	ds.fanOff = make([]int32, n+1)
	ds.followOff = make([]int32, n+1)
	for _, e := range ds.Follows {
		ds.fanOff[ds.index[e.Followee]+1]++
		ds.followOff[ds.index[e.Follower]+1]++
	}
	for i := 0; i < n; i++ {
		ds.fanOff[i+1] += ds.fanOff[i]
		ds.followOff[i+1] += ds.followOff[i]
	}
	ds.fanIDs = make([]uint64, len(ds.Follows))
	ds.followIDs = make([]uint64, len(ds.Follows))
	fanPos := slices.Clone(ds.fanOff[:n])
	followPos := slices.Clone(ds.followOff[:n])
	for _, e := range ds.Follows {
		a, b := ds.index[e.Follower], ds.index[e.Followee]
		ds.fanIDs[fanPos[b]] = e.Follower
		fanPos[b]++
		ds.followIDs[followPos[a]] = e.Followee
		followPos[a]++
	}
	for i := 0; i < n; i++ {
		slices.Sort(ds.fanIDs[ds.fanOff[i]:ds.fanOff[i+1]])
		slices.Sort(ds.followIDs[ds.followOff[i]:ds.followOff[i+1]])
	}
}

// Blank reports whether a post text is ignored by the mapping: empty or only
// white space (Unicode White_Space, as strings.TrimSpace defines it).
func Blank(text string) bool { return strings.TrimSpace(text) == "" }

// DayStart returns D 00:00:00 +08:00 for a date "YYYY-MM-DD".
func DayStart(date string) (time.Time, error) {
	t, err := time.ParseInLocation(time.DateOnly, date, Beijing)
	if err != nil || t.Format(time.DateOnly) != date {
		return time.Time{}, fmt.Errorf("date %q is not YYYY-MM-DD", date)
	}
	return t, nil
}

// PostMillis is rule 4 of the mapping: the creation time, in ms since the
// epoch, of the k-th (from 0) of the n rows dated day (D 00:00:00 +08:00):
// day + floor(k*86400/n) seconds. It panics unless 0 <= k < n.
func PostMillis(day time.Time, k, n int) int64 {
	if k < 0 || k >= n {
		panic(fmt.Sprintf("dataset.PostMillis: k=%d out of [0,%d)", k, n))
	}
	return (day.Unix() + int64(k)*86400/int64(n)) * 1000
}

// RankAuthors is rule 3's author order: the distinct userids of counts
// ordered by count descending, then userid ascending.
func RankAuthors(counts map[uint64]int) []uint64 {
	out := make([]uint64, 0, len(counts))
	for uid := range counts {
		out = append(out, uid)
	}
	slices.SortFunc(out, func(a, b uint64) int {
		if c := cmp.Compare(counts[b], counts[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return out
}

// RankUsers is rule 3's graph-user order: every user id ordered by fan count
// descending, then id ascending.
func (ds *Dataset) RankUsers() []uint64 {
	out := make([]uint64, len(ds.Users))
	for i, u := range ds.Users {
		out[i] = u.ID
	}
	slices.SortStableFunc(out, func(a, b uint64) int { // ids already ascending
		return cmp.Compare(ds.FanCount(b), ds.FanCount(a))
	})
	return out
}

func (ds *Dataset) readPosts(r io.Reader) error {
	var rows []Row
	perDate := map[string]int{}
	counts := map[uint64]int{}
	err := ReadPosts(r, func(row Row) error {
		if _, ok := perDate[row.Date]; !ok {
			if _, err := DayStart(row.Date); err != nil {
				return err
			}
		}
		perDate[row.Date]++
		if Blank(row.Text) {
			ds.BlankRows++
		} else {
			counts[row.UserID]++
		}
		rows = append(rows, row)
		return nil
	})
	if err != nil {
		return err
	}
	ds.Rows = len(rows)
	ds.Authors = len(counts)

	// Rule 3: the i-th author becomes the i-th graph user.
	authors := RankAuthors(counts)
	users := ds.RankUsers()
	author := make(map[uint64]uint64, min(len(authors), len(users)))
	for i := 0; i < len(authors) && i < len(users); i++ {
		author[authors[i]] = users[i]
		ds.Users[ds.index[users[i]]].SourceUserID = authors[i]
	}

	// Rule 4 and 5.
	type dayState struct {
		start time.Time
		k, n  int
	}
	days := make(map[string]*dayState, len(perDate))
	for d, n := range perDate {
		start, _ := DayStart(d)
		days[d] = &dayState{start: start, n: n}
	}
	ds.Posts = make([]Post, 0, len(rows))
	for _, row := range rows {
		day := days[row.Date]
		k := day.k
		day.k++
		if Blank(row.Text) {
			continue
		}
		uid, ok := author[row.UserID]
		if !ok {
			ds.DroppedRows++
			continue
		}
		ds.Posts = append(ds.Posts, Post{Author: uid, Millis: PostMillis(day.start, k, day.n), Text: row.Text})
	}

	ds.indexPosts()
	return nil
}

// indexPosts builds the per-author post lists, oldest first.
func (ds *Dataset) indexPosts() {
	n := len(ds.Users)
	ds.postOff = make([]int32, n+1)
	for _, p := range ds.Posts {
		ds.postOff[ds.index[p.Author]+1]++
	}
	for i := 0; i < n; i++ {
		ds.postOff[i+1] += ds.postOff[i]
	}
	ds.postIdx = make([]int32, len(ds.Posts))
	pos := slices.Clone(ds.postOff[:n])
	for j, p := range ds.Posts {
		i := ds.index[p.Author]
		ds.postIdx[pos[i]] = int32(j)
		pos[i]++
	}
	for i := 0; i < n; i++ {
		s := ds.postIdx[ds.postOff[i]:ds.postOff[i+1]]
		slices.SortStableFunc(s, func(a, b int32) int { return cmp.Compare(ds.Posts[a].Millis, ds.Posts[b].Millis) })
	}
}

// KeepPosts returns a copy of ds whose Posts are those for which keep
// returns true (users and follows unchanged), e.g. one day of the data set
// for a quick import. The authors stay as the mapping over the whole file
// assigned them. The copy shares ds's users and follows.
func (ds *Dataset) KeepPosts(keep func(Post) bool) *Dataset {
	out := *ds
	out.Posts = nil
	for _, p := range ds.Posts {
		if keep(p) {
			out.Posts = append(out.Posts, p)
		}
	}
	out.indexPosts()
	return &out
}

// User returns the user with id, or false when there is none.
func (ds *Dataset) User(id uint64) (User, bool) {
	i, ok := ds.index[id]
	if !ok {
		return User{}, false
	}
	return ds.Users[i], true
}

// Fans returns the ids of id's distinct followers (self excluded), ascending;
// nil for an unknown id. The slice is shared: do not modify it.
func (ds *Dataset) Fans(id uint64) []uint64 {
	i, ok := ds.index[id]
	if !ok {
		return nil
	}
	return ds.fanIDs[ds.fanOff[i]:ds.fanOff[i+1]:ds.fanOff[i+1]]
}

// Following returns the ids of the users id follows (self excluded),
// ascending; nil for an unknown id. The slice is shared: do not modify it.
func (ds *Dataset) Following(id uint64) []uint64 {
	i, ok := ds.index[id]
	if !ok {
		return nil
	}
	return ds.followIDs[ds.followOff[i]:ds.followOff[i+1]:ds.followOff[i+1]]
}

// FanCount returns the number of id's distinct followers, self-loops
// excluded (0 for an unknown id).
func (ds *Dataset) FanCount(id uint64) int { return len(ds.Fans(id)) }

// FollowCount returns the number of users id follows (0 for an unknown id).
func (ds *Dataset) FollowCount(id uint64) int { return len(ds.Following(id)) }

// PostsOf returns the indexes into Posts of the posts id wrote, oldest
// first; nil for an unknown id. The slice is shared: do not modify it.
func (ds *Dataset) PostsOf(id uint64) []int32 {
	i, ok := ds.index[id]
	if !ok {
		return nil
	}
	return ds.postIdx[ds.postOff[i]:ds.postOff[i+1]:ds.postOff[i+1]]
}

// PostCount returns the number of posts id wrote (0 for an unknown id).
func (ds *Dataset) PostCount(id uint64) int { return len(ds.PostsOf(id)) }

// InboxEntries returns the number of home-timeline entries of the whole data
// set: the sum over posts of the author's fan count + 1 (one entry in the
// author's own timeline and one in each fan's).
func (ds *Dataset) InboxEntries() int64 {
	var n int64
	for _, p := range ds.Posts {
		n += int64(ds.FanCount(p.Author)) + 1
	}
	return n
}

// NewerFirst orders posts as a home timeline lists them (and as the inbox
// rowkeys sort): Millis descending, then Author ascending.
func NewerFirst(a, b Post) int {
	if c := cmp.Compare(b.Millis, a.Millis); c != 0 {
		return c
	}
	return cmp.Compare(a.Author, b.Author)
}

// TimelineIndexes returns the indexes into Posts of uid's home timeline
// (the posts written by uid and by every user uid follows), newest first as
// NewerFirst orders them; nil for an unknown uid or an empty timeline.
func (ds *Dataset) TimelineIndexes(uid uint64) []int32 {
	if _, ok := ds.index[uid]; !ok {
		return nil
	}
	var out []int32
	out = append(out, ds.PostsOf(uid)...)
	for _, f := range ds.Following(uid) {
		out = append(out, ds.PostsOf(f)...)
	}
	slices.SortFunc(out, func(a, b int32) int { return NewerFirst(ds.Posts[a], ds.Posts[b]) })
	return out
}

// HomeTimeline returns the newest n posts of uid's home timeline: the posts
// written by uid and by every user uid follows, Millis descending, ties (not
// possible within one file of the project's format) broken by author id
// ascending, as the inbox rowkeys order them. n <= 0 returns the whole
// timeline. An unknown uid gives nil.
func (ds *Dataset) HomeTimeline(uid uint64, n int) []Post {
	idx := ds.TimelineIndexes(uid)
	if n > 0 && len(idx) > n {
		idx = idx[:n]
	}
	if len(idx) == 0 {
		return nil
	}
	out := make([]Post, len(idx))
	for i, j := range idx {
		out[i] = ds.Posts[j]
	}
	return out
}
