package role

import (
	"bytes"
	"context"
	"errors"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/org"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Role assignments: a counted relation (org.RelationRole) of the user's
// cell o:<rid> (the authority) and the role's member row, with the role's
// memberCount (counted.go).

// Assign gives user uid the role rid with a priority in
// [org.MinPriority, org.MaxPriority] and returns the user; re-assigning a role the
// user holds updates the priority. Errors: BAD_USER_INPUT for a priority out
// of range, or (reason CONCURRENT_UPDATE) when the user's cell keeps
// changing under concurrent calls; NOT_FOUND for an unknown user or role.
//
// Writes, in order (package counted explains the scheme):
//  1. the weibo:pending row of the write;
//  2. the operation sequence of the role's member counter;
//  3. the role's member row (the index), then the change's pending audit
//     event (org.Recorder.Record);
//  4. the user's cell in family o (the authority, the commit point, with
//     the event's proof cell: org.Recorded.Proven): with
//     CheckAndPut(absent) — which decides whether the assignment is new,
//     so that concurrent or repeated calls count once — or, when the user
//     holds the role already, with CheckAndPut expecting the priority read
//     (never a blind Put, which could bring back a cell a concurrent
//     revoke just deleted, uncounted);
//  5. if the assignment is new, the counter (within the write's budget);
//  6. the settle of the member row (settleRole): written again from the
//     cell and the cell re-read, until they agree — a revoke that deleted
//     the member row between steps 3 and 4 is undone here;
//  7. the audit event listed (org.Recorder.Settle);
//  8. the delete of the pending row.
//
// A failure between the member row and the user's cell leaves a member
// row without the user's cell: role member lists skip it, repeating the
// call finishes it, and the repairer settles it after the repair grace.
func (s *Service) Assign(ctx context.Context, uid weibo.UserID, rid weibo.RoleID, priority int) (_ *weibo.User, err error) {
	defer weibo.Wrapf(&err, "assign role %s to %s", rid, uid)
	if err := org.CheckPriority(priority); err != nil {
		return nil, err
	}
	u, err := org.ExistingUser(ctx, s.users, uid)
	if err != nil {
		return nil, err
	}
	if _, err := s.Existing(ctx, rid); err != nil {
		return nil, err
	}
	op, err := s.w.Begin(ctx, s.rel, uint64(rid), uint64(uid))
	if err != nil {
		return nil, err
	}
	prio := tables.EncodePriority(priority)
	if err := s.st.Put(ctx, &hbase.Put{Table: tables.Roles, Row: tables.RoleMemberKey(rid, uid), Values: hbase.Values{
		tables.FamInfo: {tables.ColPriority: prio}}}); err != nil {
		return nil, err
	}
	if err := s.w.Step(ctx, org.StepRoleAssign); err != nil {
		return nil, err
	}
	before, err := s.rolePriority(ctx, uid, rid)
	if err != nil {
		return nil, err
	}
	rec, err := s.audit.Record(ctx, org.ActionRoleAssign, org.UserNode(uid), before, map[string]any{"role": rid.String(), "priority": priority},
		org.UserProof(uid, false))
	if err != nil {
		return nil, err
	}
	defer s.audit.Finish(ctx, rec, &err)
	added, wrote, err := s.setRoleCell(ctx, uid, rid, prio, rec)
	if err != nil {
		return nil, err
	}
	if wrote {
		rec.Commit()
	}
	if added {
		if _, err := s.w.Count(ctx, op, +1); err != nil {
			return nil, err
		}
	}
	if err := s.settleMember(ctx, op, uid, rid, prio, true); err != nil {
		return nil, err
	}
	if err := s.audit.Settle(ctx, rec); err != nil {
		return nil, err
	}
	return u, s.w.End(ctx, op)
}

// rolePriority returns, for the audit log, user uid's assignment of rid as
// {"role", "priority"}, or nil when the user does not hold it.
func (s *Service) rolePriority(ctx context.Context, uid weibo.UserID, rid weibo.RoleID) (any, error) {
	r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Users, Row: tables.UserKey(uid), Families: []string{tables.FamOrg}})
	if err != nil {
		return nil, err
	}
	p, ok := tables.DecodePriority(r.Value(tables.FamOrg, tables.RoleQualifier(rid)))
	if !ok {
		return nil, nil
	}
	return map[string]any{"role": rid.String(), "priority": p}, nil
}

// setRoleCell writes the user's cell o:<rid> = prio with CheckAndPut:
// first expecting it absent, then, while it holds another priority,
// expecting the value read; the write carries rec's proof. It reports
// whether the cell was absent (the assignment is new) and whether it
// wrote (not when the cell held prio already).
func (s *Service) setRoleCell(ctx context.Context, uid weibo.UserID, rid weibo.RoleID, prio []byte, rec *org.Recorded) (added, wrote bool, err error) {
	qual := tables.RoleQualifier(rid)
	cell := &hbase.Put{Table: tables.Users, Row: tables.UserKey(uid), Values: rec.Proven(hbase.Values{tables.FamOrg: {qual: prio}})}
	var expected []byte // absent first: the common case costs one call
	for attempt := 0; attempt < 8; attempt++ {
		applied, err := s.st.CheckAndPut(ctx, cell, tables.FamOrg, qual, expected)
		if err != nil || applied {
			return applied && expected == nil, applied, err
		}
		r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Users, Row: tables.UserKey(uid), Families: []string{tables.FamOrg}})
		if err != nil {
			return false, false, err
		}
		if expected = r.Value(tables.FamOrg, qual); bytes.Equal(expected, prio) {
			return false, false, nil
		}
	}
	return false, false, org.ErrConcurrent("userId", "the user's roles keep changing; retry")
}

// Revoke takes role rid from user uid and returns the user; revoking a
// role the user does not hold changes nothing. Errors: NOT_FOUND for an
// unknown user or role; BAD_USER_INPUT (reason CONCURRENT_UPDATE) when the
// user's cell keeps changing under concurrent calls.
//
// Writes, in order, as Assign's: the pending row; the role's operation
// sequence; the pending audit event, with its proof cell armed in the
// user's row; CheckAndDelete of the user's cell and the proof cell,
// expecting the value read (the authority, the commit point; it decides
// whether this call counts); the counter (within the budget); the settle
// of the member row (deleted, then the cell re-read: an assign that raced
// in is written back); the audit event listed; the delete of the pending
// row. A failure between the cell and the member
// row leaves a member row without the user's cell, which readers skip and
// the repairer removes.
func (s *Service) Revoke(ctx context.Context, uid weibo.UserID, rid weibo.RoleID) (_ *weibo.User, err error) {
	defer weibo.Wrapf(&err, "revoke role %s from %s", rid, uid)
	u, err := org.ExistingUser(ctx, s.users, uid)
	if err != nil {
		return nil, err
	}
	if _, err := s.Existing(ctx, rid); err != nil {
		return nil, err
	}
	op, err := s.w.Begin(ctx, s.rel, uint64(rid), uint64(uid))
	if err != nil {
		return nil, err
	}
	before, err := s.rolePriority(ctx, uid, rid)
	if err != nil {
		return nil, err
	}
	rec, err := s.audit.Record(ctx, org.ActionRoleRevoke, org.UserNode(uid), before, nil, org.UserProof(uid, true))
	if err != nil {
		return nil, err
	}
	defer s.audit.Finish(ctx, rec, &err)
	qual := tables.RoleQualifier(rid)
	removed := false
	for attempt := 0; ; attempt++ {
		cur, err := s.st.Get(ctx, &hbase.Get{Table: tables.Users, Row: tables.UserKey(uid), Families: []string{tables.FamOrg}})
		if err != nil {
			return nil, err
		}
		v := cur.Value(tables.FamOrg, qual)
		if v == nil {
			break
		}
		if attempt == 8 {
			return nil, org.ErrConcurrent("userId", "the user's roles keep changing; retry")
		}
		removed, err = s.st.CheckAndDelete(ctx, &hbase.Delete{Table: tables.Users, Row: tables.UserKey(uid), Values: rec.Proven(hbase.Values{tables.FamOrg: {qual: nil}})},
			tables.FamOrg, qual, v)
		if err != nil {
			return nil, err
		}
		if removed {
			rec.Commit()
			break
		}
	}
	if removed {
		if _, err := s.w.Count(ctx, op, -1); err != nil {
			return nil, err
		}
	}
	if err := s.w.Step(ctx, org.StepRoleRevoke); err != nil {
		return nil, err
	}
	if err := s.settleMember(ctx, op, uid, rid, nil, true); err != nil {
		return nil, err
	}
	if err := s.audit.Settle(ctx, rec); err != nil {
		return nil, err
	}
	return u, s.w.End(ctx, op)
}

// settleMember settles the member row (settleRole), keeping op's marker
// for the repairer when the cell keeps changing.
func (s *Service) settleMember(ctx context.Context, op *counted.Op, uid weibo.UserID, rid weibo.RoleID, cell []byte, known bool) error {
	err := s.settleRole(ctx, uid, rid, cell, known)
	if errors.Is(err, counted.ErrUnsettled) {
		return s.w.Keep(ctx, op, nil)
	}
	return err
}
