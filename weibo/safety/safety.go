// Package safety is what a user controls of whom and what they see: blocks
// (拉黑), mutes (屏蔽) and keyword filters (屏蔽关键词), kept in one
// weibo:safety row per user (tables.Safety), and the viewer's Set that
// every read path honours.
//
// A block of B by A is a counted relation on the write protocol (package
// counted): authority A's packed block cell (tables.ColBlocks, replaced
// with CheckAndPut), dependents B's blocked-by cell of A and the follows
// between them, ended both ways through the follow relation; counter A's
// blockCount. A follow checks the block both before and after its own
// authority's write (follow.Guard), so that a follow and a block racing
// each other never leave a follow across a standing block. Mutes and
// filters are not counted: each is one CheckAndPut of the viewer's packed
// cell, and a timed mute or filter ends by itself — the entry carries its
// end, and a read at or after it sees none (no job runs; the next write
// of the cell drops it).
//
// Reads: a page's read path adds RowGet(viewer) to the batched read it
// makes anyway, and decodes the row with FromRow into a Set — or, for the
// home timeline, VersionGet(viewer), the row's version cell alone, and
// the service answers the Set it remembers for that version
// (SetForVersion, cache.go); the Set
// answers, without allocating per entry, whether the viewer blocks, is
// blocked by or mutes a user, and which filters a text matches.
//
// One file per concern: set.go (the Set and filter matching), home.go
// and verdicts.go (a home page's judging of its posts, made cheap), reads.go (the Set from a page's scan), cache.go (the Sets
// remembered by version), live.go (the Set of a live subscription, read
// again on each change), safety.go (the service), guard.go (interactions
// across a block), block.go (the counted block write), mute.go,
// filter.go, lists.go (blockedUsers, mutedUsers), api.go (the GraphQL
// enums), check.go (gateway fsck).
package safety

import (
	"context"
	"log/slog"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/events"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Bounds of a user's sets.
const (
	// MaxBlocks is how many users one user may block.
	MaxBlocks = 10000
	// MaxMutes is how many users one user may mute at once (live mutes).
	MaxMutes = 10000
	// MaxFilters is how many live keyword filters one user may have.
	MaxFilters = 100
	// MaxPhrase is the longest filter phrase, in characters (runes).
	MaxPhrase = 64
	// MaxDuration is the longest timed mute or filter, in seconds (ten
	// years); longer is BAD_USER_INPUT (null means until undone).
	MaxDuration = 10 * 366 * 24 * 3600
)

// Users reads the users a block or mute names. *account.Service
// implements it.
type Users interface {
	GetUsers(ctx context.Context, ids []weibo.UserID) ([]*weibo.User, error)
}

// Follows ends a follow (the dependents of a block). *follow.Service
// implements it.
type Follows interface {
	Unfollow(ctx context.Context, viewer, target weibo.UserID) (*weibo.User, error)
}

// Service is the blocks, mutes and filters' API. It is safe for
// concurrent use.
type Service struct {
	st      hbase.Store
	w       *counted.Protocol
	rel     *counted.Relation
	users   Users
	follows Follows
	events  *events.Emitter
	log     *slog.Logger
	sets    *sets // the Sets remembered by version (cache.go)
}

// New returns the safety service over st and registers with w the block
// relation, its blockCount counter and its fsck check (check.go). The
// weibo tables must exist (tables.Migrate).
func New(st hbase.Store, w *counted.Protocol, users Users, follows Follows, ev *events.Emitter) *Service {
	s := &Service{st: st, w: w, users: users, follows: follows, events: ev, log: w.Logger(), sets: newSets(DefaultRemembered)}
	s.register()
	return s
}

// SetOf reads viewer's Set with one Get of their safety row.
func (s *Service) SetOf(ctx context.Context, viewer weibo.UserID) (_ *Set, err error) {
	defer weibo.Wrap(&err, "safety set")
	r, err := s.st.Get(ctx, RowGet(viewer))
	if err != nil {
		return nil, err
	}
	return FromRow(viewer, r, s.w.NowMillis()), nil
}

// SetFromRow decodes viewer's Set from their safety row read by the
// caller (RowGet in its own batched read), at the service's clock.
func (s *Service) SetFromRow(viewer weibo.UserID, r *hbase.Result) *Set {
	return FromRow(viewer, r, s.w.NowMillis())
}

// Blocked reports whether a block stands between a and b, either way:
// one GetMany of both users' block cells (the authorities). A follow,
// like, comment or repost across it is FORBIDDEN.
func (s *Service) Blocked(ctx context.Context, a, b weibo.UserID) (_ bool, err error) {
	defer weibo.Wrap(&err, "blocked")
	if a == b {
		return false, nil
	}
	rs, err := s.st.GetMany(ctx, []*hbase.Get{
		{Table: tables.Safety, Row: tables.SafetyKey(a), Families: []string{tables.FamSafetySet}},
		{Table: tables.Safety, Row: tables.SafetyKey(b), Families: []string{tables.FamSafetySet}},
	})
	if err != nil {
		return false, err
	}
	_, ab := tables.Blocks(rs[0].Value(tables.FamSafetySet, tables.ColBlocks)).Find(b)
	_, ba := tables.Blocks(rs[1].Value(tables.FamSafetySet, tables.ColBlocks)).Find(a)
	return ab || ba, nil
}

// ErrForbiddenInteraction is the FORBIDDEN error of an interaction across
// a block; it says nothing of who blocked whom.
func ErrForbiddenInteraction() error {
	return weibo.Forbidden("you cannot interact with this user")
}

// existingUser reads uid, NOT_FOUND when missing.
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

// readCell reads one packed cell of owner's safety row.
func (s *Service) readCell(ctx context.Context, owner weibo.UserID, qual string) ([]byte, error) {
	r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Safety, Row: tables.SafetyKey(owner), Families: []string{tables.FamSafetySet}})
	if err != nil {
		return nil, err
	}
	return r.Value(tables.FamSafetySet, qual), nil
}

// casRounds bounds the optimistic rounds of one packed cell's change.
const casRounds = 50

// update changes one packed cell of owner's safety row with CheckAndPut
// against the value read, writing the row's version anew in the same
// Put (an emptied cell is written empty: HBase's check treats an empty
// value as absent): change returns the new value and whether to write it
// (false: nothing to do), or an error that ends the update. It returns
// whether it wrote.
func (s *Service) update(ctx context.Context, owner weibo.UserID, qual string, change func(cur []byte) ([]byte, bool, error)) (bool, error) {
	row := tables.SafetyKey(owner)
	for range casRounds {
		cur, err := s.readCell(ctx, owner, qual)
		if err != nil {
			return false, err
		}
		next, write, err := change(cur)
		if err != nil || !write {
			return false, err
		}
		if next == nil {
			next = []byte{}
		}
		ok, err := s.st.CheckAndPut(ctx, &hbase.Put{Table: tables.Safety, Row: row, Values: hbase.Values{
			tables.FamSafetySet:     {qual: next},
			tables.FamSafetyVersion: {tables.ColSafetyVersion: tables.NewSafetyVersion()},
		}}, tables.FamSafetySet, qual, cur)
		if ok {
			s.refresh(ctx, owner, true)
		}
		if err != nil || ok {
			return ok, err
		}
	}
	return false, &weibo.Error{Code: weibo.CodeUnavailable, Message: "too many concurrent changes of the same list; try again"}
}

// emitChange tells the live reads of each of uids, on every instance,
// that their Set changed (events.SafetySubject).
func (s *Service) emitChange(uids ...weibo.UserID) {
	for _, u := range uids {
		s.events.Emit(events.SafetySubject(u), []byte(u.String()))
	}
}
