package fsck

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/account"
	"github.com/weibohbase/gateway/weibo/check"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/feed"
	"github.com/weibohbase/gateway/weibo/follow"
	"github.com/weibohbase/gateway/weibo/tables"
)

// The social side: follows ↔ fans, the users' counters, the inboxes, and
// the writes and fan-outs that did not finish; the interactions' checks
// are their modules' (package check). The
// authorities are the attends row of a follow, the content row of a post
// and the like row of a like; a repair settles the rest from them through
// the domain (domain.Domain's RepairFollow, RepairLike, RecountCounters,
// RepairFanout, Repair), which is safe beside live writes.

// Kinds of Issue on the social side.
const (
	FansMissing      = "fans-missing"      // an attends row without its fans row: the pair is settled (fans row written)
	FansStale        = "fans-stale"        // a fans row without its attends row: the pair is settled (fans row deleted)
	FollowCount      = "follow-count"      // a followCount that differs from the user's attends rows: recounted
	FanCount         = "fan-count"         // a fanCount that differs from the attends rows naming the user: recounted
	PostCount        = "post-count"        // a postCount that differs from the user's content rows: recounted
	UserCount        = "user-count"        // the number of users (row tables.UserCountKey) that differs from the users: recounted
	InboxMissing     = "inbox-missing"     // own posts, or a followee's posts within the backfill window, missing from an inbox: written
	InboxExtra       = "inbox-extra"       // inbox entries of an author the owner does not follow, or of posts that do not exist: deleted
	WriteUnfinished  = "write-unfinished"  // a weibo:pending row older than the repair grace (a write that died): repaired by the repairer
	FanoutUnfinished = "fanout-unfinished" // a weibo:outbox row older than the repair grace (a fan-out that never finished): run, recounted
)

// userCounts is one users row's counters as loaded.
type userCounts struct {
	follows, fans, posts int64
	ts                   int64  // newest cell of family c (counters and their sequences)
	name                 []byte // the username (i:un)
}

// post is one content row: its time and the time of its cells.
type post struct {
	millis, ts int64
}

// postTS returns the time of a content row's cells but its likeCount's
// (the count and its sequence), which every like moves.
func postTS(r *hbase.Result) int64 {
	var ts int64
	for _, c := range r.Cells {
		if c.Family != tables.FamPost || (c.Qualifier != tables.ColLikes && c.Qualifier != tables.ColLikesSeq) {
			ts = max(ts, c.Timestamp)
		}
	}
	return ts
}

// social is what the social checks load.
type social struct {
	users     map[weibo.UserID]*userCounts
	attends   map[[2]uint64]int64 // (follower, followee) -> ts
	fans      map[[2]uint64]int64 // (follower, followee) -> ts, from the followee's fans rows
	followees map[weibo.UserID][]weibo.UserID
	posts     map[weibo.UserID][]post // newest first (content rowkey order)
	pending   []pendingRow
	outbox    []outboxRow
	// large are the large accounts (hybrid fan-out; row tables.LargeKey,
	// either state): their posts need be in no fan's inbox, home timelines
	// merge them at read time.
	large map[weibo.UserID]bool
	// userCount is the kept number of users (row tables.UserCountKey),
	// userCountTS the newest cell of that row.
	userCount, userCountTS int64
}

type pendingRow struct {
	key          []byte
	kind         tables.PendingKind
	owner, other uint64
	at           int64
}

type outboxRow struct {
	id      weibo.PostID
	at      int64
	counted bool
}

// loadMarkers loads weibo:pending and weibo:outbox.
func (f *fsck) loadMarkers(ctx context.Context) error {
	so := &social{users: map[weibo.UserID]*userCounts{}, attends: map[[2]uint64]int64{}, fans: map[[2]uint64]int64{},
		followees: map[weibo.UserID][]weibo.UserID{}, posts: map[weibo.UserID][]post{}}
	f.so = so
	err := f.scan(ctx, &hbase.Scan{Table: tables.Pending}, func(r *hbase.Result) {
		if kind, owner, other, _, ok := tables.DecodePendingKey(r.Row); ok {
			so.pending = append(so.pending, pendingRow{key: bytes.Clone(r.Row), kind: kind, owner: owner, other: other,
				at: tables.PendingAt(r)})
		}
	})
	if err != nil {
		return err
	}
	err = f.scan(ctx, &hbase.Scan{Table: tables.Outbox}, func(r *hbase.Result) {
		if id, ok := tables.DecodeOutboxKey(r.Row); ok {
			so.outbox = append(so.outbox, outboxRow{id: id, at: tables.OutboxAt(r),
				counted: r.Value(tables.FamOutbox, tables.ColOutboxCounted) != nil})
		}
	})
	return err
}

// loadSocial loads the users' counters, the relations and the content
// rows' keys.
func (f *fsck) loadSocial(ctx context.Context) error {
	so := f.so
	err := f.scan(ctx, &hbase.Scan{Table: tables.Users, Families: []string{tables.FamInfo, tables.FamCount}}, func(r *hbase.Result) {
		if bytes.Equal(r.Row, tables.UserCountKey) {
			so.userCount, so.userCountTS = tables.CounterValue(r, tables.ColUserCount), check.NewestTS(r)
			return
		}
		uid, ok := tables.DecodeUserKey(r.Row)
		if ok {
			for _, run := range f.runs {
				if run.User != nil {
					run.User(uid, r)
				}
			}
		}
		if !ok || r.Value(tables.FamInfo, tables.ColUsername) == nil {
			return
		}
		u := &userCounts{
			follows: tables.CounterValue(r, tables.ColFollows),
			fans:    tables.CounterValue(r, tables.ColFans),
			posts:   tables.CounterValue(r, tables.ColPosts),
			name:    bytes.Clone(r.Value(tables.FamInfo, tables.ColUsername)),
		}
		for _, c := range r.Family(tables.FamCount) {
			u.ts = max(u.ts, c.Timestamp)
		}
		so.users[uid] = u
	})
	if err != nil {
		return err
	}
	large, err := f.s.Fanout.LargeAccounts(ctx)
	if err != nil {
		return err
	}
	so.large = map[weibo.UserID]bool{}
	for uid := range large {
		so.large[uid] = true
	}
	err = f.scan(ctx, &hbase.Scan{Table: tables.Relations}, func(r *hbase.Result) {
		owner, dir, other, ok := tables.DecodeRelationKey(r.Row)
		if !ok {
			return
		}
		if dir == tables.Attends {
			so.attends[[2]uint64{uint64(owner), uint64(other)}] = check.NewestTS(r)
			so.followees[owner] = append(so.followees[owner], other)
		} else {
			so.fans[[2]uint64{uint64(other), uint64(owner)}] = check.NewestTS(r)
		}
	})
	if err != nil {
		return err
	}
	err = f.scan(ctx, &hbase.Scan{Table: tables.Content, Families: []string{tables.FamPost}}, func(r *hbase.Result) {
		if id, ok := tables.DecodeContentKey(r.Row); ok && tables.PostStored(r) {
			so.posts[id.Author] = append(so.posts[id.Author], post{millis: id.Millis, ts: postTS(r)})
			for _, run := range f.runs {
				if run.Content != nil {
					run.Content(id, r)
				}
			}
		}
	})
	return err
}

// hasPost reports whether author's post at millis exists, and its cell time.
func (so *social) hasPost(id weibo.PostID) (post, bool) {
	ps := so.posts[id.Author] // newest first: millis descending
	i, ok := slices.BinarySearchFunc(ps, id.Millis, func(p post, ms int64) int { return cmp.Compare(ms, p.millis) })
	if !ok {
		return post{}, false
	}
	return ps[i], true
}

// window returns how many of author's newest posts the owner's inbox must
// hold: all of the owner's own, up to the backfill limit of a followee's,
// none of a large followee's (hybrid fan-out: merged at read time).
func (f *fsck) window(owner, author weibo.UserID) int {
	n := len(f.so.posts[author])
	if owner == author {
		return n
	}
	if f.so.large[author] {
		return 0
	}
	return min(n, f.opt.BackfillLimit)
}

// checkUnfinished reports weibo:pending rows and weibo:outbox rows older
// than the repair grace: writes and fan-outs that died. Pending rows of
// role writes belong to the org side (area AreaOrg).
func (f *fsck) checkUnfinished(ctx context.Context, kinds ...tables.PendingKind) error {
	grace := max(f.opt.RepairGrace, f.opt.Grace).Milliseconds()
	repaired := map[string]bool{} // pending rows the repairer deleted
	ran := false
	rels := f.s.Writes.Relations()
	for _, p := range f.so.pending {
		if !slices.Contains(kinds, p.kind) || f.now-p.at <= grace {
			continue
		}
		// The relations registered with the protocol name what died; the
		// repairer settles and recounts them the same way.
		what := fmt.Sprintf("a write of the unregistered kind %q on (%d, %d)", p.kind, p.owner, p.other)
		if rel := rels[p.kind]; rel != nil {
			what = fmt.Sprintf("a %s write on (%d, %d)", rel.Name, p.owner, p.other)
		}
		err := f.issue(ctx, WriteUnfinished, 0, func() (bool, error) {
			if !ran {
				ran = true
				if _, err := f.s.Writes.Repair(ctx); err != nil {
					return false, err
				}
				left := map[string]bool{}
				if err := f.st.Scan(ctx, &hbase.Scan{Table: tables.Pending}, func(r *hbase.Result) error {
					left[string(r.Row)] = true
					return nil
				}); err != nil {
					return false, err
				}
				for _, q := range f.so.pending {
					repaired[string(q.key)] = !left[string(q.key)]
				}
			}
			return repaired[string(p.key)], nil
		}, "%s started %d ms ago and never finished", what, f.now-p.at)
		if err != nil {
			return err
		}
	}
	if !slices.Contains(kinds, tables.PendingFollow) {
		return nil
	}
	for _, o := range f.so.outbox {
		if f.now-o.at <= grace {
			continue
		}
		err := f.issue(ctx, FanoutUnfinished, 0, func() (bool, error) {
			return f.s.Fanout.RepairFanout(ctx, o.id)
		}, "the fan-out of post %s was requested %d ms ago and never finished (counted: %v)", o.id, f.now-o.at, o.counted)
		if err != nil {
			return err
		}
	}
	return nil
}

// checkRelations compares every attends row with its fans row.
func (f *fsck) checkRelations(ctx context.Context) error {
	so := f.so
	for _, k := range sortedPairs(so.attends) {
		if _, ok := so.fans[k]; ok {
			continue
		}
		a, b := weibo.UserID(k[0]), weibo.UserID(k[1])
		err := f.issue(ctx, FansMissing, so.attends[k], func() (bool, error) {
			return true, f.s.Follows.RepairFollow(ctx, a, b)
		}, "user %d follows user %d, whose fans rows lack user %d", a, b, a)
		if err != nil {
			return err
		}
	}
	for _, k := range sortedPairs(so.fans) {
		if _, ok := so.attends[k]; ok {
			continue
		}
		a, b := weibo.UserID(k[0]), weibo.UserID(k[1])
		err := f.issue(ctx, FansStale, so.fans[k], func() (bool, error) {
			return true, f.s.Follows.RepairFollow(ctx, a, b)
		}, "user %d lists user %d as a fan, who does not follow them", b, a)
		if err != nil {
			return err
		}
	}
	return nil
}

// checkCounters compares every user's followCount, fanCount and postCount
// with a count of the loaded rows (attends rows are the authority for
// both follow counts) and recounts the ones that differ, in one batch.
func (f *fsck) checkCounters(ctx context.Context) error {
	so := f.so
	fanOf := map[weibo.UserID]int64{}
	for k := range so.attends {
		fanOf[weibo.UserID(k[1])]++
	}
	var found []check.Found
	var fixes []counted.Counter
	for _, uid := range slices.Sorted(maps.Keys(so.users)) {
		u := so.users[uid]
		for _, c := range []struct {
			kind      string
			counter   counted.CounterKind
			has, want int64
		}{
			{FollowCount, follow.FollowCount, u.follows, int64(len(so.followees[uid]))},
			{FanCount, follow.FanCount, u.fans, fanOf[uid]},
			{PostCount, feed.PostCount, u.posts, int64(len(so.posts[uid]))},
		} {
			if c.has == c.want {
				continue
			}
			found = append(found, check.Found{TS: u.ts, Issue: Issue{Kind: c.kind,
				Detail: fmt.Sprintf("user %d has %s %d, counts %d", uid, c.counter, c.has, c.want)}})
			fixes = append(fixes, counted.Counter{Kind: c.counter, Owner: uint64(uid)})
		}
	}
	return f.p.Batch(found, f.s.Writes.BatchRecount(ctx, fixes))
}

// checkUserCount compares the kept number of users with a count of the
// users: the weibo:usernames rows (one scan) whose loaded users row holds
// that username (account.CountUsers counts the same), and recounts it
// through the protocol when they differ.
func (f *fsck) checkUserCount(ctx context.Context) error {
	so := f.so
	var n int64
	err := f.scan(ctx, &hbase.Scan{Table: tables.Usernames}, func(r *hbase.Result) {
		if u := so.users[tables.UsernameUser(r)]; u != nil && bytes.Equal(tables.UsernameKey(string(u.name)), r.Row) {
			n++
		}
	})
	if err != nil || n == so.userCount {
		return err
	}
	return f.issue(ctx, UserCount, so.userCountTS, f.s.Writes.RecountOne(ctx, account.UserCounter),
		"the user count is %d, counts %d", so.userCount, n)
}

// inboxTally is what the scan of one owner's inbox found.
type inboxTally struct {
	inWindow int                      // entries of own posts and of followees' posts within the window
	extra    map[weibo.UserID][]int64 // author -> entry cell times of entries to remove (post exists)
	gone     [][]byte                 // rowkeys of entries whose post does not exist
	goneTS   int64
}

// checkInboxes scans weibo:inbox once, owner by owner, and compares each
// inbox with what it must hold: the owner's own posts and each followee's
// newest posts up to the backfill limit (missing entries), and nothing of
// an author the owner does not follow nor of a post that does not exist
// (extra entries). A followee's entries older than the window are fine.
// Only an owner whose count falls short is scanned again, to name what is
// missing.
func (f *fsck) checkInboxes(ctx context.Context) error {
	so := f.so
	seen := map[weibo.UserID]bool{}
	var (
		cur   weibo.UserID
		tally *inboxTally
	)
	finish := func() error {
		if tally == nil {
			return nil
		}
		seen[cur] = true
		return f.inboxIssues(ctx, cur, tally)
	}
	err := f.st.Scan(ctx, &hbase.Scan{Table: tables.Inbox, Families: []string{tables.FamInbox}}, func(r *hbase.Result) error {
		f.p.CountRow(tables.Inbox)
		owner, id, ok := tables.DecodeInboxKey(r.Row)
		if !ok {
			return nil
		}
		if tally == nil || owner != cur {
			if err := finish(); err != nil {
				return err
			}
			cur, tally = owner, &inboxTally{extra: map[weibo.UserID][]int64{}}
		}
		p, exists := so.hasPost(id)
		followed := id.Author == owner
		if !followed {
			_, followed = so.attends[[2]uint64{uint64(owner), uint64(id.Author)}]
		}
		switch {
		case !exists:
			tally.gone = append(tally.gone, bytes.Clone(r.Row))
			tally.goneTS = max(tally.goneTS, check.NewestTS(r))
		case !followed:
			tally.extra[id.Author] = append(tally.extra[id.Author], check.NewestTS(r))
		case f.rank(id, p) < f.window(owner, id.Author):
			tally.inWindow++
		}
		return nil
	})
	if err == nil {
		err = finish()
	}
	if err != nil {
		return err
	}
	for _, uid := range slices.Sorted(maps.Keys(so.users)) {
		if !seen[uid] {
			if err := f.inboxIssues(ctx, uid, &inboxTally{}); err != nil {
				return err
			}
		}
	}
	return nil
}

// rank returns the position of post p (id) among its author's posts,
// newest first (0 = newest).
func (f *fsck) rank(id weibo.PostID, p post) int {
	ps := f.so.posts[id.Author]
	i, _ := slices.BinarySearchFunc(ps, p.millis, func(q post, ms int64) int { return cmp.Compare(ms, q.millis) })
	return i
}

// expected returns the number of entries owner's inbox must hold.
func (f *fsck) expected(owner weibo.UserID) int {
	n := f.window(owner, owner)
	for _, fe := range f.so.followees[owner] {
		n += f.window(owner, fe)
	}
	return n
}

// inboxIssues reports the issues of one owner's inbox from its tally.
func (f *fsck) inboxIssues(ctx context.Context, owner weibo.UserID, t *inboxTally) error {
	for _, author := range slices.Sorted(maps.Keys(t.extra)) {
		ts := slices.Max(t.extra[author])
		if at, ok := f.so.fans[[2]uint64{uint64(owner), uint64(author)}]; ok {
			ts = max(ts, at) // an unfollow may be settling
		}
		err := f.issue(ctx, InboxExtra, ts, func() (bool, error) {
			return true, f.s.Follows.RepairFollow(ctx, owner, author)
		}, "the inbox of user %d holds %d posts of user %d, whom they do not follow", owner, len(t.extra[author]), author)
		if err != nil {
			return err
		}
	}
	if len(t.gone) > 0 {
		err := f.issue(ctx, InboxExtra, t.goneTS, func() (bool, error) {
			dels := make([]*hbase.Delete, len(t.gone))
			for i, k := range t.gone {
				dels[i] = &hbase.Delete{Table: tables.Inbox, Row: k}
			}
			return true, f.st.DeleteMany(ctx, dels)
		}, "the inbox of user %d holds %d entries of posts that do not exist", owner, len(t.gone))
		if err != nil {
			return err
		}
	}
	if t.inWindow >= f.expected(owner) {
		return nil
	}
	// Name what is missing: read this inbox again.
	have := map[weibo.PostID]bool{}
	err := f.st.Scan(ctx, &hbase.Scan{Table: tables.Inbox, Prefix: tables.InboxPrefix(owner), Families: []string{tables.FamInbox}}, func(r *hbase.Result) error {
		if _, id, ok := tables.DecodeInboxKey(r.Row); ok {
			have[id] = true
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, author := range append([]weibo.UserID{owner}, f.so.followees[owner]...) {
		var missing []weibo.PostID
		var ts int64
		for _, p := range f.so.posts[author][:f.window(owner, author)] {
			if id := (weibo.PostID{Author: author, Millis: p.millis}); !have[id] {
				missing = append(missing, id)
				ts = max(ts, p.ts)
			}
		}
		if len(missing) == 0 {
			continue
		}
		fix := func() (bool, error) { return true, f.s.Follows.RepairFollow(ctx, owner, author) }
		what := fmt.Sprintf("of user %d (followed), within the backfill window", author)
		if author == owner {
			what = "of their own"
			fix = func() (bool, error) {
				puts := make([]*hbase.Put, len(missing))
				for i, id := range missing {
					puts[i] = &hbase.Put{Table: tables.Inbox, Row: tables.InboxKey(owner, id), Values: hbase.Values{tables.FamInbox: {tables.ColInboxAt: {}}}}
				}
				return true, f.st.PutMany(ctx, puts)
			}
		} else {
			ts = max(ts, f.so.attends[[2]uint64{uint64(owner), uint64(author)}])
		}
		if err := f.issue(ctx, InboxMissing, ts, fix, "the inbox of user %d lacks %d posts %s", owner, len(missing), what); err != nil {
			return err
		}
	}
	return nil
}
