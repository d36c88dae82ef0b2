package weibo

import (
	"context"
	"encoding/binary"
	"slices"

	"github.com/weibohbase/gateway/hbase"
)

// Follow makes viewer follow target and returns target. It is idempotent:
// following someone already followed changes nothing and is not an error.
// Errors: BAD_USER_INPUT when viewer == target, NOT_FOUND when target does
// not exist.
//
// Writes, in order (HBase has no cross-row transactions): the viewer's
// attends row with CheckAndPut(absent) — the single point that decides
// whether this call is the one that follows, so concurrent or repeated calls
// count once —, the target's fans row, the two counters, and finally the
// backfill of the target's newest posts (up to the backfill limit) into the
// viewer's inbox. A repeat call re-writes the fans row and the backfill,
// which repairs a call that died half-way.
func (s *Service) Follow(ctx context.Context, viewer, target UserID) (*User, error) {
	u, err := s.relationTarget(ctx, viewer, target)
	if err != nil {
		return nil, err
	}
	now := U64(uint64(s.nowMillis()))
	applied, err := s.st.CheckAndPut(ctx, &hbase.Put{Table: TableRelations, Row: RelationKey(viewer, dirAttends, target),
		Values: hbase.Values{FamRel: {ColRelSet: now}}}, FamRel, ColRelSet, nil)
	if err != nil {
		return nil, err
	}
	if err := s.st.Put(ctx, &hbase.Put{Table: TableRelations, Row: RelationKey(target, dirFans, viewer),
		Values: hbase.Values{FamRel: {ColRelSet: now}}}); err != nil {
		return nil, err
	}
	if applied {
		if u.FanCount, err = s.addCounts(ctx, viewer, target, +1); err != nil {
			return nil, err
		}
	}
	if err := s.backfill(ctx, viewer, target); err != nil {
		return nil, err
	}
	return u, nil
}

// Unfollow makes viewer stop following target and returns target. It is
// idempotent. Errors as for Follow.
//
// Writes, in order: CheckAndDelete of the viewer's attends row (decides
// whether this call counts), the target's fans row, the counters, then the
// removal of the target's posts from the viewer's inbox (computed from the
// target's content rowkeys, no inbox scan). Home-timeline reads skip inbox
// rows of authors the viewer no longer follows, so a half-done unfollow is
// never visible, and a repeat call finishes it.
func (s *Service) Unfollow(ctx context.Context, viewer, target UserID) (*User, error) {
	u, err := s.relationTarget(ctx, viewer, target)
	if err != nil {
		return nil, err
	}
	key := RelationKey(viewer, dirAttends, target)
	cur, err := s.st.Get(ctx, &hbase.Get{Table: TableRelations, Row: key})
	if err != nil {
		return nil, err
	}
	applied := false
	if v := cur.Value(FamRel, ColRelSet); v != nil {
		applied, err = s.st.CheckAndDelete(ctx, &hbase.Delete{Table: TableRelations, Row: key}, FamRel, ColRelSet, v)
		if err != nil {
			return nil, err
		}
	}
	if err := s.st.Delete(ctx, &hbase.Delete{Table: TableRelations, Row: RelationKey(target, dirFans, viewer)}); err != nil {
		return nil, err
	}
	if applied {
		if u.FanCount, err = s.addCounts(ctx, viewer, target, -1); err != nil {
			return nil, err
		}
	}
	if err := s.unbackfill(ctx, viewer, target); err != nil {
		return nil, err
	}
	return u, nil
}

// relationTarget checks a follow or unfollow's arguments and reads the
// target (returned to the caller, with its fan count updated by the call).
func (s *Service) relationTarget(ctx context.Context, viewer, target UserID) (*User, error) {
	if viewer == target {
		return nil, badInput("userId", "you cannot follow or unfollow yourself")
	}
	return s.mustUser(ctx, target)
}

func (s *Service) mustUser(ctx context.Context, uid UserID) (*User, error) {
	us, err := s.GetUsers(ctx, []UserID{uid})
	if err != nil {
		return nil, err
	}
	if us[0] == nil {
		return nil, notFound("user %s not found", uid)
	}
	return us[0], nil
}

// addCounts adds d to the follower's follow count and the followee's fan
// count, and returns the followee's new fan count.
func (s *Service) addCounts(ctx context.Context, follower, followee UserID, d int64) (int64, error) {
	if _, err := s.st.Increment(ctx, &hbase.Increment{Table: TableUsers, Row: UserKey(follower), Family: FamCount, Qualifier: ColFollows, Amount: d}); err != nil {
		return 0, err
	}
	return s.st.Increment(ctx, &hbase.Increment{Table: TableUsers, Row: UserKey(followee), Family: FamCount, Qualifier: ColFans, Amount: d})
}

// backfill copies target's newest posts (up to the backfill limit) into
// viewer's inbox, in PutMany batches.
func (s *Service) backfill(ctx context.Context, viewer, target UserID) error {
	return scanWrite(ctx, s.st, &hbase.Scan{Table: TableContent, Prefix: ContentPrefix(target), Families: []string{FamPost}, Limit: s.opts.backfill},
		s.opts.batch, nil, func(r *hbase.Result) (*hbase.Put, bool) {
			p, ok := PostIDFromContentKey(r.Row)
			return inboxPut(viewer, p), ok
		}, s.st.PutMany)
}

// unbackfill deletes every post of target from viewer's inbox, in
// DeleteMany batches; the inbox rowkeys come from target's content rowkeys.
func (s *Service) unbackfill(ctx context.Context, viewer, target UserID) error {
	return scanWrite(ctx, s.st, &hbase.Scan{Table: TableContent, Prefix: ContentPrefix(target), Families: []string{FamPost}},
		s.opts.batch, nil, func(r *hbase.Result) (*hbase.Delete, bool) {
			p, ok := PostIDFromContentKey(r.Row)
			return &hbase.Delete{Table: TableInbox, Row: InboxKey(viewer, p)}, ok
		}, s.st.DeleteMany)
}

// scanWrite runs scan and writes, for every row that each maps to a
// mutation, the mutations with write in batches of size (after initial).
func scanWrite[M any](ctx context.Context, st hbase.Store, scan *hbase.Scan, size int, initial []M,
	each func(*hbase.Result) (M, bool), write func(context.Context, []M) error) error {
	batch := initial
	err := st.Scan(ctx, scan, func(r *hbase.Result) error {
		m, ok := each(r)
		if !ok {
			return nil
		}
		if batch = append(batch, m); len(batch) < size {
			return nil
		}
		err := write(ctx, batch)
		batch = nil
		return err
	})
	if err == nil && len(batch) > 0 {
		err = write(ctx, batch)
	}
	return err
}

func inboxPut(owner UserID, p PostID) *hbase.Put {
	return &hbase.Put{Table: TableInbox, Row: InboxKey(owner, p), Values: hbase.Values{FamInbox: {ColInboxAt: {}}}}
}

// Follows reports, with one batched GetMany, whether viewer follows each of
// targets ("does A follow B" is a single Get of the attends row, seed 001/004).
func (s *Service) Follows(ctx context.Context, viewer UserID, targets []UserID) ([]bool, error) {
	gets := make([]*hbase.Get, len(targets))
	for i, t := range targets {
		gets[i] = &hbase.Get{Table: TableRelations, Row: RelationKey(viewer, dirAttends, t)}
	}
	rs, err := s.st.GetMany(ctx, gets)
	if err != nil {
		return nil, err
	}
	out := make([]bool, len(targets))
	for i, r := range rs {
		out[i] = r.Exists()
	}
	return out, nil
}

// UserEdge is one edge of a follows or fans connection.
type UserEdge struct {
	// User is the other user (only ID set; load the rest in a batch).
	User UserID
	// Cursor is the edge's opaque cursor.
	Cursor string
}

// UserPage is one page of a follows or fans connection.
type UserPage struct {
	// Edges are the page's edges in user-id order.
	Edges []UserEdge
	// PageInfo is the Relay page info.
	PageInfo PageInfo
}

// FollowList pages through whom uid follows (seed 004's "attends"), by user id.
// Errors: BAD_USER_INPUT for a bad first or after.
func (s *Service) FollowList(ctx context.Context, uid UserID, first *int, after *string) (*UserPage, error) {
	return s.relationPage(ctx, RelationPrefix(uid, dirAttends), first, after)
}

// FanList pages through uid's fans, by user id.
// Errors: BAD_USER_INPUT for a bad first or after.
func (s *Service) FanList(ctx context.Context, uid UserID, first *int, after *string) (*UserPage, error) {
	return s.relationPage(ctx, RelationPrefix(uid, dirFans), first, after)
}

func (s *Service) relationPage(ctx context.Context, prefix []byte, first *int, afterCur *string) (*UserPage, error) {
	n, start, err := pageStart(first, afterCur, cursorUsers, 8, prefix)
	if err != nil {
		return nil, err
	}
	rows, err := hbase.ScanAll(ctx, s.st, &hbase.Scan{Table: TableRelations, Prefix: prefix, Start: start, Limit: n + 1})
	if err != nil {
		return nil, err
	}
	rows = slices.DeleteFunc(rows, func(r *hbase.Result) bool { return len(r.Row) != len(prefix)+8 })
	page := &UserPage{}
	page.Edges, page.PageInfo = buildPage(rows, n, func(_ int, r *hbase.Result) UserEdge {
		sfx := r.Row[len(prefix):]
		return UserEdge{User: UserID(binary.BigEndian.Uint64(sfx)), Cursor: encodeCursor(cursorUsers, sfx)}
	}, userCursor)
	return page, nil
}

// userCursor points at a UserEdge's cursor (for buildPage).
func userCursor(e *UserEdge) *string { return &e.Cursor }
