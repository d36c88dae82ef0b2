// Package follow is the follow relation of the seeds (001, 003, 004: the
// attends and fans rows of weibo:relations): follow, unfollow, "does A
// follow B" as one Get, the lists of whom a user follows and of their
// fans — a counted pair on the write protocol (package counted) whose
// dependents are the fans row and the followee's posts in the follower's
// inbox (the backfill window, none for a large account), counted by
// followCount and fanCount — and the FOLLOW notification. The feed
// (package feed) builds it beside its fan-out, whose large accounts it
// asks.
package follow

import (
	"encoding/json"
	"log/slog"

	"context"
	"errors"
	"slices"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/events"
	"github.com/weibohbase/gateway/weibo/fanout"
	"github.com/weibohbase/gateway/weibo/notify"
	"github.com/weibohbase/gateway/weibo/paging"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Users reads the users a follow names and counts. *account.Service
// implements it.
type Users interface {
	GetUsers(ctx context.Context, ids []weibo.UserID) ([]*weibo.User, error)
}

// Notices sends the FOLLOW notification and learns how it is checked.
// *notify.Service implements it.
type Notices interface {
	SendNotice(ctx context.Context, n notify.Notice, mode notify.NoticeMode) error
	SendNotices(ctx context.Context, ns []notify.Notice, mode notify.NoticeMode) error
	RegisterNoticeCheck(match func(notify.Notice) bool, wanted notify.WantedFunc)
}

// Fanout is what a follow asks of the fan-out: whether the followee is a
// large account (hybrid fan-out: no backfill), and the state change when
// a follow or unfollow crosses the threshold. *fanout.Engine implements
// it.
type Fanout interface {
	IsLarge(ctx context.Context, author weibo.UserID) (bool, error)
	Crossed(ctx context.Context, author weibo.UserID, fans int64, d int64)
}

// Guard says whether a block stands between two users, either way (read
// from the authorities: the block cells). A follow across one is
// FORBIDDEN. *safety.Service implements it.
type Guard interface {
	Blocked(ctx context.Context, a, b weibo.UserID) (bool, error)
}

// ErrBlocked is the FORBIDDEN error of a follow across a block, either
// way: the same message for both, so it does not say who blocked whom.
func ErrBlocked() error { return weibo.Forbidden("you cannot follow this user") }

// Options are the follows' settings.
type Options struct {
	// Backfill is how many of a followee's newest posts a follow copies
	// into the follower's inbox (the backfill window).
	Backfill int
	// Batch is how many rows one batched write of an unbackfill writes.
	Batch int
}

// Service is the follows' API. It is safe for concurrent use.
type Service struct {
	st        hbase.Store
	w         *counted.Protocol
	rel       *counted.Relation
	users     Users
	notices   Notices
	fan       Fanout
	events    *events.Emitter
	guard     Guard // nil: no blocks
	log       *slog.Logger
	backfillN int
	batch     int
}

// New returns the follows over st and registers with w the follow pair
// and its two counters, and with notices how a FOLLOW notification is
// checked (the attends row, made on the notification's day). The weibo
// tables must exist (tables.Migrate).
func New(st hbase.Store, w *counted.Protocol, users Users, notices Notices, fan Fanout, ev *events.Emitter, o Options) *Service {
	s := &Service{st: st, w: w, users: users, notices: notices, fan: fan, events: ev, log: w.Logger(), backfillN: o.Backfill, batch: max(1, o.Batch)}
	s.register(w, users)
	notices.RegisterNoticeCheck(func(n notify.Notice) bool { return n.Kind == tables.NotifFollow },
		func(ctx context.Context, n notify.Notice) (bool, bool, error) {
			r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Relations, Row: tables.RelationKey(n.Actor, tables.Attends, n.Recipient)})
			v := r.Value(tables.FamRel, tables.ColRelSet)
			return v != nil && tables.DaySubject(int64(tables.DecodeU64(v))) == n.Subject, err == nil, err
		})
	return s
}

// SetGuard sets the blocks a follow honours. It must be called before
// any call, while the domain is wired (the blocks end follows, so they
// are built after the follows).
func (s *Service) SetGuard(g Guard) { s.guard = g }

// blocked reports whether a block stands between a and b.
func (s *Service) blocked(ctx context.Context, a, b weibo.UserID) (bool, error) {
	if s.guard == nil {
		return false, nil
	}
	return s.guard.Blocked(ctx, a, b)
}

// Follow makes viewer follow target and returns target. It is idempotent:
// following someone already followed changes nothing and is not an error.
// Errors: BAD_USER_INPUT when viewer == target, NOT_FOUND when target does
// not exist, FORBIDDEN when a block stands between them, either way.
//
// Writes, in order (HBase has no cross-row transactions; package counted says why
// this order survives any interleaving and any crash), after a read of
// both users' block cells (a block either way ends the call):
//  1. the weibo:pending row of the write (the marker);
//  2. the operation sequences of the viewer's followCount and the
//     target's fanCount;
//  3. the viewer's attends row with CheckAndPut(absent), the authority —
//     the single point that decides whether this call is the one that
//     follows, so concurrent or repeated calls count once;
//  4. if it did, the two counters (within the write's budget), and the
//     target's large-account state when its fan count reaches the
//     fan-out threshold (large.go);
//  5. the settle of the dependents (settleFollow): the target's fans row,
//     then the read of the target's large-account state and, unless it is
//     large (hybrid fan-out: timelines merge its posts at read time), the
//     backfill of the target's newest posts (up to the backfill
//     limit) into the viewer's inbox, then the removal from it of the
//     target's posts whose delete is in flight (their markers), then a
//     re-read of the attends row — written again the other way as long as
//     a concurrent unfollow changed it meanwhile;
//  6. if it followed, the block cells read again: a block made since (its
//     unfollow may have run before step 3) makes the call unfollow (a
//     counted write of its own) and end FORBIDDEN — a block and a follow
//     each write their authority before reading the other's, so one of
//     them sees the other;
//  7. if it followed, the FOLLOW notification of the target (notify.go: a
//     notify write of its own, grouped per day while unread);
//  8. the delete of the pending row.
//
// A call that dies anywhere leaves the pending row; the repairer settles
// the pair, recounts both counters after the repair grace and makes the
// target's notifications agree with the attends row.
func (s *Service) Follow(ctx context.Context, viewer, target weibo.UserID) (_ *weibo.User, err error) {
	defer weibo.Wrapf(&err, "follow %s → %s", viewer, target)
	u, err := s.relationTarget(ctx, viewer, target)
	if err != nil {
		return nil, err
	}
	if blocked, err := s.blocked(ctx, viewer, target); err != nil || blocked {
		if err == nil {
			err = ErrBlocked()
		}
		return nil, err
	}
	op, err := s.w.Begin(ctx, s.rel, uint64(viewer), uint64(target))
	if err != nil {
		return nil, err
	}
	at := s.w.NowMillis()
	applied, err := s.st.CheckAndPut(ctx, &hbase.Put{Table: tables.Relations, Row: tables.RelationKey(viewer, tables.Attends, target),
		Values: hbase.Values{tables.FamRel: {tables.ColRelSet: tables.EncodeMillis(at)}}}, tables.FamRel, tables.ColRelSet, nil)
	if err == nil {
		err = s.w.Step(ctx, StepDecided)
	}
	if err != nil {
		return nil, err
	}
	if applied {
		if err := s.countRelation(ctx, op, u, target, +1); err != nil {
			return nil, err
		}
	}
	following := true
	if _, err := s.settleFollow(ctx, viewer, target, &following); errors.Is(err, counted.ErrUnsettled) {
		if err := s.w.Keep(ctx, op, nil); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	if applied {
		blocked, err := s.blocked(ctx, viewer, target)
		if err != nil {
			return nil, err
		}
		if blocked {
			if _, err := s.Unfollow(ctx, viewer, target); err != nil {
				return nil, err
			}
			if err := s.w.End(ctx, op); err != nil {
				return nil, err
			}
			return nil, ErrBlocked()
		}
	}
	s.publishFollow(viewer, target, true)
	if applied {
		if err := s.notices.SendNotice(ctx, followNotice(viewer, target, at), notify.NoticeAdd); err != nil {
			return nil, err
		}
	}
	return u, s.w.End(ctx, op)
}

// followNotice is the FOLLOW notification of a's follow of b made at
// (ms): to b, grouped per day (UTC) of the follow.
func followNotice(a, b weibo.UserID, at int64) notify.Notice {
	return notify.Notice{Kind: tables.NotifFollow, Recipient: b, Actor: a, Subject: tables.DaySubject(at), At: at}
}

// syncFollowNotice makes b's FOLLOW notifications agree with a's attends
// row (the repairer's settle of a dead follow or unfollow): a is in the
// notification of the day of the follow while a follows b, and in none
// once not — found then by a scan of b's FOLLOW notifications' actors.
func (s *Service) syncFollowNotice(ctx context.Context, a, b weibo.UserID) error {
	r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Relations, Row: tables.RelationKey(a, tables.Attends, b)})
	if err != nil {
		return err
	}
	if v := r.Value(tables.FamRel, tables.ColRelSet); v != nil {
		return s.notices.SendNotice(ctx, followNotice(a, b, int64(tables.DecodeU64(v))), notify.NoticeSync)
	}
	q := tables.NotifActorQualifier(a)
	var ns []notify.Notice
	err = s.st.Scan(ctx, &hbase.Scan{Table: tables.Notifications, Prefix: tables.NotifKindPrefix(b, tables.NotifFollow), Families: []string{tables.FamNotifActors}},
		func(r *hbase.Result) error {
			id, ok := tables.DecodeNotifGroupKey(r.Row)
			if ok && len(r.Value(tables.FamNotifActors, q)) > 0 {
				ns = append(ns, notify.Notice{Kind: tables.NotifFollow, Recipient: b, Actor: a, Subject: id.Subject})
			}
			return nil
		})
	if err != nil {
		return err
	}
	return s.notices.SendNotices(ctx, ns, notify.NoticeRemove)
}

// Unfollow makes viewer stop following target and returns target. It is
// idempotent. Errors as for Follow.
//
// Writes, in order, as Follow's: the pending row; the two operation
// sequences; the CheckAndDelete of the viewer's attends row (the
// authority; it decides whether this call counts); the counters; the
// settle of the dependents — delete of the target's fans row, removal of
// the target's posts from the viewer's inbox (computed from the target's
// content rowkeys, no inbox scan), then of the target's posts whose
// delete is in flight (their markers, read after the content rowkeys:
// their content rows may be gone), re-read of the attends row —; the
// viewer taken out of the target's FOLLOW notification of the day of the
// follow undone (deleted with its last actor); then the delete of the
// pending row, unless a fan-out of the target requested
// before then is still in the outbox: such a fan-out read the fans list
// before this call and, were it to die part-way, could leave one of the
// target's posts in the viewer's inbox after the removal. The pending row
// then stays, marked with that time, and the repairer settles the pair
// again once those fan-outs are gone. Home-timeline reads skip inbox rows
// of authors the viewer no longer follows, so a half-done unfollow is
// never visible.
func (s *Service) Unfollow(ctx context.Context, viewer, target weibo.UserID) (_ *weibo.User, err error) {
	defer weibo.Wrapf(&err, "unfollow %s → %s", viewer, target)
	u, err := s.relationTarget(ctx, viewer, target)
	if err != nil {
		return nil, err
	}
	op, err := s.w.Begin(ctx, s.rel, uint64(viewer), uint64(target))
	if err != nil {
		return nil, err
	}
	key := tables.RelationKey(viewer, tables.Attends, target)
	cur, err := s.st.Get(ctx, &hbase.Get{Table: tables.Relations, Row: key})
	if err != nil {
		return nil, err
	}
	applied := false
	var state *bool // the attends row's state, when known
	if v := cur.Value(tables.FamRel, tables.ColRelSet); v != nil {
		applied, err = s.st.CheckAndDelete(ctx, &hbase.Delete{Table: tables.Relations, Row: key}, tables.FamRel, tables.ColRelSet, v)
		if err != nil {
			return nil, err
		}
		if applied {
			state = new(false)
		}
	} else {
		state = new(false)
	}
	if err := s.w.Step(ctx, StepDecided); err != nil {
		return nil, err
	}
	if applied {
		if err := s.countRelation(ctx, op, u, target, -1); err != nil {
			return nil, err
		}
	}
	following, err := s.settleFollow(ctx, viewer, target, state)
	if err == nil && applied {
		// Out of the FOLLOW notification of the day of the follow undone.
		err = s.notices.SendNotice(ctx, followNotice(viewer, target, int64(tables.DecodeU64(cur.Value(tables.FamRel, tables.ColRelSet)))), notify.NoticeRemove)
	}
	switch {
	case errors.Is(err, counted.ErrUnsettled):
		err = s.w.Keep(ctx, op, nil)
	case err == nil && !following:
		now := s.w.NowMillis()
		var busy bool
		if busy, err = s.fanoutsBefore(ctx, target, now); err == nil && busy {
			extra := map[string][]byte{tables.ColPendingFanouts: tables.EncodeMillis(now)}
			if !op.Kept() { // nothing else left to repair: the counters are exact
				extra[tables.ColPendingCounted] = []byte{}
			}
			err = s.w.Keep(ctx, op, extra)
		}
	}
	if err != nil {
		return nil, err
	}
	s.publishFollow(viewer, target, false)
	return u, s.w.End(ctx, op)
}

// countRelation makes step 4 of a follow or unfollow that changed the
// pair: it adds d to the follower's follow count and the followee's fan
// count (both at once) and sets the followee's new fan count on u — or,
// when op has outlived its budget, leaves them to the repairer. A fan
// count that crosses the fan-out threshold changes the followee's
// large-account state (crossed, large.go).
func (s *Service) countRelation(ctx context.Context, op *counted.Op, u *weibo.User, followee weibo.UserID, d int64) error {
	vs, err := s.w.Count(ctx, op, d)
	if err != nil || vs == nil {
		return err
	}
	u.FanCount = vs[1]
	s.fan.Crossed(ctx, followee, vs[1], d)
	return nil
}

// relationTarget checks a follow or unfollow's arguments and reads the
// target (returned to the caller, with its fan count updated by the call).
func (s *Service) relationTarget(ctx context.Context, viewer, target weibo.UserID) (*weibo.User, error) {
	if viewer == target {
		return nil, weibo.BadInput("userId", "you cannot follow or unfollow yourself")
	}
	return s.existingUser(ctx, target)
}

func (s *Service) existingUser(ctx context.Context, uid weibo.UserID) (*weibo.User, error) {
	us, err := s.users.GetUsers(ctx, []weibo.UserID{uid})
	if err != nil {
		return nil, err
	}
	if us[0] == nil {
		return nil, weibo.NotFound("user %s not found", uid)
	}
	return us[0], nil
}

// backfill copies target's newest posts (up to the backfill limit) into
// viewer's inbox, in PutMany batches. After each batch it reads the
// batch's posts again and takes back the entries of those deleted
// meanwhile: a delete's retraction that ran between this scan and this
// write would otherwise leave them.
func (s *Service) backfill(ctx context.Context, viewer, target weibo.UserID) error {
	return scanWrite(ctx, s.st, &hbase.Scan{Table: tables.Content, Prefix: tables.ContentPrefix(target), Families: []string{tables.FamPost}, Limit: s.backfillN},
		s.batch, nil, func(r *hbase.Result) (*hbase.Put, bool) {
			p, ok := tables.DecodeContentKey(r.Row)
			return fanout.InboxPut(viewer, p), ok && tables.PostStored(r)
		}, func(ctx context.Context, puts []*hbase.Put) error {
			if err := s.st.PutMany(ctx, puts); err != nil {
				return err
			}
			return s.dropDeleted(ctx, puts)
		})
}

// dropDeleted deletes the inbox rows of puts whose post is gone: one
// GetMany of the posts' content rows, one DeleteMany.
func (s *Service) dropDeleted(ctx context.Context, puts []*hbase.Put) error {
	gets := make([]*hbase.Get, len(puts))
	for i, p := range puts {
		_, id, _ := tables.DecodeInboxKey(p.Row)
		gets[i] = &hbase.Get{Table: tables.Content, Row: tables.ContentKey(id), Families: []string{tables.FamPost}}
	}
	rs, err := s.st.GetMany(ctx, gets)
	if err != nil {
		return err
	}
	var dels []*hbase.Delete
	for i, r := range rs {
		if !tables.PostStored(r) {
			dels = append(dels, &hbase.Delete{Table: tables.Inbox, Row: puts[i].Row})
		}
	}
	if len(dels) == 0 {
		return nil
	}
	return s.st.DeleteMany(ctx, dels)
}

// unbackfill deletes every post of target from viewer's inbox, in
// DeleteMany batches; the inbox rowkeys come from target's content
// rowkeys. The posts whose delete is in flight, whose content rows may be
// gone already, are dropDeleting's, read after this scan.
func (s *Service) unbackfill(ctx context.Context, viewer, target weibo.UserID) error {
	return scanWrite(ctx, s.st, &hbase.Scan{Table: tables.Content, Prefix: tables.ContentPrefix(target), Families: []string{tables.FamPost}},
		s.batch, nil, func(r *hbase.Result) (*hbase.Delete, bool) {
			p, ok := tables.DecodeContentKey(r.Row)
			return &hbase.Delete{Table: tables.Inbox, Row: tables.InboxKey(viewer, p)}, ok
		}, s.st.DeleteMany)
}

// dropDeleting deletes from viewer's inbox the posts of target whose
// delete is in flight (their markers), in DeleteMany batches: the last
// write of every settle of the pair viewer → target, either way, after
// the fans row and after the backfill's or unbackfill's scan of target's
// posts.
//
// With the delete's retraction (feed.RetractPost: the fans rows, then the
// markers of the follow pairs of the author), it takes a deleted post's
// entry from an inbox whose owner the retraction no longer finds among
// the fans, under every interleaving. Such an owner's fans row went
// before the retraction's scan of the fans, after the delete of their
// attends row by a follow pair's write (an unfollow, or a follow whose
// settle a concurrent unfollow turned), so that write's marker — kept
// until one of its settles has run to its end, this read last — was
// written before that scan too. If the retraction's later scan of the
// markers finds it, the retraction takes the entry. If not, that settle
// ended before, and its reads came before the end of the delete's marker
// (which follows the retraction): the unbackfill's scan, if it came
// before the content row's delete, named the post; if after, the
// delete's marker was there already and this read, later still, finds
// it. A settle that rewrites the fans row (a dead unfollow repaired after
// a new follow) is the same: the retraction found no fans row because it
// read before that rewrite, so this read, after the rewrite, came after
// the content row's delete.
func (s *Service) dropDeleting(ctx context.Context, viewer, target weibo.UserID) error {
	deleting, err := s.deletesInFlight(ctx, target)
	if err != nil {
		return err
	}
	for chunk := range slices.Chunk(deleting, s.batch) {
		dels := make([]*hbase.Delete, len(chunk))
		for i, p := range chunk {
			dels[i] = &hbase.Delete{Table: tables.Inbox, Row: tables.InboxKey(viewer, p)}
		}
		if err := s.st.DeleteMany(ctx, dels); err != nil {
			return err
		}
	}
	return nil
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

// IsFollowing reports, with one batched GetMany, whether viewer follows each of
// targets ("does A follow B" is a single Get of the attends row, seed 001/004).
func (s *Service) IsFollowing(ctx context.Context, viewer weibo.UserID, targets []weibo.UserID) (_ []bool, err error) {
	defer weibo.Wrap(&err, "follows")
	gets := make([]*hbase.Get, len(targets))
	for i, t := range targets {
		gets[i] = &hbase.Get{Table: tables.Relations, Row: tables.RelationKey(viewer, tables.Attends, t)}
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

// FollowList pages through whom uid follows (seed 004's "attends"), by user
// id: a prefix scan of uid's attends rows. Errors: BAD_USER_INPUT for a bad
// first or after.
func (s *Service) FollowList(ctx context.Context, uid weibo.UserID, first *int, after *string) (_ *weibo.UserConnection, err error) {
	defer weibo.Wrap(&err, "follow list")
	return s.relationPage(ctx, uid, tables.Attends, first, after)
}

// FanList pages through uid's fans, by user id: a prefix scan of uid's fans
// rows. Errors: BAD_USER_INPUT for a bad first or after.
func (s *Service) FanList(ctx context.Context, uid weibo.UserID, first *int, after *string) (_ *weibo.UserConnection, err error) {
	defer weibo.Wrap(&err, "fan list")
	return s.relationPage(ctx, uid, tables.Fans, first, after)
}

func (s *Service) relationPage(ctx context.Context, uid weibo.UserID, dir tables.Dir, first *int, after *string) (*weibo.UserConnection, error) {
	q := paging.Query{Kind: paging.CursorUsers, RowLen: tables.RelationKeyLen,
		Scan: hbase.Scan{Table: tables.Relations, Prefix: tables.RelationPrefix(uid, dir)}}
	edges, info, err := paging.Read(ctx, s.st, q, first, after,
		func(_ context.Context, rows []*hbase.Result) ([]*weibo.UserID, error) {
			out := make([]*weibo.UserID, len(rows))
			for i, r := range rows {
				if _, _, other, ok := tables.DecodeRelationKey(r.Row); ok {
					out[i] = &other
				}
			}
			return out, nil
		}, weibo.NewUserEdge)
	if err != nil {
		return nil, err
	}
	return &weibo.UserConnection{Edges: edges, PageInfo: info}, nil
}

// deletesInFlight returns the posts of author whose delete is in flight
// (a weibo:pending row of kind PendingPostDelete): one prefix scan.
func (s *Service) deletesInFlight(ctx context.Context, author weibo.UserID) ([]weibo.PostID, error) {
	var out []weibo.PostID
	err := s.st.Scan(ctx, &hbase.Scan{Table: tables.Pending, Prefix: tables.PendingPrefix(tables.PendingPostDelete, uint64(author))}, func(r *hbase.Result) error {
		if _, owner, ms, _, ok := tables.DecodePendingKey(r.Row); ok {
			out = append(out, weibo.PostID{Author: weibo.UserID(owner), Millis: int64(ms)})
		}
		return nil
	})
	return out, err
}

// publishFollow tells viewer's subscriptions that viewer now follows (or
// no longer follows) target.
func (s *Service) publishFollow(viewer, target weibo.UserID, follows bool) {
	k := events.KindFollow
	if !follows {
		k = events.KindUnfollow
	}
	data, _ := json.Marshal(events.HomeEvent{K: k, A: target.String()}) // strings only: it cannot fail
	s.events.Emit(events.HomeSubject(viewer), data)
}
