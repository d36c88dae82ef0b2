package org

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/weibohbase/gateway/hbase"
	"github.com/weibohbase/gateway/weibo"
	"github.com/weibohbase/gateway/weibo/counted"
	"github.com/weibohbase/gateway/weibo/paging"
	"github.com/weibohbase/gateway/weibo/tables"
)

// Roles (seed 001, case 1: "权限控制人员角色表"). Users have many roles, roles
// have many users, and every assignment carries a priority; a user's roles
// are listed highest priority first. The seed's two tables map to:
//
//   - psn cf2 (roleId → priority): family o of the user's weibo:users row,
//     qualifier = the role id (8 bytes BE), value = the priority (4 bytes BE).
//     This side is the AUTHORITY: a user holds a role exactly when the cell
//     exists and the role's row exists.
//   - role cf1 / cf2: weibo:roles, one row per role (name, member counter)
//     and, made tall like weibo:relations, one row per member. Member rows
//     are the index that lists a role's members; reads check every member
//     row against the user's cell (one batched GetMany per page) and skip
//     those without one.
//
// Role names are unique ignoring case, through weibo:rolenames (one row per
// lower-cased name, claimed with CheckAndPut(absent) like usernames). The
// name index row is written before the role row; a role exists when its
// role row exists, and an index row pointing at a missing role row is stale.
//
// docs/schema.md documents every byte.

// Priority bounds of a role assignment (inclusive). Larger means higher:
// a user's roles are listed from MaxPriority down.
const (
	MinPriority = 1
	MaxPriority = 1000
)

// MaxRoleNameLength is the longest role name, in characters.
const MaxRoleNameLength = 64

// AdminRole is the name of the role the admin mutations require (the
// @hasRole(role: "admin") directive of the schema).
const AdminRole = "admin"

// Role is one role row of weibo:roles.
type Role struct {
	// ID is the role's id.
	ID weibo.RoleID
	// Name is the role's name as given.
	Name string
	// MemberCount is the number of users holding the role (an Increment counter).
	MemberCount int64
	// CreatedAt is the role's creation time.
	CreatedAt time.Time
}

// RoleAssignment is one of a user's roles with its priority.
type RoleAssignment struct {
	// Role is the role.
	Role *Role
	// Priority is the assignment's priority, MinPriority..MaxPriority.
	Priority int
}

// RoleEdge is one edge of a RoleConnection.
type RoleEdge struct {
	// Role is the edge's role.
	Role *Role
	// Cursor is the edge's opaque cursor.
	Cursor string
}

// RoleConnection is one page of the roles, ordered by name (ignoring case).
type RoleConnection struct {
	// Edges are the page's roles.
	Edges []RoleEdge
	// PageInfo is the Relay page info.
	PageInfo weibo.PageInfo
}

// RoleMemberEdge is one member of a role.
type RoleMemberEdge struct {
	// User is the member (only the id; load the rest in a batch).
	User weibo.UserID
	// Priority is the assignment's priority.
	Priority int
	// Cursor is the edge's opaque cursor.
	Cursor string
}

// RoleMemberConnection is one page of a role's members, ordered by user id.
type RoleMemberConnection struct {
	// Edges are the page's members.
	Edges []RoleMemberEdge
	// PageInfo is the Relay page info.
	PageInfo weibo.PageInfo
	// TotalCount is the number of members from the role's kept counter
	// (memberCount). The GraphQL layer fills it in from the Role; the domain
	// leaves it 0.
	TotalCount int
}

func checkPriority(p int) error {
	if p < MinPriority || p > MaxPriority {
		return weibo.BadInput("priority", "priority must be between %d and %d, got %d", MinPriority, MaxPriority, p)
	}
	return nil
}

// CreateRole creates a role. The name is trimmed and must be 1 to 64
// characters and unique ignoring case. Errors: BAD_USER_INPUT for an empty
// or too long name, and (reason ROLE_NAME_TAKEN) for a taken one.
//
// Writes, in order: a fresh id from the sequence (Increment of tables.SeqKey),
// the weibo:rolenames row with CheckAndPut(absent) — the one atomic step
// that makes the name unique —, then the role row (the commit point). A
// failure between the two leaves an index row whose role row is missing:
// readers skip it, a later create of the same name removes it once it is
// older than 10 s, and Fsck removes it.
func (s *Service) CreateRole(ctx context.Context, name string) (_ *Role, err error) {
	defer weibo.Wrap(&err, "create role")
	name, err = cleanName("name", name, MaxRoleNameLength)
	if err != nil {
		return nil, err
	}
	if r, err := s.RoleByName(ctx, name); err != nil {
		return nil, err
	} else if r != nil {
		return nil, errRoleNameTaken(name)
	}
	seq, err := s.st.Increment(ctx, &hbase.Increment{Table: tables.Roles, Row: tables.SeqKey, Family: tables.FamCount, Qualifier: tables.ColSeq, Amount: 1})
	if err != nil {
		return nil, err
	}
	rid := weibo.RoleID(seq)
	rec, err := s.record(ctx, ActionRoleCreate, roleNode(rid), nil, map[string]any{"name": name})
	if err != nil {
		return nil, err
	}
	defer func() { s.finish(ctx, rec, err) }()
	if err := s.claimRoleName(ctx, name, rid); err != nil {
		return nil, err
	}
	if err := s.w.Step(ctx, PairStepCreateRole); err != nil {
		return nil, err
	}
	now := s.nowMillis()
	if err := s.st.Put(ctx, &hbase.Put{Table: tables.Roles, Row: tables.RoleKey(rid), Values: hbase.Values{
		tables.FamInfo:  {tables.ColRoleName: []byte(name), tables.ColCreated: tables.EncodeMillis(now)},
		tables.FamCount: {tables.ColMemberCount: tables.EncodeCounter(0)},
	}}); err != nil {
		return nil, err
	}
	rec.committed = true
	return &Role{ID: rid, Name: name, CreatedAt: time.UnixMilli(now)}, nil
}

// claimRoleName points the name index row of name at rid with
// CheckAndPut(absent). A row that already points at rid counts as claimed
// (a repeated rename); a row whose role row is missing and that is older
// than staleGrace is removed (CheckAndDelete) and the claim retried.
func (s *Service) claimRoleName(ctx context.Context, name string, rid weibo.RoleID) error {
	key := tables.RoleNameKey(name)
	for attempt := 0; attempt < 3; attempt++ {
		ok, err := s.st.CheckAndPut(ctx, &hbase.Put{Table: tables.RoleNames, Row: key, Values: hbase.Values{
			tables.FamName: {tables.ColRoleID: tables.EncodeID(rid)}}}, tables.FamName, tables.ColRoleID, nil)
		if err != nil || ok {
			return err
		}
		cur, err := s.st.Get(ctx, &hbase.Get{Table: tables.RoleNames, Row: key})
		if err != nil {
			return err
		}
		c := cur.Cell(tables.FamName, tables.ColRoleID)
		if c == nil {
			continue // deleted meanwhile: try again
		}
		owner := tables.DecodeRoleID(c.Value)
		if owner == rid {
			return nil
		}
		roles, err := s.GetRoles(ctx, []weibo.RoleID{owner})
		if err != nil {
			return err
		}
		if roles[0] != nil || s.nowMillis()-c.Timestamp < staleGrace.Milliseconds() {
			return errRoleNameTaken(name)
		}
		if _, err := s.st.CheckAndDelete(ctx, &hbase.Delete{Table: tables.RoleNames, Row: key}, tables.FamName, tables.ColRoleID, c.Value); err != nil {
			return err
		}
	}
	return errRoleNameTaken(name)
}

// RenameRole renames a role and returns it. Errors: BAD_USER_INPUT for a bad
// name or (reason ROLE_NAME_TAKEN) one another role has, NOT_FOUND for an
// unknown role.
//
// Writes, in order: the new name's index row with CheckAndPut(absent), the
// role row's name (the commit point), then the CheckAndDelete of the old
// name's index row (only if it still points at this role). A failure after
// the first write leaves an index row for the new name pointing at a role
// of another name: readers skip it, repeating the rename finishes it, Fsck
// removes it. A change of case only rewrites the role row.
func (s *Service) RenameRole(ctx context.Context, rid weibo.RoleID, name string) (_ *Role, err error) {
	defer weibo.Wrapf(&err, "rename role %s", rid)
	name, err = cleanName("name", name, MaxRoleNameLength)
	if err != nil {
		return nil, err
	}
	role, err := s.existingRole(ctx, rid)
	if err != nil {
		return nil, err
	}
	rec, err := s.record(ctx, ActionRoleRename, roleNode(rid), map[string]any{"name": role.Name}, map[string]any{"name": name})
	if err != nil {
		return nil, err
	}
	defer func() { s.finish(ctx, rec, err) }()
	oldKey, newKey := tables.RoleNameKey(role.Name), tables.RoleNameKey(name)
	sameKey := bytes.Equal(oldKey, newKey)
	if !sameKey {
		if err := s.claimRoleName(ctx, name, rid); err != nil {
			return nil, err
		}
		if err := s.w.Step(ctx, PairStepRenameRole); err != nil {
			return nil, err
		}
	}
	if err := s.st.Put(ctx, &hbase.Put{Table: tables.Roles, Row: tables.RoleKey(rid), Values: hbase.Values{
		tables.FamInfo: {tables.ColRoleName: []byte(name)}}}); err != nil {
		return nil, err
	}
	rec.committed = true
	if !sameKey {
		if _, err := s.st.CheckAndDelete(ctx, &hbase.Delete{Table: tables.RoleNames, Row: oldKey}, tables.FamName, tables.ColRoleID, tables.EncodeID(rid)); err != nil {
			return nil, err
		}
	}
	role.Name = name
	return role, nil
}

// DeleteRole deletes a role and removes it from every user. Errors:
// NOT_FOUND for an unknown role.
//
// Writes, in order: the role row (the commit point: from then on every
// read ignores the role, whatever still refers to it), then, for each member
// row in batches, the users' cells and the member rows, and last the name
// index row (CheckAndDelete, only if it still points at this role). A
// failure part-way leaves cells and rows of a role that no longer exists:
// readers skip them and Fsck removes them.
func (s *Service) DeleteRole(ctx context.Context, rid weibo.RoleID) (_ bool, err error) {
	defer weibo.Wrapf(&err, "delete role %s", rid)
	role, err := s.existingRole(ctx, rid)
	if err != nil {
		return false, err
	}
	rec, err := s.record(ctx, ActionRoleDelete, roleNode(rid), map[string]any{"name": role.Name, "memberCount": role.MemberCount}, nil)
	if err != nil {
		return false, err
	}
	defer func() { s.finish(ctx, rec, err) }()
	if err := s.st.Delete(ctx, &hbase.Delete{Table: tables.Roles, Row: tables.RoleKey(rid)}); err != nil {
		return false, err
	}
	rec.committed = true
	if err := s.w.Step(ctx, PairStepDeleteRole); err != nil {
		return false, err
	}
	if err := s.purgeRoleMembers(ctx, rid); err != nil {
		return false, err
	}
	if _, err := s.st.CheckAndDelete(ctx, &hbase.Delete{Table: tables.RoleNames, Row: tables.RoleNameKey(role.Name)}, tables.FamName, tables.ColRoleID, tables.EncodeID(rid)); err != nil {
		return false, err
	}
	return true, nil
}

// purgeRoleMembers deletes, batch by batch, the users' cells of rid and then
// its member rows.
func (s *Service) purgeRoleMembers(ctx context.Context, rid weibo.RoleID) error {
	var users, members []*hbase.Delete
	flush := func() error {
		if len(users) == 0 {
			return nil
		}
		if err := s.st.DeleteMany(ctx, users); err != nil {
			return err
		}
		err := s.st.DeleteMany(ctx, members)
		users, members = users[:0], members[:0]
		return err
	}
	prefix := tables.RoleMemberPrefix(rid)
	err := s.st.Scan(ctx, &hbase.Scan{Table: tables.Roles, Prefix: prefix}, func(r *hbase.Result) error {
		_, uid, ok := tables.DecodeRoleMemberKey(r.Row)
		if !ok {
			return nil
		}
		users = append(users, &hbase.Delete{Table: tables.Users, Row: tables.UserKey(uid), Values: hbase.Values{tables.FamOrg: {tables.RoleQualifier(rid): nil}}})
		members = append(members, &hbase.Delete{Table: tables.Roles, Row: bytes.Clone(r.Row)})
		if len(users) >= s.w.Batch() {
			return flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}

// AssignRole gives user uid the role rid with a priority in
// [MinPriority, MaxPriority] and returns the user; re-assigning a role the
// user holds updates the priority. Errors: BAD_USER_INPUT for a priority out
// of range, or (reason CONCURRENT_UPDATE) when the user's cell keeps
// changing under concurrent calls; NOT_FOUND for an unknown user or role.
//
// Writes, in order (package counted explains the scheme):
//  1. the weibo:pending row of the write;
//  2. the operation sequence of the role's member counter;
//  3. the role's member row (the index);
//  4. the user's cell in family o (the authority, the commit point): with
//     CheckAndPut(absent) — which decides whether the assignment is new,
//     so that concurrent or repeated calls count once — or, when the user
//     holds the role already, with CheckAndPut expecting the priority read
//     (never a blind Put, which could bring back a cell a concurrent
//     revoke just deleted, uncounted);
//  5. if the assignment is new, the counter (within the write's budget);
//  6. the settle of the member row (settleRole): written again from the
//     cell and the cell re-read, until they agree — a revoke that deleted
//     the member row between steps 3 and 4 is undone here;
//  7. the delete of the pending row.
//
// A failure between the member row and the user's cell leaves a member
// row without the user's cell: role member lists skip it, repeating the
// call finishes it, and the repairer settles it after the repair grace.
func (s *Service) AssignRole(ctx context.Context, uid weibo.UserID, rid weibo.RoleID, priority int) (_ *weibo.User, err error) {
	defer weibo.Wrapf(&err, "assign role %s to %s", rid, uid)
	if err := checkPriority(priority); err != nil {
		return nil, err
	}
	u, err := s.existingUser(ctx, uid)
	if err != nil {
		return nil, err
	}
	if _, err := s.existingRole(ctx, rid); err != nil {
		return nil, err
	}
	op, err := s.w.Begin(ctx, s.roles, uint64(rid), uint64(uid))
	if err != nil {
		return nil, err
	}
	prio := tables.EncodePriority(priority)
	if err := s.st.Put(ctx, &hbase.Put{Table: tables.Roles, Row: tables.RoleMemberKey(rid, uid), Values: hbase.Values{
		tables.FamInfo: {tables.ColPriority: prio}}}); err != nil {
		return nil, err
	}
	if err := s.w.Step(ctx, PairStepAssignRole); err != nil {
		return nil, err
	}
	before, err := s.rolePriority(ctx, uid, rid)
	if err != nil {
		return nil, err
	}
	rec, err := s.record(ctx, ActionRoleAssign, userNode(uid), before, map[string]any{"role": rid.String(), "priority": priority})
	if err != nil {
		return nil, err
	}
	defer func() { s.finish(ctx, rec, err) }()
	added, err := s.setRoleCell(ctx, uid, rid, prio)
	if err != nil {
		return nil, err
	}
	rec.committed = true
	if added {
		if _, err := s.w.Count(ctx, op, +1); err != nil {
			return nil, err
		}
	}
	if err := s.settleMember(ctx, op, uid, rid, prio, true); err != nil {
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
// expecting the value read. It reports whether the cell was absent (the
// assignment is new).
func (s *Service) setRoleCell(ctx context.Context, uid weibo.UserID, rid weibo.RoleID, prio []byte) (bool, error) {
	qual := tables.RoleQualifier(rid)
	cell := &hbase.Put{Table: tables.Users, Row: tables.UserKey(uid), Values: hbase.Values{tables.FamOrg: {qual: prio}}}
	var expected []byte // absent first: the common case costs one call
	for attempt := 0; attempt < 8; attempt++ {
		applied, err := s.st.CheckAndPut(ctx, cell, tables.FamOrg, qual, expected)
		if err != nil || applied {
			return applied && expected == nil, err
		}
		r, err := s.st.Get(ctx, &hbase.Get{Table: tables.Users, Row: tables.UserKey(uid), Families: []string{tables.FamOrg}})
		if err != nil {
			return false, err
		}
		if expected = r.Value(tables.FamOrg, qual); bytes.Equal(expected, prio) {
			return false, nil
		}
	}
	return false, errConcurrent("userId", "the user's roles keep changing; retry")
}

// RevokeRole takes role rid from user uid and returns the user; revoking a
// role the user does not hold changes nothing. Errors: NOT_FOUND for an
// unknown user or role; BAD_USER_INPUT (reason CONCURRENT_UPDATE) when the
// user's cell keeps changing under concurrent calls.
//
// Writes, in order, as AssignRole's: the pending row; the role's operation
// sequence; CheckAndDelete of the user's cell expecting the value read
// (the authority, the commit point; it decides whether this call counts);
// the counter (within the budget); the settle of the member row (deleted,
// then the cell re-read: an assign that raced in is written back); the
// delete of the pending row. A failure between the cell and the member
// row leaves a member row without the user's cell, which readers skip and
// the repairer removes.
func (s *Service) RevokeRole(ctx context.Context, uid weibo.UserID, rid weibo.RoleID) (_ *weibo.User, err error) {
	defer weibo.Wrapf(&err, "revoke role %s from %s", rid, uid)
	u, err := s.existingUser(ctx, uid)
	if err != nil {
		return nil, err
	}
	if _, err := s.existingRole(ctx, rid); err != nil {
		return nil, err
	}
	op, err := s.w.Begin(ctx, s.roles, uint64(rid), uint64(uid))
	if err != nil {
		return nil, err
	}
	before, err := s.rolePriority(ctx, uid, rid)
	if err != nil {
		return nil, err
	}
	rec, err := s.record(ctx, ActionRoleRevoke, userNode(uid), before, nil)
	if err != nil {
		return nil, err
	}
	defer func() { s.finish(ctx, rec, err) }()
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
			return nil, errConcurrent("userId", "the user's roles keep changing; retry")
		}
		removed, err = s.st.CheckAndDelete(ctx, &hbase.Delete{Table: tables.Users, Row: tables.UserKey(uid), Values: hbase.Values{tables.FamOrg: {qual: nil}}},
			tables.FamOrg, qual, v)
		if err != nil {
			return nil, err
		}
		if removed {
			break
		}
	}
	rec.committed = true
	if removed {
		if _, err := s.w.Count(ctx, op, -1); err != nil {
			return nil, err
		}
	}
	if err := s.w.Step(ctx, PairStepRevokeRole); err != nil {
		return nil, err
	}
	if err := s.settleMember(ctx, op, uid, rid, nil, true); err != nil {
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

// GetRoles reads roles by id with one batched GetMany; the result has one
// entry per id, nil where the role does not exist.
func (s *Service) GetRoles(ctx context.Context, ids []weibo.RoleID) (_ []*Role, err error) {
	defer weibo.Wrap(&err, "get roles")
	gets := make([]*hbase.Get, len(ids))
	for i, id := range ids {
		gets[i] = &hbase.Get{Table: tables.Roles, Row: tables.RoleKey(id), Families: []string{tables.FamInfo, tables.FamCount}}
	}
	rs, err := s.st.GetMany(ctx, gets)
	if err != nil {
		return nil, err
	}
	out := make([]*Role, len(ids))
	for i, r := range rs {
		out[i] = roleFromRow(ids[i], r)
	}
	return out, nil
}

func roleFromRow(rid weibo.RoleID, r *hbase.Result) *Role {
	name := r.Value(tables.FamInfo, tables.ColRoleName)
	if name == nil {
		return nil
	}
	return &Role{
		ID:          rid,
		Name:        string(name),
		MemberCount: tables.CounterValue(r, tables.ColMemberCount),
		CreatedAt:   time.UnixMilli(tables.CreatedAt(r)),
	}
}

func (s *Service) existingRole(ctx context.Context, rid weibo.RoleID) (*Role, error) {
	rs, err := s.GetRoles(ctx, []weibo.RoleID{rid})
	if err != nil {
		return nil, err
	}
	if rs[0] == nil {
		return nil, weibo.NotFound("role %s not found", rid)
	}
	return rs[0], nil
}

// RoleByName returns the role with that name (ignoring case and surrounding
// space), or nil when there is none: one Get of the name index and one of
// the role row, which must still carry the name.
func (s *Service) RoleByName(ctx context.Context, name string) (_ *Role, err error) {
	defer weibo.Wrap(&err, "role by name")
	key := tables.RoleNameKey(name)
	if len(key) == 0 {
		return nil, nil
	}
	r, err := s.st.Get(ctx, &hbase.Get{Table: tables.RoleNames, Row: key})
	if err != nil {
		return nil, err
	}
	v := r.Value(tables.FamName, tables.ColRoleID)
	if v == nil {
		return nil, nil
	}
	roles, err := s.GetRoles(ctx, []weibo.RoleID{tables.DecodeRoleID(v)})
	if err != nil {
		return nil, err
	}
	if roles[0] == nil || !bytes.Equal(tables.RoleNameKey(roles[0].Name), key) {
		return nil, nil // stale index row
	}
	return roles[0], nil
}

// EnsureRole returns the role named name, creating it when there is none.
// Errors as for CreateRole.
func (s *Service) EnsureRole(ctx context.Context, name string) (_ *Role, err error) {
	defer weibo.Wrap(&err, "ensure role")
	for attempt := 0; ; attempt++ {
		r, err := s.RoleByName(ctx, name)
		if err != nil || r != nil {
			return r, err
		}
		r, err = s.CreateRole(ctx, name)
		if err == nil || attempt > 0 {
			return r, err
		}
		if e, ok := errors.AsType[*weibo.Error](err); !ok || e.Reason != weibo.ReasonRoleNameTaken {
			return nil, err
		}
	}
}

// HasRole reports whether user uid holds the role named roleName: one Get
// of the name index, then one GetMany of the role row and the user's cell.
func (s *Service) HasRole(ctx context.Context, uid weibo.UserID, roleName string) (_ bool, err error) {
	defer weibo.Wrap(&err, "has role")
	key := tables.RoleNameKey(roleName)
	r, err := s.st.Get(ctx, &hbase.Get{Table: tables.RoleNames, Row: key})
	if err != nil {
		return false, err
	}
	v := r.Value(tables.FamName, tables.ColRoleID)
	if v == nil {
		return false, nil
	}
	rid := tables.DecodeRoleID(v)
	rs, err := s.st.GetMany(ctx, []*hbase.Get{
		{Table: tables.Roles, Row: tables.RoleKey(rid), Families: []string{tables.FamInfo}},
		{Table: tables.Users, Row: tables.UserKey(uid), Families: []string{tables.FamOrg}},
	})
	if err != nil {
		return false, err
	}
	role := roleFromRow(rid, rs[0])
	return role != nil && bytes.Equal(tables.RoleNameKey(role.Name), key) && rs[1].Value(tables.FamOrg, tables.RoleQualifier(rid)) != nil, nil
}

// RequireRole returns nil when uid holds the role named roleName and a
// FORBIDDEN *Error otherwise.
func (s *Service) RequireRole(ctx context.Context, uid weibo.UserID, roleName string) (err error) {
	defer weibo.Wrap(&err, "require role")
	ok, err := s.HasRole(ctx, uid, roleName)
	if err != nil {
		return err
	}
	if !ok {
		return errForbidden(roleName)
	}
	return nil
}

// UserRoles returns the roles of each user, highest priority first, ties by
// role name: one GetMany of the users' family o, one GetMany of the roles.
// Cells of roles that no longer exist are skipped.
func (s *Service) UserRoles(ctx context.Context, uids []weibo.UserID) (_ [][]*RoleAssignment, err error) {
	defer weibo.Wrap(&err, "user roles")
	gets := make([]*hbase.Get, len(uids))
	for i, uid := range uids {
		gets[i] = &hbase.Get{Table: tables.Users, Row: tables.UserKey(uid), Families: []string{tables.FamOrg}}
	}
	rs, err := s.st.GetMany(ctx, gets)
	if err != nil {
		return nil, err
	}
	type cell struct {
		rid  weibo.RoleID
		prio int
	}
	cells := make([][]cell, len(uids))
	seen := map[weibo.RoleID]int{}
	var ids []weibo.RoleID
	for i, r := range rs {
		for _, c := range r.Family(tables.FamOrg) {
			rid, isRole := tables.DecodeRoleQualifier(c.Qualifier)
			p, ok := tables.DecodePriority(c.Value)
			if !isRole || !ok {
				continue
			}
			cells[i] = append(cells[i], cell{rid, p})
			if _, ok := seen[rid]; !ok {
				seen[rid] = len(ids)
				ids = append(ids, rid)
			}
		}
	}
	var roles []*Role
	if len(ids) > 0 {
		if roles, err = s.GetRoles(ctx, ids); err != nil {
			return nil, err
		}
	}
	out := make([][]*RoleAssignment, len(uids))
	for i, cs := range cells {
		out[i] = []*RoleAssignment{}
		for _, c := range cs {
			if role := roles[seen[c.rid]]; role != nil {
				out[i] = append(out[i], &RoleAssignment{Role: role, Priority: c.prio})
			}
		}
		slices.SortFunc(out[i], func(a, b *RoleAssignment) int {
			if a.Priority != b.Priority {
				return cmp.Compare(b.Priority, a.Priority)
			}
			return cmp.Or(strings.Compare(strings.ToLower(a.Role.Name), strings.ToLower(b.Role.Name)),
				strings.Compare(a.Role.Name, b.Role.Name), cmp.Compare(a.Role.ID, b.Role.ID))
		})
	}
	return out, nil
}

// Roles pages through every role by name (ignoring case): a scan of
// weibo:rolenames, whose rowkeys are the lower-cased names, and one GetMany
// of the page's role rows; index rows whose role is gone or renamed are
// skipped. Errors: BAD_USER_INPUT for a bad first or after.
func (s *Service) Roles(ctx context.Context, first *int, after *string) (_ *RoleConnection, err error) {
	defer weibo.Wrap(&err, "roles")
	q := paging.Query{Kind: paging.CursorRoleNames, MaxRowLen: 4 * MaxRoleNameLength, Scan: hbase.Scan{Table: tables.RoleNames}}
	edges, info, err := paging.Read(ctx, s.st, q, first, after,
		func(ctx context.Context, rows []*hbase.Result) ([]*Role, error) {
			ids := make([]weibo.RoleID, len(rows))
			for i, r := range rows {
				ids[i] = tables.RoleNameRole(r)
			}
			roles, err := s.GetRoles(ctx, ids)
			if err != nil {
				return nil, err
			}
			for i, role := range roles {
				if role != nil && !bytes.Equal(tables.RoleNameKey(role.Name), rows[i].Row) {
					roles[i] = nil
				}
			}
			return roles, nil
		}, func(role *Role, cursor string) RoleEdge { return RoleEdge{Role: role, Cursor: cursor} })
	if err != nil {
		return nil, err
	}
	return &RoleConnection{Edges: edges, PageInfo: info}, nil
}

// RoleMembers pages through the members of role rid by user id, with their
// priorities: a prefix scan of the role's member rows and one GetMany of
// the users' family o per page, which is the authority (member rows without
// the user's cell are skipped; the priority is the user's). Errors:
// BAD_USER_INPUT for a bad first or after.
func (s *Service) RoleMembers(ctx context.Context, rid weibo.RoleID, first *int, after *string) (_ *RoleMemberConnection, err error) {
	defer weibo.Wrap(&err, "role members")
	q := paging.Query{Kind: paging.CursorRoleMembers, RowLen: tables.LinkKeyLen,
		Scan: hbase.Scan{Table: tables.Roles, Prefix: tables.RoleMemberPrefix(rid)}}
	qual := tables.RoleQualifier(rid)
	edges, info, err := paging.Read(ctx, s.st, q, first, after,
		func(ctx context.Context, rows []*hbase.Result) ([]*RoleMemberEdge, error) {
			uids := make([]weibo.UserID, len(rows))
			gets := make([]*hbase.Get, len(rows))
			for i, r := range rows {
				_, uids[i], _ = tables.DecodeRoleMemberKey(r.Row) // 0 when malformed: no such user
				gets[i] = &hbase.Get{Table: tables.Users, Row: tables.UserKey(uids[i]), Families: []string{tables.FamOrg}}
			}
			us, err := s.st.GetMany(ctx, gets)
			if err != nil {
				return nil, err
			}
			out := make([]*RoleMemberEdge, len(rows))
			for i, u := range us {
				if p, ok := tables.DecodePriority(u.Value(tables.FamOrg, qual)); ok && uids[i] != 0 {
					out[i] = &RoleMemberEdge{User: uids[i], Priority: p}
				}
			}
			return out, nil
		}, func(e *RoleMemberEdge, cursor string) RoleMemberEdge {
			e.Cursor = cursor
			return *e
		})
	if err != nil {
		return nil, err
	}
	return &RoleMemberConnection{Edges: edges, PageInfo: info}, nil
}
