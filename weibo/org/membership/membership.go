// Package membership keeps which department each user belongs to (at most
// one). The membership of a user in a department is a counted relation
// (org.RelationDepartment): authority the user's cell o:dp, dependent the
// department's member row, counter the department's memberCount
// (org.DeptMemberCount), written on package counted's protocol.
package membership

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/org"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Departments is what memberships read of the department tree (package
// department's Service implements it).
type Departments interface {
	// Get reads departments by id: one entry per id, nil where the
	// department does not exist.
	Get(ctx context.Context, ids []weibo.DeptID) ([]*org.Department, error)
	// Existing reads department did; NOT_FOUND on field when there is none.
	Existing(ctx context.Context, field string, did weibo.DeptID) (*org.Department, error)
}

// Service keeps users' departments. It is safe for concurrent use.
type Service struct {
	st    hbase.Store
	w     *counted.Protocol
	users org.Users
	depts Departments
	audit *org.Recorder
	rel   *counted.Relation // the membership, registered with w
}

// New returns the memberships over st, reading accounts through users and
// departments through depts, recording changes with audit and writing the
// counted membership on w, registering the relation and its counter
// (org.DeptMemberCount) there. The weibo tables must exist
// (tables.Migrate).
func New(st hbase.Store, w *counted.Protocol, users org.Users, depts Departments, audit *org.Recorder) *Service {
	s := &Service{st: st, w: w, users: users, depts: depts, audit: audit}
	s.register()
	return s
}

// relation returns the membership of a user in a department (did, uid), a
// counted relation: authority the user's cell o:dp (naming did or not), dependent
// the department's member row, counter the department's memberCount. A
// move from one department to another is two writes of it (leave the old,
// join the new) decided by one conditional write of the cell.
func (s *Service) relation() *counted.Relation {
	return &counted.Relation{
		Name:   org.RelationDepartment,
		Marker: tables.PendingDeptMember,
		Counters: func(did, _ uint64) []counted.Counter {
			return []counted.Counter{{Kind: org.DeptMemberCount, Owner: did}}
		},
		Settle: func(ctx context.Context, did, uid uint64, _ []byte) error {
			return s.Repair(ctx, weibo.UserID(uid), weibo.DeptID(did))
		},
	}
}

// register adds the membership relation and its counter.
func (s *Service) register() {
	s.rel = s.relation()
	s.w.Register(s.rel)
	s.w.RegisterCounter(&counted.CounterSpec{
		Kind:   org.DeptMemberCount,
		Family: tables.FamInfo,
		Cell: func(c counted.Counter) (string, []byte, string, string) {
			return tables.Departments, tables.DeptKey(weibo.DeptID(c.Owner)), tables.ColDeptMemberCount, tables.ColDeptMemberSeq
		},
		Count: func(ctx context.Context, c counted.Counter) (int64, bool, error) {
			did := weibo.DeptID(c.Owner)
			ds, err := s.depts.Get(ctx, []weibo.DeptID{did})
			if err != nil || ds[0] == nil {
				return 0, false, err
			}
			want := tables.EncodeID(did)
			n, err := s.w.CountRows(ctx, &hbase.Scan{Table: tables.Departments, Prefix: tables.DeptMemberPrefix(did)},
				func(r *hbase.Result) *hbase.Get {
					if _, uid, ok := tables.DecodeDeptMemberKey(r.Row); ok {
						return &hbase.Get{Table: tables.Users, Row: tables.UserKey(uid), Families: []string{tables.FamOrg}}
					}
					return nil
				}, func(r *hbase.Result) bool { return bytes.Equal(r.Value(tables.FamOrg, tables.ColUserDept), want) })
			return n, true, err
		},
	})
}

// Set puts user uid into department did, or into none when
// did is RootDept, and returns the user: SetGuarded with no guard.
func (s *Service) Set(ctx context.Context, uid weibo.UserID, did weibo.DeptID) (*weibo.User, error) {
	return s.SetGuarded(ctx, uid, did, nil)
}

// SetGuarded puts user uid into department did, or into none when did is
// RootDept, and returns the user, if guard (nil: none) allows the move
// from the department the user is in: each attempt reads the user's cell
// o:dp, runs guard with the department it names, and writes only if
// guard allows it, with a conditional write expecting that very cell — so
// the move is made on a decision about the department it moves the user
// out of, and a concurrent move between the two makes the write fail and
// the next attempt decide again. guard runs even when the user is in did
// already. Errors: guard's (FORBIDDEN), as it returns them; NOT_FOUND for
// an unknown user or department; BAD_USER_INPUT (reason
// CONCURRENT_UPDATE) when the user's department keeps changing under
// concurrent calls.
//
// Writes, in order (package counted explains the scheme), for the
// department joined and the one left (each a write of the membership
// relation):
//  1. the weibo:pending rows of both;
//  2. the operation sequences of both departments' member counters;
//  3. the change's pending audit event (once; for none with its proof
//     cell armed in the user's row), the new department's member row
//     (the dependent);
//  4. the user's cell o:dp with CheckAndPut (CheckAndDelete for none)
//     expecting the value read, which guard decided on, with the event's
//     proof cell (the authority, the commit point; a concurrent change
//     makes the call end its markers, re-read, run guard again and retry);
//  5. the counters: +1 for the department joined, -1 for the one left
//     (within the write's budget), then the audit event listed;
//  6. the settles of both member rows from the cell (the old one deleted);
//  7. the deletes of the pending rows.
func (s *Service) SetGuarded(ctx context.Context, uid weibo.UserID, did weibo.DeptID, guard org.MoveGuard) (_ *weibo.User, err error) {
	defer weibo.Wrapf(&err, "set the department of %s to %s", uid, did)
	u, err := org.ExistingUser(ctx, s.users, uid)
	if err != nil {
		return nil, err
	}
	if did != weibo.RootDept {
		if _, err := s.depts.Existing(ctx, "departmentId", did); err != nil {
			return nil, err
		}
	}
	var rec *org.Recorded // recorded by moveMember
	defer func() { s.audit.Finish(ctx, rec, &err) }()
	for attempt := 0; ; attempt++ {
		cur, err := s.st.Get(ctx, &hbase.Get{Table: tables.Users, Row: tables.UserKey(uid), Families: []string{tables.FamOrg}})
		if err != nil {
			return nil, err
		}
		oldRaw := cur.Value(tables.FamOrg, tables.ColUserDept)
		old := tables.DecodeDeptID(oldRaw)
		if guard != nil {
			if err := guard(ctx, old); err != nil {
				return nil, err
			}
		}
		if old == did {
			return u, nil
		}
		done, err := s.moveMember(ctx, uid, old, did, oldRaw, &rec)
		if err != nil || done {
			return u, err
		}
		if attempt >= 3 {
			return nil, org.ErrConcurrent("userId", "the user's department keeps changing; retry")
		}
	}
}

// moveMember makes one attempt of Set's writes from old
// (its cell value oldRaw) to did; done is false when the cell changed
// since it was read (nothing was changed; the markers are ended). After
// the commit point done is true even with an error. The first attempt
// records the change's pending audit event into *rec, once the markers
// are written; the commit write carries its proof, and the event is
// settled after the counters, before the member rows and the markers'
// ends.
func (s *Service) moveMember(ctx context.Context, uid weibo.UserID, old, did weibo.DeptID, oldRaw []byte, recp **org.Recorded) (done bool, err error) {
	var join, leave *counted.Op
	if did != weibo.RootDept {
		if join, err = s.w.Begin(ctx, s.rel, uint64(did), uint64(uid)); err != nil {
			return false, err
		}
	}
	if old != weibo.RootDept {
		if leave, err = s.w.Begin(ctx, s.rel, uint64(old), uint64(uid)); err != nil {
			return false, err
		}
	}
	if *recp == nil {
		r, err := s.audit.Record(ctx, org.ActionDeptSetMember, org.UserNode(uid), map[string]any{"department": org.DeptRef(old)}, map[string]any{"department": org.DeptRef(did)},
			org.UserProof(uid, did == weibo.RootDept))
		if err != nil {
			return false, err
		}
		*recp = r
	}
	rec := *recp
	var applied bool
	if did != weibo.RootDept {
		if err := org.PutLink(ctx, s.st, tables.DeptMemberKey(did, uid), s.w.NowMillis()); err != nil {
			return false, err
		}
		if err := s.w.Step(ctx, org.StepDepartmentSetMember); err != nil {
			return false, err
		}
		applied, err = s.st.CheckAndPut(ctx, &hbase.Put{Table: tables.Users, Row: tables.UserKey(uid), Values: rec.Proven(hbase.Values{tables.FamOrg: {tables.ColUserDept: tables.EncodeID(did)}})},
			tables.FamOrg, tables.ColUserDept, oldRaw)
	} else {
		applied, err = s.st.CheckAndDelete(ctx, &hbase.Delete{Table: tables.Users, Row: tables.UserKey(uid), Values: rec.Proven(hbase.Values{tables.FamOrg: {tables.ColUserDept: nil}})},
			tables.FamOrg, tables.ColUserDept, oldRaw)
	}
	if err != nil {
		return false, err
	}
	if applied {
		rec.Commit()
		for _, c := range []struct {
			op *counted.Op
			d  int64
		}{{join, +1}, {leave, -1}} {
			if c.op != nil {
				if _, err := s.w.Count(ctx, c.op, c.d); err != nil {
					return applied, err
				}
			}
		}
		if err := s.audit.Settle(ctx, rec); err != nil {
			return applied, err
		}
	}
	// Settle both member rows from the cell: the joined one (written
	// above; a racing change may have made it wrong) and the left one.
	for _, m := range []struct {
		op  *counted.Op
		did weibo.DeptID
	}{{join, did}, {leave, old}} {
		if m.op == nil {
			continue
		}
		err := s.settleDeptMember(ctx, uid, m.did)
		if errors.Is(err, counted.ErrUnsettled) {
			err = s.w.Keep(ctx, m.op, nil)
		}
		if err != nil {
			return applied, err
		}
		if err := s.w.End(ctx, m.op); err != nil {
			return applied, err
		}
	}
	return applied, nil
}

// settleDeptMember makes the member row (did, uid) agree with the user's
// cell o:dp, the authority: present when it names did, absent otherwise
// (counted.Settle).
func (s *Service) settleDeptMember(ctx context.Context, uid weibo.UserID, did weibo.DeptID) error {
	read := func(ctx context.Context) (bool, error) {
		r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Users, Row: tables.UserKey(uid), Families: []string{tables.FamOrg}})
		return tables.UserDepartment(r) == did, err
	}
	in, err := read(ctx)
	if err != nil {
		return err
	}
	write := func(ctx context.Context, in bool) error {
		if in {
			return org.PutLink(ctx, s.st, tables.DeptMemberKey(did, uid), s.w.NowMillis())
		}
		return org.DeleteLink(ctx, s.st, tables.DeptMemberKey(did, uid))
	}
	_, err = counted.Settle(ctx, in, func(a, b bool) bool { return a == b }, write, read)
	return err
}

// Repair settles the member row of user uid in department did
// from the user's cell (settleDeptMember). Errors are the store's, or one
// wrapping counted.ErrUnsettled when the cell kept changing.
func (s *Service) Repair(ctx context.Context, uid weibo.UserID, did weibo.DeptID) error {
	if err := s.settleDeptMember(ctx, uid, did); err != nil {
		return fmt.Errorf("repair department member %s of %s: %w", uid, did, err)
	}
	return nil
}
