// Package suspend is the suspension of a user by a moderator
// (suspendUser, unsuspendUser): the authority, one weibo:suspensions row
// per suspended user (tables.Suspensions), and each gateway instance's
// Registry of the users suspended now, which the read paths ask (as a
// weibo.Suspensions) to hide a suspended user's posts, comments, likes and
// reposts from every other user, and the token check asks to refuse their
// tokens.
//
// A suspension hides at read time and deletes nothing: no counter changes
// (a post's likeCount still counts a suspended user's like; the likers
// list does not show it), and lifting it — unsuspendUser, or its until
// passing, which needs no job — brings everything back exactly.
//
// Suspend writes the row (one Put, the change's commit point, carrying
// its audit event's proof), reads it into this instance's registry,
// publishes the change on the bus (every instance reads the row again),
// then ends all the user's tokens (account token generation, published on
// the bus too). A crash between the row and the tokens leaves the
// suspension in force all the same: every instance's token check refuses
// a suspended user's token from its registry. The registry scans the
// table again every few seconds while the bus is away, and once when it
// comes back.
//
// Authorization is the caller's (the resolver: MANAGE_USERS and the rank
// rule, authz.Service.ActOn; a report's SUSPEND_USER: the same rule).
package suspend

import (
	"context"
	"time"
	"unicode/utf8"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/audit"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/org"
	"github.com/weibohbase/gateway/weibo/tables"
)

// The audit actions of suspensions.
const (
	ActionSuspend   = "user.suspend"
	ActionUnsuspend = "user.unsuspend"
)

// StepWritten is the step after a change's row is written (its commit
// point) and this instance's registry and the bus have heard of it,
// before a suspension ends the user's tokens (what the token check's
// refusal from the registry covers).
const StepWritten = "suspend:written"

// MaxReason is the longest reason, in characters (runes).
const MaxReason = 500

// Accounts is what a suspension needs of the users: that the target
// exists, and the ending of all their tokens. *account.Service
// implements it.
type Accounts interface {
	GetUsers(ctx context.Context, ids []weibo.UserID) ([]*weibo.User, error)
	EndAllTokens(ctx context.Context, uid weibo.UserID) (gen int64, err error)
}

// Suspension is a user's suspension.
type Suspension struct {
	// User is the suspended user.
	User weibo.UserID
	// Since is when it was made.
	Since time.Time
	// Until is when it ends by itself; nil: until lifted.
	Until *time.Time
	// Reason is the reason given, "" for none.
	Reason string
	// By is the moderator who made it, 0 when unknown.
	By weibo.UserID
}

// Service suspends and unsuspends users and answers, from its Registry,
// who is suspended. It is safe for concurrent use.
type Service struct {
	st       hbase.Store
	w        *counted.Protocol
	accounts Accounts
	audit    *org.Recorder
	reg      *Registry
}

// New returns the suspension service over st, recording changes with
// rec, ending tokens through accounts and keeping reg up to date (reg
// must be over the same store), and registers its fsck check with w.
func New(st hbase.Store, w *counted.Protocol, accounts Accounts, rec *org.Recorder, reg *Registry) *Service {
	s := &Service{st: st, w: w, accounts: accounts, audit: rec, reg: reg}
	w.RegisterCheck(s.fsckCheck())
	return s
}

// Registry returns the service's registry: the weibo.Suspensions the read
// paths and the token check ask.
func (s *Service) Registry() *Registry { return s.reg }

// Suspended reports whether uid is suspended at nowMillis, from the
// registry (no store call).
func (s *Service) Suspended(uid weibo.UserID, nowMillis int64) bool {
	return s.reg.Suspended(uid, nowMillis)
}

// Of returns uid's suspension in force now (the service's clock), nil
// when none, from the registry (no store call).
func (s *Service) Of(uid weibo.UserID) *Suspension {
	c, ok := s.reg.Of(uid, s.w.NowMillis())
	if !ok {
		return nil
	}
	return suspensionOf(uid, c)
}

// SuspendedUsers returns the users suspended now, from the registry.
func (s *Service) SuspendedUsers() []weibo.UserID { return s.reg.Users(s.w.NowMillis()) }

func suspensionOf(uid weibo.UserID, c tables.SuspensionCells) *Suspension {
	out := &Suspension{User: uid, Since: time.UnixMilli(c.Since), Reason: c.Reason, By: c.By}
	if c.Until != 0 {
		out.Until = new(time.UnixMilli(c.Until))
	}
	return out
}

// Suspend suspends target until until (nil: until Unsuspend) for reason
// ("" for none), replacing a suspension in force, and ends all their
// tokens. The moderator is the context's audit source (audit.Source). It
// authorizes nothing: the caller does. Errors: NOT_FOUND for an unknown
// target; BAD_USER_INPUT for an until not in the future (field "until")
// or a reason over MaxReason characters or not UTF-8 (field "reason");
// the store's.
func (s *Service) Suspend(ctx context.Context, target weibo.UserID, until *time.Time, reason string) (_ *Suspension, err error) {
	defer weibo.Wrapf(&err, "suspend %s", target)
	now := s.w.NowMillis()
	if until != nil && until.UnixMilli() <= now {
		return nil, weibo.BadInput("until", "until must be in the future")
	}
	if !utf8.ValidString(reason) || utf8.RuneCountInString(reason) > MaxReason {
		return nil, weibo.BadInput("reason", "reason must be valid UTF-8 of at most %d characters", MaxReason)
	}
	if err := s.exists(ctx, target); err != nil {
		return nil, err
	}
	before, err := s.read(ctx, target)
	if err != nil {
		return nil, err
	}
	by, _ := audit.Source(ctx)
	c := tables.SuspensionCells{Since: now, Reason: reason, By: by}
	after := map[string]any{"reason": reason}
	if until != nil {
		c.Until = until.UnixMilli()
		after["until"] = time.UnixMilli(c.Until).UTC().Format(time.RFC3339Nano)
	}
	rec, err := s.audit.Record(ctx, ActionSuspend, org.UserNode(target), auditState(before), after, proof(target, false))
	if err != nil {
		return nil, err
	}
	defer s.audit.Finish(ctx, rec, &err)
	if err := s.st.Put(ctx, &hbase.Put{Table: tables.Suspensions, Row: tables.SuspensionKey(target),
		Values: rec.Proven(tables.EncodeSuspension(c))}); err != nil {
		return nil, err
	}
	rec.Commit()
	if err := s.heard(ctx, target); err != nil {
		return nil, err
	}
	if err := s.w.Step(ctx, StepWritten); err != nil {
		return nil, err
	}
	if _, err := s.accounts.EndAllTokens(ctx, target); err != nil {
		return nil, err
	}
	return suspensionOf(target, c), nil
}

// Unsuspend lifts target's suspension, if any (none: nothing changes and
// nothing is recorded). It authorizes nothing: the caller does. Errors:
// NOT_FOUND for an unknown target; the store's.
func (s *Service) Unsuspend(ctx context.Context, target weibo.UserID) (err error) {
	defer weibo.Wrapf(&err, "unsuspend %s", target)
	if err := s.exists(ctx, target); err != nil {
		return err
	}
	before, err := s.read(ctx, target)
	if err != nil {
		return err
	}
	if before == nil {
		return s.heard(ctx, target) // the registry may hold what the store no longer does
	}
	rec, err := s.audit.Record(ctx, ActionUnsuspend, org.UserNode(target), auditState(before), nil, proof(target, true))
	if err != nil {
		return err
	}
	defer s.audit.Finish(ctx, rec, &err)
	del := map[string][]byte{}
	for _, q := range tables.SuspensionQualifiers {
		del[q] = nil
	}
	if err := s.st.Delete(ctx, &hbase.Delete{Table: tables.Suspensions, Row: tables.SuspensionKey(target),
		Values: rec.Proven(hbase.Values{tables.FamSuspension: del})}); err != nil {
		return err
	}
	rec.Commit()
	if err := s.heard(ctx, target); err != nil {
		return err
	}
	return s.w.Step(ctx, StepWritten)
}

// heard reads target's row into this instance's registry and tells the
// other instances.
func (s *Service) heard(ctx context.Context, target weibo.UserID) error {
	if err := s.reg.Refresh(ctx, target); err != nil {
		return err
	}
	s.reg.publish(target)
	return nil
}

// exists returns NOT_FOUND (field userId) for an unknown user.
func (s *Service) exists(ctx context.Context, uid weibo.UserID) error {
	us, err := s.accounts.GetUsers(ctx, []weibo.UserID{uid})
	if err != nil {
		return err
	}
	if us[0] == nil {
		return weibo.NotFoundOn("userId", "user "+uid.String()+" not found")
	}
	return nil
}

// read returns target's stored suspension, nil when none (or ended).
func (s *Service) read(ctx context.Context, target weibo.UserID) (*Suspension, error) {
	r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Suspensions, Row: tables.SuspensionKey(target)})
	if err != nil {
		return nil, err
	}
	c, ok := tables.DecodeSuspension(r)
	if !ok || !live(c, s.w.NowMillis()) {
		return nil, nil
	}
	return suspensionOf(target, c), nil
}

// auditState is a suspension as the audit log shows it (nil: none).
func auditState(sp *Suspension) any {
	if sp == nil {
		return nil
	}
	m := map[string]any{"since": sp.Since.UTC().Format(time.RFC3339Nano), "reason": sp.Reason}
	if sp.Until != nil {
		m["until"] = sp.Until.UTC().Format(time.RFC3339Nano)
	}
	return m
}

// proof is the audit proof of a change of uid's suspension: its row,
// family s.
func proof(uid weibo.UserID, deleted bool) audit.Proof {
	return audit.Proof{Table: tables.Suspensions, Row: tables.SuspensionKey(uid), Family: tables.FamSuspension, Deleted: deleted}
}
