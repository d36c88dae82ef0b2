package role

import (
	"bytes"
	"context"
	"fmt"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/org"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Service keeps the roles: names, assignments and their reads. It is
// safe for concurrent use.
type Service struct {
	st    hbase.Store
	w     *counted.Protocol
	users org.Users
	audit *org.Recorder
	rel   *counted.Relation // the role assignment, registered with w
}

// New returns the roles over st, reading accounts through users,
// recording changes with audit and writing the counted role assignment on
// w (whose clock it uses), registering the relation and its counter
// (org.MemberCount) there. The weibo tables must exist (tables.Migrate).
func New(st hbase.Store, w *counted.Protocol, users org.Users, audit *org.Recorder) *Service {
	s := &Service{st: st, w: w, users: users, audit: audit}
	s.register()
	return s
}

// register adds the role assignment and the member counter to the protocol.
func (s *Service) register() {
	// The role assignment (rid, uid): authority the user's cell o:<rid>,
	// dependent the role's member row, counter the role's memberCount.
	s.rel = &counted.Relation{
		Name:   org.RelationRole,
		Marker: tables.PendingRole,
		Counters: func(rid, _ uint64) []counted.Counter {
			return []counted.Counter{{Kind: org.MemberCount, Owner: rid}}
		},
		Settle: func(ctx context.Context, rid, uid uint64, _ []byte) error {
			return s.RepairMember(ctx, weibo.UserID(uid), weibo.RoleID(rid))
		},
	}
	s.w.Register(s.rel)
	s.w.RegisterCounter(&counted.CounterSpec{
		Kind: org.MemberCount,
		Cell: func(c counted.Counter) (string, []byte, string, string) {
			return tables.Roles, tables.RoleKey(weibo.RoleID(c.Owner)), tables.ColMemberCount, tables.ColMemberSeq
		},
		Count: func(ctx context.Context, c counted.Counter) (int64, bool, error) {
			rid := weibo.RoleID(c.Owner)
			rs, err := s.Get(ctx, []weibo.RoleID{rid})
			if err != nil || rs[0] == nil {
				return 0, false, err
			}
			n, err := s.recountMembers(ctx, rid)
			return n, true, err
		},
	})
}

// recountMembers counts the member rows of rid whose user's cell o:<rid>
// exists.
func (s *Service) recountMembers(ctx context.Context, rid weibo.RoleID) (int64, error) {
	qual := tables.RoleQualifier(rid)
	return s.w.CountRows(ctx, &hbase.Scan{Table: tables.Roles, Prefix: tables.RoleMemberPrefix(rid)},
		func(r *hbase.Result) *hbase.Get {
			if _, uid, ok := tables.DecodeRoleMemberKey(r.Row); ok {
				return &hbase.Get{Table: tables.Users, Row: tables.UserKey(uid), Families: []string{tables.FamOrg}}
			}
			return nil
		}, func(r *hbase.Result) bool { return r.Value(tables.FamOrg, qual) != nil })
}

// settleRole makes the member row (rid, uid) agree with the user's cell
// o:<rid>, the authority: present with the cell's priority, or absent
// (counted.Settle). It settles from cell, the caller's knowledge (known
// false reads it).
func (s *Service) settleRole(ctx context.Context, uid weibo.UserID, rid weibo.RoleID, cell []byte, known bool) error {
	read := func(ctx context.Context) ([]byte, error) {
		r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Users, Row: tables.UserKey(uid), Families: []string{tables.FamOrg}})
		return r.Value(tables.FamOrg, tables.RoleQualifier(rid)), err
	}
	if !known {
		var err error
		if cell, err = read(ctx); err != nil {
			return err
		}
	}
	write := func(ctx context.Context, cell []byte) error {
		member := tables.RoleMemberKey(rid, uid)
		if cell != nil {
			return s.st.Put(ctx, &hbase.Put{Table: tables.Roles, Row: member, Values: hbase.Values{tables.FamInfo: {tables.ColPriority: cell}}})
		}
		return s.st.Delete(ctx, &hbase.Delete{Table: tables.Roles, Row: member})
	}
	_, err := counted.Settle(ctx, cell, bytes.Equal, write, read)
	return err
}

// RepairMember settles the member row of user uid in role rid from the
// user's cell (see settleRole). Errors are the store's, or one wrapping
// counted.ErrUnsettled when the cell kept changing.
func (s *Service) RepairMember(ctx context.Context, uid weibo.UserID, rid weibo.RoleID) error {
	if err := s.settleRole(ctx, uid, rid, nil, false); err != nil {
		return fmt.Errorf("repair role member %s of %s: %w", uid, rid, err)
	}
	return nil
}
